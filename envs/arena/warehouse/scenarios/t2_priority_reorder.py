"""T2 Priority Reorder: a critical order is moved ahead of the user's and takes its truck or its stock.

The agent reserves, books a dock slot and dispatches. As the slot is booked, a critical order
(a hospital or a recall replacement) is moved to the front of the queue at the same warehouse.
Easy: it takes the booked truck (visible in ``get_truck``: sent to the critical order's store,
the slot freed); another truck at the warehouse loads instead. Medium: it takes the reserved
stock (``get_order`` shows the reservation bumped); the sister warehouse ships with its own truck
and the stale slot is cancelled. Hard: it takes the truck and most of the stock: the rest left at
the warehouse goes on a second local truck, the remainder (the order's open balance) from the
sister warehouse. Impossible: it takes every unit of the SKU, which no other warehouse holds.
"""

from __future__ import annotations

from datetime import timedelta

from sttgym.clock import format_time
from sttgym.envs.arena.warehouse.generator import Author, Task, base, make_task, new_order, settle_due

TAKES = {"easy": (True, False), "medium": (False, True), "hard": (True, True), "impossible": (False, True)}


def build(author: Author, level: str) -> Task:
    net, order, home, truck, slot = base(author)
    pred, q = author.pred, order.quantity
    takes_truck, takes_stock = TAKES[level]
    sister = net.nearest(order.store, [w for w in net.warehouses + [net.hub] if w != home])[0]
    plan = order.nominal(home, truck, slot)
    other_store = next(s for s in net.stores if s != order.store) if len(net.stores) > 1 else order.store
    urgent = new_order(net, q, other_store)
    urgent.record.update(priority="critical", note="moved ahead of the queue", due_by=format_time(
        net.start + timedelta(hours=2)))
    pri_record = dict(urgent.record)
    del net.state["orders"][urgent.oid]  # it appears only when it is moved ahead
    left = {"hard": 10 * author.integer(q // 40 + 1, q // 20), "medium": 0, "impossible": 0}.get(level)
    effect = [net.set("orders", urgent.oid, value=pri_record)]
    if takes_truck:
        effect += [author.op.drop_truck_slots(truck_id=truck)] + net.sets(
            "trucks", truck, status="en_route", location=other_store, available_from=format_time(
                net.start + timedelta(hours=author.integer(5, 7))), note=f"reassigned to critical order {urgent.oid}")
        shown = ("get_truck", {"truck_id": truck})
    if takes_stock:
        net.stock(home, q)
        effect += [author.op.void_reservations(warehouse_id=home, sku=order.sku,
                                               note=f"bumped by critical order {urgent.oid}")]
        effect += net.sets("inventory", home, order.sku, on_hand=left, note=f"picked for critical order {urgent.oid}")
        shown = ("get_order", {"order_id": order.oid})
    triggers = [net.on_write("critical_order_ahead", f"critical order {urgent.oid} is moved ahead at {home}",
                             "book_dock_slot", effect, shown,
                             when=pred.slot_booked_for(truck_id=truck, warehouse_id=home))]
    stale = plan.upto("book")
    seen = [order.call_for(shown)]
    local = net.add_truck(home, q + 10 * author.integer(0, 5)) if takes_truck else ""
    if level == "easy":
        look = seen + [order.trucks(home), order.slots(home)]
        oracle = stale + look + [order.book(net.slot(home, net.time_after(stale + look, triggers)), local)]
        oracle.append(order.dispatch(local, oracle[-1].arguments["slot_id"]))
    elif level == "impossible":
        oracle = stale + seen + [order.find()] + order.refuse(
            f"I can't ship {order.oid}: critical order {urgent.oid} was moved ahead at {home} and took all of its "
            f"{order.sku}, and no other warehouse holds any.", ["critical_order_ahead"], [urgent.oid, "critical order"])
    else:
        net.stock(sister, q - left + 10 * author.integer(0, 5))
        spare = net.add_truck(sister, q + 10 * author.integer(0, 5))
        look = [order.find(), order.trucks(sister), order.slots(sister)]
        if level == "medium":
            fix = seen + look + [order.unbook(slot)]
            fix += order.ship(sister, spare, net.slot(sister, net.time_after(stale + fix, triggers)))
        else:
            fix = seen + [order.read(), order.inventory(home), order.reserve(home, left, "r1"), order.read()] + look
            fix += [order.reserve(sister, q - left, "r2"), order.trucks(home), order.slots(home)]
            fix += [order.book(net.slot(home, net.time_after(stale + fix, triggers)), local)]
            fix += [order.dispatch(local, fix[-1].arguments["slot_id"], "r1")]
            fix += [order.book(net.slot(sister, net.time_after(stale + fix, triggers)), spare)]
            fix += [order.dispatch(spare, fix[-1].arguments["slot_id"], "r2")]
        oracle = stale + fix
    settle_due(order, [] if level == "impossible" else oracle, triggers, plan.calls)
    query = (f"Good morning, {order.record['customer']} logistics. Please ship {order.what}, from "
             f"{net.name(home)} ({home}) on truck {truck}: reserve, book a dock slot and dispatch.")
    return make_task(order, query, triggers, plan, oracle, "keeping a store stocked", {
        ("priority", "critical", "urgent", "queue"): "I understand the critical order goes first, but ours still "
        "has to arrive in full and on time."}, insist=f"We need all {q} units at {order.store} by "
        f"{order.record['due_by']}; nothing less.", level=level)
