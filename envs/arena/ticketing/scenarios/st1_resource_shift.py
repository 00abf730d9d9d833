"""ST1 Resource Shift: a late second show is added and the section's seats move to it.

The customer wants seats together in a section of tonight's show. Demand is so high that, as
the agent goes to hold them, the promoter adds a late second performance and moves the
section's unsold seats to it (visible in ``get_event``, whose notice names the new show): the
hold fails, the section is empty. Easy: the customer is happy with either performance, so the
seats are held and bought in the late show's section. Medium: they also need an entry slot,
which for the late show is a later one. Hard: the late show is priced higher, and the launch
code that comes with it must be used to stay within budget; the early show's other section
sells out in the same rush. Impossible: the customer can only make the early show, whose other
sections have no seats together. At easy and medium the early show's other section, which still
has the seats together, would do as well (``Task.alternatives``).
"""

from __future__ import annotations

from sttgym.clock import shift
from sttgym.envs.arena.ticketing.generator import ENTRY, Author, Plan, Request, Task, intro, make_task, new_city, one


def build(author: Author, level: str) -> Task:
    city = new_city(author, doors_hour=18)
    s, pred, op = city.state, author.pred, author.op
    count = author.integer(2, 4)
    gate = one(author, city.gates_of(city.venue))
    price = 10 * author.integer(5, 9)
    wanted = city.add_section(gate, price)
    other = city.add_section(gate, price, run=author.integer(0, count - 1) if level == "impossible" else None)
    city.add_section(gate, price + 10 * author.integer(3, 6))
    show = city.show
    late = f"EVT-{author.serial(1000, 9999)}"
    late_doors = shift(show["starts"], 15 * author.integer(6, 8))
    late_show = {**show, "title": f"{show['performer']} Late Show", "doors": late_doors,
                 "starts": shift(late_doors, 60), "notice": f"Second performance: seats moved from {wanted}"}
    moved = f"SEC-{author.serial(100, 999)}"
    uplift = 10 * author.integer(1, 2) if level == "hard" else 0
    s_moved = {**s["sections"][wanted], "event": late, "price": price + uplift,
               "notice": f"Moved from {wanted} ({city.event})"}
    city.budget(budget := count * price + 5 * author.integer(1, 3))
    pct = 5 * author.integer(6, 7)
    code = f"{author.pick(['LATESHOW', 'ENCORE', 'SECONDSET', 'NIGHTCAP'])}{author.serial(10, 99)}"
    effect = [city.set("events", late, value=late_show), city.set("sections", moved, value=s_moved),
              city.set("sections", wanted, "rows", value={r: [] for r in s["sections"][wanted]["rows"]}),
              city.set("sections", wanted, "notice", value=f"Seats moved to the added show {late}"),
              city.set("events", city.event, "notice", value=f"Second show {late} added; {wanted} moved to it")]
    effect += [city.set("gates", g, "slots", value={**s["gates"][g]["slots"], **city.slots(late_show, 40)})
               for g in city.gates_of(city.venue)]
    if level == "hard":
        effect.append(city.set("promotions", code, value={
            "event": late, "sections": None, "discount_pct": pct, "quota": 200, "used": 0, "ends": None,
            "status": "active", "note": "launch code for the added show"}))
    triggers = [city.trigger("second_show_added", f"the promoter adds {late} and moves {wanted}'s seats to it",
                             pred.call_argument(name="section_id", value=wanted), effect,
                             ("get_event", {"event_id": city.event}), activation=("hold_seats",), timing="before")]
    req = Request(city, count, events=[city.event] if level == "impossible" else [city.event, late],
                  entry=level in ("medium", "hard"), level=level)
    plan = Plan(look=[req.search(), req.event()], hold=[req.hold(wanted)], check=[req.quote()],
                buy=[req.buy("mobile")], entry=req.entry_calls(wanted) if req.entry else [])
    arrive = shift(s["customers"][city.user]["departs"], city.minutes(city.home, gate))
    slot = min(t for t in city.slots(late_show) if t >= arrive)
    if level == "hard":
        triggers.append(city.cascade("early_rush", f"the rush sells {other} out", ["events", late, "status"],
                                     "on_sale", [op.sell_out(section_id=other, notice="Sold out")],
                                     ("get_section", {"section_id": other})))
    late_entry = [req.profile(), req.venue(), req.travel(gate), req.slot(gate, slot)]
    tried = plan.upto("look") + [req.hold(wanted, "try"), req.event()]
    fixes = {
        "easy": lambda: [req.event(late), req.hold(moved, "again"), req.buy("mobile", "again")],
        "medium": lambda: [req.event(late), req.hold(moved, "again"), req.buy("mobile", "again"), *late_entry],
        "hard": lambda: [req.event(late), call_promos(req, late), req.hold(moved, "again"),
                         req.buy("mobile", "again", code), *late_entry],
        "impossible": lambda: [req.section(other), *req.refuse(
            f"I can't seat your group at the early show: the seats of {wanted} were moved to the added late show "
            f"{late}, which you can't make, and no other section of {city.event} has {count} seats side by side "
            f"within your budget.", ["second_show_added"], [late, "late show", "seats moved"])]}
    oracle = tried + fixes[level]()
    # The early show's other section still has the seats together (until the hard level's rush sells it out).
    early = [tried + [req.section(other), req.hold(other, "again"), req.buy("mobile", "again"),
                      *(req.entry_calls(other) if req.entry else [])]] if level in ("easy", "medium") else []
    entry = f" and {ENTRY}" if req.entry else ""
    either = ("We have a train at 23:00, so it has to be this early performance." if level == "impossible" else
              "Any performance that evening is fine by us.")
    query = (f"Hi, {req.who}. Please get me {count} seats together in section {wanted} for {intro(req)}, as mobile "
             f"tickets{entry}, within {budget} in total. {either}")
    return make_task(req, query, triggers, plan, oracle, "a fan in a sold-out week", {
        ("show", "performance", "late", "second", "later", "time"): either,
        ("code", "promo", "discount"): "Any valid code is fine."},
        insist="It has to be a performance we can make, with seats together, within my budget.", alternatives=early)


def call_promos(req: Request, event: str):
    return req.call.list_promotions(event_id=event)
