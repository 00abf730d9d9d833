"""T2 Priority Reorder: the show is brought forward, and the will-call pickup no longer works.

The customer has no smartphone and wants to collect the tickets at the venue's will-call
desk, which opens comfortably before the doors. Once the order is paid the promoter brings the
show forward by an hour or two (visible in ``get_event``): the doors now open less than half an
hour after the desk does, so a will-call collection is no longer possible, and the entry
slots move with the show. Easy: have the tickets couriered home instead. Medium: the customer
also needs an entry slot: courier, then book a slot of the new times they can reach. Hard: the
earlier show is staffed at one gate only, so the order's section, whose gate is closed, must be
exchanged for one behind the open gate, couriered, and given an entry slot. Impossible: the
courier cannot reach the customer before they leave home, and there is no other way to get
paper tickets to them.
"""

from __future__ import annotations

from sttgym.clock import floor_to, format_time, hhmm, minutes_between, shift
from sttgym.envs.arena.ticketing.generator import (ENTRY, Author, Plan, Request, Task, intro, make_task, new_city,
                                                   one, order_id)
from sttgym.envs.arena.ticketing.world import WILL_CALL_LEAD


def build(author: Author, level: str) -> Task:
    city = new_city(author, doors_hour=19)
    s, call = city.state, author.call
    count = author.integer(2, 4)
    north, south = city.gates_of(city.venue)
    gate = one(author, [north, south])
    other_gate = south if gate == north else north
    wanted = city.add_section(gate, 10 * author.integer(5, 10))
    other = city.add_section(other_gate, s["sections"][wanted]["price"] + 5 * author.integer(0, 2))
    show = city.show
    old_doors, old_starts = show["doors"], show["starts"]
    early = 15 * author.integer(5, 8)
    doors, starts = shift(old_doors, -early), shift(old_starts, -early)
    s["venues"][city.venue]["desk_opens"] = hhmm(shift(old_doors, -WILL_CALL_LEAD - 15 * author.integer(0, 2)))
    customer = s["customers"][city.user]
    customer["smartphone"] = False
    entry_gate = other_gate if level == "hard" else gate
    customer["departs"] = floor_to(shift(doors, -city.minutes(city.home, entry_gate) - 5 * author.integer(1, 3)))
    if level == "impossible":  # the courier's run takes longer than the time left before the customer leaves
        left = minutes_between(format_time(city.start), customer["departs"])
        s["settings"]["courier_minutes"] = left + 30 * author.integer(1, 3)
    fee = s["settings"]["delivery_fee"]["courier"]
    city.budget(count * max(city.price(wanted), city.price(other)) + fee + 5 * author.integer(0, 4))
    req = Request(city, count, entry=level in ("medium", "hard"),
                  how="I'll collect the tickets at the will-call desk", level=level)
    moved = {**show, "doors": doors, "starts": starts}
    new_slots = {g: city.slots(moved, capacity=author.integer(20, 60)) for g in (north, south)}
    plan = Plan(look=[req.search(), req.event()], hold=[req.hold(wanted)], check=[req.quote()],
                buy=[req.buy("will_call")], entry=req.entry_calls(wanted) if req.entry else [])
    effect = city.sets("events", city.event, doors=doors, starts=starts,
                       notice=f"Show brought forward: doors {hhmm(doors)}, start {hhmm(starts)}")
    effect += [city.set("gates", g, "slots", value=new_slots[g]) for g in (north, south)]
    triggers = [city.on("purchase", "show_brought_forward", f"the promoter brings the show forward by {early} "
                        f"minutes: doors {hhmm(doors)}", effect, ("get_event", {"event_id": city.event}))]

    def slot(gate_id: str) -> str:
        arrive = shift(customer["departs"], city.minutes(city.home, gate_id))
        return min(t for t in new_slots[gate_id] if t >= arrive)

    def booking(section: str, save: str = "order") -> list:
        gate_id = city.gate(section)
        return [req.profile(), req.venue(), req.travel(gate_id), req.slot(gate_id, slot(gate_id), save)]

    def hard() -> list:
        notice = "Closed for the brought-forward show: all entry through the other gate"
        triggers.append(city.cascade(
            "gate_unstaffed", f"the brought-forward show is staffed at {other_gate} only",
            ["events", city.event, "doors"], doors, city.sets("gates", gate, status="closed", notice=notice),
            ("get_venue", {"venue_id": city.venue})))
        return [req.venue(), req.cancel(), req.hold(other, "again"), req.buy("courier", "again", save="order2"),
                *booking(other, "order2")]

    fixes = {
        "easy": lambda: [req.deliver("courier")],
        "medium": lambda: [req.deliver("courier"), *booking(wanted)],
        "hard": hard,
        "impossible": lambda: [req.profile(), req.venue(), call.get_order(order_id=order_id("order")), req.cancel(),
                               *req.refuse(
            f"the show has been brought forward: doors now open at {hhmm(doors)}, less than {WILL_CALL_LEAD} "
            f"minutes after the will-call desk opens at {s['venues'][city.venue]['desk_opens']}, so you could not "
            f"collect there, and a courier would only reach your home after you leave at {hhmm(customer['departs'])}. "
            f"Without a smartphone there is no way to get the tickets to you, so I have cancelled and refunded "
            f"the order.", ["show_brought_forward"], [hhmm(doors), "brought forward"])]}

    oracle = plan.upto("buy") + [req.event()] + fixes[level]()
    entry = f" and {ENTRY}" if req.entry else ""
    query = (f"Hello, {req.who}. I'd like {count} seats together in section {wanted} for {intro(req)}. I don't "
             f"have a smartphone, so {req.how}{entry}. My budget is "
             f"{customer['budget']} in total.")
    return make_task(req, query, triggers, plan, oracle, "a theatre-goer without a smartphone", {
        ("phone", "smartphone", "mobile", "collect", "courier", "delivery", "post"): "I have no smartphone; paper "
        "tickets by will-call or courier are fine, whichever gets them to me in time.",
        ("time", "earlier", "leave", "home"): f"I leave home at {hhmm(customer['departs'])}."},
        insist="I really want to see this show, with paper tickets I can actually get hold of.")
