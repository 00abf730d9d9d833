"""S2 Dependency Block: a safety lockdown at the hub halts every dispatch that depends on it.

The user's home depot has no car of the class, so one is to be driven over from the hub and
booked there. A safety inspection locks the hub down (visible in ``get_depot_info``): nothing
may leave it. Easy: the lockdown starts as the car is dispatched; a car comes from the sister
depot instead. Medium: it starts after the car has left and the car is recalled to the hub,
which shows only when the booking is confirmed; another car must be driven over and put on
the booking. Hard: the lockdown widens to the sister depot too, so a car comes, refuelled,
from across town. Impossible: the sister depot's car is free for the trip but reserved for
another customer's pickup there, so it may not be driven over (``get_vehicle_status``, or the
refused transfer): the refusal must say so besides the lockdown.

The user has a requirement for the car on every level (see ``City.requirement``), told when asked. At
medium and hard two cars could come instead (from the sister depot, from across town) and only one of
them meets it (see ``City.rivals``): the user asked to be consulted before another car is sent.
"""

from __future__ import annotations

from sttgym.envs.arena.carrental.generator import ASK_FIRST, Author, Task, car, make_task, new_city

NOTICE = "Safety inspection: no vehicle may leave or be handed out"
SISTER = {"easy": "available", "hard": "available", "impossible": "available"}  # its car (medium: two rivals)


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    call, pred = author.call, author.pred
    depot = city.depot("residential")
    hub, sister = (city.depots_in("business")[int(i)] for i in author.rng.permutation(2))
    far = city.depot("airport")
    pickup, ret = city.trip()
    first = city.add_vehicle(hub, city.focus)
    req = city.request(depot, pickup, ret, moves=level)
    on_road = level == "medium"  # the lockdown catches the car on the road (and shows once it is booked)
    plan = req.delivery(hub, first, quote=on_road)
    spare = city.add_vehicle(sister, city.focus, status=SISTER[level]) if level in SISTER else ""

    def lockdown(site: str) -> list:
        return city.sets("depots", site, status="locked_down", notice=NOTICE)

    if on_road:  # the car is recalled
        trigger = city.on_hold(
            "hub_lockdown", f"a safety inspection locks down {hub} and recalls {first} from the road",
            lockdown(hub) + [author.op.recall(vehicle_id=first, depot_id=hub)],
            ("get_vehicle_status", first), pred.all_of(preds=[
                pred.in_transit(vehicle_id=first), pred.has_live_booking(customer=city.user, vehicle_id=first)]))
    else:
        trigger = city.on_dispatch("hub_lockdown", f"a safety inspection locks down {hub} as {first} is dispatched",
                                   first, hub, lockdown(hub), ("get_depot_info", hub))
    triggers = [trigger]

    def ask(site: str, **fuel) -> tuple[str, list]:
        """The car the user's requirement picks of two at ``site``, and the question that finds it out."""
        mine, theirs = city.rivals(req, first, site, "transfer_vehicle", **fuel)
        return mine, [req.tell(f"The hub {hub} is locked down, so its car can't come. "
                               f"{' and '.join(sorted((mine, theirs)))} at {site} could be driven over: do you "
                               "have a requirement for the car?")]

    def medium() -> list:
        mine, question = ask(sister)
        return [*question, req.move(mine), *req.take_over(mine)]

    def hard() -> list:
        far_car, question = ask(far, fuel=author.integer(8, 20))
        triggers.append(city.cascade("lockdown_widens", f"the inspection widens to {sister}",
                                     ["depots", hub, "status"], "locked_down", lockdown(sister),
                                     ("get_depot_info", sister)))
        return [call.get_depot_info(depot_id=sister), req.search(far), req.route(far), *question,
                call.refuel_vehicle(vehicle_id=far_car), req.move(far_car), *req.book(far_car)]

    if level in ("easy", "impossible"):  # the cars that could come all meet the requirement
        city.requirement(req, [first, spare])

    def impossible() -> list:  # the sister depot's car is free but committed to a pickup there
        theirs = city.committed(spare, ret)
        return [req.status(spare), *req.refuse(
            f"I can't get {car(city.focus)} to {depot} for you: the hub {hub} is now locked_down for a safety "
            f"inspection and no vehicle may leave it, and the only other {city.focus}, {spare} at {sister}, is "
            f"reserved for another customer's pickup there ({theirs}), so it can't be driven over.", ["hub_lockdown"],
            ["locked_down", hub, "safety inspection", "locked down", "lockdown"],
            [spare, theirs, "another customer", "reserved for another", "booked for pickup"])]

    fixes = {
        "easy": lambda: [req.move(spare), *req.book(spare)],
        "medium": medium,
        "hard": hard,
        "impossible": impossible}
    seen = [req.status(first)] * on_road + [call.get_depot_info(depot_id=hub), req.depots(),
                                                        req.search(sister)]
    oracle = plan.upto("hold" if on_road else "move") + seen + fixes[level]()
    req.asked = f"book it for me, pickup at {depot} {pickup}, return there {ret}"
    query = (f"Hello, {req.who}. My local depot {city.name(depot)} ({depot}) has no {city.focus} on site, and they "
             f"told me one can be driven over from the {city.name(hub)} hub ({hub}). Please have {car(city.focus)} "
             f"brought over and {req.asked}.")
    if req.withheld:
        query += f" If it has to be another car than the hub's, {ASK_FIRST}"
    return make_task(req, query, triggers, plan, oracle, "a customer of a suburban depot", {
        ("hub", "depot", "another", "other", "elsewhere", "different"): f"Any depot can send the car, as long as I "
        f"collect it at {depot}."},
        insist=f"{req.constraints()}; any depot can send it, as long as it meets my requirement for the car.")
