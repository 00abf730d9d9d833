"""T2 Priority Reorder: the onward flight is retimed earlier, and the connection into it breaks.

The traveller asked for a two-leg routing through the primary hub. Once the agent holds it,
the carrier pulls the onward flight forward (visible in ``get_flight_status`` or a new search
of that leg): the inbound leg now lands too late to make it. The next flight on the same leg
lands after the traveller's deadline, so "take the next one" fails. Easy: an earlier inbound
flight makes the retimed departure; one segment change and the ticket. Medium: the retiming
comes after the ticket is issued, and the earlier inbound flight is full, so the traveller is
re-routed through the second hub. Hard: the retimed bank drags the second hub's feeder flight
later too (its connection breaks), so only a routing through the third hub still lands in
time. Impossible: the earlier inbound flight is full and the only other routing lands late.
"""

from __future__ import annotations

from sttgym.envs.arena.airline.generator import (Author, Task, Trip, floor_to, hhmm, make_task, new_network, shift,
                                                 standard_query)

DEFERRED = {"medium"}  # the retiming comes once the ticket is issued


def build(author: Author, level: str) -> Task:
    net = new_network(author)
    a = author
    f1 = net.fly(net.O, net.H1, net.at(a.integer(9, 10), 5 * a.integer(0, 11)))
    slack = 5 * a.integer(2, 5)
    f2 = net.fly(net.H1, net.D, net.legal_after(f1, slack=slack))
    early = slack + 5 * a.integer(3, 7)  # the connection falls 15-35 minutes short
    departs, lands = shift(net.dep(f2), -early), shift(net.arr(f2), -early)
    arrive_by = floor_to(shift(net.arr(f2), 5 * a.integer(4, 9)))
    later = net.fly(net.H1, net.D, shift(net.dep(f2), 5 * a.integer(12, 18)))  # the next one lands too late
    earlier = net.fly(net.O, net.H1, net.arriving_by(net.O, net.H1, shift(departs, -(net.mct(net.H1) +
                                                                                     5 * a.integer(2, 5)))))
    trip = Trip(net, arrive_by, [f1, f2])
    triggers = [net.on_write(
        "onward_retimed", f"{f2} is pulled forward from {hhmm(net.dep(f2))} to {hhmm(departs)}",
        net.sets("flights", f2, departs=departs, arrives=lands, status="rescheduled",
                 notice=f"retimed: now departs {hhmm(departs)}"),
        net.status_of(f2), ticketed=level in DEFERRED)]
    itineraries = [[f1, f2], [earlier, f2]]
    if level != "easy":
        net.full(earlier)
    second = net.via(net.H2, shift(arrive_by, -5 * a.integer(1, 4) if level != "impossible" else
                                   5 * a.integer(3, 12)))
    itineraries.append(second)
    third = []
    if level == "hard":
        third = net.via(net.H3, shift(arrive_by, -5 * a.integer(1, 5)), carrier=net.B)
        itineraries.append(third)
        g1 = second[0]
        late = 5 * a.integer(6, 12) + net.mct(net.H2)
        moved = shift(net.dep(g1), late)
        triggers.append(net.cascade(
            "feeder_retimed", f"the reshuffled bank pushes {g1} {late} minutes later", ["flights", f2, "status"],
            "rescheduled", net.sets("flights", g1, departs=moved, arrives=shift(net.arr(g1), late),
                                    status="rescheduled", notice=f"retimed: now departs {hhmm(moved)}"),
            net.status_of(g1)))
    trip.afford(*itineraries, fee=True)
    net.distractors(arrive_by)
    plan = trip.nominal()
    look = [trip.status(f2), trip.search(net.O, net.H1)]
    hubs = [trip.airports(), trip.search(net.O, net.H2), trip.search(net.H2, net.D)]
    fixes = {
        "easy": lambda: plan.upto("price") + look + [trip.change(f1, earlier), trip.confirm()],
        "medium": lambda: plan.calls + look + hubs + trip.reroute(second),
        "hard": lambda: plan.upto("price") + look + hubs + [
            trip.status(second[0]), trip.check(second), trip.search(net.O, net.H3), trip.search(net.H3, net.D),
            *trip.reroute(third)],
        "impossible": lambda: plan.upto("price") + look + [trip.search(net.H1, net.D)] + hubs + trip.refuse(
            f"I can't get you to {net.D} by {hhmm(arrive_by)}: {f2} now leaves {net.H1} at {hhmm(departs)}, before "
            f"{f1} can connect, the earlier flight {earlier} is full, the next one, {later}, lands at "
            f"{hhmm(net.arr(later))}, and the routing via {net.H2} lands at {hhmm(net.arr(second[1]))}.",
            ["onward_retimed"], [hhmm(departs), hhmm(lands), f"{f2} retimed", "pulled forward", "leaves earlier"],
            [earlier, later, hhmm(net.arr(later)), *trip.too_late(second), "earlier flight full",
             "the earlier flight has no free seat"]),
    }
    return make_task(trip, standard_query(trip), triggers, plan, fixes[level](), "a consultant flying to a client "
                     "workshop", "A later arrival is no use to me.", level=level)
