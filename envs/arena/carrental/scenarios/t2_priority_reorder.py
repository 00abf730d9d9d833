"""T2 Priority Reorder: the customer's flight is rescheduled earlier, so the pickup must move up.

The user wants a car at an airport desk half an hour after their flight lands. The agent reads
the tracked arrival, books for it, and while it prices the booking the airline moves the
flight earlier (visible only by reading the arrival again). A booking for the old time leaves
the customer waiting at the desk. Easy: move the booking earlier. Medium: the booked car is
still out on rent at the earlier time, so another car must take over. Hard: no other car is
at the desk, one must be brought from the next depot, and the rescheduled flight bank sets off
an airport price surge that breaks the card limit unless a promotion is used. Impossible:
every car of the class is out, in the workshop or booked at the earlier time.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta

import numpy as np

from sttgym.envs.arena.carrental.generator import (Base, Booking, cannot, car, iso, make_task, new_world, rid, tell,
                                                   user_profile)
from sttgym.task import Call, Task
from sttgym.triggers import Mutation, Trigger

AFTER_LANDING = timedelta(minutes=30)  # the user collects the car this long after landing
SLACK = timedelta(minutes=60)  # a pickup later than this after landing leaves the user waiting


def _rescheduled(b: Booking, flight: str, old: str, new: str) -> Trigger:
    return Trigger(
        name="flight_rescheduled",
        description=f"the airline moves {flight} earlier, to {new}, once a booking for the old arrival exists",
        activation=["get_rental_quote", "get_customer_profile"],
        condition=lambda s, ctx: any(r["customer"] == b.customer and r["pickup_depot"] == b.depot
                                     and r["pickup_time"] == iso(b.pickup) and r["status"] in ("held", "confirmed")
                                     for r in s["reservations"].values()),
        mutations=[Mutation(("flights", flight, "arrives"), old, new),
                   Mutation(("flights", flight, "status"), "on time", "rescheduled earlier")],
        observable_via="get_flight_arrival",
    )


def _airport_surge(base: Base, b: Booking, flight: str, early: Booking) -> Trigger:
    zone = base.zone(b.depot)
    window = {"start": iso(early.pickup - timedelta(hours=1)), "end": iso(early.pickup + timedelta(hours=1)),
              "multiplier": 1.5}
    return Trigger(
        name="airport_surge",
        description=f"the rescheduled arrival bank triggers a price surge in {zone} around {iso(early.pickup)}",
        condition=lambda s, ctx: s["flights"][flight]["status"] == "rescheduled earlier",
        mutations=[Mutation(("zones", zone, "surge"), [], [window]),
                   Mutation(("zones", zone, "demand"), "normal", "peak")],
        observable_via="get_rental_quote",
    )


def build(rng: np.random.Generator, level: str) -> Task:
    base = new_world(rng)
    cls, s = base.focus, base.state
    depot = base.pick(base.depots_in("airport"))
    lands, ret = base.trip()
    # The earlier pickup must still fall within the desk's opening hours (trips start at 9:00 at the
    # earliest and desks open by 7:00, so a move of at least 90 minutes always remains).
    opens = datetime.combine(lands.date(), time.fromisoformat(s["depots"][depot]["opens"]))
    lands_early = max(lands - timedelta(minutes=30 * int(rng.integers(3, 7))), opens - AFTER_LANDING)
    b = Booking(base.user, cls, depot, lands + AFTER_LANDING, ret)
    early = b.moved(lands_early + AFTER_LANDING)
    flight = base.flight_number()
    s["flights"][flight] = {"depot": depot, "origin": base.pick(["Lisbon", "Oslo", "Vienna", "Madrid", "Athens"]),
                            "arrives": iso(lands), "status": "on time"}

    # The car the plain search finds; from medium on it is still out on rent at the earlier time.
    booked = base.add_vehicle(depot, cls, available_from=lands if level != "easy" else None)
    # The card covers the booking at either time (an earlier pickup can add a day), but not a 1.5x surge.
    fair = max(base.price(depot, cls, b.pickup, ret), base.price(depot, cls, early.pickup, ret))
    s["customers"][base.user]["payment_limit"] = round(fair * (1.1 + 0.05 * int(rng.integers(0, 4))))
    triggers = [_rescheduled(b, flight, iso(lands), iso(lands_early))]
    read_flight = Call(name="get_flight_arrival", arguments={"flight_number": flight})
    head = [read_flight, b.search(), b.hold(booked), b.quote()]
    nominal = head + [b.confirm()]
    cancel = Call(name="cancel_reservation", arguments={"reservation_id": rid("hold")})
    impossible = None

    if level == "easy":
        oracle = head + [read_flight, Call(name="reschedule_reservation", arguments={
            "reservation_id": rid("hold"), **early.times}), b.confirm()]
    elif level == "medium":
        spare = base.add_vehicle(depot, cls)
        oracle = head + [read_flight, early.search(), cancel, early.hold(spare, "early"), early.confirm("early")]
    elif level == "hard":
        spare_depot = min((d for d in s["depots"] if d != depot), key=lambda d: (base.minutes(d, depot), d))
        spare = base.add_vehicle(spare_depot, cls)
        triggers.append(_airport_surge(base, b, flight, early))
        code = base.promo_code(("FLYDRIVE", "ARRIVALS", "JETSET"))
        s["promotions"][code] = {"zone": base.zone(depot), "vehicle_class": None, "energy": None,
                                 "discount_pct": 40, "quota": 25, "used": int(rng.integers(3, 20)),
                                 "note": "fly-and-drive fares at the airport desks"}
        oracle = head + [read_flight, early.search(), early.search(spare_depot),
                         Call(name="transfer_vehicle", arguments={"vehicle_id": spare, "to_depot_id": depot}),
                         cancel, early.hold(spare, "early"), early.quote(),
                         Call(name="list_promotions", arguments={"zone_id": base.zone(depot)}),
                         early.confirm("early", promo=code)]
    else:
        base.add_vehicle(depot, cls, status="maintenance")
        elsewhere = base.pick(sorted(d for d in s["depots"] if d != depot))
        taken = base.add_vehicle(elsewhere, cls)
        base.add_reservation(base.other_customer(), taken, elsewhere, early.pickup - timedelta(hours=3),
                             ret + timedelta(days=1))
        oracle = head + [read_flight, early.search(), Call(name="get_vehicle_status", arguments={"vehicle_id": booked}),
                         tell(
                             f"I cannot get you a car in time: {flight} now lands earlier, at {iso(lands_early)}, and "
                             f"no {car(cls, article=False)} is free then. {booked} at {depot} is only due back at "
                             f"{iso(lands)}, the other one is in the workshop and {taken} is booked.")]
        impossible = cannot(base, ["due back", "earlier", "no " + car(cls, article=False)],
                            "a car that is not there on landing")

    customer = s["customers"][base.user]
    query = (f"Hi, {customer['name']} here (customer {base.user}). I'm flying in on {flight}, landing at "
             f"{base.name(depot)}; please book me {car(cls)} at that desk ({depot}) for pickup 30 minutes after "
             f"the flight lands, returning it there at {iso(ret)}. Check the price against my card limit and confirm.")
    answers = {("land", "landing", "arrival", "flight", "time"):
               "Go by the airline's tracked arrival time; I'll be at the desk about 30 minutes after landing.",
               ("car", "vehicle", "another", "other"): f"Any {car(cls, article=False)} is fine."}
    insist = (f"I need {car(cls)} at {depot} within an hour of landing, there is no other way for me to get "
              f"to my meeting." if impossible else None)
    profile = user_profile(base, "a business traveller", [f"customer id {base.user}", f"flight {flight}",
                           f"airport desk {depot}", f"return {iso(ret)}"], answers, insist=insist)
    checks = b.checks(pickup_window=(lands_early, lands_early + SLACK))
    return make_task(base, query, profile, triggers, checks, nominal, oracle, impossible,
                     static=b.checks(pickup_window=(lands, lands + SLACK)))
