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

from sttgym.authoring import Author, Plan
from sttgym.envs.arena.carrental.generator import Request, make_task, new_city, one
from sttgym.geo import shortest_route
from sttgym.task import Task

NEEDED = 80  # percent of charge the user needs at pickup
NOTICE = "Power failure: chargers offline"


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s, call, pred, op = city.state, author.call, author.pred, author.op
    depot = one(author, city.depots_in("residential"))
    hub, sister = (city.depots_in("business")[int(i)] for i in author.rng.permutation(2))
    # Across town: a depot still reachable once the sister depot's streets close.
    far = next(d for d in city.depots_in("airport") + city.depots_in("residential")
               if d != depot and shortest_route(s["roads"], d, depot, {sister}))
    for site, charger in ((hub, True), (sister, True), (far, True), (depot, False)):
        s["depots"][site]["charger"] = charger
    pickup, ret = city.trip()
    city.afford(depot, city.focus, pickup, ret)
    low = author.integer(35, 60)
    first = city.add_vehicle(hub, city.focus, energy="electric", fuel=low)
    req = Request(city, depot, pickup, ret, min_fuel=NEEDED, energy="electric")
    plan = Plan(look=[req.search(hub)], charge=[call.refuel_vehicle(vehicle_id=first)], route=[req.route(hub)],
                move=[req.move(first)], book=[req.hold(first), req.confirm()])

    def power_down(*sites: str) -> list:
        return [op.set_field(path=["depots", d, k], value=v) for d in sites for k, v in (("charger", False),
                                                                                       ("notice", NOTICE))]

    info = call.get_depot_info(depot_id=hub)
    impossible = None
    if level == "easy":
        triggers = [city.trigger(
            "hub_power_failure", f"the power fails at {hub} as a charge starts: its chargers go offline",
            pred.call_argument(name="vehicle_id", value=first), power_down(hub), "get_depot_info", {"depot_id": hub},
            activation=["refuel_vehicle"])]
        spare = city.add_vehicle(sister, city.focus, energy="electric", fuel=author.integer(85, 100))
        oracle = plan.upto("charge") + [info, req.depots(), req.search(sister), req.move(spare), req.hold(spare),
                                        req.confirm()]
        return _task(req, triggers, plan, oracle, hub)
    drained = low - author.integer(5, 15)
    blackout = sorted(s["depots"]) if level == "impossible" else [hub]
    triggers = [city.trigger(
        "hub_power_failure", f"the power fails at {hub} mid-charge: {first}'s session is lost",
        pred.all_of(preds=[pred.call_argument(name="vehicle_id", value=first),
                           pred.field_equals(path=["vehicles", first, "fuel_pct"], value=100)]),
        power_down(*blackout) + [op.set_field(path=["vehicles", first, "fuel_pct"], value=drained)],
        "get_vehicle_status", {"vehicle_id": first}, activation=["transfer_vehicle"])]
    head = plan.upto("move") + [req.status(first), info, req.depots(), req.search(sister)]
    if level == "medium":
        spare = city.add_vehicle(sister, city.focus, energy="electric", fuel=author.integer(85, 100))
        oracle = head + [req.move(spare), req.hold(spare), req.confirm()]
    elif level == "hard":
        city.add_vehicle(sister, city.focus, energy="electric", fuel=author.integer(85, 100))
        spare = city.add_vehicle(far, city.focus, energy="electric", fuel=author.integer(30, 60))
        streets = [op.set_field(path=["roads", r, "open"], value=False)
                   for r, x in sorted(s["roads"].items()) if sister in (x["a"], x["b"])]
        triggers.append(city.trigger(
            "blackout_spreads", f"the blackout spreads to {sister}: chargers off, streets closed",
            pred.field_equals(path=["depots", hub, "charger"], value=False), power_down(sister) + streets,
            "plan_route", {"origin_id": sister, "destination_id": depot}))
        oracle = head + [req.route(sister), req.search(far), call.refuel_vehicle(vehicle_id=spare), req.move(spare),
                         req.hold(spare), req.confirm()]
    else:
        city.add_vehicle(sister, city.focus, energy="electric", fuel=author.integer(30, 60))
        oracle = head + [req.tell(
            f"I'm sorry, I can't get you an electric {city.focus} with {NEEDED}% charge at {depot}: a power failure "
            f"took every charger in the city offline, {first} is down to {drained}% and the only other one, at "
            f"{sister}, cannot be charged either.")]
        impossible = req.refusal(["hub_power_failure"], [f"{drained}%"])
    return _task(req, triggers, plan, oracle, hub, impossible)


def _task(req: Request, triggers: list, plan: Plan, oracle: list, hub: str, impossible=None) -> Task:
    city = req.city
    name = city.state["customers"][city.user]["name"]
    query = (f"Hi, {name} here, customer {city.user}. I need an electric {city.focus} (class {city.focus}) with "
             f"at least {NEEDED}% charge for a long drive, collected at {city.name(req.depot)} ({req.depot}) at "
             f"{req.pickup} and returned there {req.ret}. The charging hub {city.name(hub)} ({hub}) has one; "
             f"please charge it, have it driven over and book it for me.")
    answers = {("electric", "petrol", "fuel", "ev"): "It has to be electric; I charge at home at the other end.",
               ("car", "vehicle", "another", "other", "depot"): f"Any electric {city.focus} is fine, from any "
               f"depot, as long as I collect it at {req.depot}."}
    return make_task(req, query, triggers, plan.calls, oracle, "an electric-car driver", answers, impossible,
                     insist=f"I need an electric car with at least {NEEDED}% at {req.depot} at {req.pickup}.")
