"""ST2 Failure Cascade: a power failure at the charging hub spreads to the cars and depots that rely on it.

The user wants an electric car with at least 80% charge, collected at their suburban depot.
The hub has one: the agent charges it, drives it over and books it. The hub's power fails
(visible in ``get_depot_info``; the car's charge in ``get_vehicle_status``). Easy: the
failure hits as the charge starts, so it cannot; a charged car from the hub's sister depot
goes instead. Medium: it hits as the charged car leaves: the session is lost and the battery
drained. Hard: the blackout spreads to the sister depot, whose streets close with the
traffic lights out, so a car comes from across town and is charged there first. Impossible:
the blackout takes every charger in the city.
"""

from __future__ import annotations

from sttgym.envs.arena.carrental.generator import Author, Plan, Task, make_task, new_city
from sttgym.geo import shortest_route

NEEDED = 80  # percent of charge the user needs at pickup
NOTICE = "Power failure: chargers offline"
SISTER_CHARGE = {"easy": (85, 100), "medium": (85, 100), "hard": (85, 100), "impossible": (30, 60)}  # its car


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s, call, pred = city.state, author.call, author.pred
    depot = city.depot("residential")
    hub, sister = (city.depots_in("business")[int(i)] for i in author.rng.permutation(2))
    # Across town: a depot still reachable once the sister depot's streets close.
    far = next(d for d in city.depots_in("airport") + city.depots_in("residential")
               if d != depot and shortest_route(s["roads"], d, depot, {sister}))
    for site, charger in ((hub, True), (sister, True), (far, True), (depot, False)):
        s["depots"][site]["charger"] = charger
    pickup, ret = city.trip()
    req = city.request(depot, pickup, ret, min_fuel=NEEDED, energy="electric")
    first = city.add_vehicle(hub, city.focus, energy="electric", fuel=(low := author.integer(35, 60)))
    plan = Plan(look=[req.search(hub)], charge=[call.refuel_vehicle(vehicle_id=first)], route=[req.route(hub)],
                move=[req.move(first)], book=req.book(first))
    drained = low - author.integer(5, 15)
    spare = city.add_vehicle(sister, city.focus, energy="electric", fuel=author.integer(*SISTER_CHARGE[level]))

    def power_down(*sites: str) -> list:
        return [op for d in sites for op in city.sets("depots", d, charger=False, notice=NOTICE)]

    if level == "easy":  # it hits as the charge starts
        triggers = [city.trigger(
            "hub_power_failure", f"the power fails at {hub} as a charge starts: its chargers go offline",
            pred.call_argument(name="vehicle_id", value=first), power_down(hub),
            ("get_depot_info", hub), activation=["refuel_vehicle"])]
    else:  # it hits as the charged car leaves
        triggers = [city.trigger(
            "hub_power_failure", f"the power fails at {hub} mid-charge: {first}'s session is lost",
            pred.all_of(preds=[pred.call_argument(name="vehicle_id", value=first),
                               pred.field_equals(path=["vehicles", first, "fuel_pct"], value=100)]),
            power_down(*(sorted(s["depots"]) if level == "impossible" else [hub]))
            + city.sets("vehicles", first, fuel_pct=drained), ("get_vehicle_status", first),
            activation=["transfer_vehicle"])]

    def hard() -> list:
        far_car = city.add_vehicle(far, city.focus, energy="electric", fuel=author.integer(30, 60))
        triggers.append(city.cascade(
            "blackout_spreads", f"the blackout spreads to {sister}: chargers off, streets closed",
            ["depots", hub, "charger"], False, power_down(sister) + city.cut_off(sister),
            ("plan_route", {"origin_id": sister, "destination_id": depot})))
        return [req.route(sister), req.search(far), call.refuel_vehicle(vehicle_id=far_car), req.move(far_car),
                *req.book(far_car)]

    seen = [call.get_depot_info(depot_id=hub), req.depots(), req.search(sister)]
    stale = plan.upto("move") + [req.status(first)] + seen  # the charged car left drained
    fixes = {
        "easy": lambda: plan.upto("charge") + seen + [req.move(spare), *req.book(spare)],
        "medium": lambda: stale + [req.move(spare), *req.book(spare)],
        "hard": lambda: stale + hard(),
        "impossible": lambda: stale + req.refuse(
            f"I can't get you an electric {city.focus} with {NEEDED}% charge at {depot}: a power failure took every "
            f"charger in the city offline, {first} is down to {drained}% and the only other one, at {sister}, "
            f"cannot be charged either.", ["hub_power_failure"], [f"{drained}%"])}
    query = (f"Hi, {req.who} here. I need an electric {city.focus} (class {city.focus}) with at least {NEEDED}% "
             f"charge for a long drive, collected at {city.name(depot)} ({depot}) at {pickup} and returned there "
             f"{ret}. The charging hub {city.name(hub)} ({hub}) has one; please charge it, have it driven over and "
             f"book it for me.")
    return make_task(req, query, triggers, plan, fixes[level](), "an electric-car driver", {
        ("electric", "petrol", "fuel", "ev"): "It has to be electric; I charge at home at the other end.",
        ("car", "vehicle", "another", "other", "depot"): f"Any electric {city.focus} is fine, from any depot, as "
        f"long as I collect it at {depot}."}, insist=f"I need an electric car with at least {NEEDED}% at {depot} "
        f"at {pickup}.")
