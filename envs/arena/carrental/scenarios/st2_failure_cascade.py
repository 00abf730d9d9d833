"""ST2 Failure Cascade: a power failure at the charging hub spreads to the cars and depots that rely on it.

The user wants an electric car with at least 80% charge, collected at their suburban depot.
The hub has one: the agent charges it, drives it over and books it. The hub's power fails
(visible in ``get_depot_info``; the car's charge in ``get_vehicle_status``). Easy: the failure
hits as soon as the hub's cars are looked up, so the charge cannot start; a charged car from
the hub's sister depot goes instead. Medium: it hits mid-charge, after the agent moved on,
and the session is lost. Hard: the blackout spreads to the sister depot, whose streets are
closed with the traffic lights out, so a car comes from across town and is charged there
first. Impossible: the blackout takes every charger near the only electric cars of the class.
"""

from __future__ import annotations

import numpy as np

from sttgym.envs.arena.carrental.generator import Booking, cannot, car, iso, make_task, new_world, tell, user_profile
from sttgym.task import Call, Task
from sttgym.triggers import Mutation, Trigger

NEEDED = 80  # percent of charge the user needs at pickup
NOTICE = "Power failure: chargers offline"


def _power_down(site: str) -> list[Mutation]:
    return [Mutation(("depots", site, "charger"), True, False), Mutation(("depots", site, "notice"), "", NOTICE)]


def build(rng: np.random.Generator, level: str) -> Task:
    base = new_world(rng)
    cls, s = base.focus, base.state
    depot = base.pick(base.depots_in("residential"))
    hub, sister = [base.depots_in("business")[int(i)] for i in rng.permutation(2)]
    far = base.pick(base.depots_in("airport"))
    for site in (hub, sister, far):
        s["depots"][site]["charger"] = True
    pickup, ret = base.trip()
    b = Booking(base.user, cls, depot, pickup, ret)
    s["customers"][base.user]["payment_limit"] = base.price(depot, cls, pickup, ret) + 50 * int(rng.integers(1, 5))
    low = int(rng.integers(35, 60))
    first = base.add_vehicle(hub, cls, energy="electric", fuel=low)
    move = lambda v: Call(name="transfer_vehicle", arguments={"vehicle_id": v, "to_depot_id": depot})  # noqa: E731
    charge = lambda v: Call(name="refuel_vehicle", arguments={"vehicle_id": v})  # noqa: E731
    status = Call(name="get_vehicle_status", arguments={"vehicle_id": first})
    info = Call(name="get_depot_info", arguments={"depot_id": hub})
    plan = Call(name="plan_route", arguments={"origin_id": hub, "destination_id": depot})
    triggers: list[Trigger] = []
    impossible = None

    if level == "easy":
        triggers.append(Trigger(
            name="hub_power_failure", description=f"the power fails at {hub}: its chargers go offline",
            activation=["search_available_vehicles"], timing="after",
            condition=lambda st, ctx: ctx.arguments.get("depot_id") == hub
            and st["vehicles"][first]["fuel_pct"] < NEEDED,
            mutations=_power_down(hub), observable_via="get_depot_info"))
        spare = base.add_vehicle(sister, cls, energy="electric", fuel=int(rng.integers(85, 101)))
        nominal = [b.search(hub), charge(first), move(first), b.hold(first), b.confirm()]
        oracle = [b.search(hub), info, b.search(sister), move(spare), b.hold(spare), b.confirm()]
    else:
        # The failure hits mid-charge: the session is lost and the battery reads as before.
        failure = Trigger(
            name="hub_power_failure", description=f"the power fails at {hub} mid-charge: {first} is back at {low}%",
            activation=["plan_route", "get_vehicle_status", "get_depot_info", "get_rental_quote"],
            condition=lambda st, ctx: st["vehicles"][first]["fuel_pct"] == 100
            and st["vehicles"][first]["depot"] == hub,
            mutations=[*_power_down(hub), Mutation(("vehicles", first, "fuel_pct"), 100, low)],
            observable_via="get_vehicle_status")
        triggers.append(failure)
        head = [b.search(hub), charge(first), plan]
        nominal = head + [move(first), b.hold(first), b.confirm()]
        if level == "medium":
            spare = base.add_vehicle(sister, cls, energy="electric", fuel=int(rng.integers(85, 101)))
            oracle = head + [status, info, b.search(sister), move(spare), b.hold(spare), b.confirm()]
        elif level == "hard":
            base.add_vehicle(sister, cls, energy="electric", fuel=int(rng.integers(85, 101)))
            spare = base.add_vehicle(far, cls, energy="electric", fuel=int(rng.integers(30, 60)))
            streets = sorted(r for r, x in s["roads"].items() if sister in (x["a"], x["b"]))
            triggers.append(Trigger(
                name="blackout_spreads", description=f"the blackout spreads to {sister}: chargers off, streets closed",
                activation=["get_vehicle_status", "get_depot_info", "search_available_vehicles",
                            "list_customer_reservations"],
                condition=lambda st, ctx: not st["depots"][hub]["charger"],
                mutations=[*_power_down(sister), *[Mutation(("roads", r, "open"), True, False) for r in streets]],
                observable_via="plan_route"))
            nominal.append(b.verify())
            oracle = head + [status, info, b.search(sister),
                             Call(name="plan_route", arguments={"origin_id": sister, "destination_id": depot}),
                             b.search(far), charge(spare), move(spare), b.hold(spare), b.confirm(), b.verify()]
        else:
            failure.mutations += _power_down(sister)
            base.add_vehicle(sister, cls, energy="electric", fuel=int(rng.integers(30, 60)))
            oracle = head + [status, info, b.search(sister), tell(
                f"I'm sorry, I cannot get you an electric {car(cls, article=False)} with {NEEDED}% charge at "
                f"{depot}: a power failure at {hub} took its chargers offline and cut {first}'s charge back to "
                f"{low}%, and the outage also took out the chargers at {sister}, where the only other one is.")]
            impossible = cannot(base, ["power failure", "outage", "charger"], "an electric car without enough charge")

    customer = s["customers"][base.user]
    query = (f"Hi, {customer['name']} here, customer {base.user}. I need an electric {car(cls, article=False)} with "
             f"at least {NEEDED}% charge for a long drive, collected at {base.name(depot)} ({depot}) at "
             f"{iso(pickup)} and returned there {iso(ret)}. The charging hub {base.name(hub)} ({hub}) has one; "
             f"please charge it, have it driven over and book it for me.")
    answers = {("electric", "petrol", "fuel", "ev"): "It has to be electric; I charge at home at the other end.",
               ("car", "vehicle", "another", "other", "depot"): f"Any electric {car(cls, article=False)} is fine, "
               f"from any depot, as long as I collect it at {depot}."}
    insist = (f"I need an electric {car(cls, article=False)} with at least {NEEDED}% at {depot} at {iso(pickup)}; "
              f"nothing else will do." if impossible else None)
    profile = user_profile(base, "an electric-car driver", [f"customer id {base.user}", f"pickup depot {depot}",
                           f"hub {hub}"], answers, insist=insist)
    checks = b.checks(fuel=NEEDED, energy="electric")
    return make_task(base, query, profile, triggers, checks, nominal, oracle, impossible)
