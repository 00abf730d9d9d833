"""ST1 Resource Shift: the morning peak pulls free cars out of the residential depot.

The user wants a car from their suburban depot. While the agent checks the customer and the
price, the commuter peak starts and the fleet desk moves the depot's unreserved cars of the
class to where demand is (visible in ``search_available_vehicles`` and ``get_zone_demand``).
Easy: one car is moved, the other is still there. Medium: every car of the class leaves; one
is snapped up at the business depot, the other waits at the airport and must be driven back.
Hard: the airport car is snapped up too when its peak starts, and the car from the
neighbouring suburb must be fuelled before it comes over. Impossible: every car of the class
is moved and booked where it went.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np

from sttgym.envs.arena.carrental.generator import (Base, Booking, cannot, car, iso, make_task, new_world, tell,
                                                   user_profile)
from sttgym.task import Call, Task
from sttgym.triggers import Mutation, Trigger


def _absorbed(base: Base, b: Booking, vehicle: str, where: str) -> tuple[str, dict]:
    """A peak-demand booking at ``where`` that takes ``vehicle`` for the user's whole trip."""
    record = base.reservation(base.other_customer(), vehicle, where, b.pickup - timedelta(hours=4),
                              b.ret + timedelta(hours=6))
    return base.unique("WEB", 100000, 999999), record


def build(rng: np.random.Generator, level: str) -> Task:
    base = new_world(rng)
    cls, s = base.focus, base.state
    residential = base.depots_in("residential")
    depot = base.pick(residential)
    business = base.pick(base.depots_in("business"))
    airport = base.pick(base.depots_in("airport"))
    pickup, ret = base.trip()
    b = Booking(base.user, cls, depot, pickup, ret)
    s["customers"][base.user]["payment_limit"] = base.price(depot, cls, pickup, ret) + 50 * int(rng.integers(1, 5))
    cars = [base.add_vehicle(depot, cls) for _ in range(2)]
    home, work = base.zone(depot), base.zone(business)

    # Where each car goes when the peak starts, and whether demand there takes it at once.
    moves = {"easy": [(cars[0], business, True)],
             "medium": [(cars[0], business, True), (cars[1], airport, False)],
             "hard": [(cars[0], business, True), (cars[1], airport, False)],
             "impossible": [(cars[0], business, True), (cars[1], airport, True)]}[level]
    mutations = [Mutation(("zones", home, "demand"), "normal", "low"),
                 Mutation(("zones", work, "demand"), "normal", "peak")]
    for vehicle, where, taken in moves:
        mutations.append(Mutation(("vehicles", vehicle, "depot"), depot, where))
        if taken:
            web, record = _absorbed(base, b, vehicle, where)
            mutations.append(Mutation(("reservations", web), None, record))
    shift = Trigger(
        name="commuter_peak_shift",
        description=f"the commuter peak starts: unreserved {cls} cars leave {depot} for busier depots",
        activation=["get_rental_quote", "get_customer_profile"],
        condition=lambda st, ctx: all(st["vehicles"][v]["depot"] == depot for v, _, _ in moves) and not any(
            r["vehicle"] in cars and r["status"] in ("held", "confirmed") for r in st["reservations"].values()),
        mutations=mutations, observable_via="search_available_vehicles")
    triggers = [shift]
    head = [b.search(), b.profile(), b.quote()]
    nominal = head + [b.hold(cars[0]), b.confirm()]
    demand = Call(name="get_zone_demand", arguments={"zone_id": home})
    move = lambda v: Call(name="transfer_vehicle", arguments={"vehicle_id": v, "to_depot_id": depot})  # noqa: E731
    impossible = None
    if level == "easy":
        oracle = head + [b.search(), b.hold(cars[1]), b.confirm()]
    elif level == "medium":
        oracle = head + [b.search(), demand, b.search(business), b.search(airport), move(cars[1]), b.hold(cars[1]),
                         b.confirm()]
    elif level == "hard":
        neighbour = min((d for d in residential if d != depot), key=lambda d: (base.minutes(d, depot), d))
        spare = base.add_vehicle(neighbour, cls, fuel=int(rng.integers(8, 20)))
        web, record = _absorbed(base, b, cars[1], airport)
        triggers.append(Trigger(
            name="airport_peak_absorbs", description=f"the airport peak books {cars[1]} while it waits at {airport}",
            activation=["search_available_vehicles", "list_customer_reservations", "get_vehicle_status"],
            condition=lambda st, ctx: st["vehicles"][cars[1]]["depot"] == airport
            and ctx.arguments.get("depot_id", airport) == airport,
            mutations=[Mutation(("reservations", web), None, record)], observable_via="search_available_vehicles"))
        nominal.append(b.verify())
        oracle = head + [b.search(), demand, b.search(business), b.search(airport), b.search(neighbour),
                         Call(name="refuel_vehicle", arguments={"vehicle_id": spare}), move(spare), b.hold(spare),
                         b.confirm(), b.verify()]
    else:
        oracle = head + [b.search(), demand, b.search(business), b.search(airport), tell(
                f"I'm sorry, I cannot book {car(cls)} at {depot}: with the commuter peak the fleet desk moved both "
                f"of the depot's {car(cls, article=False)}s to {business} and {airport}, where they were booked "
                f"at once, and there is no other {car(cls, article=False)} free.")]
        impossible = cannot(base, ["peak", "moved", "demand"], "a car elsewhere or of another class")

    customer = s["customers"][base.user]
    query = (f"Good morning, this is {customer['name']} (customer {base.user}). I'd like to rent {car(cls)} from my "
             f"local depot, {base.name(depot)} ({depot}), from {iso(pickup)} to {iso(ret)}, returning it there. "
             f"Please check my licence and the price first, then book it.")
    answers = {("car", "vehicle", "another", "other"): f"Any {car(cls, article=False)} is fine.",
               ("depot", "collect", "elsewhere"): f"I collect at {depot}; I don't have a way to get anywhere else."}
    insist = f"I can only collect {car(cls)} at {depot}; nothing else works for me." if impossible else None
    profile = user_profile(base, "a suburban customer", [f"customer id {base.user}", f"home depot {depot}"], answers,
                           insist=insist)
    checks = b.checks()
    return make_task(base, query, profile, triggers, checks, nominal, oracle, impossible)
