"""S2 Dependency Block: a structural inspection closes the accessible section, and what depends on it.

The customer uses a wheelchair and books accessible places for their group; accessible places
are only usable through a step-free gate. A structural inspection closes the section the agent
chose (visible in ``get_section``): carts in it are void and paid orders refunded. Easy: the
inspection starts as the seats are held; another accessible section takes the group. Medium:
it starts once the order is paid, so the refund shows only on reading, and the entry slot goes
with the new section's gate. Hard: the inspection also takes the lift of the gate the other
accessible section shares, so only the accessible section behind the far gate is left, whose
price needs the access promotion. Impossible: the lift goes too and every other accessible
place is behind it.
"""

from __future__ import annotations

from sttgym.envs.arena.ticketing.generator import (Author, Plan, Request, Task, intro, leave_by, make_task, new_city,
                                                   one)

TRIGGER_ON = {"easy": "hold_seats", "medium": "purchase", "hard": "purchase", "impossible": "hold_seats"}


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    op = author.op
    count = author.integer(2, 3)
    near, far = (lambda g: (g, [x for x in city.gates_of(city.venue) if x != g][0]))(one(author, city.gates_of(
        city.venue)))
    price = 10 * author.integer(5, 9)
    wanted = city.add_section(near, price, accessible=True)
    same_gate = city.add_section(near, price, accessible=True)
    city.add_section(far, price - 10, accessible=False)  # cheaper, not accessible
    pct = 5 * author.integer(5, 6)
    city.budget(budget := count * price + 5 * author.integer(1, 3))
    behind_far = ""
    if level == "hard":
        behind_far = city.add_section(far, 5 * ((budget * 100 // (100 - pct)) // count // 5) - 5, accessible=True)
    access = city.promo(["ACCESS", "COMPANION", "CARER", "EASYSEAT"], pct, 200, author.integer(10, 120),
                        "access scheme: accessible sections only", sections=[behind_far or same_gate])
    leave_by(city, far if level == "hard" else near)
    req = Request(city, count, accessible=True, entry=level in ("medium", "hard"))
    plan = Plan(look=[req.search(), req.event()], hold=[req.hold(wanted)], check=[req.quote()],
                buy=[req.buy("mobile")], entry=req.entry_calls(wanted) if req.entry else [])
    ref = f"INS-{author.serial(1000, 9999)}"
    notice = f"Closed by structural inspection {ref}"
    triggers = [city.on(TRIGGER_ON[level], "section_inspection", f"a structural inspection ({ref}) closes {wanted}",
                        [op.close_section(section_id=wanted, notice=notice)], ("get_section", {"section_id": wanted}),
                        also=(("get_event", {"event_id": city.event}),))]
    if level in ("hard", "impossible"):
        triggers.append(city.cascade(
            "lift_out", f"inspection {ref} also takes the lift of {near}", ["sections", wanted, "status"], "closed",
            city.sets("gates", near, step_free=False, notice=f"Lift out of service (inspection {ref})"),
            ("get_venue", {"venue_id": city.venue})))
    fixes = {
        "easy": lambda: [req.event(), req.hold(same_gate, "again"), req.buy("mobile", "again")],
        "medium": lambda: [req.orders(), req.hold(same_gate, "again"), req.buy("mobile", "again", save="order2"),
                           *req.entry_calls(same_gate, "order2")],
        "hard": lambda: [req.orders(), req.venue(), req.promos(), req.hold(behind_far, "again"),
                         req.buy("mobile", "again", access, "order2"), *req.entry_calls(behind_far, "order2")],
        "impossible": lambda: [req.event(), req.venue(), *req.refuse(
            f"I can't book accessible places for your group: structural inspection {ref} has closed {wanted}, the "
            f"lift at {near} is out of service, and every other accessible section is behind that gate.",
            ["section_inspection"], [ref])]}
    oracle = plan.upto("buy" if TRIGGER_ON[level] == "purchase" else "check") + [req.section(wanted)] + fixes[level]()
    entry = " and book our entry slot at the section's gate" if req.entry else ""
    query = (f"Hi, I'm {req.who}. I use a wheelchair: please buy {count} accessible places together in section "
             f"{wanted} for {intro(req)}, as mobile tickets{entry}. Our budget is {budget} in total.")
    return make_task(req, query, triggers, plan, oracle, "a wheelchair user going out with friends", {
        ("accessible", "wheelchair", "step", "lift", "access"): "I need accessible places with step-free entry; "
        "any accessible section is fine.", ("code", "promo", "discount"): "Any valid discount is welcome."},
        insist="We need accessible places together with step-free entry; anything else doesn't work for me.")
