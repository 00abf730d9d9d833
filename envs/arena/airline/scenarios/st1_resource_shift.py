"""ST1 Resource Shift: the carrier moves the onward flight's seats to a higher-demand flight.

Once the routing is held, revenue management swaps a smaller aircraft onto the onward flight and
moves its economy seats to a busier flight: the traveller's seat on the onward leg is offloaded
(visible in ``get_flight_status``, a search of the leg or ``get_booking``). The flight right
after it is sold out, so "take the next one" fails. Easy: the seats went to a later flight on
the same leg that was sold out before and still lands in time; swap the second leg onto it.
Medium: after ticketing, the seats go to the second hub's onward flight, so the trip is re-routed
through the second hub. Hard: the carrier consolidates both legs into the second hub (the inbound
leg's seats move too), so the re-routing uses two flights that were sold out when the agent first
looked. Impossible: the seats go to an evening flight that lands after the deadline, and nothing
else has room (the flights in between were sold out all along; the second hub's routing is full
and lands late).
"""

from __future__ import annotations

from sttgym.envs.arena.airline.generator import (Author, Task, Trip, floor_to, hhmm, make_task, new_network, shift,
                                                 standard_query)

DEFERRED = {"medium"}
ALL = 99  # every seat the flight has


def build(author: Author, level: str) -> Task:
    net = new_network(author)
    a, op = author, author.op
    f1 = net.fly(net.O, net.H1, net.at(a.integer(8, 10), 5 * a.integer(0, 11)))
    f2 = net.fly(net.H1, net.D, net.legal_after(f1, slack=5 * a.integer(2, 5)))
    nxt = net.fly(net.H1, net.D, shift(net.dep(f2), 5 * a.integer(2, 5)), seats=0)  # right after it: sold out
    busy = net.fly(net.H1, net.D, shift(net.dep(nxt), 5 * a.integer(2, 5)), seats=0)  # gets the seats on easy
    arrive_by = floor_to(shift(net.arr(busy), 5 * a.integer(1, 4)))
    evening = net.fly(net.H1, net.D, shift(arrive_by, 5 * a.integer(6, 20)), seats=a.integer(0, 2))
    second = net.via(net.H2, shift(arrive_by, -5 * a.integer(1, 4) if level != "impossible" else
                                   5 * a.integer(3, 10)))
    for fid in second:
        net.full(fid)
    if level == "medium":
        net.f(second[0])["seats"]["economy"] = a.integer(2, 6)
    target = {"easy": busy, "medium": second[1], "hard": second[1], "impossible": evening}[level]
    trip = Trip(net, arrive_by, [f1, f2])
    notice = f"economy seats reallocated to {target}"
    triggers = [net.on_write(
        "seats_reallocated", f"{f2}'s economy seats move to the busier {target}; the traveller is offloaded",
        [op.reallocate_seats(from_flight=f2, to_flight=target, cabin="economy", seats=ALL, notice=notice)],
        net.status_of(f2), ticketed=level in DEFERRED)]
    if level == "hard":
        triggers.append(net.cascade(
            "bank_consolidated", f"the carrier consolidates the bank: {f1}'s seats move to {second[0]}",
            ["flights", f2, "notice"], notice,
            [op.reallocate_seats(from_flight=f1, to_flight=second[0], cabin="economy", seats=ALL,
                                 notice=f"economy seats reallocated to {second[0]}")],
            net.status_of(f1)))
    trip.afford([f1, f2], [f1, busy], second)
    net.distractors(arrive_by)
    plan = trip.nominal()
    look = [trip.status(f2), trip.search(net.H1, net.D)]
    hubs = [trip.airports(), trip.search(net.O, net.H2), trip.search(net.H2, net.D)]
    fixes = {
        "easy": lambda: plan.upto("price") + look + [trip.change(f2, busy), trip.confirm()],
        "medium": lambda: plan.calls + look + [trip.booking()] + hubs + trip.reroute(second),
        "hard": lambda: plan.upto("price") + look + [trip.booking(), trip.status(f1), trip.search(net.O, net.H1)]
        + hubs + [trip.status(second[0]), trip.quote(second)] + trip.reroute(second),
        "impossible": lambda: plan.upto("price") + look + hubs + trip.refuse(
            f"I can't get you to {net.D} by {hhmm(arrive_by)}: {f2}'s economy seats were reallocated to {target}, "
            f"which lands at {hhmm(net.arr(target))}, the flights in between, {nxt} and {busy}, are sold out and "
            f"the routing via {net.H2} is full and lands at {hhmm(net.arr(second[1]))}.", ["seats_reallocated"],
            [target, "seats reallocated", f"offloaded from {f2}"],
            [nxt, busy, *trip.too_late(second), "other flights full", "in between sold out",
             "the flights in between have no free seat"]),
    }
    return make_task(trip, standard_query(trip), triggers, plan, fixes[level](), "a sales director flying to a "
                     "pitch", "The pitch starts right after, so I can't land any later.", level=level)
