"""ST3 Handoff Failure: a delay eats the interline window, and the bags cannot change carriers.

The traveller's two legs are flown by two carriers that are not partners, so the connection
needs the hub's interline connecting time (bags are re-checked between carriers), longer than
the plain one. Once the routing is held, the first leg is delayed by just enough that the
layover still beats the plain minimum but no longer the interline one (visible in
``get_flight_status`` or ``check_itinerary``): a check against the plain minimum looks fine.
The second carrier's next flight lands too late. Easy: the first carrier's own onward flight
connects at the plain minimum and lands in time; swap the second leg. Medium: the delay shows
after ticketing and that flight is full, so the ticket's first leg moves to an earlier flight
that is on time. Hard: the late crew was rostered on the earlier flight too, so the trip is
re-routed through the second hub with the first carrier's partner (partners connect at the plain
minimum; ``list_carriers``). Impossible: the first carrier's own onward flight is full and the
second carrier's next one lands late, so nothing else connects and lands in time.
"""

from __future__ import annotations

from sttgym.envs.arena.airline.generator import (Author, Task, Trip, floor_to, hhmm, make_task, new_network, shift,
                                                 standard_query)

DEFERRED = {"medium"}


def build(author: Author, level: str) -> Task:
    net = new_network(author)
    a, s = author, net.state
    H1 = net.H1
    f1 = net.fly(net.O, H1, net.at(a.integer(8, 10), 5 * a.integer(0, 11)))
    slack = 5 * a.integer(2, 5)
    f2 = net.fly(H1, net.D, net.legal_after(f1, carrier=net.B, slack=slack), net.B)
    gap = net.mct(H1, True) - net.mct(H1)
    delay = slack + 5 * a.integer(1, max(1, gap // 5 - 1))  # past the interline minimum, within the plain one
    delayed_arrival = shift(net.arr(f1), delay)
    own = net.fly(H1, net.D, shift(delayed_arrival, net.mct(H1) + 5 * a.integer(1, 3)))
    arrive_by = floor_to(shift(max(net.arr(own), net.arr(f2)), 5 * a.integer(1, 4)))
    later = net.fly(H1, net.D, shift(max(net.dep(own), net.dep(f2)), 5 * a.integer(8, 12)), net.B)  # next: late
    earlier = ""
    if level in ("medium", "hard"):
        earlier = net.fly(net.O, H1, net.arriving_by(net.O, H1, shift(net.dep(f2), -(
            net.mct(H1, True) + 5 * a.integer(1, 4)))))
    if level != "easy":
        net.full(own)
    trip = Trip(net, arrive_by, [f1, f2])
    own_name = s["carriers"][net.A]["name"]
    triggers = [net.on_write(
        "inbound_delayed", f"{f1} is delayed {delay} minutes: the layover now misses the interline minimum",
        net.sets("flights", f1, departs=shift(net.dep(f1), delay), arrives=delayed_arrival, status="delayed",
                 notice="delayed: late crew"), net.status_of(f1), ticketed=level in DEFERRED)]
    itineraries = [[f1, f2], [f1, own]] + ([[earlier, f2]] if earlier else [])
    partners = []
    if level == "hard":
        s["carriers"][net.A]["partners"] = [net.C]
        s["carriers"][net.C]["partners"] = [net.A]
        onward = net.fly(net.H2, net.D, net.arriving_by(net.H2, net.D, shift(arrive_by, -5 * a.integer(1, 4))),
                         net.C)
        partners = [net.fly(net.O, net.H2, net.arriving_by(net.O, net.H2, shift(net.dep(onward), -(
            net.mct(net.H2) + 5 * a.integer(0, 2))))), onward]
        itineraries.append(partners)
        late = 5 * a.integer(10, 16)
        triggers.append(net.cascade(
            "crew_late", f"the late crew of {f1} was rostered on {earlier} first: it is delayed {late} minutes",
            ["flights", f1, "status"], "delayed",
            net.sets("flights", earlier, departs=shift(net.dep(earlier), late),
                     arrives=shift(net.arr(earlier), late), status="delayed", notice="delayed: late crew"),
            net.status_of(earlier)))
    trip.afford(*itineraries, fee=True)
    net.distractors(arrive_by)
    plan = trip.nominal()
    look = [trip.status(f1), trip.check([f1, f2]), trip.search(H1, net.D)]
    fixes = {
        "easy": lambda: plan.upto("price") + look + [trip.change(f2, own), trip.confirm()],
        "medium": lambda: plan.calls + look + [trip.search(net.O, H1), trip.check([earlier, f2]),
                                               trip.change(f1, earlier)],
        "hard": lambda: plan.upto("price") + look + [trip.search(net.O, H1), trip.status(earlier), trip.carriers(),
                                                     trip.airports(), trip.search(net.O, net.H2),
                                                     trip.search(net.H2, net.D)] + trip.reroute(partners),
        "impossible": lambda: plan.upto("price") + look + trip.refuse(
            f"I can't make this connection work: {f1} now lands at {hhmm(delayed_arrival)}, too late for the "
            f"{net.mct(H1, True)}-minute interline transfer to {f2}, {own_name}'s own flight {own} is full and the "
            f"next one, {later}, lands at {hhmm(net.arr(later))}, after {hhmm(arrive_by)}.", ["inbound_delayed"],
            [hhmm(delayed_arrival), hhmm(shift(net.dep(f1), delay)), f"{f1} delayed", "interline connection"],
            [own, later, hhmm(net.arr(later)), "own flight full",
             f"the {own_name} flight has no free seat"]),
    }
    return make_task(trip, standard_query(trip), triggers, plan, fixes[level](), "a musician flying to a concert",
                     "The concert is right after, so I can't land any later.", level=level)
