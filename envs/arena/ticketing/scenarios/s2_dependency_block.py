"""S2 Dependency Block: a structural inspection closes the accessible section, and what depends on it.

The customer uses a wheelchair and books accessible places for their group; accessible places
are only usable through a step-free gate. A structural inspection closes the section the agent
chose (visible in ``get_section``): carts in it are void and paid orders refunded. Easy: the
inspection starts as the seats are held; another accessible section takes the group. Medium:
it starts once the order is paid, so the refund shows only on reading, and the entry slot goes
with the new section's gate. Hard: the inspection also takes the lift of the gate the other
accessible section shares, so only the accessible sections behind the far gate are left, whose
price needs the access promotion. At medium and hard two or three accessible sections would do,
and the customer, who asked to be consulted before a move, needs a feature (a hearing loop, a
roof, ...) that only one of them has and that they name only when asked. Impossible: the lift
goes too and every other accessible place is behind it.
"""

from __future__ import annotations

from sttgym.envs.arena.ticketing.generator import (CONSULT, ENTRY, Author, Plan, Request, Task, intro, leave_by,
                                                   make_task, new_city, one)

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
    options = []  # the sections the customer's need chooses from
    if level == "medium":
        options = [same_gate] + [city.add_section(near, price, accessible=True) for _ in range(author.integer(1, 2))]
    if level == "hard":
        top = 5 * ((budget * 100 // (100 - pct)) // count // 5) - 5  # within the budget only with the promotion
        options = [city.add_section(far, top - 5 * author.integer(0, 2), accessible=True)
                   for _ in range(author.integer(2, 3))]
    access = city.promo(["ACCESS", "COMPANION", "CARER", "EASYSEAT"], pct, 200, author.integer(10, 120),
                        "access scheme: accessible sections only", sections=options or [same_gate])
    leave_by(city, far if level == "hard" else near)
    req = Request(city, count, accessible=True, entry=level in ("medium", "hard"), level=level)
    chosen = req.feature_choice(wanted, options) if options else ""
    plan = Plan(look=[req.search(), req.event()], hold=[req.hold(wanted)], check=[req.quote()],
                buy=[req.buy("mobile")], entry=req.entry_calls(wanted) if req.entry else [])
    ref = f"INS-{author.serial(1000, 9999)}"
    notice = f"Closed by structural inspection {ref}"
    triggers = [city.on(TRIGGER_ON[level], "section_inspection", f"a structural inspection ({ref}) closes {wanted}",
                        [op.close_section(section_id=wanted, notice=notice)], ("get_section", {"section_id": wanted}))]
    if level in ("hard", "impossible"):
        triggers.append(city.cascade(
            "lift_out", f"inspection {ref} also takes the lift of {near}", ["sections", wanted, "status"], "closed",
            city.sets("gates", near, step_free=False, notice=f"Lift out of service (inspection {ref})"),
            ("get_venue", {"venue_id": city.venue})))

    def consult() -> list:  # every option read, then the customer asked
        return [req.section(x) for x in options] + [req.ask_feature(f"A structural inspection ({ref}) closed "
                                                                    f"section {wanted} and refunded your order.")]

    fixes = {
        "easy": lambda: [req.event(), req.hold(same_gate, "again"), req.buy("mobile", "again")],
        "medium": lambda: [req.orders(), *consult(), req.hold(chosen, "again"),
                           req.buy("mobile", "again", save="order2"), *req.entry_calls(chosen, "order2")],
        "hard": lambda: [req.orders(), req.venue(), req.promos(), *consult(), req.hold(chosen, "again"),
                         req.buy("mobile", "again", access, "order2"), *req.entry_calls(chosen, "order2")],
        "impossible": lambda: [req.event(), req.venue(), *req.refuse(
            f"I can't book accessible places for your group: structural inspection {ref} has closed {wanted}, the "
            f"lift at {near} is out of service, and every other accessible section is behind that gate.",
            ["section_inspection"], [ref, "structural inspection", "lift out of service"])]}
    oracle = plan.upto("buy" if TRIGGER_ON[level] == "purchase" else "check") + [req.section(wanted)] + fixes[level]()
    entry = f" and {ENTRY}" if req.entry else ""
    query = (f"Hi, I'm {req.who}. I use a wheelchair: please buy {count} accessible places together in section "
             f"{wanted} for {intro(req)}, as mobile tickets{entry}. Our budget is {budget} in total."
             + (CONSULT if options else ""))
    return make_task(req, query, triggers, plan, oracle, "a wheelchair user going out with friends", {
        ("accessible", "wheelchair", "step", "lift", "access"): "I need accessible places with step-free entry; "
        "any accessible section is fine.", ("code", "promo", "discount"): "Any valid discount is welcome."},
        insist="We need accessible places together with step-free entry; anything else doesn't work for me.")
