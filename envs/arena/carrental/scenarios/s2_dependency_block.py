"""S2 Dependency Block: a safety lockdown at the hub halts every dispatch that depends on it.

The user's home depot has no car of the class, so one is to be driven over from the hub and
booked there. A safety inspection locks the hub down (visible in ``get_depot_info``): nothing
may leave it. Easy: the lockdown starts as soon as the move is planned; the car comes from
another depot instead. Medium: it starts after the car has left, and the car is recalled
to the hub, which only shows when the booking is confirmed; another car must be driven over
and put on the booking. Hard: the lockdown widens to the hub's whole zone, so the sister depot
is closed too and a car comes, refuelled, from across town. Impossible: the hub holds the
only free car of the class.
"""

from __future__ import annotations

import numpy as np

from sttgym.envs.arena.carrental.generator import (Booking, cannot, car, iso, make_task, new_world, rid, tell,
                                                   user_profile)
from sttgym.task import Call, Task
from sttgym.triggers import Mutation, Trigger

NOTICE = "Safety inspection: no vehicle may leave or be handed out"


def _lockdown(site: str, extra: tuple[Mutation, ...] = (), description: str = "", **trigger) -> Trigger:
    mutations = [Mutation(("depots", site, "status"), "open", "locked_down"),
                 Mutation(("depots", site, "notice"), "", NOTICE), *extra]
    return Trigger(name=f"lockdown_{site}", description=description or f"a safety inspection locks down {site}",
                   mutations=mutations, observable_via="get_depot_info", **trigger)


def build(rng: np.random.Generator, level: str) -> Task:
    base = new_world(rng)
    cls, s = base.focus, base.state
    depot = base.pick(base.depots_in("residential"))
    hub, sister = [base.depots_in("business")[int(i)] for i in rng.permutation(2)]
    far = base.pick(base.depots_in("airport"))
    pickup, ret = base.trip()
    b = Booking(base.user, cls, depot, pickup, ret)
    s["customers"][base.user]["payment_limit"] = base.price(depot, cls, pickup, ret) + 50 * int(rng.integers(1, 5))
    first = base.add_vehicle(hub, cls)
    move = lambda v: Call(name="transfer_vehicle", arguments={"vehicle_id": v, "to_depot_id": depot})  # noqa: E731
    info = Call(name="get_depot_info", arguments={"depot_id": hub})
    plan = Call(name="plan_route", arguments={"origin_id": hub, "destination_id": depot})
    head = [b.search(hub), plan]
    impossible = None
    planned_from_hub = dict(activation=["plan_route"], timing="after",
                            condition=lambda st, ctx: ctx.arguments.get("origin_id") == hub
                            and st["vehicles"][first]["depot"] == hub)

    if level == "medium":
        # The lockdown catches the car on the road: it is recalled once the agent reads anything after dispatch.
        triggers = [_lockdown(hub, activation=["get_rental_quote", "get_reservation", "get_vehicle_status",
                                               "list_customer_reservations", "get_customer_profile"],
                              condition=lambda st, ctx: st["vehicles"][first]["depot"] == depot
                              and any(t["vehicle"] == first and t["origin"] == hub for t in st["transfers"].values()),
                              extra=(Mutation(("vehicles", first, "depot"), depot, hub),),
                              description=f"a safety inspection locks down {hub} and recalls {first} from the road")]
        spare = base.add_vehicle(sister, cls)
        nominal = head + [move(first), b.hold(first), b.quote(), b.confirm()]
        oracle = head + [move(first), b.hold(first), b.quote(), Call(name="get_vehicle_status", arguments={
            "vehicle_id": first}), b.search(sister), move(spare),
            Call(name="swap_reservation_vehicle", arguments={"reservation_id": rid("hold"), "vehicle_id": spare}),
            b.confirm()]
    else:
        triggers = [_lockdown(hub, **planned_from_hub)]
        nominal = head + [move(first), b.hold(first), b.confirm()]
        if level == "easy":
            spare = base.add_vehicle(sister, cls)
            oracle = head + [info, b.search(sister), move(spare), b.hold(spare), b.confirm()]
        elif level == "hard":
            base.add_vehicle(sister, cls)
            spare = base.add_vehicle(far, cls, fuel=int(rng.integers(8, 20)))
            zone = base.zone(hub)
            triggers.append(_lockdown(sister, activation=["get_depot_info", "search_available_vehicles", "plan_route",
                                                          "list_depots", "list_customer_reservations"],
                                      condition=lambda st, ctx: st["depots"][hub]["status"] == "locked_down",
                                      description=f"the inspection widens to the whole of {zone}: {sister} too"))
            nominal.append(b.verify())
            oracle = head + [info, b.search(sister), Call(name="list_depots", arguments={}), b.search(far),
                             Call(name="plan_route", arguments={"origin_id": far, "destination_id": depot}),
                             Call(name="refuel_vehicle", arguments={"vehicle_id": spare}), move(spare), b.hold(spare),
                             b.confirm(), b.verify()]
        else:
            base.add_vehicle(sister, cls, status="maintenance")
            oracle = head + [info, b.search(sister), b.search(far), tell(
                f"I'm sorry, I cannot get {car(cls)} to {depot} for you: the hub {hub}, which holds the only free "
                f"{car(cls, article=False)}, is locked down for a safety inspection and no vehicle may leave it.")]
            impossible = cannot(base, ["locked", "lockdown", "inspection"], "a car that cannot reach the depot")

    customer = s["customers"][base.user]
    query = (f"Hello, {customer['name']} (customer {base.user}). My local depot {base.name(depot)} ({depot}) has no "
             f"{car(cls, article=False)} on site, and they told me one can be driven over from the "
             f"{base.name(hub)} hub ({hub}). Please have one brought over and book it for me, pickup at {depot} "
             f"{iso(pickup)}, return there {iso(ret)}.")
    answers = {("hub", "depot", "another", "other", "elsewhere", "different"):
               f"Any depot can send the car, as long as I collect it at {depot}.",
               ("car", "vehicle"): f"Any {car(cls, article=False)} will do."}
    insist = f"I can only collect at {depot} at {iso(pickup)}; please don't change that." if impossible else None
    profile = user_profile(base, "a customer of a suburban depot", [f"customer id {base.user}",
                           f"pickup depot {depot}", f"hub {hub}"], answers, insist=insist)
    checks = b.checks()
    return make_task(base, query, profile, triggers, checks, nominal, oracle, impossible)
