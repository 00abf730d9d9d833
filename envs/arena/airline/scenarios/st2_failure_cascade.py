"""ST2 Failure Cascade: thunderstorms close the hub, and the closure ripples through the network.

Once the routing is held, a ground stop (an id such as WX-3107) closes the primary hub for the
middle of the day: both legs of the traveller's routing are cancelled, and so is every other
flight in or out of the hub in that window (visible in ``get_airport_info``,
``get_flight_status`` or ``check_itinerary``). Easy: the routing through the second hub still
lands in time; rebook onto it. Medium: the closure hits after ticketing and the second hub's
inbound flight is full, so the trip goes through the third hub. Hard: the diverted traffic
overloads the second hub, which stops its own departures and arrivals too, so only the third
hub is left; the agent has to look past the first alternative. At medium and hard two or three
carriers fly the third hub in time, and the traveller, who asked to be consulted before a
rebooking, needs one airline they name only when asked. Impossible: the only other routing
lands after the deadline.
"""

from __future__ import annotations

from sttgym.envs.arena.airline.generator import (CONSULT, Author, Task, Trip, floor_to, hhmm, make_task, new_network,
                                                 shift, standard_query)

DEFERRED = {"medium"}
THIRD = {"medium", "hard"}  # the third hub's routing exists


def build(author: Author, level: str) -> Task:
    net = new_network(author)
    a, op = author, author.op
    f1 = net.fly(net.O, net.H1, net.at(a.integer(8, 10), 5 * a.integer(0, 11)))
    f2 = net.fly(net.H1, net.D, net.legal_after(f1, slack=5 * a.integer(2, 5)))
    arrive_by = floor_to(shift(net.arr(f2), 5 * a.integer(4, 9)))
    net.fly(net.H1, net.D, shift(net.dep(f2), 5 * a.integer(4, 9)))  # the next one: inside the closure
    second = net.via(net.H2, shift(arrive_by, -5 * a.integer(1, 4) if level != "impossible" else
                                   5 * a.integer(3, 10)))
    trip = Trip(net, arrive_by, [f1, f2])
    thirds = trip.carrier_choice(net.H3) if level in THIRD else []
    if level == "medium":
        net.full(second[0])
    start, end = shift(net.arr(f1), -30), shift(net.dep(f2), 5 * a.integer(30, 40))
    stop = f"WX-{a.serial(1000, 9999)}"
    triggers = [net.on_write(
        "hub_closed", f"ground stop {stop}: thunderstorms close {net.H1} from {hhmm(start)} to {hhmm(end)}",
        [op.close_airport(airport_id=net.H1, start=start, end=end,
                          notice=f"Ground stop {stop}: thunderstorms, closed {hhmm(start)}-{hhmm(end)}")],
        ("get_airport_info", {"airport_id": net.H1}), ticketed=level in DEFERRED)]
    if level == "hard":
        jam = f"WX-{a.serial(1000, 9999)}"
        lo, hi = shift(net.dep(second[0]), -30), shift(net.arr(second[1]), 30)
        triggers.append(net.cascade(
            "diversions_overload", f"diverted flights overload {net.H2}: ground stop {jam}",
            ["airports", net.H1, "status"], "closed",
            [op.close_airport(airport_id=net.H2, start=lo, end=hi,
                              notice=f"Ground stop {jam}: diversions from {net.H1}, closed {hhmm(lo)}-{hhmm(hi)}")],
            ("get_airport_info", {"airport_id": net.H2})))
    trip.afford([f1, f2], second, *thirds)
    net.distractors(arrive_by)
    plan = trip.nominal()
    look = [trip.airport(net.H1), trip.airports(), trip.search(net.O, net.H2), trip.search(net.H2, net.D)]
    third, ask = trip.wanted, trip.ask_airline(f"A ground stop has closed {net.H1} and cancelled your flights.")
    fixes = {
        "easy": lambda: plan.upto("price") + look + trip.reroute(second),
        "medium": lambda: plan.calls + look + [trip.search(net.O, net.H3), trip.search(net.H3, net.D), ask]
        + trip.reroute(third),
        "hard": lambda: plan.upto("price") + look + [trip.check(second), trip.status(second[0]), trip.airport(net.H2),
                                                     trip.search(net.O, net.H3), trip.search(net.H3, net.D),
                                                     ask, trip.quote(third)] + trip.reroute(third),
        "impossible": lambda: plan.upto("price") + look + trip.refuse(
            f"I can't get you to {net.D} by {hhmm(arrive_by)}: ground stop {stop} has closed {net.H1} until "
            f"{hhmm(end)}, cancelling {f1} and {f2}, and the only other routing, via {net.H2}, lands at "
            f"{hhmm(net.arr(second[1]))}.", ["hub_closed"],
            [stop, "ground stop", f"{net.H1} closed"], trip.too_late(second)),
    }
    return make_task(trip, standard_query(trip, CONSULT if trip.withheld else ""), triggers, plan, fixes[level](),
                     "a surgeon due at a hospital abroad",
                     "Patients are waiting: I can't land any later.", level=level)
