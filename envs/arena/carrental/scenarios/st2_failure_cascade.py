"""ST2 Failure Cascade: a power failure at the charging hub spreads to the cars and depots that rely on it.

The user wants an electric car with at least 80% charge, collected at their suburban depot.
The hub has one: the agent charges it, drives it over and books it. The hub's power fails
(visible in ``get_depot_info``; the car's charge in ``get_vehicle_status``). Easy: the
failure hits as the charge starts, so it cannot; a charged car from the hub's sister depot
goes instead. Medium: it hits as the charged car leaves: the session is lost and the battery
drained. Hard: the blackout spreads to the sister depot, whose streets close with the
traffic lights out, so a car comes from across town and is charged there first. Impossible:
the surge of the failure damages the charged car's battery (it goes to the workshop), and the
sister depot's charged car is free for the trip but reserved for another customer's pickup there,
so it may not be driven over (``get_vehicle_status``, or the refused transfer): the refusal must
say so besides the failure.
"""

from __future__ import annotations

from sttgym.envs.arena.carrental.generator import Author, Plan, Task, make_task, new_city
from sttgym.geo import shortest_route

NEEDED = 80  # percent of charge the user needs at pickup
NOTICE = "Power failure: chargers offline"
SISTER_CHARGE = {"easy": (85, 100), "medium": (85, 100), "hard": (85, 100), "impossible": (85, 100)}  # its car


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
    req = city.request(depot, pickup, ret, min_fuel=NEEDED, energy="electric", moves=level)
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
    else:  # it hits as the charged car leaves (impossible: the surge damages its battery, it goes to the workshop)
        hit = {"status": "maintenance"} if level == "impossible" else {"fuel_pct": drained}
        triggers = [city.trigger(
            "hub_power_failure", f"the power fails at {hub} mid-charge: {first}'s session is lost"
            + (", and the surge damages its battery" if level == "impossible" else ""),
            pred.all_of(preds=[pred.call_argument(name="vehicle_id", value=first),
                               pred.field_equals(path=["vehicles", first, "fuel_pct"], value=100)]),
            power_down(hub) + city.sets("vehicles", first, **hit), ("get_vehicle_status", first),
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

    def impossible() -> list:  # the sister depot's charged car is free but committed to a pickup there
        theirs = city.committed(spare, ret)
        return stale + [req.status(spare)] + req.refuse(
            f"I can't get you an electric {city.focus} with {NEEDED}% charge at {depot}: the power failure at {hub} "
            f"damaged {first}'s battery and it is now in maintenance, and the only other one, {spare} at {sister}, "
            f"is reserved for another customer's pickup there ({theirs}), so it can't be driven over.",
            ["hub_power_failure"], ["power failure", "chargers offline", "maintenance", "workshop",
                                    "battery damaged", "damaged battery"],
            [spare, theirs, "another customer", "reserved for another", "booked for pickup"])
    fixes = {
        "easy": lambda: plan.upto("charge") + seen + [req.move(spare), *req.book(spare)],
        "medium": lambda: stale + [req.move(spare), *req.book(spare)],
        "hard": lambda: stale + hard(),
        "impossible": impossible}
    req.needs = f"an electric {city.focus} (class {city.focus}) with at least {NEEDED}% charge"
    req.asked = f"collected at {city.name(depot)} ({depot}) at {pickup} and returned there {ret}"
    query = (f"Hi, {req.who} here. I need {req.needs} for a long drive, {req.asked}. The charging hub "
             f"{city.name(hub)} ({hub}) has one; please charge it, have it driven over and book it for me.")
    return make_task(req, query, triggers, plan, fixes[level](), "an electric-car driver", {
        ("electric", "petrol", "fuel", "ev"): "It has to be electric; I charge at home at the other end.",
        ("car", "vehicle", "another", "other", "depot"): f"Any electric {city.focus} is fine, from any depot, as "
        f"long as I collect it at {depot}."},
        insist=f"{req.constraints()}, electric, with at least {NEEDED}% charge; it can come from any depot.")
