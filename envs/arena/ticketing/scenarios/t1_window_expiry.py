"""T1 Window Expiry: the seat cart times out while the agent is still applying the fan code.

The customer wants a few seats together in a named section and a fan-club code to stay within
budget. The agent holds the seats, applies the code, prices the cart and buys: the careful way
to buy. Holding the seats sets off the show's virtual queue (visible in
``list_customer_orders`` and ``get_event``): carts now last three minutes from when they were
placed, so the cart has lapsed before the purchase. Easy: hold again and buy at once, the code
given in the purchase itself. Medium: once the cart lapses the queue sells the section out, so
the seats come from another section of the same price. Hard: the queue also uses up the fan
code, so only a cheaper section fits the budget at full price, and its gate needs an entry
slot the customer can reach. At medium and hard two or three sections would do, and the customer,
who asked to be consulted before a move, needs a feature (a hearing loop, a roof, ...) that only
one of them has and that they name only when asked. Impossible: the section sells out and no
other section has the seats together within the budget; the customer has a feature to name there
too, so that as many impossible instances as feasible ones have a fact to withhold (what the
customer says never tells them apart). Bought at once, the code given in the purchase, the cart
never lapses: that meets the request too, the change never in its way (``Task.alternatives``).
"""

from __future__ import annotations

from sttgym.envs.arena.ticketing.generator import (CONSULT, ENTRY, Author, Plan, Request, Task, intro, leave_by,
                                                   make_task, new_city)

CART = 3  # minutes a cart lasts in the queue: one hold, not a hold plus a separate promo step


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s, pred, op = city.state, author.pred, author.op
    count = author.integer(2, 4)
    north, south = city.gates_of(city.venue)
    price, pct = 10 * author.integer(6, 12), 5 * author.integer(4, 5)
    wanted = city.add_section(north, price)
    budget = round(price * count * (100 - pct) / 100) + 5 * author.integer(1, 3)
    city.budget(budget)
    # The same price elsewhere (medium): only the fan code brings it within the budget; impossible: no seats together.
    other = city.add_section(south, price, run=(author.integer(0, count - 1) if level == "impossible" else None))
    city.add_section(one_of(author, north, south), price + 10 * author.integer(3, 6))  # beyond the budget either way
    options = []  # the sections the customer's need chooses from
    if level == "medium":
        options = [other] + [city.add_section(one_of(author, north, south), price)
                             for _ in range(author.integer(1, 2))]
    if level == "hard":  # all behind one gate, so that the entry slot tells none apart
        options = [city.add_section(south, 5 * ((budget - 5) // count // 5) - 5 * author.integer(0, 2))
                   for _ in range(author.integer(2, 3))]
    fan = city.promo(["FANCLUB", "INNER", "FIRSTROW", "SUPERFAN"], pct, 5 * author.integer(40, 80),
                     author.integer(20, 150), "fan-club presale code")
    leave_by(city, south if level == "hard" else city.gate(wanted))
    req = Request(city, count, entry=level == "hard", level=level)
    asks = level != "easy"  # the impossible twin too: see the docstring
    chosen = req.feature_choice(wanted, options or [other]) if asks else ""
    plan = Plan(look=[req.search(), req.event()], hold=[req.hold(wanted)], promo=[req.apply(fan)],
                check=[req.quote()], buy=[req.buy("mobile")], entry=req.entry_calls(wanted) if req.entry else [])
    notice = f"Virtual queue open: carts last {CART} minutes"
    triggers = [city.on("hold_seats", "virtual_queue", f"holding seats opens the show's virtual queue: carts last "
                        f"{CART} minutes", [op.shorten_carts(event_id=city.event, minutes=CART, notice=notice)],
                        ("list_customer_orders", {"customer_id": city.user}))]
    buyer = f"QUEUE-{author.serial(10000, 99999)}"
    if level != "easy":
        triggers.append(city.trigger(
            "section_sold_out", f"as the cart lapses the queue sells {wanted} out to {buyer}",
            pred.hold_lapsed(customer=city.user, section=wanted),
            [op.sell_out(section_id=wanted, notice=f"Sold out to queue batch {buyer}")],
            ("get_section", {"section_id": wanted}), timing="before"))
    if level == "hard":
        triggers.append(city.cascade(
            "fan_code_used_up", f"the queue uses up the quota of {fan}", ["sections", wanted, "notice"],
            f"Sold out to queue batch {buyer}",
            [city.set("promotions", fan, "used", value=s["promotions"][fan]["quota"])],
            ("list_promotions", {"event_id": city.event})))

    def consult() -> list:  # every option read, then the customer asked, before the three-minute cart starts
        return [req.section(x) for x in options] + [req.ask_feature(f"The virtual queue sold section {wanted} out.")]

    fixes = {
        "easy": lambda: [req.hold(wanted, "again"), req.buy("mobile", "again", fan)],
        "medium": lambda: [req.event(), *consult(), req.hold(chosen, "again"), req.buy("mobile", "again", fan)],
        "hard": lambda: [req.event(), req.promos(), *consult(), req.hold(chosen, "again"), req.buy("mobile", "again"),
                         *req.entry_calls(chosen)],
        "impossible": lambda: [req.section(wanted), req.event(), *req.refuse(
            f"I can't get you {count} seats together within your budget of {budget}: while the queue's "
            f"{CART}-minute cart ran out, {wanted} was sold out to queue batch {buyer}, and no other section has "
            f"{count} seats side by side at a price the budget covers.", ["section_sold_out"],
            [buyer, "sold out", "queue batch"])]}
    oracle = plan.upto("check") + [req.orders()] + fixes[level]()
    # Bought at once, the code given in the purchase, the cart never lapses and the section asked for is had (hard:
    # with an entry slot at its gate, when the customer, leaving for the other gate, still reaches it in time).
    near_enough = city.minutes(city.home, north) <= city.minutes(city.home, south) or level != "hard"
    at_once = [plan.upto("look") + [req.hold(wanted), req.buy("mobile", code=fan),
                                    *(req.entry_calls(wanted) if req.entry else [])]] \
        if level in ("medium", "hard") and near_enough else []
    entry = f" and {ENTRY}" if req.entry else ""
    query = (f"Hi, {req.who} here. Please get me {count} seats together in section {wanted} for {intro(req)}, "
             f"with my fan-club code {fan} so the total stays within my budget of {budget}, as mobile "
             f"tickets{entry}. Hold them, apply the code, check the price, then buy.{CONSULT if asks else ''}")
    return make_task(req, query, triggers, plan, oracle, "a fan buying presale tickets", {
        ("code", "promo", "discount", "budget"): f"My budget is {budget} in total; use any valid discount."},
        insist=f"We need to sit together at this show, within {budget}; nothing else works for us.",
        alternatives=at_once)


def one_of(author: Author, *items: str) -> str:
    return items[author.integer(0, len(items) - 1)]
