"""ST3 Handoff Failure: the inbound truck is late, so the cross-dock handoff misses its dock slot.

The order's units are not on any shelf: they arrive at the hub's cross-dock on an inbound
carrier truck, and the plan hands them straight over to an outbound truck. The agent reserves
against the inbound shipment and books the first dock slot after its ETA. As the slot is booked,
the carrier reports a delay (visible in ``get_inventory`` of the hub: the inbound's new ETA), so
the outbound truck would load before the goods are there and the dispatch is refused. Easy: move
the handoff to a slot after the new ETA. Medium: the booked driver's shift would end before a
later run could arrive; a second truck with a later shift takes the later slot. Hard: the delay
is so long that the cross-dock cannot make the due time; the inbound reservation and stale slot
are unwound, then the sister warehouse ships from its shelves. Impossible: the delay pushes the
handoff past the due time and no warehouse holds the SKU on its shelves.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.clock import format_time
from sttgym.envs.arena.warehouse.generator import Author, Plan, Task, base, make_task, settle_due

DELAY = {"easy": (60, 100), "medium": (60, 100), "hard": (240, 330), "impossible": (240, 330)}  # minutes


def build(author: Author, level: str) -> Task:
    net, order, hub, truck, _ = base(author, warehouse="hub")
    pred, q, sku = author.pred, order.quantity, order.sku
    del net.state["inventory"][hub][sku]  # nothing on the shelves: the units come in on the inbound truck
    inbound = f"IB-{author.serial(1000, 9999)}"
    eta = net.start + timedelta(minutes=5 * author.integer(8, 14))
    net.state["inbound"][inbound] = {"warehouse": hub, "sku": sku, "quantity": q + 10 * author.integer(0, 4),
                                     "carrier": f"{author.pick(['Nordline', 'Vantage', 'Ridgeway', 'Bluepost'])} "
                                                "Freight", "eta": format_time(eta), "status": "on schedule",
                                     "note": "cross-dock: straight to outbound"}
    slot = net.slot(hub, eta)
    plan = order.nominal(hub, truck, slot, inbound)
    new_eta = eta + timedelta(minutes=5 * (author.integer(*DELAY[level]) // 5))
    triggers = [net.on_write("inbound_delayed", f"inbound {inbound} is delayed to {format_time(new_eta)}",
                             "book_dock_slot", net.sets("inbound", inbound, eta=format_time(new_eta), status="delayed",
                                                        note="carrier reports a breakdown on the way"),
                             ("get_inventory", {"warehouse_id": hub}),
                             when=pred.slot_booked_for(truck_id=truck, warehouse_id=hub))]
    stale = plan.upto("book")
    seen = [order.inventory(hub)]
    later = net.slot(hub, new_eta)
    if level == "easy":
        oracle = stale + seen + [order.slots(hub), order.unbook(slot), order.book(later, truck),
                                 order.dispatch(truck, later)]
    elif level == "medium":
        arrival = net.arrivals(plan.calls)[0]
        net.state["trucks"][truck]["shift_end"] = format_time(arrival + timedelta(minutes=author.integer(10, 30)))
        relief = net.add_truck(hub, q + 10 * author.integer(0, 5))
        oracle = stale + seen + [order.truck(truck), order.trucks(hub), order.slots(hub), order.unbook(slot),
                                 order.book(later, relief), order.dispatch(relief, later)]
    elif level == "hard":
        sister = net.nearest(order.store, net.warehouses)[0]
        net.stock(sister, q + 10 * author.integer(0, 5))
        spare = net.add_truck(sister, q + 10 * author.integer(0, 5))
        look = seen + [order.slots(hub), order.find(), order.trucks(sister), order.route(sister, spare),
                       order.slots(sister), order.release("r0"), order.unbook(slot)]  # the stale ones first
        oracle = stale + look + order.ship(sister, spare, net.slot(sister, net.time_after(stale + look, triggers)))
    else:
        oracle = stale + seen + [order.find()] + order.refuse(
            f"I can't get {order.oid} there in time: inbound {inbound} is now due at the cross-dock only at "
            f"{format_time(new_eta)[11:]}, too late for a handoff to reach {order.store} by the due time, and no "
            f"warehouse has {sku} on its shelves.", ["inbound_delayed"],
            [format_time(new_eta), format_time(new_eta)[11:], inbound, "delayed"])
    settle_due(order, [] if level == "impossible" else oracle, triggers, plan.calls)
    if level in ("hard", "impossible"):  # the cross-dock route, even on the first slot after the delay, is late
        handoff = Plan(fix=[order.unbook(slot), order.book(later, truck), order.dispatch(truck, later)])
        late = net.arrivals(stale + handoff.calls, triggers, strict=False)
        late_at = late[0] if late else datetime.max
        due = datetime.fromisoformat(order.record["due_by"])
        if due >= late_at:
            raise ValueError("the delayed handoff would still be on time")
    query = (f"Hi, {order.record['customer']} planning. {order.what[0].upper()}{order.what[1:]} comes in on inbound "
             f"{inbound} to the {net.name(hub)} cross-dock ({hub}). Please reserve it against that inbound, book the "
             f"first dock slot after it lands for truck {truck} and dispatch it straight on.")
    return make_task(order, query, triggers, plan, oracle, "coordinating a cross-dock handoff", {
        ("delay", "late", "eta", "inbound", "carrier"): "If the inbound is late, do whatever still gets the full "
        "order to the store on time."}, insist=f"All {q} units must be at {order.store} by {order.record['due_by']}.",
        level=level)
