"""S2 Dependency Block: a safety lockdown at the hub halts every dispatch that depends on it.

The user's home depot has no car of the class, so one is to be driven over from the hub and
booked there. A safety inspection locks the hub down (visible in ``get_depot_info``): nothing
may leave it. Easy: the lockdown starts as the car is dispatched; a car comes from the sister
depot instead. Medium: it starts after the car has left and the car is recalled to the hub,
which shows only when the booking is confirmed; another car must be driven over and put on
the booking. Hard: the lockdown widens to the sister depot too, so a car comes, refuelled,
from across town. Impossible: the hub holds the only free car of the class.
"""

from __future__ import annotations

from sttgym.envs.arena.carrental.generator import Author, Task, car, make_task, new_city

NOTICE = "Safety inspection: no vehicle may leave or be handed out"
SISTER = {"easy": "available", "medium": "available", "hard": "available", "impossible": "maintenance"}  # its car


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    call, pred = author.call, author.pred
    depot = city.depot("residential")
    hub, sister = (city.depots_in("business")[int(i)] for i in author.rng.permutation(2))
    far = city.depot("airport")
    pickup, ret = city.trip()
    first = city.add_vehicle(hub, city.focus)
    req = city.request(depot, pickup, ret)
    on_road = level == "medium"  # the lockdown catches the car on the road (and shows once it is booked)
    plan = req.delivery(hub, first, quote=on_road)
    spare = city.add_vehicle(sister, city.focus, status=SISTER[level])

    def lockdown(site: str) -> list:
        return city.sets("depots", site, status="locked_down", notice=NOTICE)

    if on_road:  # the car is recalled
        trigger = city.on_hold(
            "hub_lockdown", f"a safety inspection locks down {hub} and recalls {first} from the road",
            lockdown(hub) + city.sets("vehicles", first, depot=hub, available_from=None),
            ("get_vehicle_status", first), pred.all_of(preds=[
                pred.in_transit(vehicle_id=first), pred.has_live_booking(customer=city.user, vehicle_id=first)]))
    else:
        trigger = city.on_dispatch("hub_lockdown", f"a safety inspection locks down {hub} as {first} is dispatched",
                                   first, hub, lockdown(hub), ("get_depot_info", hub))
    triggers = [trigger]

    def hard() -> list:
        far_car = city.add_vehicle(far, city.focus, fuel=author.integer(8, 20))
        triggers.append(city.cascade("lockdown_widens", f"the inspection widens to {sister}",
                                     ["depots", hub, "status"], "locked_down", lockdown(sister),
                                     ("get_depot_info", sister)))
        return [call.get_depot_info(depot_id=sister), req.search(far), req.route(far),
                call.refuel_vehicle(vehicle_id=far_car), req.move(far_car), *req.book(far_car)]

    fixes = {
        "easy": lambda: [req.move(spare), *req.book(spare)],
        "medium": lambda: [req.move(spare), *req.take_over(spare)],
        "hard": hard,
        "impossible": lambda: req.refuse(
            f"I can't get {car(city.focus)} to {depot} for you: the hub {hub}, which has the only free one, is now "
            f"locked_down for a safety inspection and no vehicle may leave it.", ["hub_lockdown"], ["locked_down"])}
    seen = [req.status(first)] * on_road + [call.get_depot_info(depot_id=hub), req.depots(),
                                                        req.search(sister)]
    oracle = plan.upto("hold" if on_road else "move") + seen + fixes[level]()
    query = (f"Hello, {req.who}. My local depot {city.name(depot)} ({depot}) has no {city.focus} on site, and they "
             f"told me one can be driven over from the {city.name(hub)} hub ({hub}). Please have {car(city.focus)} "
             f"brought over and book it for me, pickup at {depot} {pickup}, return there {ret}.")
    return make_task(req, query, triggers, plan, oracle, "a customer of a suburban depot", {
        ("hub", "depot", "another", "other", "elsewhere", "different"): f"Any depot can send the car, as long as I "
        f"collect it at {depot}."}, insist=f"I can only collect at {depot} at {pickup}; please don't change that.")
