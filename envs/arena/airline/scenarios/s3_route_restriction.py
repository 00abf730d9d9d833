"""S3 Route Restriction: a new transit-visa rule closes the hub to the traveller.

The traveller connects at the primary hub without a visa for its country. Once the routing is
held, the hub's authorities publish a transit rule (an id such as TR-4821): nationals of the
traveller's country now need a transit visa to connect there (visible in ``get_airport_info``
or ``check_itinerary``). Every routing through that hub, the next flight included, is now
refused. Easy: a direct flight still lands in time; rebook onto it. Medium: the rule comes
after ticketing and the direct flight is full, so the trip is re-routed through the second hub.
Hard: the rule is extended to the second hub as well, so only the third hub (whose country's
visa the traveller holds) still works. At medium and hard two or three carriers fly the last
open hub in time, and the traveller, who asked to be consulted before a rebooking, needs one
airline they name only when asked. Impossible: the direct flight is full and the other routing
lands after the deadline (the traveller, who asked to be consulted here too, needs an airline that changes
nothing, so whether the user has a requirement never tells whether the trip can be made).
"""

from __future__ import annotations

from sttgym.envs.arena.airline.generator import (CONSULT, Author, Task, Trip, floor_to, hhmm, make_task, new_network,
                                                 one, shift, standard_query)

DEFERRED = {"medium"}


def build(author: Author, level: str) -> Task:
    net = new_network(author)
    a, s = author, net.state
    nation = s["passengers"][net.user]["nationality"]
    f1 = net.fly(net.O, net.H1, net.at(a.integer(8, 10), 5 * a.integer(0, 11)))
    f2 = net.fly(net.H1, net.D, net.legal_after(f1, slack=5 * a.integer(2, 5)))
    arrive_by = floor_to(shift(net.arr(f2), 5 * a.integer(4, 9)))
    net.fly(net.H1, net.D, shift(net.dep(f2), 5 * a.integer(3, 6)))  # the next one: the same hub, the same rule
    direct = net.fly(net.O, net.D, net.arriving_by(net.O, net.D, shift(arrive_by, -5 * a.integer(1, 6))), net.B)
    trip = Trip(net, arrive_by, [f1, f2])
    rule = f"TR-{a.serial(1000, 9999)}"

    def restrict(hub: str, ident: str) -> list:
        return net.sets("airports", hub, transit_visa_for=[nation], transit_rule=ident,
                        notice=f"Transit rule {ident}: {nation} nationals need an airport transit visa")

    triggers = [net.on_write(
        "transit_rule", f"{net.H1} publishes rule {rule}: {nation} nationals need a transit visa to connect",
        restrict(net.H1, rule), ("get_airport_info", {"airport_id": net.H1}), ticketed=level in DEFERRED)]
    if level == "medium":
        seconds = trip.carrier_choice(net.H2)
    else:
        seconds = [net.via(net.H2, shift(arrive_by, -5 * a.integer(1, 4) if level != "impossible" else
                                         5 * a.integer(3, 10)))]
    itineraries = [[f1, f2], [direct], *seconds]
    second = seconds[0]  # hard: the routing the extended rule closes
    if level != "easy":
        net.full(direct)
    if level == "hard":
        itineraries += trip.carrier_choice(net.H3)
        extended = f"TR-{a.serial(1000, 9999)}"
        triggers.append(net.cascade(
            "rule_extended", f"{net.H2} adopts the same transit rule ({extended})",
            ["airports", net.H1, "transit_rule"], rule, restrict(net.H2, extended),
            ("get_airport_info", {"airport_id": net.H2})))
    if level == "impossible":  # the traveller needs an airline here too (it changes nothing): asking tells nothing
        trip.loyal(one(a, [net.A, net.B, net.C]))
    trip.afford(*itineraries)
    net.distractors(arrive_by)
    plan = trip.nominal()
    look = [trip.airport(net.H1), trip.profile(), trip.search(net.O, net.D)]
    rebook, ask = trip.wanted, trip.ask_airline(f"A new transit rule ({rule}) closes {net.H1} to you.")
    hubs = [trip.airports(), trip.search(net.O, net.H2), trip.search(net.H2, net.D)]
    fixes = {
        "easy": lambda: plan.upto("price") + look + [trip.cancel(), *trip.book([direct])],
        "medium": lambda: plan.calls + look + hubs + [ask] + trip.reroute(rebook),
        "hard": lambda: plan.upto("price") + look + hubs + [trip.check(second), trip.airport(net.H2),
                                                           trip.search(net.O, net.H3), trip.search(net.H3, net.D),
                                                           ask] + trip.reroute(rebook),
        "impossible": lambda: plan.upto("price") + look + hubs + trip.refuse(
            f"I can't route you to {net.D} by {hhmm(arrive_by)}: under the new transit rule {rule} you would need "
            f"a transit visa to connect at {net.H1}, the direct flight {direct} is full and the routing via "
            f"{net.H2} lands at {hhmm(net.arr(second[1]))}.", ["transit_rule"], [rule, "transit visa"],
            [direct, *trip.too_late(second), "direct flight full",
             "the direct flight has no free seat"]),
    }
    return make_task(trip, standard_query(trip, CONSULT if trip.withheld else ""), triggers, plan, fixes[level](),
                     "a researcher travelling to a conference",
                     "I can't get a visa in time.", level=level)
