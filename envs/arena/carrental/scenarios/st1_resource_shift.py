"""ST1 Resource Shift: the morning peak pulls free cars out of the residential depot.

The user wants a car from their suburban depot. The agent checks the customer and the price
first; as it goes to hold a car, the commuter peak starts and the fleet desk moves the
depot's unreserved cars of the class to where demand is (visible in
``search_available_vehicles``). Easy: one car is moved, the other is still there. Medium:
every car of the class leaves; one is snapped up at the business depot, the other waits at
the airport and must be driven back. Hard: the airport car is snapped up too when its peak
starts, and the car from a neighbouring suburb must be fuelled before it comes over.
Impossible: both cars are moved, and each is booked by another customer where it went, so
neither can be driven back (``get_vehicle_status`` lists the booking; the transfer is refused):
the refusal must say so besides the move.

The peak starts as the first hold at the depot is placed, before it: at easy an agent that holds the
car the peak leaves behind never meets the change, and books as well as one that recovered.
"""

from __future__ import annotations

from sttgym.clock import shift
from sttgym.envs.arena.carrental.generator import Author, Plan, Task, car, make_task, new_city, one

MOVES = {  # per car of the depot: where the peak sends it, and whether demand there books it at once
    "easy": [("business", True)], "medium": [("business", True), ("airport", False)],
    "hard": [("business", True), ("airport", False)], "impossible": [("business", True), ("airport", True)]}


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    depot = city.depot("residential")
    sites = {kind: one(author, city.depots_in(kind)) for kind in ("business", "airport")}
    pickup, ret = city.trip()
    req = city.request(depot, pickup, ret, moves=level)
    cars = [city.add_vehicle(depot, city.focus) for _ in range(2)]

    absorbing = []  # the peak-demand bookings' ids

    def absorbed(vehicle: str, kind: str):  # a peak-demand booking that takes the car for the user's whole trip
        ident, add = city.taken(vehicle, sites[kind], shift(pickup, hours=-4), shift(ret, hours=6))
        absorbing.append(ident)
        return add

    effect = [city.set("zones", city.zone(depot), "demand", value="low"),
              city.set("zones", city.zone(sites["business"]), "demand", value="peak")]
    for vehicle, (kind, taken) in zip(cars, MOVES[level]):
        effect += [city.set("vehicles", vehicle, "depot", value=sites[kind])] + [absorbed(vehicle, kind)] * taken
    triggers = [city.on_hold(
        "commuter_peak_shift", f"the commuter peak starts: unreserved {city.focus} cars leave {depot}", effect,
        ("search_available_vehicles", depot),
        author.pred.call_argument(name="pickup_depot_id", value=depot), timing="before")]
    plan = Plan(look=[req.search(), req.profile(), req.quote()], book=[req.hold(cars[0])], confirm=[req.confirm()])
    sweep = [req.depots(), req.search(sites["business"]), req.search(sites["airport"])]

    def hard() -> list:
        neighbour = city.nearest(depot, city.depots_in("residential"))[0]
        spare = city.add_vehicle(neighbour, city.focus, fuel=author.integer(8, 20))
        triggers.append(city.cascade(
            "airport_peak_absorbs", f"the airport peak books {cars[1]} once it waits at {sites['airport']}",
            ["vehicles", cars[1], "depot"], sites["airport"], [absorbed(cars[1], "airport")],
            ("search_available_vehicles", sites["airport"])))
        return [req.search(neighbour), author.call.refuel_vehicle(vehicle_id=spare), req.move(spare),
                *req.book(spare, "again")]

    fixes = {
        "easy": lambda: req.book(cars[1], "again"),
        "medium": lambda: [*sweep, req.move(cars[1]), *req.book(cars[1], "again")],
        "hard": lambda: sweep + hard(),
        "impossible": lambda: sweep + [req.status(v) for v in cars] + req.refuse(
            f"I can't book {car(city.focus)} at {depot}: with the commuter peak both of the depot's cars were moved, "
            f"to {sites['business']} and {sites['airport']}, and neither can be brought back: each was booked there "
            f"at once by another customer ({' and '.join(absorbing)}).",
            ["commuter_peak_shift"], [*sites.values(), "commuter peak", "cars moved", "peak moved"],
            [*absorbing, "booked there", "another customer", "booked by another", "snapped up"])}
    oracle = plan.upto("book") + [req.search()] + fixes[level]()
    left = [plan.upto("look") + [req.hold(cars[1]), req.confirm()]] if level == "easy" else []  # the car left
    req.asked = (f"rent {car(city.focus)} from my local depot, {city.name(depot)} ({depot}), from {pickup} to {ret}, "
                 "returning it there")
    query = (f"Good morning, this is {req.who}. I'd like to {req.asked}. Please check my licence and the price first, "
             "then book it.")
    return make_task(req, query, triggers, plan, oracle, "a suburban customer", {
        ("depot", "collect", "elsewhere"): f"I collect at {depot}; I can't get anywhere else."}, alternatives=left,
        insist=f"{req.constraints()}; any car of the class will do, wherever it comes from.")
