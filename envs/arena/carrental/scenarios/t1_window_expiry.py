"""T1 Window Expiry: a hold times out while the agent is still checking the booking.

The agent holds a car, then checks the customer and the price before confirming: the normal
way to secure a car while doing due diligence. Demand peaks at the pickup depot once a hold
is open there, and the depot cuts its hold time to four minutes, so the hold lapses before
the confirmation (visible in ``get_reservation``). Easy: hold again and confirm at once.
Medium: the lapsed car is snapped up by a web booking, so a car must come over from another
depot. Hard: two cars are needed, one is snapped up, and the short holds punish holding both
before confirming either. Impossible: the only other car cannot reach the depot in time.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np

from sttgym.envs.arena.carrental.generator import (Base, Booking, cannot, car, elapsed, fleet_unmoved, holds_of, iso,
                                                   lapsed_hold, make_task, new_world, rid, tell, user_profile)
from sttgym.task import Call, Task
from sttgym.triggers import Mutation, Trigger

# What an agent has done by the time it can know the hold lapsed and the car is gone.
_BEFORE_TRANSFER = ["search_available_vehicles", "hold_vehicle", "get_customer_profile", "get_rental_quote",
                    "get_reservation", "search_available_vehicles", "search_available_vehicles"]
SHORT_HOLD = 4  # minutes: longer than a hold call, shorter than a hold plus the checks before confirming


def _policy_cut(base: Base, b: Booking) -> Trigger:
    depot = base.state["depots"][b.depot]
    return Trigger(
        name="peak_hold_policy",
        description=f"demand peaks at {b.depot} while a hold is open there: holds now last {SHORT_HOLD} minutes",
        activation=["get_customer_profile", "get_rental_quote"],
        condition=lambda s, ctx: bool(holds_of(s, b.customer, depot=b.depot)),
        mutations=[Mutation(("depots", b.depot, "hold_minutes"), depot["hold_minutes"], SHORT_HOLD),
                   Mutation(("depots", b.depot, "notice"), "", f"Peak demand: holds last {SHORT_HOLD} minutes")],
        observable_via="get_reservation",
    )


def _snapped_up(base: Base, b: Booking, vehicle: str) -> Trigger:
    """Once the user's hold on ``vehicle`` has lapsed, a web customer books it for an overlapping window."""
    web = base.unique("WEB", 100000, 999999)
    record = base.reservation(base.other_customer(), vehicle, b.depot, b.pickup - timedelta(hours=2),
                              b.ret + timedelta(hours=3))
    return Trigger(
        name="vehicle_rebooked",
        description=f"{vehicle} is booked online by another customer as soon as the user's hold lapses",
        condition=lambda s, ctx: lapsed_hold(s, ctx, b.customer, vehicle),
        mutations=[Mutation(("reservations", web), None, record)],
        observable_via="search_available_vehicles",
    )


def build(rng: np.random.Generator, level: str) -> Task:
    base = new_world(rng)
    cls, s = base.focus, base.state
    depot = base.pick(base.depots_in("business"))
    others = sorted(d for d in s["depots"] if d != depot)
    pickup, ret = base.trip()
    count = 2 if level == "hard" else 1
    # The spare car waits at the nearest other depot; when impossible, at the farthest, and the
    # pickup is so soon that it would arrive late even if sent at the first moment the agent could know.
    spare_depot = sorted(others, key=lambda d: (base.minutes(d, depot), d))[-1 if level == "impossible" else 0]
    if level == "impossible":
        pickup = base.start + timedelta(minutes=elapsed([Call(name=n) for n in _BEFORE_TRANSFER])
                                        + base.minutes(spare_depot, depot) - 5 * int(rng.integers(1, 3)))
    b = Booking(base.user, cls, depot, pickup, ret)
    cars = [base.add_vehicle(depot, cls) for _ in range(count)]
    base.add_vehicle(depot, cls, status="maintenance")
    customer = s["customers"][base.user]
    customer["payment_limit"] = base.price(depot, cls, pickup, ret) + 50 * int(rng.integers(1, 6))

    triggers = [_policy_cut(base, b)]
    head = [b.search(), *[b.hold(v, f"hold{i}") for i, v in enumerate(cars)], b.profile(), b.quote()]
    nominal = head + [b.confirm(f"hold{i}") for i in range(count)]
    check_first = Call(name="get_reservation", arguments={"reservation_id": rid("hold0")})
    if level != "easy":  # the lapsed car is snapped up; a spare must come from another depot
        triggers.append(_snapped_up(base, b, cars[0]))
        spare = base.add_vehicle(spare_depot, cls)
        move = Call(name="transfer_vehicle", arguments={"vehicle_id": spare, "to_depot_id": depot})
    trip = f"from {iso(pickup)} to {iso(ret)}"
    who = f"I'm {customer['name']}, customer {base.user}"
    if count == 2:
        query = (f"{who}. Please book {car(cls, 2)} at {base.name(depot)} ({depot}) for my team, {trip}, "
                 f"returned to the same depot. Hold them while you check my licence and the price, then confirm "
                 f"both; each booking goes on my card.")
    else:
        query = (f"{who}. I need {car(cls)} at {base.name(depot)} ({depot}) {trip}, returned there. Please hold "
                 f"one for me, check my licence and the price against my card limit, then confirm it.")

    if level == "easy":
        oracle = head + [check_first, b.hold(cars[0], "again"), b.confirm("again")]
    elif level == "medium":
        oracle = head + [check_first, b.search(), b.search(spare_depot), move, b.hold(spare, "again"),
                         b.confirm("again")]
    elif level == "hard":
        # Confirm each new hold straight away: with four-minute holds, holding both first loses one again.
        oracle = head + [check_first, b.search(), b.search(spare_depot), move, b.hold(cars[1], "again1"),
                         b.confirm("again1"), b.hold(spare, "again2"), b.confirm("again2"), b.verify()]
    else:
        oracle = head + [check_first, b.search(), b.search(spare_depot),
                         Call(name="plan_route", arguments={"origin_id": spare_depot, "destination_id": depot}),
                         tell(
                             f"I'm sorry, I cannot book {car(cls)} at {depot} for {iso(pickup)}. Your hold on "
                             f"{cars[0]} expired under the depot's peak-demand hold policy and the car was re-booked "
                             f"online; the only other {car(cls, article=False)} is {spare} at {spare_depot}, "
                             f"{base.minutes(spare_depot, depot)} minutes away, so it cannot be there in time.")]
    answers = {("car", "vehicle", "specific", "another", "other"):
               f"Any {car(cls, article=False)} at {depot} is fine by me.",
               ("price", "budget", "limit", "card"): "My card limit per booking is on my customer profile."}
    impossible = insist = None
    if level == "impossible":
        insist = f"I really need {car(cls)} at {depot} at {iso(pickup)}; a later time or another depot won't work."
        impossible = cannot(base, ["expired", "re-booked", "rebooked", cars[0]], "a car that cannot be there in time",
                            fleet_unmoved(s, [spare]))
    profile = user_profile(base, "a customer booking by phone", [f"customer id {base.user}", f"class {cls}",
                           f"pickup depot {depot}", trip], answers, insist=insist)
    return make_task(base, query, profile, triggers, b.checks(count=count), nominal, oracle, impossible)
