"""S1 Site Mismatch: the car on the customer's booking is relocated to another depot.

A rebalancing job moves the very car the agent is working with away from the pickup depot
(visible in ``get_vehicle_status``, or the vehicle depot shown on the reservation). Easy: it
happens to a fresh hold; another car of the class at the depot takes over. Medium: it happens
to an existing booking right after the agent looked at the car, for a corporate booking at
the other depot, so the car cannot come back; a car from a third depot must be fuelled and
driven over before the booking can be extended. Hard: the job pulls a second car of the class
from the depot ten minutes later, the one the first fix used, so the first car must be
brought back. Impossible: the car is booked at its new depot and the only other one is in the
workshop.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np

from sttgym.envs.arena.carrental.generator import (Base, Booking, cannot, car, elapsed, iso, make_task, new_world, rid,
                                                   tell, user_profile)
from sttgym.task import Call, Task
from sttgym.triggers import Mutation, Trigger


def _relocated(base: Base, b: Booking, vehicle: str, to: str, taken: bool, **trigger) -> Trigger:
    """``vehicle`` leaves ``b.depot`` for ``to`` while the user's booking relies on it; when ``taken``,
    a corporate booking from ``to`` after the user's trip pins it there (it cannot be moved back)."""
    mutations = [Mutation(("vehicles", vehicle, "depot"), b.depot, to)]
    if taken:
        record = base.reservation(base.other_customer(), vehicle, to, b.ret + timedelta(hours=2),
                                  b.ret + timedelta(days=2))
        mutations.append(Mutation(("reservations", base.unique("CORP", 1000, 9999)), None, record))
    defaults = dict(
        activation=["get_rental_quote", "get_customer_profile"],
        condition=lambda s, ctx: s["vehicles"][vehicle]["depot"] == b.depot and any(
            r["customer"] == b.customer and r["vehicle"] == vehicle and r["status"] in ("held", "confirmed")
            for r in s["reservations"].values()))
    return Trigger(name=f"relocated_{vehicle}", description=f"a rebalancing job moves {vehicle} from {b.depot} to {to}",
                   mutations=mutations, observable_via="get_vehicle_status", **{**defaults, **trigger})


def build(rng: np.random.Generator, level: str) -> Task:
    base = new_world(rng)
    cls, s = base.focus, base.state
    depot = base.pick(base.depots_in(base.pick(["business", "residential"])))
    by_distance = sorted((d for d in s["depots"] if d != depot), key=lambda d: (base.minutes(d, depot), d))
    elsewhere = by_distance[0]
    pickup, ret = base.trip()
    moved = base.add_vehicle(depot, cls)
    status = lambda v: Call(name="get_vehicle_status", arguments={"vehicle_id": v})  # noqa: E731
    customer = s["customers"][base.user]
    impossible = None

    if level == "medium":
        # An existing booking for later today, to be extended by a day and fuelled.
        pickup = base.start + timedelta(hours=int(rng.integers(3, 6)))
        existing = base.add_reservation(base.user, moved, depot, pickup, ret)
        ret = ret + timedelta(days=1)
        b = Booking(base.user, cls, depot, pickup, ret)
        donor_depot = by_distance[1]
        donor = base.add_vehicle(donor_depot, cls, fuel=int(rng.integers(40, 70)))
        s["vehicles"][moved]["fuel_pct"] = int(rng.integers(40, 70))
        triggers = [_relocated(base, b, moved, elsewhere, taken=True, activation=["get_vehicle_status"],
                               timing="after", condition=lambda st, ctx: st["vehicles"][moved]["depot"] == depot)]
        read = Call(name="get_reservation", arguments={"reservation_id": existing})
        extend = Call(name="reschedule_reservation", arguments={"reservation_id": existing, **b.times})
        nominal = [read, status(moved), extend, Call(name="refuel_vehicle", arguments={"vehicle_id": moved})]
        oracle = [read, status(moved), status(moved), b.search(), b.search(donor_depot),
                  Call(name="refuel_vehicle", arguments={"vehicle_id": donor}),
                  Call(name="transfer_vehicle", arguments={"vehicle_id": donor, "to_depot_id": depot}),
                  Call(name="swap_reservation_vehicle", arguments={"reservation_id": existing, "vehicle_id": donor}),
                  extend]
        query = (f"This is {customer['name']} (customer {base.user}). I'm collecting my booking {existing} at "
                 f"{base.name(depot)} ({depot}) at {iso(pickup)}; please extend it so I return the car there at "
                 f"{iso(ret)} instead, and make sure it has a full tank when I pick it up.")
        checks = b.checks(fuel=90)
    else:
        b = Booking(base.user, cls, depot, pickup, ret)
        head = [b.search(), b.hold(moved), b.quote()]
        nominal = head + [b.confirm()]
        triggers = [_relocated(base, b, moved, elsewhere, taken=level == "impossible")]
        swap = lambda v: Call(name="swap_reservation_vehicle", arguments={"reservation_id": rid("hold"),  # noqa: E731
                                                                         "vehicle_id": v})
        if level == "easy":
            spare = base.add_vehicle(depot, cls)
            oracle = head + [status(moved), swap(spare), b.confirm()]
        elif level == "hard":
            spare = base.add_vehicle(depot, cls)
            nominal.append(b.verify())
            oracle = head + [status(moved), swap(spare)]
            # The job pulls the second car once the first fix is in place (and before the nominal plan ends).
            at = base.start + timedelta(minutes=min(elapsed(oracle), elapsed(nominal[:-1])))
            triggers.append(_relocated(base, b, spare, by_distance[1], taken=False,
                                       activation=["get_reservation", "get_vehicle_status",
                                                   "list_customer_reservations", "search_available_vehicles"],
                                       condition=lambda st, ctx: st["vehicles"][moved]["depot"] == elsewhere
                                       and ctx.now >= iso(at)))
            bring_back = Call(name="transfer_vehicle", arguments={"vehicle_id": moved, "to_depot_id": depot})
            oracle += [Call(name="get_reservation", arguments={"reservation_id": rid("hold")}), b.search(),
                       status(moved), bring_back, swap(moved), b.confirm(), b.verify()]
        else:
            base.add_vehicle(depot, cls, status="maintenance")
            oracle = head + [status(moved), b.search(), tell(
                f"I'm sorry, I cannot confirm {car(cls)} at {depot}: {moved} was relocated to {elsewhere} and is now "
                f"booked there, and the only other {car(cls, article=False)} at {depot} is in the workshop.")]
            impossible = cannot(base, ["relocated", "moved", elsewhere], "a car away from the pickup depot")
        query = (f"Hi, I'm {customer['name']}, customer {base.user}. Please book me {car(cls)} at "
                 f"{base.name(depot)} ({depot}), pickup {iso(pickup)}, return there {iso(ret)}. Hold the car, "
                 f"check the price, and confirm.")
        checks = b.checks()

    customer["payment_limit"] = base.price(depot, cls, b.pickup, b.ret) + 50 * int(rng.integers(1, 5))
    answers = {("car", "vehicle", "another", "other", "different"):
               f"Any {car(cls, article=False)} is fine, as long as it's waiting for me at {depot}.",
               ("depot", "location", "pickup"): f"I can only collect at {depot}."}
    insist = f"It has to be {car(cls)} at {depot} at {iso(pickup)}; I can't go anywhere else." if impossible else None
    profile = user_profile(base, "a customer with a rental to arrange", [f"customer id {base.user}",
                           f"pickup depot {depot}", f"pickup {iso(pickup)}"], answers, insist=insist)
    return make_task(base, query, profile, triggers, checks, nominal, oracle, impossible)
