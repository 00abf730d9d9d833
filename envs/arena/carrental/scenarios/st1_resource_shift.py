"""ST1 Resource Shift: the morning peak pulls free cars out of the residential depot.

The user wants a car from their suburban depot. The agent checks the customer and the price
first; as it goes to hold a car, the commuter peak starts and the fleet desk moves the
depot's unreserved cars of the class to where demand is (visible in
``search_available_vehicles``). Easy: one car is moved, the other is still there. Medium:
every car of the class leaves; one is snapped up at the business depot, the other waits at
the airport and must be driven back. Hard: the airport car is snapped up too when its peak
starts, and the car from a neighbouring suburb must be fuelled before it comes over.
Impossible: every car of the class is moved and booked where it went.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.authoring import Author, Plan
from sttgym.envs.arena.carrental.generator import City, Request, car, iso, make_task, new_city, one
from sttgym.task import Task

_MOVES = {  # per car of the depot: where the peak sends it, and whether demand there books it at once
    "easy": [("business", True)], "medium": [("business", True), ("airport", False)],
    "hard": [("business", True), ("airport", False)], "impossible": [("business", True), ("airport", True)]}


def _absorbed(city: City, req: Request, vehicle: str, where: str) -> list:
    """A peak-demand booking at ``where`` that takes ``vehicle`` for the user's whole trip."""
    web, record = city.booking_by_other(vehicle, where, iso(datetime.fromisoformat(req.pickup) - timedelta(hours=4)),
                                        iso(datetime.fromisoformat(req.ret) + timedelta(hours=6)))
    return [city.author.op.set_field(path=["reservations", web], value=record)]


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s, call, pred, op = city.state, author.call, author.pred, author.op
    depot = one(author, city.depots_in("residential"))
    sites = {kind: one(author, city.depots_in(kind)) for kind in ("business", "airport")}
    pickup, ret = city.trip()
    city.afford(depot, city.focus, pickup, ret)
    cars = [city.add_vehicle(depot, city.focus) for _ in range(2)]
    req = Request(city, depot, pickup, ret)
    home, work = city.zone(depot), city.zone(sites["business"])
    effect = [op.set_field(path=["zones", home, "demand"], value="low"),
              op.set_field(path=["zones", work, "demand"], value="peak")]
    for vehicle, (kind, taken) in zip(cars, _MOVES[level]):
        effect.append(op.set_field(path=["vehicles", vehicle, "depot"], value=sites[kind]))
        effect += _absorbed(city, req, vehicle, sites[kind]) if taken else []
    triggers = [city.trigger(
        "commuter_peak_shift", f"the commuter peak starts: unreserved {city.focus} cars leave {depot}",
        pred.call_argument(name="pickup_depot_id", value=depot), effect,
        "search_available_vehicles", {"depot_id": depot}, activation=["hold_vehicle"])]
    plan = Plan(look=[req.search(), req.profile(), req.quote()], book=[req.hold(cars[0])], confirm=[req.confirm()])

    head = plan.upto("book") + [req.search()]
    sweep = [req.depots(), req.search(sites["business"]), req.search(sites["airport"])]
    impossible = None
    if level == "easy":
        oracle = head + [req.hold(cars[1], "again"), req.confirm("again")]
    elif level == "medium":
        oracle = head + sweep + [req.move(cars[1]), req.hold(cars[1], "again"), req.confirm("again")]
    elif level == "hard":
        neighbour = city.nearest(depot, city.depots_in("residential"))[0]
        spare = city.add_vehicle(neighbour, city.focus, fuel=author.integer(8, 20))
        triggers.append(city.trigger(
            "airport_peak_absorbs", f"the airport peak books {cars[1]} once it waits at {sites['airport']}",
            pred.field_equals(path=["vehicles", cars[1], "depot"], value=sites["airport"]),
            _absorbed(city, req, cars[1], sites["airport"]), "search_available_vehicles",
            {"depot_id": sites["airport"]}))
        oracle = head + sweep + [req.search(neighbour), call.refuel_vehicle(vehicle_id=spare), req.move(spare),
                                 req.hold(spare, "again"), req.confirm("again")]
    else:
        oracle = head + sweep + [req.tell(
            f"I'm sorry, I can't book {car(city.focus)} at {depot}: with the commuter peak both of the depot's cars "
            f"were moved, to {sites['business']} and {sites['airport']}, and booked there at once; no other one "
            f"is free.")]
        impossible = req.refusal(["commuter_peak_shift"], list(sites.values()))

    name = s["customers"][city.user]["name"]
    query = (f"Good morning, this is {name} (customer {city.user}). I'd like to rent {car(city.focus)} from my "
             f"local depot, {city.name(depot)} ({depot}), from {pickup} to {ret}, returning it there. Please check "
             f"my licence and the price first, then book it.")
    answers = {("car", "vehicle", "another", "other"): f"Any {city.focus} is fine.",
               ("depot", "collect", "elsewhere"): f"I collect at {depot}; I can't get anywhere else."}
    return make_task(req, query, triggers, plan.calls, oracle, "a suburban customer", answers, impossible,
                     insist=f"I can only collect it at {depot}; nothing else works for me.")
