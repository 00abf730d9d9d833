"""T3 Quota Reset: the promotional fare the budget depends on runs out mid-booking.

The traveller's budget only covers the routing at the promotional fare the request names.
Once the agent holds the seats, a campaign burns the promotion's remaining quota (visible in
``list_promotions`` or a quote with the code), so ticketing with it fails and ticketing without
it breaks the budget. Easy: a members' promotion of the same carrier still has quota; ticket
with it. Medium: the only promotion left is another carrier's, so the onward leg moves to that
carrier's flight (an interline connection) before ticketing with its code; the next flight of
the original carrier lands too late. Hard: closing the promotion also closes the cheap fare
bucket of the inbound leg, so any routing through the first hub breaks the budget and the trip
moves to the other carrier's routing through the second hub. Impossible: the partner launch fare
still has quota but covers the other carrier only, whose onward flight is full (a search of the
leg shows it) and whose routing through the second hub lands late: the refusal names one of those
besides the exhausted code.
"""

from __future__ import annotations

from sttgym.envs.arena.airline.generator import (Author, Plan, Task, Trip, floor_to, hhmm, make_task, new_network,
                                                 shift, standard_query)

_CODES = ["FLYSMART", "TRAVELPRO", "CORPFLEX", "ROUTEDEAL", "HUBSAVER", "GOFARE", "NEXTJET", "AIRDEAL"]


def build(author: Author, level: str) -> Task:
    net = new_network(author)
    a, s = author, net.state
    f1 = net.fly(net.O, net.H1, net.at(a.integer(8, 10), 5 * a.integer(0, 11)), fare=5 * a.integer(18, 26))
    f2 = net.fly(net.H1, net.D, net.legal_after(f1, slack=5 * a.integer(2, 5)), fare=5 * a.integer(28, 40))
    cut = 5 * a.integer(4, 5)
    base = s["flights"][f1]["fares"]["economy"] + s["flights"][f2]["fares"]["economy"]
    budget = round(base * (100 - cut) / 100) + 5 * a.integer(1, 5)
    code, spare = f"{a.pick(_CODES)}{a.serial(10, 99)}", f"{a.pick(_CODES)}{a.serial(10, 99)}"
    used = a.integer(10, 60)
    s["promotions"][code] = {"carriers": [net.A], "discount_pct": cut, "quota": used + a.integer(2, 9), "used": used,
                             "status": "active", "note": "corporate fare"}
    other = net.fly(net.H1, net.D, net.legal_after(f1, carrier=net.C, slack=5 * a.integer(1, 3)), net.C)
    arrive_by = floor_to(shift(max(net.arr(other), net.arr(f2)), 5 * a.integer(1, 4)))
    later = net.fly(net.H1, net.D, shift(net.dep(other), 5 * a.integer(6, 12)))  # the carrier's next one: too late
    room = budget - s["flights"][f1]["fares"]["economy"]  # the other carrier's fare fits only at half price
    s["flights"][other]["fares"]["economy"] = 5 * a.integer(room // 5 + 2, 2 * room // 5 - 1)
    second = net.via(net.H2, shift(arrive_by, -5 * a.integer(1, 4) if level != "impossible" else
                                   5 * a.integer(3, 10)))
    for fid in second:  # together over the budget, within it at half price
        s["flights"][fid]["fares"]["economy"] = 5 * a.integer(budget // 10 + 1, budget // 5 - 1)
    s["promotions"][spare] = {
        "carriers": [net.A] if level == "easy" else [net.C], "discount_pct": cut if level == "easy" else 50,
        "quota": 30, "used": a.integer(3, 25), "status": "active",
        "note": "members' fare" if level == "easy" else "partner launch fare"}
    if level == "impossible":  # the partner fare still has quota, but the other carrier's onward flight is full
        net.full(other)
    s["passengers"][net.user]["budget"] = budget
    trip = Trip(net, arrive_by, [f1, f2])
    carrier, carrier_name = net.C, s["carriers"][net.C]["name"]
    triggers = [net.on_write(
        "promo_exhausted", f"a campaign burns the rest of {code}'s quota once the seats are held",
        net.sets("promotions", code, used=s["promotions"][code]["quota"], status="exhausted"),
        ("list_promotions", {}))]
    if level == "hard":
        triggers.append(net.cascade(
            "bucket_closed", f"with {code} gone, the cheap fare bucket on {f1} closes",
            ["promotions", code, "status"], "exhausted",
            net.sets("flights", f1, fares={"economy": budget, "business": 3 * budget},
                     notice="fare bucket closed"), net.status_of(f1)))
    net.distractors(arrive_by)
    plan = Plan(look=[trip.search(net.O, net.H1), trip.search(net.H1, net.D)], check=[trip.check([f1, f2])],
                price=[trip.quote([f1, f2], code)], hold=[trip.hold([f1, f2])], confirm=[trip.confirm(promo=code)])
    seen = plan.upto("hold") + [trip.promos()]
    onward = [trip.search(net.H1, net.D), trip.quote([f1, other], spare)]
    fixes = {
        "easy": lambda: seen + [trip.quote([f1, f2], spare), trip.confirm(promo=spare)],
        "medium": lambda: seen + onward + [trip.change(f2, other), trip.confirm(promo=spare)],
        "hard": lambda: seen + onward + [trip.airports(), trip.search(net.O, net.H2), trip.search(net.H2, net.D),
                                         trip.quote(second, spare), *trip.reroute(second, promo=spare)],
        "impossible": lambda: seen + [trip.quote([f1, f2]), trip.quote([f1, f2], spare), *onward, trip.airports(),
                                      trip.search(net.O, net.H2), trip.search(net.H2, net.D)] + trip.refuse(
            f"I can't ticket this within your budget of {budget}: promotion {code} is now exhausted and without "
            f"it the fare is {base}; the other promotion, {spare}, only applies to {carrier} flights, and "
            f"{carrier_name}'s flight {other} from {net.H1} is full, while its routing via {net.H2} lands at "
            f"{hhmm(net.arr(second[1]))}, after {hhmm(arrive_by)}.", ["promo_exhausted"],
            ["exhausted", "no quota", "quota used"],
            [other, later, *trip.too_late(second), f"{carrier} flight full",
             f"the {carrier_name} flight has no free seat"]),
    }
    query = standard_query(trip, f" Please use the promotion {code}; my budget only works with it.")
    return make_task(trip, query, triggers, plan, fixes[level](), "a freelancer on a tight budget",
                     f"My budget is fixed at {budget}; I can't pay more than that.", answers={
                         ("promotion", "promo", "code", "discount"): "Any promotion that gets the fare within my "
                         "budget is fine."}, level=level)
