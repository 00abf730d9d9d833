"""T1 Window Expiry: the fare hold lapses while the agent is still checking the routing.

The agent holds the traveller's routing first, then checks it, the profile and the price before
ticketing: the usual way to secure seats while doing due diligence. Once a hold exists, the
carrier's revenue management closes the fare: open holds lapse at once and new ones last five
minutes (visible in ``list_passenger_bookings``, ``get_booking`` or ``list_carriers``), so the
ticketing fails. Easy: hold again and ticket at once. Medium: the lapsed seats on the onward
flight are sold, so another carrier's onward flight (an interline connection) must be found,
checked and ticketed straight after its hold; the next flight of the same carrier lands too
late. Hard: both legs sell out, so the whole trip moves to the second hub, checked before the
hold since a hold now outlives no check. Impossible: both legs sell out and the only other
routing lands after the deadline.
"""

from __future__ import annotations

from sttgym.envs.arena.airline.generator import (Author, Plan, Task, Trip, floor_to, hhmm, make_task, new_network,
                                                 shift, standard_query)

SHORT_HOLD = 5  # minutes: longer than a hold call, shorter than a hold plus a check
SOLD = {"easy": (), "medium": ("f2",), "hard": ("f1", "f2"), "impossible": ("f1", "f2")}  # legs sold once lapsed


def build(author: Author, level: str) -> Task:
    net = new_network(author)
    a, pred = author, author.pred
    f1 = net.fly(net.O, net.H1, net.at(a.integer(8, 10), 5 * a.integer(0, 11)))
    f2 = net.fly(net.H1, net.D, net.legal_after(f1, slack=5 * a.integer(2, 5)))
    other = net.fly(net.H1, net.D, net.legal_after(f1, carrier=net.C, slack=5 * a.integer(1, 3)), net.C)  # interline
    arrive_by = floor_to(shift(max(net.arr(other), net.arr(f2)), 5 * a.integer(1, 4)))
    net.fly(net.H1, net.D, shift(net.dep(other), 5 * a.integer(6, 12)))  # the carrier's next one lands too late
    trip = Trip(net, arrive_by, [f1, f2])
    notice = f"Fare closed: open holds released; new holds last {SHORT_HOLD} minutes"
    triggers = [net.on_write(
        "fare_hold_cut", f"{net.A} closes the fare once a hold exists: open holds lapse, new ones last "
        f"{SHORT_HOLD} minutes", [a.op.release_holds(carrier=net.A, hold_minutes=SHORT_HOLD, notice=notice)],
        ("list_passenger_bookings", {"passenger_id": net.user}))]
    legs = {"f1": f1, "f2": f2}
    sold = [legs[k] for k in SOLD[level]]
    if sold:
        triggers.append(net.trigger(
            "seats_sold", f"the lapsed seats on {', '.join(sold)} are sold to other travellers",
            pred.has_booking(passenger=net.user, status="expired"),
            [op for fid in sold for op in net.sets("flights", fid, seats={"economy": 0, "business": 0},
                                                   notice="sold out")],
            net.status_of(sold[-1])))
    second = net.via(net.H2, shift(arrive_by, -5 * a.integer(1, 4) if level == "hard" else 5 * a.integer(2, 10)),
                     carrier=net.A)
    trip.afford([f1, f2], [f1, other], second)
    net.distractors(arrive_by)
    plan = Plan(look=[trip.search(net.O, net.H1), trip.search(net.H1, net.D)], hold=[trip.hold([f1, f2])],
                check=[trip.check([f1, f2]), trip.profile()], price=[trip.quote([f1, f2])], confirm=[trip.confirm()])
    seen = plan.upto("price") + [trip.bookings()]
    hubs = [trip.search(net.O, net.H1), trip.airports(), trip.search(net.O, net.H2), trip.search(net.H2, net.D)]
    fixes = {  # a new hold is ticketed straight away: five minutes outlive no check
        "easy": lambda: seen + trip.book([f1, f2]),
        "medium": lambda: seen + [trip.search(net.H1, net.D), trip.check([f1, other]), *trip.book([f1, other])],
        "hard": lambda: seen + [trip.search(net.H1, net.D)] + hubs + [trip.check(second), *trip.book(second)],
        "impossible": lambda: seen + [trip.search(net.H1, net.D)] + hubs + trip.refuse(
            f"I can't ticket this trip: your hold lapsed when {net.A} cut fare holds to {SHORT_HOLD} minutes, "
            f"{f1} and {f2} are now sold out, and the only other routing, via {net.H2}, lands at "
            f"{hhmm(net.arr(second[1]))}, after {hhmm(arrive_by)}.", ["fare_hold_cut"],
            [f"{SHORT_HOLD} minutes", "sold out", "fare closed", "hold lapsed", "hold expired"], trip.too_late(second)),
    }
    query = standard_query(trip).replace("Please check the routing, hold it, price it against my budget and "
                                         "ticket it.", "Please hold it for me first, then check the connection, my "
                                         "profile and the fare against my budget, and ticket it.")
    return make_task(trip, query, triggers, plan, fixes[level](), "a project manager booking by phone",
                     "Nothing later works for me.", level=level)
