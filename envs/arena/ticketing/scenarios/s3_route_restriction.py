"""S3 Route Restriction: the tram to the venue's gate is suspended, and the entry slot is out of reach.

The customer's section enters through a gate served by a tram straight from their street; the
agent books the first entry slot the tram makes. The tram is then suspended (visible in
``get_travel_time``): the detour over the metro and a walk round the venue takes far longer.
Easy: the suspension comes as the slot is booked; a later slot that the detour makes replaces
it. Medium: it comes once the order is paid, and the detour reaches the gate only after the
show starts, so the seats are exchanged for a section behind the other gate and the slot
booked there. Hard: the crowds diverted off the tram fill the other gate's early slots too, and
its section costs more than the budget without the tram-disruption voucher. Impossible: every
section enters through the tram gate, and the detour misses the start.
"""

from __future__ import annotations

from sttgym.clock import floor_to, format_time, minutes_between, shift
from sttgym.envs.arena.ticketing.generator import ENTRY, Author, Plan, Request, Task, intro, make_task, new_city, one

TRIGGER_ON = {"easy": "book_entry_slot", "medium": "purchase", "hard": "purchase", "impossible": "purchase"}


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s = city.state
    count = author.integer(2, 4)
    tram_gate = one(author, city.gates_of(city.venue))
    other_gate = [g for g in city.gates_of(city.venue) if g != tram_gate][0]
    show, customer = city.show, s["customers"][city.user]
    walk = next(k for k, x in s["links"].items() if tram_gate in (x["a"], x["b"]))
    station = s["links"][walk]["b"] if s["links"][walk]["a"] == tram_gate else s["links"][walk]["a"]
    tram = f"LNK-{author.serial(100, 999)}"
    line = f"Tram {author.integer(2, 9)}"
    s["links"][tram] = {"a": city.home, "b": tram_gate, "minutes": author.integer(6, 10), "open": True, "line": line}
    customer["departs"] = floor_to(shift(show["doors"], -s["links"][tram]["minutes"] - 5 * author.integer(1, 3)))
    s["links"][tram]["open"] = False  # the metro alone: to the walk's station, and to the other gate
    base, to_other = city.minutes(city.home, station), city.minutes(city.home, other_gate)
    s["links"][tram]["open"] = True
    # The walk round from the metro: the detour arrives mid-way through the slots (easy) or after the start.
    target = shift(show["doors"], 15 * author.integer(1, 3) - 5) if level == "easy" else \
        shift(show["starts"], 5 * author.integer(2, 6))
    # A long metro ride moves the departure earlier rather than cutting the walk below 3 minutes (which would
    # land the detour after the target), and leaves the other gate a slot before the start to spare.
    customer["departs"] = min(customer["departs"], floor_to(shift(target, -base - 3)),
                              floor_to(shift(show["starts"], -15 - to_other)))
    s["links"][walk]["minutes"] = minutes_between(customer["departs"], target) - base
    price = 10 * author.integer(5, 10)
    wanted = city.add_section(tram_gate, price)
    other = ""
    if level != "impossible":
        other = city.add_section(other_gate, price + (10 * author.integer(1, 2) if level == "hard" else 0))
    else:
        city.add_section(tram_gate, price + 10 * author.integer(1, 3))
    pct = 5 * author.integer(6, 7)  # brings the dearer section back within the budget
    city.budget(budget := count * price + 5 * author.integer(1, 3))
    voucher = city.promo(["TRAMFIX", "DETOUR", "REROUTE", "LINEDOWN"], pct, 300, author.integer(5, 100),
                         f"{line} disruption voucher") if level == "hard" else ""
    req = Request(city, count, entry=True, level=level)
    plan = Plan(look=[req.search(), req.event()], hold=[req.hold(wanted)], check=[req.quote()],
                buy=[req.buy("mobile")], entry=req.entry_calls(wanted))
    triggers = [city.on(TRIGGER_ON[level], "tram_suspended", f"{line} ({tram}) is suspended",
                        [city.set("links", tram, "open", value=False)],
                        ("get_travel_time", {"origin_id": city.home, "destination_id": tram_gate}),
                        when=author.pred.has_order(customer=city.user))]
    # When the customer reaches each gate once the tram is suspended, as the travel tool shows it on the oracle's way.
    stale, seen = plan.calls if level == "easy" else plan.upto("buy") + [req.profile()], [req.travel(tram_gate)]
    run = author.dry_run(s, format_time(city.start), stale + seen + [req.travel(other_gate)], triggers)
    arrive_tram, arrive_other = (shift(customer["departs"], r["data"]["minutes"]) for r in run.results[-2:])

    def first_slot(gate: str, arrive: str) -> str:
        return min(t for t in s["gates"][gate]["slots"] if t >= arrive)

    first_other = first_slot(other_gate, arrive_other)

    def hard() -> list:
        crowded = {t: (0 if t <= first_other else n) for t, n in s["gates"][other_gate]["slots"].items()}
        triggers.append(city.cascade("diverted_crowds", f"crowds diverted off {line} fill {other_gate}'s early slots",
                                     ["links", tram, "open"], False, [city.set("gates", other_gate, "slots",
                                                                               value=crowded)],
                                     ("get_venue", {"venue_id": city.venue})))
        later = min(t for t, n in crowded.items() if n >= count and t > first_other)
        return [req.venue(), req.cancel(), req.promos(), req.hold(other, "again"),
                req.buy("mobile", "again", voucher, "order2"), *req.entry_calls(other, "order2", slot=later)]

    fixes = {
        "easy": lambda: [req.venue(), req.slot(tram_gate, first_slot(tram_gate, arrive_tram))],
        "medium": lambda: [req.cancel(), req.hold(other, "again"), req.buy("mobile", "again", save="order2"),
                           *req.entry_calls(other, "order2", slot=first_other)],
        "hard": hard,
        "impossible": lambda: [req.venue(), req.cancel(), *req.refuse(
            f"I can't get your group in on time: {line} ({tram}) is suspended, the detour reaches {tram_gate} only "
            f"after the {show['starts'][11:]} start, and every section of this show enters through that gate, so I "
            f"have cancelled and refunded the order.", ["tram_suspended"], [tram, f"{line} suspended"])]}
    oracle = stale + seen + fixes[level]()
    query = (f"Hi, {req.who} here. Please buy {count} seats together in section {wanted} for {intro(req)}, as "
             f"mobile tickets, and {ENTRY}; we take the {line} from home, which "
             f"stops right at it. Our budget is {budget} in total.")
    return make_task(req, query, triggers, plan, oracle, "a customer who goes everywhere by tram", {
        ("tram", "route", "travel", "leave", "home", "time"): f"We leave home at {customer['departs'][11:]}; any "
        f"way to get there works for us.", ("code", "promo", "voucher", "discount"): "Any valid discount is "
        "welcome."}, insist="We need to be inside before the show starts; nothing else is any use.")
