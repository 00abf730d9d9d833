"""S1 Site Mismatch: a cycle count finds the stock at a different warehouse than the system said.

The system shows the order's units at the user's warehouse; the agent reserves them there. A
cycle count corrects the books (visible in ``get_inventory`` of that warehouse, and in
``find_stock``): the pallets were put away at the sister warehouse, the count there goes up, and
the reservation is voided. Easy: the count comes as the units are reserved; they are reserved at
the sister warehouse and the same truck drives over to load them. Medium: it comes when the
pickers go out after the dock slot is booked; the sister's own truck ships and the stale slot is
cancelled. Hard: the pallets turn up split between two other warehouses, so two reservations,
two trucks and two dispatches cover the order (the second quantity is the order's open
balance). Impossible: the pallets are found, but damaged and quarantined, and no other stock exists.
"""

from __future__ import annotations

from datetime import timedelta

from sttgym.envs.arena.warehouse.generator import Author, Task, base, make_task, settle_due


def build(author: Author, level: str) -> Task:
    net, order, home, truck, slot = base(author)
    pred, q = author.pred, order.quantity
    sister, third = net.nearest(order.store, [w for w in net.warehouses + [net.hub] if w != home])[:2]
    plan = order.nominal(home, truck, slot)
    count = f"CC-{author.serial(1000, 9999)}"
    found = {"hard": 10 * author.integer(q // 20, q // 12)}.get(level, q + 10 * author.integer(0, 4))
    damaged = found if level == "impossible" else 0
    effect = [net.set("inventory", home, order.sku, value={"on_hand": 0, "quarantined": 0,
                                                          "note": f"cycle count {count}: not on site, see {sister}"}),
              net.set("inventory", sister, order.sku, value={
                  "on_hand": found, "quarantined": damaged,
                  "note": f"cycle count {count}: found here" + (", damaged in the put-away" if damaged else "")}),
              author.op.void_reservations(warehouse_id=home, sku=order.sku, note=f"cycle count {count}: no stock")]
    if level == "hard":
        net.stock(third, q - found + 10 * author.integer(0, 3))
        effect[0] = net.set("inventory", home, order.sku, value={
            "on_hand": 0, "quarantined": 0, "note": f"cycle count {count}: not on site, see {sister} and {third}"})
    tool, stale = ("reserve_stock", plan.upto("reserve")) if level == "easy" else ("book_dock_slot", plan.upto("book"))
    triggers = [net.on_write("cycle_count", f"cycle count {count} moves {home}'s {order.sku} to {sister}", tool, effect,
                             ("get_inventory", {"warehouse_id": home}),
                             when=pred.has_reservation(order_id=order.oid, warehouse_id=home))]
    seen = [order.inventory(home), order.find()]
    if level == "easy":
        look = seen + [order.slots(sister)]
        at = net.time_after(stale + look, triggers) + timedelta(minutes=net.minutes(home, sister, 18))
        oracle = stale + look + order.ship(sister, truck, net.slot(sister, at))
    elif level == "medium":
        spare = net.add_truck(sister, q + 10 * author.integer(0, 5))
        look = seen + [order.trucks(sister), order.slots(sister), order.unbook(slot)]  # the stale slot first
        oracle = stale + look + order.ship(sister, spare, net.slot(sister, net.time_after(stale + look, triggers)))
    elif level == "hard":
        spare, extra = net.add_truck(sister, q), net.add_truck(third, q)
        look = seen + [order.trucks(), order.slots(sister), order.slots(third)]
        fix = look + [order.reserve(sister, found, "r1"), order.read(), order.reserve(third, q - found, "r2"),
                      order.unbook(slot)]
        for site, lorry, step in ((sister, spare, "r1"), (third, extra, "r2")):
            pick = net.slot(site, net.time_after(stale + fix, triggers))
            fix += [order.book(pick, lorry), order.dispatch(lorry, pick, step)]
        oracle = stale + fix
    else:
        oracle = stale + seen + [order.inventory(sister)] + order.refuse(
            f"I can't ship {order.oid}: cycle count {count} found that {home} has none of {order.sku}; the {found} "
            f"units were put away at {sister}, where they are damaged and quarantined, and no other warehouse "
            "holds any.", ["cycle_count"], [count, "quarantined", sister, "damaged"])
    settle_due(order, [] if level == "impossible" else oracle, triggers, plan.calls)
    query = (f"Hi, {order.record['customer']} store operations. The system shows our stock for {order.what} at "
             f"{net.name(home)} ({home}). Please reserve it there, book a dock slot for truck {truck} and dispatch.")
    return make_task(order, query, triggers, plan, oracle, "chasing a delivery", {
        ("count", "cycle", "location", "found"): "If the stock is somewhere else, ship it from there."},
        insist=f"All {q} units must be at {order.store} by {order.record['due_by']}.", level=level)
