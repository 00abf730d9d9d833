"""S1 Site Mismatch: the show moves to another venue after the tickets are bought.

The customer wants seats together and an entry slot at their section's gate. Once the order is
paid the promoter moves the show to another venue across town (visible in ``get_event``): the
sections keep their names but now enter through the new venue's gates, and the entry slots are
the new venue's. Easy: book a slot at the new gate that the customer reaches in time. Medium:
the customer collects at will-call, and the new venue has no will-call desk, so the tickets
must be couriered as well. Hard: the new venue's layout has no room for the customer's
section, whose order is refunded, so seats must be bought in another section and the slot
booked at its gate. Impossible: the section is dropped and no other section at the new venue
has the seats together.
"""

from __future__ import annotations

from sttgym.clock import floor_to, shift
from sttgym.envs.arena.ticketing.generator import Author, Plan, Request, Task, intro, make_task, new_city, one


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s, op = city.state, author.op
    count = author.integer(2, 4)
    gates = city.gates_of(city.venue)
    new_venue = one(author, [v for v in city.venues if v != city.venue])
    new_gates = city.gates_of(new_venue)
    to_new = dict(zip(gates, new_gates))
    wanted = city.add_section(gates[0], 10 * author.integer(5, 10))
    other = city.add_section(gates[1], city.price(wanted) - 5 * author.integer(0, 2),
                             run=author.integer(0, count - 1) if level == "impossible" else None)
    customer = s["customers"][city.user]
    far = max(city.minutes(city.home, g) for g in gates + new_gates)
    customer["departs"] = floor_to(shift(city.show["doors"], -far - 5 * author.integer(1, 3)))
    fee = s["settings"]["delivery_fee"]["courier"]
    city.budget(count * city.price(wanted) + fee + 5 * author.integer(0, 3))
    delivery = "mobile"
    if level == "medium":
        customer["smartphone"], delivery = False, "will_call"
        s["venues"][new_venue].update(desk_status="closed", notice="No will-call desk at this venue")
    how = "I'll collect them at will-call (no smartphone)" if delivery == "will_call" else "mobile tickets are fine"
    req = Request(city, count, entry=True, how=how, level=level)
    plan = Plan(look=[req.search(), req.event()], hold=[req.hold(wanted)], check=[req.quote()],
                buy=[req.buy(delivery)], entry=req.entry_calls(wanted))
    name = s["venues"][new_venue]["name"]
    effect = city.sets("events", city.event, venue=new_venue, notice=f"Moved to {name} ({new_venue})")
    effect += [city.set("sections", sec, "gate", value=to_new[s["sections"][sec]["gate"]]) for sec in city.sections]
    effect += [city.set("gates", g, "slots", value={**s["gates"][g]["slots"], **city.slots(city.show)})
               for g in new_gates]
    dropped = f"Not in the {name} layout: orders refunded"
    if level == "impossible":
        effect.append(op.close_section(section_id=wanted, notice=dropped))
    triggers = [city.on("purchase", "venue_changed", f"the promoter moves the show to {new_venue}", effect,
                        ("get_event", {"event_id": city.event}))]

    def slot(section: str) -> str:
        gate = to_new[s["sections"][section]["gate"]]
        arrive = shift(customer["departs"], city.minutes(city.home, gate))
        return min(t for t in city.slots(city.show) if t >= arrive)

    def entry(section: str, save: str = "order") -> list:
        gate = to_new[s["sections"][section]["gate"]]
        return [req.profile(), req.venue(new_venue), req.travel(gate), req.slot(gate, slot(section), save)]

    def hard() -> list:
        triggers.append(city.cascade("section_dropped", f"{wanted} has no room at {new_venue}: its orders are refunded",
                                     ["events", city.event, "venue"], new_venue,
                                     [op.close_section(section_id=wanted, notice=dropped)],
                                     ("get_section", {"section_id": wanted})))
        return [req.orders(), req.hold(other, "again"), req.buy("mobile", "again", save="order2"),
                *entry(other, "order2")]

    fixes = {
        "easy": lambda: entry(wanted),
        "medium": lambda: [req.deliver("courier"), *entry(wanted)],
        "hard": hard,
        "impossible": lambda: [req.section(wanted), req.orders(), *req.refuse(
            f"I can't seat your group at this show any more: it has moved to {name} ({new_venue}), where section "
            f"{wanted} has no room (your order was refunded), and no other section there has {count} seats side "
            f"by side.", ["venue_changed"], [new_venue, name, "show moved"])]}
    oracle = plan.upto("buy") + [req.event()] + fixes[level]()
    query = (f"Hello, {req.who} here. Please buy {count} seats together in section {wanted} for {intro(req)}; "
             f"{how}. Then book our entry slot at the section's gate. The total must stay within "
             f"{customer['budget']}.")
    return make_task(req, query, triggers, plan, oracle, "a customer taking friends to a show", {
        ("venue", "where", "moved"): "We'll go wherever the show is, as long as we get in on time.",
        ("phone", "smartphone", "courier", "delivery", "collect"): "I have no smartphone; any paper tickets that "
        "reach me in time are fine." if delivery == "will_call" else "Mobile tickets on my phone, please."},
        insist="We want to see this show together; split seats are no good to us.")
