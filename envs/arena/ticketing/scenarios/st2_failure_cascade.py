"""ST2 Failure Cascade: a power failure at the venue spreads from the box office to the gates and the show.

The customer has no smartphone and collects at will-call. Once the order is paid the venue
loses power (the order page in ``list_customer_orders`` carries the incident number,
``get_venue`` the details): the
will-call desk goes offline. Easy: the tickets are couriered home instead. Medium: the
turnstiles of the section's gate go dark too, and the venue sends that section through the
other gate, so besides the courier the entry slot is booked there. Hard: the dark gate's
sections cannot be served at all: their orders are refunded, so seats are bought behind the
other gate, couriered, and given an entry slot. Impossible: the failure cannot be repaired in
time and the show is cancelled.
"""

from __future__ import annotations

from sttgym.envs.arena.ticketing.generator import (ENTRY, Author, Plan, Request, Task, intro, leave_by, make_task,
                                                   new_city)


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s, op = city.state, author.op
    count = author.integer(2, 4)
    dark, lit = city.gates_of(city.venue)[::1 if author.chance(0.5) else -1]
    price = 10 * author.integer(5, 9)
    wanted = city.add_section(dark, price)
    other = city.add_section(lit, price - 5 * author.integer(0, 2))
    s["customers"][city.user]["smartphone"] = False
    fee = s["settings"]["delivery_fee"]["courier"]
    city.budget(budget := count * price + fee + 5 * author.integer(0, 3))
    leave_by(city, lit)
    incident = f"PWR-{author.serial(1000, 9999)}"
    req = Request(city, count, entry=level in ("medium", "hard"), how="I'll collect them at the will-call desk",
                  level=level)
    plan = Plan(look=[req.search(), req.event()], hold=[req.hold(wanted)], check=[req.quote()],
                buy=[req.buy("will_call")], entry=req.entry_calls(wanted) if req.entry else [])
    effect = city.sets("venues", city.venue, desk_status="offline",
                       notice=f"Power failure {incident}: box office and will-call offline")
    if level in ("medium", "hard"):
        effect += city.sets("gates", dark, status="closed", notice=f"Turnstiles dark ({incident})")
    if level == "medium":
        effect += [city.set("sections", sec, "gate", value=lit) for sec in city.sections
                   if s["sections"][sec]["gate"] == dark]
    effect.append(op.flag_orders(event_id=city.event, notice=f"Venue power failure {incident}: check delivery "
                                 "and entry"))
    # Shown on the customer's order page (the stale plan reads the venue, never the order: looking is not noticing).
    triggers = [city.on("purchase", "power_failure", f"power failure {incident} at {city.venue}", effect,
                        ("list_customer_orders", {"customer_id": city.user}))]
    if level == "hard":
        triggers.append(city.cascade("dark_sections_refunded", f"sections behind {dark} are refunded",
                                     ["gates", dark, "status"], "closed",
                                     [op.close_section(section_id=wanted,
                                                       notice=f"No entry: {dark} dark ({incident})")],
                                     ("get_section", {"section_id": wanted})))
    if level == "impossible":
        triggers.append(city.cascade(
            "show_cancelled", f"{incident} cannot be repaired in time: the show is cancelled",
            ["venues", city.venue, "desk_status"], "offline",
            city.sets("events", city.event, status="cancelled", notice=f"Cancelled: power failure {incident}")
            + [op.refund_event_orders(event_id=city.event)], ("get_event", {"event_id": city.event})))
    fixes = {
        "easy": lambda: [req.deliver("courier")],
        "medium": lambda: [req.deliver("courier"), req.event(), req.profile(), req.travel(lit),
                           req.slot(lit, city.earliest_reachable(lit))],
        "hard": lambda: [req.event(), req.hold(other, "again"),
                         req.buy("courier", "again", save="order2"), *req.entry_calls(other, "order2")],
        "impossible": lambda: [req.event(), *req.refuse(
            f"the show can't go ahead: power failure {incident} at the venue could not be repaired in time and the "
            f"promoter has cancelled it; your order has been refunded.", ["show_cancelled", "power_failure"],
            [incident, "cancelled", "power failure"])]}
    oracle = plan.upto("buy") + [req.orders(), req.venue()] + fixes[level]()
    entry = f" and {ENTRY}" if req.entry else ""
    query = (f"Good morning, {req.who}. Please buy {count} seats together in section {wanted} for {intro(req)}. "
             f"I have no smartphone, so {req.how}{entry}. The total must stay within "
             f"{budget}.")
    return make_task(req, query, triggers, plan, oracle, "a regular at the venue", {
        ("phone", "smartphone", "courier", "delivery", "collect", "post"): "I have no smartphone; will-call or a "
        "courier to my home are both fine.", ("seat", "section", "gate"): "Any seats side by side are fine."},
        insist="I want to see this show tonight, nothing else.")
