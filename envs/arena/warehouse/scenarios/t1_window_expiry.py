"""T1 Window Expiry: an early pick-wave cut-off lapses the stock reservation before the truck is loaded.

The agent reserves the order's units, books a dock slot and dispatches. As the slot is booked,
the warehouse pulls its pick-wave cut-off forward: held reservations lapse at once and new ones
last ten minutes (visible in ``get_order``: the reservation reads expired). Easy: reserve again
and dispatch at once on the slot already booked. Medium: the lapsed units are picked for the
next wave straight away, so the warehouse has none left; the sister warehouse ships with its
own truck and the stale dock slot is cancelled. Hard: the wave leaves only part of the units;
the part is reserved and sent on the booked slot, the rest comes from the sister warehouse, with
a quantity the order's open balance tells. Impossible: the wave takes every unit and no other
warehouse holds the SKU.
"""

from __future__ import annotations

from sttgym.envs.arena.warehouse.generator import Author, Task, base, make_task, settle_due

SHORT_HOLD = 10  # minutes a new hold lasts after the cut-off: enough to dispatch at once, not to linger


def build(author: Author, level: str) -> Task:
    net, order, home, truck, slot = base(author)
    pred, q = author.pred, order.quantity
    sister = net.nearest(order.store, [w for w in net.warehouses + [net.hub] if w != home])[0]
    plan = order.nominal(home, truck, slot)
    wave = f"WV-{author.serial(1000, 9999)}"
    notice = f"Pick wave {wave} cut-off brought forward: open holds lapsed; new holds last {SHORT_HOLD} minutes"
    triggers = [net.on_write("wave_cutoff", f"{home} pulls its pick-wave cut-off forward as a slot is booked: "
                             "held reservations lapse", "book_dock_slot",
                             [author.op.cut_holds(warehouse_id=home, minutes=SHORT_HOLD, notice=notice)],
                             ("get_order", {"order_id": order.oid}),
                             when=pred.has_reservation(order_id=order.oid, warehouse_id=home))]
    left = {"easy": None, "medium": 0, "hard": 10 * author.integer(q // 40 + 1, q // 20), "impossible": 0}[level]
    if left is not None:
        net.stock(home, q)  # exactly the order: the wave takes what the lapse freed
        triggers.append(net.trigger(
            "wave_picks_stock", f"the lapsed units are picked for wave {wave}: {left} left at {home}",
            pred.reservation_lapsed(order_id=order.oid, warehouse_id=home),
            net.sets("inventory", home, order.sku, on_hand=left, note=f"picked for wave {wave}"),
            ("get_inventory", {"warehouse_id": home})))
    stale = plan.upto("book")
    seen = [order.read()]
    if level == "easy":
        oracle = stale + seen + [order.reserve(home, q, "r1"), order.dispatch(truck, slot, "r1")]
    elif level == "impossible":
        oracle = stale + seen + [order.inventory(home), order.find()] + order.refuse(
            f"I can't ship {order.oid}: the reservation lapsed when {home} brought its pick-wave cut-off forward, and "
            f"wave {wave} has since picked all {q} units; no other warehouse holds {order.sku}.",
            ["wave_cutoff", "wave_picks_stock"], [wave, "cut-off", "picked"])
    else:
        net.stock(sister, q - left + 10 * author.integer(0, 5))
        spare = net.add_truck(sister, q + 10 * author.integer(0, 5))
        look = seen + [order.inventory(home), order.find(), order.trucks(sister), order.slots(sister)]
        if level == "medium":
            look.append(order.unbook(slot))  # the stale slot first
            fix = look + order.ship(sister, spare, net.slot(sister, net.time_after(stale + look, triggers)))
        else:
            first = [order.reserve(home, left, "r1"), order.read(), order.reserve(sister, q - left, "r2"),
                     order.dispatch(truck, slot, "r1")]
            pick = net.slot(sister, net.time_after(stale + look + first, triggers))
            fix = look + first + [order.book(pick, spare), order.dispatch(spare, pick, "r2")]
        oracle = stale + fix
    settle_due(order, [] if level == "impossible" else oracle, triggers, plan.calls)
    query = (f"Hi, {order.record['customer']} replenishment desk. Please ship {order.what}, from "
             f"{net.name(home)} ({home}): reserve the units, book a dock slot for truck {truck} and dispatch it.")
    return make_task(order, query, triggers, plan, oracle, "replenishing a store before a promotion", {
        ("wave", "cut-off", "cutoff", "lapsed", "expired"): "I don't follow the warehouse's waves; just get the "
        "full order out."}, insist=f"All {q} units must be at {order.store} by {order.record['due_by']}.", level=level)
