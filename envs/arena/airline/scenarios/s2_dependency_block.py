"""S2 Dependency Block: the aircraft for the onward flight is stuck on its inbound rotation.

The onward flight is operated by the aircraft that arrives on an inbound flight from elsewhere
(``get_flight_status`` names the aircraft and its inbound flight). Once the routing is held,
that inbound flight is delayed, and the onward flight with it: it now lands after the
traveller's deadline. The carrier's next flight on the leg waits for its crew on the same inbound flight and lands
too late as well. Easy:
another carrier's onward flight, flown by another aircraft, still connects (interline) and
lands in time; swap the second leg and ticket. Medium: the delay shows after ticketing, and
that flight leaves too soon for an interline connection from the booked inbound leg, so the
trip moves to an earlier first leg and the other carrier's flight together. Hard: the delayed
inbound flight also carries the crew of the other carrier's flight, which is delayed too, so
only a routing through the second hub lands in time. Impossible: the other carrier's flight is
full and the other routing lands late.
"""

from __future__ import annotations

from sttgym.envs.arena.airline.generator import (Author, Task, Trip, floor_to, hhmm, make_task, minutes_between,
                                                 new_network, one, shift, standard_query)

DEFERRED = {"medium"}


def build(author: Author, level: str) -> Task:
    net = new_network(author)
    a, s = author, net.state
    f1 = net.fly(net.O, net.H1, net.at(a.integer(8, 10), 5 * a.integer(0, 11)))
    f2 = net.fly(net.H1, net.D, net.legal_after(f1, slack=5 * a.integer(2, 5)))
    turn = 5 * a.integer(8, 12)
    source = one(a, [net.H3] + [x for x in s["airports"] if x not in net.roles.values() and
                                s["airports"][x]["city"] != s["airports"][net.H1]["city"]])
    inbound = net.fly(source, net.H1, net.arriving_by(source, net.H1, shift(net.dep(f2), -turn)),
                      aircraft=s["flights"][f2]["aircraft"])
    s["flights"][f2]["inbound"] = inbound
    if level == "medium":  # too soon for an interline connection from the booked first leg
        other = net.fly(net.H1, net.D, shift(net.legal_after(f1, carrier=net.C), -5 * a.integer(1, 3)), net.C)
        earlier = net.fly(net.O, net.H1, net.arriving_by(net.O, net.H1, shift(net.dep(other), -(
            net.mct(net.H1, True) + 5 * a.integer(1, 4)))))
    else:  # it leaves after the carrier's next flight, whose crew rides in on the same late inbound flight
        other = net.fly(net.H1, net.D, max(net.legal_after(f1, carrier=net.C, slack=5 * a.integer(1, 3)),
                                           shift(net.dep(f2), 5 * a.integer(4, 6))), net.C)
        earlier = ""
    crewed = net.fly(net.H1, net.D, shift(net.dep(f2), 5 * a.integer(1, 3)), inbound=inbound)
    arrive_by = floor_to(shift(max(net.arr(other), net.arr(f2)), 5 * a.integer(1, 4)))
    late = minutes_between(net.arr(f2), arrive_by) + 5 * a.integer(4, 12)
    later = net.fly(net.H1, net.D, shift(max(net.dep(other), net.dep(f2)), 5 * a.integer(7, 12)))  # the next: late
    trip = Trip(net, arrive_by, [f1, f2])
    other_name = s["carriers"][net.C]["name"]

    def delayed(fid: str, minutes: int, why: str) -> list:
        f = s["flights"][fid]
        return net.sets("flights", fid, departs=shift(f["departs"], minutes), arrives=shift(f["arrives"], minutes),
                        status="delayed", notice=why)

    new_departure = shift(net.dep(f2), late)
    triggers = [net.on_write(
        "aircraft_late", f"{inbound} is delayed {late} minutes, and {f2} waits for its aircraft",
        delayed(inbound, late, "delayed: technical check") + delayed(f2, late, f"waiting for the aircraft on "
                                                                              f"{inbound}")
        + delayed(crewed, late, f"waiting for its crew on {inbound}"),
        net.status_of(f2), ticketed=level in DEFERRED)]
    itineraries = [[f1, f2], [f1, other]] + ([[earlier, other]] if earlier else [])
    second = net.via(net.H2, shift(arrive_by, -5 * a.integer(1, 4) if level == "hard" else 5 * a.integer(3, 10)),
                     carrier=net.B)
    itineraries.append(second)
    if level == "impossible":
        net.full(other)
    if level == "hard":
        triggers.append(net.cascade(
            "crew_late", f"the crew of {other} rides in on {inbound}: {other} is delayed too",
            ["flights", f2, "status"], "delayed", delayed(other, late, f"waiting for its crew on {inbound}"),
            net.status_of(other)))
    trip.afford(*itineraries, fee=True)
    net.distractors(arrive_by)
    plan = trip.nominal()
    look = [trip.status(f2), trip.status(inbound), trip.search(net.H1, net.D)]
    hubs = [trip.airports(), trip.search(net.O, net.H2), trip.search(net.H2, net.D)]
    fixes = {
        "easy": lambda: plan.upto("price") + look + [trip.check([f1, other]), trip.change(f2, other),
                                                     trip.confirm()],
        "medium": lambda: plan.calls + look + [trip.check([f1, other]), trip.search(net.O, net.H1)]
        + trip.reroute([earlier, other]),
        "hard": lambda: plan.upto("price") + look + [trip.status(other), trip.check([f1, other])] + hubs
        + trip.reroute(second),
        "impossible": lambda: plan.upto("price") + look + hubs + trip.refuse(
            f"I can't get you to {net.D} by {hhmm(arrive_by)}: {f2} now leaves at {hhmm(new_departure)}, waiting "
            f"for its aircraft on {inbound}, the other carrier's flight {other} is full, the next one, {later}, "
            f"lands at {hhmm(net.arr(later))} and the routing via {net.H2} lands at {hhmm(net.arr(second[1]))}.",
            ["aircraft_late"],
            [hhmm(new_departure), hhmm(shift(net.arr(f2), late)), inbound, "delayed aircraft", "waiting aircraft"],
            [other, later, hhmm(net.arr(later)), *trip.too_late(second), "other carrier full",
             f"the {other_name} flight has no free seat"]),
    }
    return make_task(trip, standard_query(trip), triggers, plan, fixes[level](), "a lawyer due at a hearing",
                     "The hearing starts soon after, so I can't land any later.", level=level)
