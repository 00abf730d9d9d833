"""S3 Route Restriction: the road a transfer relies on is closed, and the car would arrive late.

The user needs a car of the class at a suburban depot within the hour; the airport depot has
one, twenty minutes away over the expressway. The expressway closes (visible in
``plan_route``): the detour through town takes far longer than the time left. Easy: the
closure comes as soon as the move is planned; a car from a neighbouring depot makes it in
time. Medium: it comes after the car has left; its arrival slips past the pickup, which only
shows when the booking is confirmed, so a neighbour's car is sent and put on the booking.
Hard: traffic diverted off the expressway gets the nearer neighbour's link road closed too,
so the car must come from the other neighbour. Impossible: nothing else of the class can
reach the depot in time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from sttgym.envs.arena.carrental.generator import (Base, Booking, cannot, car, elapsed, fleet_unmoved, iso, make_task,
                                                   new_world, rid, tell, user_profile)
from sttgym.task import Call, Task
from sttgym.triggers import Mutation, Trigger


@dataclass
class Layout:
    depot: str  # where the user collects
    hub: str  # the airport depot the expressway links to the depot
    expressway: str  # the road that closes
    near: str  # the neighbouring depot with the shorter link road
    other: str  # the other neighbour
    near_road: str  # the link road from ``near`` that closes in the hard cascade


def _layout(base: Base) -> Layout:
    """A residential depot between two neighbours, linked to the farther airport depot by a fresh expressway."""
    s = base.state
    links: dict[str, list[tuple[int, str, str]]] = {}
    for rid_, road in sorted(s["roads"].items()):
        links.setdefault(road["a"], []).append((road["minutes"], road["b"], rid_))
        links.setdefault(road["b"], []).append((road["minutes"], road["a"], rid_))
    residential = base.depots_in("residential")
    depot = next(d for d in residential if sum(n in residential for _, n, _ in links[d]) == 2)
    (_, near, near_road), (_, other, _) = sorted(x for x in links[depot] if x[1] in residential)
    hub = max(base.depots_in("airport"), key=lambda d: (base.minutes(d, depot), d))
    expressway = base.unique("RD", 100, 999)
    s["roads"][expressway] = {"a": hub, "b": depot, "minutes": int(base.rng.integers(10, 15)), "open": True,
                              "name": "Airport Expressway"}
    return Layout(depot, hub, expressway, near, other, near_road)


def _pickup(base: Base, earliest: int, latest: int) -> datetime:
    """A pickup at least five minutes after ``earliest`` and before ``latest`` (minutes after the start)."""
    minutes = 5 * math.ceil((earliest + 5) / 5)
    if minutes >= latest:
        raise ValueError(f"no pickup time fits between {earliest} and {latest} minutes")  # a layout bug, not a seed
    return base.start + timedelta(minutes=minutes)


def build(rng: np.random.Generator, level: str) -> Task:
    base = new_world(rng)
    cls, s = base.focus, base.state
    lay = _layout(base)
    depot, hub = lay.depot, lay.hub
    first = base.add_vehicle(hub, cls)
    closed = (lay.expressway,)
    plan = lambda o: Call(name="plan_route", arguments={"origin_id": o, "destination_id": depot})  # noqa: E731
    move = lambda v: Call(name="transfer_vehicle", arguments={"vehicle_id": v, "to_depot_id": depot})  # noqa: E731
    on_time = elapsed([Call(name="search_available_vehicles"), plan(hub)]) + s["roads"][lay.expressway]["minutes"]
    detour = elapsed([Call(name="search_available_vehicles"), plan(hub)]) + base.minutes(hub, depot, closed)
    closure = Trigger(
        name="expressway_closed", description=f"{lay.expressway} (the Airport Expressway) closes after an accident",
        activation=["plan_route"], timing="after",
        condition=lambda st, ctx: ctx.arguments.get("origin_id") == hub and st["vehicles"][first]["depot"] == hub,
        mutations=[Mutation(("roads", lay.expressway, "open"), True, False)], observable_via="plan_route")
    triggers = [closure]
    impossible = None
    ret = base.at(1 + int(rng.integers(1, 3)), int(rng.integers(9, 18)))

    def booking(earliest: int, latest: int) -> Booking:
        return Booking(base.user, cls, depot, _pickup(base, earliest, latest), ret)

    if level == "easy":
        spare = base.add_vehicle(lay.near, cls)
        tail = [plan(hub), Call(name="search_available_vehicles")]
        b = booking(max(on_time, elapsed([Call(name="search_available_vehicles"), plan(hub), *tail])
                        + base.minutes(lay.near, depot, closed)), detour)
        head = [b.search(hub), plan(hub)]
        nominal = head + [move(first), b.hold(first), b.confirm()]
        oracle = head + [plan(hub), b.search(lay.near), move(spare), b.hold(spare), b.confirm()]
    elif level == "medium":
        spare = base.add_vehicle(lay.near, cls)
        probe = [Call(name=n) for n in ("search_available_vehicles", "plan_route", "transfer_vehicle", "hold_vehicle",
                                        "get_rental_quote", "get_vehicle_status", "search_available_vehicles")]
        b = booking(max(on_time, elapsed(probe) + base.minutes(lay.near, depot, closed)), 10 ** 6)
        slipped = b.pickup + timedelta(minutes=5 * int(rng.integers(6, 13)))
        # The car is caught on the expressway when it closes: its arrival slips past the pickup.
        triggers = [Trigger(
            name="expressway_closed", description=f"{lay.expressway} closes while {first} is on it; it arrives late",
            activation=["get_rental_quote", "get_vehicle_status", "get_reservation", "list_customer_reservations"],
            condition=lambda st, ctx: st["vehicles"][first]["depot"] == depot
            and (st["vehicles"][first]["available_from"] or "") > ctx.now,
            mutations=[Mutation(("roads", lay.expressway, "open"), True, False),
                       Mutation(("vehicles", first, "available_from"), iso(base.start + timedelta(minutes=on_time)),
                                iso(slipped))],
            observable_via="get_vehicle_status")]
        head = [b.search(hub), plan(hub), move(first), b.hold(first), b.quote()]
        nominal = head + [b.confirm()]
        oracle = head + [Call(name="get_vehicle_status", arguments={"vehicle_id": first}), b.search(lay.near),
                         move(spare),
                         Call(name="swap_reservation_vehicle", arguments={"reservation_id": rid("hold"),
                                                                          "vehicle_id": spare}), b.confirm()]
    elif level == "hard":
        base.add_vehicle(lay.near, cls)
        spare = base.add_vehicle(lay.other, cls)
        both = closed + (lay.near_road,)
        probe = [Call(name=n) for n in ("search_available_vehicles", "plan_route", "plan_route",
                                        "search_available_vehicles", "plan_route", "search_available_vehicles",
                                        "plan_route")]
        near_late = elapsed(probe[:5]) + base.minutes(lay.near, depot, both)
        b = booking(max(on_time, elapsed(probe) + base.minutes(lay.other, depot, both)), min(detour, near_late))
        triggers.append(Trigger(
            name="link_road_closed", description=f"diverted traffic gets {lay.near_road}, {lay.near}'s link, closed",
            activation=["plan_route", "search_available_vehicles", "get_vehicle_status", "list_customer_reservations"],
            condition=lambda st, ctx: not st["roads"][lay.expressway]["open"],
            mutations=[Mutation(("roads", lay.near_road, "open"), True, False)], observable_via="plan_route"))
        head = [b.search(hub), plan(hub)]
        nominal = head + [move(first), b.hold(first), b.confirm(), b.verify()]
        oracle = head + [plan(hub), b.search(lay.near), plan(lay.near), b.search(lay.other), plan(lay.other),
                         move(spare), b.hold(spare), b.confirm(), b.verify()]
    else:
        base.add_vehicle(depot, cls, status="maintenance")
        b = booking(on_time, detour)
        head = [b.search(hub), plan(hub)]
        nominal = head + [move(first), b.hold(first), b.confirm()]
        minutes = base.minutes(hub, depot, closed)
        oracle = head + [plan(hub), b.search(), tell(
            f"I'm sorry, I cannot get {car(cls)} to {depot} by {iso(b.pickup)}: the Airport Expressway "
            f"({lay.expressway}) is closed, the detour from {hub} takes {minutes} minutes, and the only other "
            f"{car(cls, article=False)} at {depot} is in the workshop.")]
        impossible = cannot(base, ["closed", "closure", lay.expressway], "a car that arrives after the pickup",
                            fleet_unmoved(s, [first]))

    s["customers"][base.user]["payment_limit"] = base.price(depot, cls, b.pickup, b.ret) + 50 * int(rng.integers(1, 5))
    customer = s["customers"][base.user]
    query = (f"Hi, {customer['name']} here, customer {base.user}. I need {car(cls)} at {base.name(depot)} ({depot}) "
             f"by {iso(b.pickup)}, returning it there {iso(b.ret)}. The depot has none on site, but the "
             f"{base.name(hub)} desk ({hub}) has one and the expressway makes it a short drive; please have it "
             f"brought over and book it for me.")
    answers = {("depot", "another", "other", "elsewhere", "different", "neighbour"):
               f"Any depot can send the car; I only care that it is at {depot} by {iso(b.pickup)}.",
               ("car", "vehicle"): f"Any {car(cls, article=False)} is fine."}
    insist = f"I have to leave {depot} at {iso(b.pickup)}; a later pickup is no use to me." if impossible else None
    profile = user_profile(base, "a customer in a hurry", [f"customer id {base.user}", f"pickup depot {depot}",
                           f"pickup {iso(b.pickup)}"], answers, insist=insist)
    checks = b.checks()
    return make_task(base, query, profile, triggers, checks, nominal, oracle, impossible)
