"""T3 Quota Reset: the evening wave uses up the warehouse's daily dispatch quota; it starts afresh at midnight.

An evening order is reserved, a dock slot booked and the truck dispatched. Each warehouse's
carrier contract allows so many dispatches a day, counted by departure date and reset at 00:00.
As the slot is booked, the evening wave uses up the day's quota (visible in ``get_warehouse``:
``quota_status`` exhausted), so tonight's dispatch is refused. Easy: the order is due in the
morning and the driver works the night, so the slot is moved past midnight, when the quota has
reset. Medium: a departure after midnight would arrive after the due time; the stale reservation
and slot are unwound, then the sister warehouse, with quota left, ships tonight. Hard: the evening
driver's shift ends before midnight and the night truck is too small for the whole order, and the
sister holds only part of it: the sister's part is split off the original reservation and released
and the stale slot cancelled, then the sister ships its part tonight and the rest of the original
reservation leaves on the night truck after the reset. Impossible: the order is due tonight and
the only other warehouse holding the SKU has used its quota too. (Stale commitments are unwound
before new ones are made: no prefix of the oracle holds more live reservations or bookings than it
ends with, so one more fails the collateral gate.)
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.clock import format_time
from sttgym.envs.arena.warehouse.generator import Author, Task, base, make_task, settle_due


def build(author: Author, level: str) -> Task:
    day = datetime(author.integer(2024, 2025), 1, 1) + timedelta(days=author.integer(10, 330))
    start = day + timedelta(hours=19, minutes=5 * author.integer(0, 11))
    midnight = day + timedelta(days=1)
    shift = {"hard": midnight - timedelta(minutes=5 * author.integer(2, 10))}.get(
        level, midnight + timedelta(hours=author.integer(6, 8)))
    net, order, home, truck, slot = base(author, start=start, shift_end=format_time(shift))
    pred, q, today = author.pred, order.quantity, format_time(start)[:10]
    sister = net.nearest(order.store, [w for w in net.warehouses + [net.hub] if w != home])[0]
    plan = order.nominal(home, truck, slot)
    limit = net.state["warehouses"][home]["quota"]["limit"]

    def exhaust(site: str) -> list:
        wh = net.state["warehouses"][site]
        return [net.set("warehouses", site, "quota", "used", today, value=wh["quota"]["limit"]),
                net.set("warehouses", site, "notice", value="Evening wave used the day's dispatch quota")]

    triggers = [net.on_write("quota_used_up", f"the evening wave uses up {home}'s dispatch quota for {today}",
                             "book_dock_slot", exhaust(home), ("get_warehouse", {"warehouse_id": home}),
                             when=pred.slot_booked_for(truck_id=truck, warehouse_id=home))]
    stale, seen = plan.upto("book"), [order.warehouse(home), order.slots(home)]
    late = net.slot(home, midnight)
    after_reset = [order.unbook(slot), order.book(late, truck), order.dispatch(truck, late)]
    if level == "easy":
        oracle = stale + seen + after_reset
        settle_due(order, oracle, triggers, plan.calls)
    elif level == "hard":
        night = net.add_truck(home, 10 * author.integer(q // 30 + 3, q // 15 + 3),
                              shift_end=format_time(midnight + timedelta(hours=author.integer(6, 8))))
        part = q - net.state["trucks"][night]["capacity"] + 10 * author.integer(0, 2)  # all the sister holds
        net.stock(sister, part)
        spare = net.add_truck(sister, q)
        look = seen + [order.trucks(home), order.find(), order.trucks(sister), order.slots(sister),
                       order.split(part, "r0", "r2"), order.release("r2"), order.unbook(slot)]  # the stale ones first
        fix = look + order.ship(sister, spare, net.slot(sister, net.time_after(stale + look, triggers)), part)
        fix += [order.book(late, night), order.dispatch(night, late)]
        oracle = stale + fix
        settle_due(order, oracle, triggers, plan.calls)
    else:
        reset_arrival = net.arrivals(stale + seen + after_reset, triggers)[0]
        if level == "medium":
            net.stock(sister, q + 10 * author.integer(0, 5))
            spare = net.add_truck(sister, q + 10 * author.integer(0, 5))
            look = seen + [order.find(), order.trucks(sister), order.slots(sister), order.release("r0"),
                           order.unbook(slot)]  # the stale reservation and slot first
            oracle = stale + look + order.ship(sister, spare, net.slot(sister, net.time_after(stale + look, triggers)))
            settle_due(order, oracle, triggers, plan.calls)
        else:
            net.stock(sister, q + 10 * author.integer(0, 5))
            triggers.append(net.cascade("sister_quota_used_up", f"the evening wave uses up {sister}'s quota too",
                                        ["warehouses", home, "quota", "used", today], limit, exhaust(sister),
                                        ("get_warehouse", {"warehouse_id": sister})))
            oracle = stale + seen + [order.find(), order.warehouse(sister)] + order.refuse(
                f"I can't get {order.oid} there tonight: {home} and {sister}, the only warehouses holding "
                f"{order.sku}, have exhausted their dispatch quota for {today}; it resets at 00:00, and a truck "
                "leaving after midnight would arrive after the due time.", ["quota_used_up", "sister_quota_used_up"],
                ["exhausted", "dispatch quota", "evening wave"])
            settle_due(order, [], [], plan.calls)
        due = datetime.fromisoformat(order.record["due_by"])
        if due >= reset_arrival:
            due = reset_arrival - timedelta(minutes=5 + reset_arrival.minute % 5)
            order.record["due_by"] = format_time(due)
    query = (f"Evening, {order.record['customer']} night desk here. Please ship {order.what}, from "
             f"{net.name(home)} ({home}): reserve the units, book a dock slot for truck {truck} and dispatch it.")
    return make_task(order, query, triggers, plan, oracle, "placing a late order", {
        ("quota", "midnight", "tomorrow", "reset"): f"It only matters that everything is at {order.store} by "
        f"{order.record['due_by']}."}, insist=f"All {q} units must be at {order.store} by {order.record['due_by']}.",
        level=level)
