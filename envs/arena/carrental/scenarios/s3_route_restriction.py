"""S3 Route Restriction: the road a transfer relies on is closed, and the car would arrive late.

The user needs a car of the class at a suburban depot within the hour; the airport depot has
one, a short drive away over the expressway. The expressway closes as the car is dispatched
(visible in ``plan_route``): the detour takes longer than the time left. Easy: a car from a
neighbouring depot makes it in time. Medium: it closes with the car on it; its arrival slips
past the pickup, which shows only when the booking is confirmed, so a neighbour's car is sent
and put on the booking. Hard: traffic diverted off the expressway gridlocks the nearest
neighbour's streets too, so the car must come from another depot. Impossible: the neighbour's
car of the class is out on rent, back only shortly before the pickup and too far to make it
(its ``available_from`` in ``search_available_vehicles`` there, the drive in ``plan_route``): the
refusal must say so besides the closure.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.clock import format_time, shift
from sttgym.envs.arena.carrental.generator import Author, Request, Task, car, make_task, new_city
from sttgym.geo import shortest_route

SOURCE = {"easy": "near", "medium": "near", "hard": "other", "impossible": None}  # where the car that makes it waits


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    on_road = level == "medium"  # the expressway closes with the car on it (and shows once it is booked)
    s, pred = city.state, author.pred
    depot = city.depot("residential")
    hub = max(city.depots_in("airport"), key=lambda d: (city.minutes(d, depot), d))
    expressway = f"RD-{author.serial(100, 999)}"
    s["roads"][expressway] = dict(a=hub, b=depot, minutes=author.integer(10, 14), open=True, name="Airport Expressway")
    first = city.add_vehicle(hub, city.focus)
    ret = format_time(city.at(author.integer(2, 3), author.integer(9, 17)))
    # The neighbour whose car would come, and (hard) another that still reaches the depot once its streets close.
    slow = {r: x for r, x in s["roads"].items() if r != expressway}
    candidates = [d for d in city.nearest(depot, sorted(s["depots"])) if d != hub]
    # Routes that avoid the hub stay as fast when its roads are slowed below.
    near = next(d for d in candidates if any(shortest_route(slow, o, depot, {d, hub}) for o in candidates if o != d))
    other = next(o for o in candidates if o != near and shortest_route(slow, o, depot, {near, hub}))
    if level != "hard" and shortest_route(slow, near, depot, {hub}) is None:
        near = other
    source = {"near": near, "other": other}.get(SOURCE[level])
    spare = city.add_vehicle(source, city.focus) if source else ""
    # Hard: the nearest neighbour has one too, but gets gridlocked; otherwise the depot's own is in the workshop.
    city.add_vehicle(near, city.focus) if level == "hard" else city.add_vehicle(depot, city.focus, status="maintenance")

    def task_for(pickup: str):
        req = Request(city, depot, pickup, ret, moves=level)
        plan = req.delivery(hub, first, quote=on_road)
        closed = city.set("roads", expressway, "open", value=False)
        triggers = [city.on_hold(  # medium: it closes with the car on it
            "expressway_closed", f"{expressway} closes while {first} is on it; it arrives late",
            [closed, city.set("vehicles", first, "available_from", value=shift(pickup, minutes=5 * slip))],
            ("get_vehicle_status", first), pred.in_transit(vehicle_id=first))
            if on_road else city.on_dispatch(
            "expressway_closed", f"{expressway} (the Airport Expressway) closes as {first} is dispatched",
            first, hub, [closed], ("plan_route", {"origin_id": hub, "destination_id": depot}))]
        send = [req.move(spare), *req.book(spare)]

        def hard() -> list:
            triggers.append(city.cascade(
                "gridlock", f"traffic diverted off the expressway gridlocks every street out of {near}",
                ["roads", expressway, "open"], False, city.cut_off(near),
                ("plan_route", {"origin_id": near, "destination_id": depot})))
            return [req.search(near), req.route(near), req.search(other), req.route(other), *send]

        head = plan.upto("move") + [req.route(hub), req.depots()]
        fixes = {
            "easy": lambda: head + [req.search(near), *send],
            "medium": lambda: plan.upto("hold") + [req.status(first), req.depots(), req.search(near),
                                                   req.move(spare), *req.take_over(spare)],
            "hard": lambda: head + hard(),
            "impossible": lambda: head + [req.search(), req.search(near), req.route(near), *req.refuse(
                f"I can't get {car(city.focus)} to {depot} by {pickup[11:]}: the Airport Expressway ({expressway}) "
                f"is now closed and the detour from {hub} arrives too late; the only other {city.focus}, {late_car} "
                f"at {near}, is only back from a rental at {back[11:]} and, {city.minutes(near, depot)} minutes "
                f"away, would reach {depot} at {reach[11:]}, after your pickup.", ["expressway_closed"],
                [expressway, "expressway closed", "road closed", "Airport Expressway"],
                [late_car, near, back[11:], reach[11:], "back from", "only back", "back at"])]}
        return req, plan, triggers, fixes[level]()

    # The pickup is the first five-minute mark by which both the expressway run and the fix arrive; the
    # detour must miss it, with or without reads first. Where this city's detour is too short, it is slowed.
    slip = author.integer(6, 12) if on_road else 0
    late_car = back = reach = ""  # impossible: the neighbour's car, back from a rental too late (set below)
    for _ in range(30):
        req, plan, triggers, oracle = task_for(format_time(city.at(5, 12)))  # a far pickup only measures arrivals
        ready = max(city.arrival(plan.calls, first), city.arrival(oracle, spare, triggers) if spare else datetime.min)
        ready += timedelta(minutes=(-ready.minute) % 5)
        blind = [c for c in plan.calls if author.tools[c.name].mutates]
        late = min(city.arrival(plan.calls, first, triggers), city.arrival(blind, first, triggers))
        if on_road or ready < late - timedelta(minutes=4):
            break
        for road in city.roads_of(hub):
            if road != expressway:
                s["roads"][road]["minutes"] += 15
    else:
        raise RuntimeError(f"{depot}: no pickup time fits this city")  # a layout bug, not a seed
    if level == "impossible":  # the neighbour's car is only back from a rental too late to make the pickup
        late_car = city.add_vehicle(near, city.focus)
        back, reach = city.back_late(late_car, depot, format_time(ready))
    req, plan, triggers, oracle = task_for(format_time(ready))
    city.afford(depot, city.focus, req.pickup, ret)
    req.asked = f"{car(city.focus)} at {city.name(depot)} ({depot}) by {req.pickup}, returning it there {ret}"
    query = (f"Hi, {req.who} here. I need {req.asked}. The depot has none on site, but the {city.name(hub)} desk "
             f"({hub}) has one and the expressway makes it a short drive; please have it brought over and book it.")
    return make_task(req, query, triggers, plan, oracle, "a customer in a hurry", {
        ("depot", "another", "other", "elsewhere", "different", "neighbour"): f"Any depot can send the car; I only "
        f"care that it is at {depot} {req.when('by')}."},
        insist=f"{req.constraints()}; any depot can send it, but a later pickup is no use to me.")
