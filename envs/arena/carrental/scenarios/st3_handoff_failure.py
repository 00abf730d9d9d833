"""ST3 Handoff Failure: the car's previous renter drops it late, at another depot.

The user needs a car this afternoon. The only one of the class at their depot is on rent,
due back there before the pickup: a tight but valid handoff. The previous renter then
reports they will drop it later and at another depot (visible in ``get_vehicle_status``), so
the handoff fails in time and place at once. Easy: a transfer from the drop-off depot right
after the return still makes the pickup. Medium: it would not, so a free car from another
depot takes over the booking. Hard: the transfer looks feasible until the evening rush slows
every road out of the drop-off depot, and a car from elsewhere must take over. Impossible:
nothing else of the class can be there in time.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np

from sttgym.envs.arena.carrental.generator import (Booking, cannot, car, iso, make_task, new_world, rid, tell,
                                                   user_profile)
from sttgym.task import Call, Task
from sttgym.triggers import Mutation, Trigger

RUSH = 35  # extra minutes the evening rush adds to every road out of the drop-off depot


def build(rng: np.random.Generator, level: str) -> Task:
    base = new_world(rng)
    cls, s = base.focus, base.state
    depot = base.pick(base.depots_in(base.pick(["business", "residential"])))
    others = sorted(d for d in s["depots"] if d != depot)
    dropoff = base.pick(others)
    donor_depot = base.pick([d for d in others if d != dropoff])
    m_drop = base.minutes(dropoff, depot)
    # Pickup this afternoon. The late drop-off leaves ten minutes to spare for a transfer (easy, and hard
    # until the rush), or misses by ten (medium, impossible); any other depot is hours early.
    pickup = base.start + timedelta(minutes=5 * int(rng.integers(30, 40)))
    slack = 10 if level in ("easy", "hard") else -10
    late = pickup - timedelta(minutes=m_drop + slack)
    due = late - timedelta(minutes=5 * int(rng.integers(6, 10)))
    ret = base.at(1 + int(rng.integers(1, 3)), int(rng.integers(9, 18)))
    b = Booking(base.user, cls, depot, pickup, ret)
    s["customers"][base.user]["payment_limit"] = base.price(depot, cls, pickup, ret) + 50 * int(rng.integers(1, 5))
    first = base.add_vehicle(depot, cls, available_from=due)

    dropped_late = Trigger(
        name="late_dropoff", description=f"{first}'s renter will drop it at {dropoff} at {iso(late)}, not at {depot}",
        activation=["get_rental_quote", "get_customer_profile"],
        condition=lambda st, ctx: any(r["customer"] == b.customer and r["vehicle"] == first
                                      and r["status"] in ("held", "confirmed") for r in st["reservations"].values()),
        mutations=[Mutation(("vehicles", first, "depot"), depot, dropoff),
                   Mutation(("vehicles", first, "available_from"), iso(due), iso(late))],
        observable_via="get_vehicle_status")
    triggers = [dropped_late]
    head = [b.search(), b.hold(first), b.quote()]
    nominal = head + [b.confirm()]
    status = Call(name="get_vehicle_status", arguments={"vehicle_id": first})
    route = lambda o: Call(name="plan_route", arguments={"origin_id": o, "destination_id": depot})  # noqa: E731
    move = lambda v: Call(name="transfer_vehicle", arguments={"vehicle_id": v, "to_depot_id": depot})  # noqa: E731
    swap = lambda v: Call(name="swap_reservation_vehicle", arguments={"reservation_id": rid("hold"),  # noqa: E731
                                                                     "vehicle_id": v})
    impossible = None
    if level == "easy":
        oracle = head + [status, route(dropoff), move(first), b.confirm()]
    elif level == "medium":
        donor = base.add_vehicle(donor_depot, cls)
        oracle = head + [status, route(dropoff), b.search(donor_depot), move(donor), swap(donor), b.confirm()]
    elif level == "hard":
        donor = base.add_vehicle(donor_depot, cls)
        triggers.append(Trigger(
            name="evening_rush", description=f"the evening rush adds {RUSH} minutes to every road out of {dropoff}",
            activation=["plan_route", "list_customer_reservations"],
            condition=lambda st, ctx: st["vehicles"][first]["depot"] == dropoff,
            mutations=[Mutation(("roads", r, "minutes"), x["minutes"], x["minutes"] + RUSH)
                       for r, x in sorted(s["roads"].items()) if dropoff in (x["a"], x["b"])],
            observable_via="plan_route"))
        nominal.append(b.verify())
        oracle = head + [status, route(dropoff), b.search(donor_depot), route(donor_depot), move(donor), swap(donor),
                         b.confirm(), b.verify()]
    else:
        base.add_vehicle(depot, cls, status="maintenance")
        oracle = head + [status, route(dropoff), b.search(), tell(
            f"I'm sorry, I cannot have {car(cls)} ready at {depot} at {iso(pickup)}: {first} is now returned late, "
            f"at {dropoff} at {iso(late)}, {m_drop} minutes away, and the depot's other "
            f"{car(cls, article=False)} is in the workshop.")]
        impossible = cannot(base, ["late", "returned", dropoff], "a car that cannot be there at pickup")

    customer = s["customers"][base.user]
    query = (f"Hello, this is {customer['name']}, customer {base.user}. Please book me {car(cls)} at "
             f"{base.name(depot)} ({depot}) for this afternoon: pickup {iso(pickup)} sharp, return there "
             f"{iso(ret)}. Hold a car, check the price and confirm it.")
    answers = {("car", "vehicle", "another", "other"): f"Any {car(cls, article=False)} is fine.",
               ("time", "later", "pickup", "wait"): f"I have to leave at {iso(pickup)}; I can't wait for a car."}
    insist = f"I must drive off from {depot} at {iso(pickup)}; a later car is no use." if impossible else None
    profile = user_profile(base, "a customer with an afternoon appointment", [f"customer id {base.user}",
                           f"pickup depot {depot}", f"pickup {iso(pickup)}"], answers, insist=insist)
    checks = b.checks()
    return make_task(base, query, profile, triggers, checks, nominal, oracle, impossible)

