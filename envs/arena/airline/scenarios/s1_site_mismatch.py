"""S1 Site Mismatch: the onward flight moves to the city's other airport, across town.

The traveller connects at the primary hub, whose city has a second airport. Once the routing
is held, the carrier moves the onward flight to the other airport (visible in
``get_flight_status``, ``check_itinerary`` or a search of either airport's leg): the connection
now needs the ground transfer plus that airport's connecting time, far more than the layover.
The next flight out of the original airport lands too late. Easy: an inbound flight lands
directly at the other airport in time; swap the first leg and ticket. Medium: the move comes
after ticketing and that flight is full, so an earlier inbound flight to the original airport
leaves time for the transfer; the ticket's first leg is changed (the change fee is within the
budget). Hard: the move jams the airport shuttle (the transfer closes), so the trip is
re-routed through the second hub. Impossible: the direct flight into the other airport is full, the
next flight from the original airport and the routing through the second hub land late; the move
itself says none of that, so the refusal names one of them (found by searching those legs) too.
"""

from __future__ import annotations

from sttgym.envs.arena.airline.generator import (Author, Task, Trip, floor_to, hhmm, make_task, new_network, shift,
                                                 standard_query)

DEFERRED = {"medium"}


def build(author: Author, level: str) -> Task:
    net = new_network(author)
    a, s = author, net.state
    H1, H1x = net.H1, net.H1x
    f1 = net.fly(net.O, H1, net.at(a.integer(8, 10), 5 * a.integer(0, 11)))
    slack = 5 * a.integer(2, 5)
    f2 = net.fly(H1, net.D, net.legal_after(f1, slack=slack))
    link = net.link(H1, H1x)  # the transfer outlasts the layover, whatever the drawn connecting times
    s["ground_links"][link]["minutes"] = max(s["ground_links"][link]["minutes"],
                                             slack + net.mct(H1) - net.mct(H1x) + 5 * a.integer(2, 6))
    arrive_by = floor_to(shift(net.arr(f2), 5 * a.integer(4, 9)))
    later = net.fly(H1, net.D, shift(net.dep(f2), 5 * a.integer(12, 18)))  # the next one from the old airport: late
    direct = net.fly(net.O, H1x, net.arriving_by(net.O, H1x, shift(net.dep(f2), -(net.mct(H1x) +
                                                                                 5 * a.integer(2, 5)))))
    trip = Trip(net, arrive_by, [f1, f2])
    triggers = [net.on_write(
        "onward_moved", f"{f2} moves from {H1} to {H1x}, {net.ground(H1, H1x)} minutes away by road",
        net.sets("flights", f2, origin=H1x, notice=f"now operates from {H1x}"),
        net.status_of(f2), ticketed=level in DEFERRED)]
    itineraries = [[f1, f2], [direct, f2]]
    earlier = ""
    if level != "easy":
        net.full(direct)
    if level in ("medium", "hard"):
        earlier = net.fly(net.O, H1, net.arriving_by(net.O, H1, shift(net.dep(f2), -(
            net.ground(H1, H1x) + net.mct(H1x) + 5 * a.integer(1, 4)))))
        itineraries.append([earlier, f2])
    second = net.via(net.H2, shift(arrive_by, -5 * a.integer(1, 4) if level == "hard" else 5 * a.integer(3, 10)))
    itineraries.append(second)
    if level == "hard":
        triggers.append(net.cascade(
            "shuttle_suspended", f"the extra traffic jams the {H1}-{H1x} transfer: it is suspended",
            ["flights", f2, "origin"], H1x, [net.set("ground_links", link, "open", value=False)],
            ("get_airport_info", {"airport_id": H1})))
    trip.afford(*itineraries, fee=True)
    net.distractors(arrive_by)
    plan = trip.nominal()
    look = [trip.status(f2), trip.airport(H1), trip.search(net.O, H1x)]
    hubs = [trip.airports(), trip.search(net.O, net.H2), trip.search(net.H2, net.D)]
    fixes = {
        "easy": lambda: plan.upto("price") + look + [trip.change(f1, direct), trip.confirm()],
        "medium": lambda: plan.calls + look + [trip.search(net.O, H1), trip.check([earlier, f2]),
                                               trip.change(f1, earlier)],
        "hard": lambda: plan.upto("price") + look + [trip.search(net.O, H1), trip.check([earlier, f2])] + hubs
        + trip.reroute(second),
        "impossible": lambda: plan.upto("price") + look + [trip.search(H1, net.D)] + hubs + trip.refuse(
            f"I can't get you to {net.D} by {hhmm(arrive_by)}: {f2} now leaves from {H1x}, a "
            f"{net.ground(H1, H1x)}-minute transfer from where {f1} lands, the direct flight {direct} into {H1x} "
            f"is full, the next flight from {H1}, {later}, lands at {hhmm(net.arr(later))} and the routing via "
            f"{net.H2} lands at {hhmm(net.arr(second[1]))}.", ["onward_moved"],
            [H1x, "other airport", "now operates from"],
            [direct, later, hhmm(net.arr(later)), *trip.too_late(second), "direct flight full",
             "the direct flight has no free seat"]),
    }
    return make_task(trip, standard_query(trip), triggers, plan, fixes[level](), "an engineer flying to a site "
                     "visit", "A later landing won't do: I'm due on site.", level=level)
