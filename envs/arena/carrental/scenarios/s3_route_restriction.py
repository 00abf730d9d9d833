"""S3 Route Restriction: the road a transfer relies on is closed, and the car would arrive late.

The user needs a car of the class at a suburban depot within the hour; the airport depot has
one, a short drive away over the expressway. The expressway closes as the car is dispatched
(visible in ``plan_route``): the detour takes longer than the time left. Easy: a car from a
neighbouring depot makes it in time. Medium: it closes with the car on it; its arrival slips
past the pickup, which shows only when the booking is confirmed, so a neighbour's car is sent
and put on the booking. Hard: traffic diverted off the expressway gridlocks the nearest
neighbour's streets too, so the car must come from another depot. Impossible: nothing else
of the class can reach the depot in time.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.authoring import Author, Plan
from sttgym.envs.arena.carrental.generator import Request, car, iso, make_task, new_city, one
from sttgym.geo import shortest_route
from sttgym.task import Task


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s, pred, op = city.state, author.pred, author.op
    depot = one(author, city.depots_in("residential"))
    hub = max(city.depots_in("airport"), key=lambda d: (city.minutes(d, depot), d))
    expressway = f"RD-{author.serial(100, 999)}"
    s["roads"][expressway] = {"a": hub, "b": depot, "minutes": author.integer(10, 14), "open": True,
                              "name": "Airport Expressway"}
    first = city.add_vehicle(hub, city.focus)
    ret = iso(city.at(author.integer(2, 3), author.integer(9, 17)))
    # The neighbour whose car would come, and (hard) another that still reaches the depot once its streets close.
    slow = {r: x for r, x in s["roads"].items() if r != expressway}
    candidates = [d for d in city.nearest(depot, sorted(s["depots"])) if d != hub]
    # Routes that avoid the hub stay as fast when its roads are slowed below.
    near = next(d for d in candidates if any(shortest_route(slow, o, depot, {d, hub}) for o in candidates if o != d))
    other = next(o for o in candidates if o != near and shortest_route(slow, o, depot, {near, hub}))
    if level != "hard" and shortest_route(slow, near, depot, {hub}) is None:
        near = other
    source = other if level == "hard" else near
    spare = city.add_vehicle(source, city.focus) if level != "impossible" else ""
    if level == "hard":
        city.add_vehicle(near, city.focus)
    else:
        city.add_vehicle(depot, city.focus, status="maintenance")

    def task_for(pickup: str):
        req = Request(city, depot, pickup, ret)
        plan = Plan(look=[req.search(hub), req.route(hub)], move=[req.move(first)],
                    hold=[req.hold(first)] + ([req.quote()] if level == "medium" else []), confirm=[req.confirm()])
        if level == "medium":
            slipped = iso(datetime.fromisoformat(pickup) + timedelta(minutes=5 * author.integer(6, 12)))
            triggers = [city.trigger(
                "expressway_closed", f"{expressway} closes while {first} is on it; it arrives late",
                pred.in_transit(vehicle_id=first),
                [op.set_field(path=["roads", expressway, "open"], value=False),
                 op.set_field(path=["vehicles", first, "available_from"], value=slipped)],
                "get_vehicle_status", {"vehicle_id": first}, activation=["hold_vehicle"], timing="after")]
            oracle = plan.upto("hold") + [req.status(first), req.depots(), req.search(near), req.move(spare),
                                          req.swap(spare), req.confirm()]
            return req, plan, triggers, oracle
        triggers = [city.trigger(
            "expressway_closed", f"{expressway} (the Airport Expressway) closes as {first} is dispatched",
            pred.all_of(preds=[pred.call_argument(name="vehicle_id", value=first),
                               pred.field_equals(path=["vehicles", first, "depot"], value=hub)]),
            [op.set_field(path=["roads", expressway, "open"], value=False)],
            "plan_route", {"origin_id": hub, "destination_id": depot}, activation=["transfer_vehicle"])]
        head = plan.upto("move") + [req.route(hub), req.depots()]
        if level == "easy":
            oracle = head + [req.search(near), req.move(spare), req.hold(spare), req.confirm()]
        elif level == "hard":
            gridlock = [op.set_field(path=["roads", r, "open"], value=False)
                        for r, x in sorted(s["roads"].items()) if near in (x["a"], x["b"])]
            triggers.append(city.trigger(
                "gridlock", f"traffic diverted off the expressway gridlocks every street out of {near}",
                pred.field_equals(path=["roads", expressway, "open"], value=False), gridlock,
                "plan_route", {"origin_id": near, "destination_id": depot}))
            oracle = head + [req.search(near), req.route(near), req.search(other), req.route(other),
                             req.move(spare), req.hold(spare), req.confirm()]
        else:
            oracle = head + [req.search(), req.tell(
                f"I'm sorry, I can't get {car(city.focus)} to {depot} by {pickup[11:]}: the Airport Expressway "
                f"({expressway}) is now closed, the detour from {hub} arrives too late, and the depot's other one "
                f"is in the workshop.")]
        return req, plan, triggers, oracle

    def arrival(calls, triggers, vehicle) -> datetime:
        run = author.dry_run(s, iso(city.start), calls, triggers)
        return max([datetime.fromisoformat(r["data"]["arrives"]) for c, r in zip(calls, run.results)
                    if c.name == "transfer_vehicle" and r.get("success") and c.arguments["vehicle_id"] == vehicle]
                   or [datetime.max])

    # The pickup is the first five-minute mark by which both the expressway run and the fix arrive; the
    # detour must miss it, with or without reads first. Where this city's detour is too short, it is slowed.
    for _ in range(30):
        req, plan, triggers, oracle = task_for(iso(city.at(5, 12)))  # a far pickup only measures arrivals
        ready = arrival(plan.calls, [], first)
        if spare:
            ready = max(ready, arrival(oracle, triggers, spare))
        ready += timedelta(minutes=(-ready.minute) % 5)
        blind = [c for c in plan.calls if author.tools[c.name].mutates]
        late = min(arrival(plan.calls, triggers, first), arrival(blind, triggers, first))
        if level == "medium" or ready < late - timedelta(minutes=4):
            break
        for road in s["roads"].values():
            if hub in (road["a"], road["b"]) and road is not s["roads"][expressway]:
                road["minutes"] += 15
    else:
        raise RuntimeError(f"{depot}: no pickup time fits this city")  # a layout bug, not a seed
    req, plan, triggers, oracle = task_for(iso(ready))
    city.afford(depot, city.focus, req.pickup, ret)
    impossible = req.refusal(["expressway_closed"], [expressway]) if level == "impossible" else None
    name = s["customers"][city.user]["name"]
    query = (f"Hi, {name} here, customer {city.user}. I need {car(city.focus)} at {city.name(depot)} ({depot}) by "
             f"{req.pickup}, returning it there {ret}. The depot has none on site, but the {city.name(hub)} desk "
             f"({hub}) has one and the expressway makes it a short drive; please have it brought over and book it.")
    answers = {("depot", "another", "other", "elsewhere", "different", "neighbour"):
               f"Any depot can send the car; I only care that it is at {depot} by {req.pickup}.",
               ("car", "vehicle"): f"Any {city.focus} is fine."}
    return make_task(req, query, triggers, plan.calls, oracle, "a customer in a hurry", answers, impossible,
                     insist=f"I have to leave {depot} at {req.pickup}; a later pickup is no use to me.")
