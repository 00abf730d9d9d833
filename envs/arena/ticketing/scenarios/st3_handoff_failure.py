"""ST3 Handoff Failure: the courier bringing the paper tickets will miss the customer at home.

The customer has no smartphone and wants the tickets couriered home before they leave for the
show. Once the order is paid the courier firm reports a backlog (visible on the order page,
``list_customer_orders``): the run now arrives after the customer has left, and new runs take
as long. Easy: switch the order to will-call collection. Medium: the box office charges a
collection fee that, with the seats bought, breaks the budget, so the order's seats are exchanged
for a cheaper section's, collected at will-call. Hard: the exchange must also come with an entry slot,
and the collection rush has filled the early slots of the cheaper section's gate. Impossible:
there is no will-call desk for this show, so no handoff reaches the customer in time.
"""

from __future__ import annotations

from sttgym.clock import format_time, hhmm, minutes_between
from sttgym.envs.arena.ticketing.generator import (ENTRY, Author, Plan, Request, Task, hold_id, intro, leave_by,
                                                   make_task, new_city, order_id)


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s, op = city.state, author.op
    count = author.integer(2, 4)
    north, south = city.gates_of(city.venue)
    price = 10 * author.integer(6, 10)
    wanted = city.add_section(north, price)
    cheaper = city.add_section(south, price - 10 * author.integer(1, 2))
    customer = s["customers"][city.user]
    customer["smartphone"] = False
    fees = s["settings"]["delivery_fee"]
    fees.update(courier=author.integer(3, 6), will_call=author.integer(10, 15))  # the box office's collection fee
    tight = level in ("medium", "hard")
    city.budget(budget := count * price + (fees["courier"] if tight else fees["will_call"]) + author.integer(0, 2))
    if level == "impossible":
        s["venues"][city.venue].update(desk_status="closed", notice="No will-call desk for this show")
    leave_by(city, south)
    req = Request(city, count, entry=level == "hard",
                  how="have the paper tickets couriered to my home before I leave", level=level)
    plan = Plan(look=[req.search(), req.event()], hold=[req.hold(wanted)], check=[req.quote()],
                buy=[req.buy("courier")], entry=req.entry_calls(wanted) if req.entry else [])
    delay = minutes_between(format_time(city.start), customer["departs"]) + 30 * author.integer(1, 3)
    ref = f"CR-{author.serial(10000, 99999)}"
    triggers = [city.on("purchase", "courier_backlog", f"courier backlog {ref}: runs arrive {delay} minutes late",
                        [op.delay_courier(customer=city.user, minutes=delay, notice=f"Courier backlog {ref}"),
                         city.set("settings", "courier_minutes", value=s["settings"]["courier_minutes"] + delay)],
                        ("list_customer_orders", {"customer_id": city.user}))]
    swap = [req.hold(cheaper, "again"), req.call.exchange_order(order_id=order_id("order"), hold_id=hold_id("again"),
                                                               delivery="will_call")]

    def hard() -> list:
        arrive = city.earliest_reachable(south)
        rush = {t: (0 if t <= arrive else n) for t, n in s["gates"][south]["slots"].items()}
        triggers.append(city.cascade("collection_rush", f"the will-call rush fills {south}'s early slots",
                                     ["settings", "courier_minutes"], s["settings"]["courier_minutes"] + delay,
                                     [city.set("gates", south, "slots", value=rush)],
                                     ("get_venue", {"venue_id": city.venue})))
        later = min(t for t, n in rush.items() if n >= count and t > arrive)
        return [req.venue(), *swap, *req.entry_calls(cheaper, slot=later)]

    fixes = {
        "easy": lambda: [req.deliver("will_call")],
        "medium": lambda: [req.venue(), req.event(), *swap],
        "hard": hard,
        "impossible": lambda: [req.venue(), req.cancel(), *req.refuse(
            f"I can't get the tickets to you in time: courier backlog {ref} means the courier now arrives after you "
            f"leave home at {hhmm(customer['departs'])}, there is no will-call desk for this show, and without a "
            f"smartphone mobile tickets won't work, so I have cancelled and refunded the order.",
            ["courier_backlog"], [ref, "courier backlog", "no will-call desk"])]}
    oracle = plan.upto("buy") + [req.orders()] + fixes[level]()
    entry = f" and {ENTRY}" if req.entry else ""
    query = (f"Hi, {req.who}. Please buy {count} seats together in section {wanted} for {intro(req)} and "
             f"{req.how} (I have no smartphone){entry}. The total must stay within {budget}.")
    return make_task(req, query, triggers, plan, oracle, "a customer who likes paper tickets", {
        ("courier", "delivery", "collect", "will", "desk", "phone", "smartphone"): "Will-call is fine too if the "
        "courier can't make it; I have no smartphone.", ("seat", "section", "cheaper"): "Any seats side by side "
        "are fine within my budget.", ("leave", "home", "time"): f"I leave home at {hhmm(customer['departs'])}."},
        insist="I need paper tickets in my hand for tonight's show.")
