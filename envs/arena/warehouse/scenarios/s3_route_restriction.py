"""S3 Route Restriction: a weight limit (or a flood) cuts the truck's way to the store.

The plan is the plain one: reserve, book a dock slot for the articulated truck, dispatch. As the
slot is booked, the council puts a 7.5 t weight limit on every road into the store's district
(visible in ``get_route`` for the truck: not reachable, with the weight limits listed), so the
18 t truck can no longer get there. Easy: a rigid 7 t truck at the same warehouse takes the load
on a new slot. Medium: the only rigid truck works from the sister warehouse, which also holds the
SKU: the stale reservation and slot are unwound, then the order ships from there (or, where it still
makes the due time, the rigid truck drives over and takes the stale reservation on a new slot).
Hard: the rigid trucks are small: the reservation is split between the local one and one that
drives over from the sister warehouse, each on its own slot. Impossible: a flood closes every road into the store.
"""

from __future__ import annotations

from datetime import timedelta

from sttgym.envs.arena.warehouse.generator import Author, Task, base, make_task, settle_due

LIMIT = 7.5  # tonnes
RIGID = 7.0


def build(author: Author, level: str) -> Task:
    net, order, home, truck, slot = base(author)
    pred, q, store = author.pred, order.quantity, order.store
    sister = net.nearest(home, [w for w in net.warehouses + [net.hub] if w != home])[0]
    plan = order.nominal(home, truck, slot)
    access = net.roads_of(store)
    if level == "impossible":
        effect = [net.set("roads", r, "open", value=False) for r in access]
        what = f"a flood closes every road into {store}"
    else:
        effect = [net.set("roads", r, "max_tonnes", value=LIMIT) for r in access]
        what = f"a {LIMIT} t weight limit on every road into {store}"
    triggers = [net.on_write("district_restriction", what, "book_dock_slot", effect,
                             ("get_route", {"origin_id": home, "destination_id": store, "truck_id": truck}),
                             when=pred.slot_booked_for(truck_id=truck, warehouse_id=home))]
    stale = plan.upto("book")
    seen = [order.route(home, truck)]
    if level == "easy":
        light = net.add_truck(home, q + 10 * author.integer(0, 5), RIGID)
        look = seen + [order.trucks(home), order.slots(home)]
        later = net.slot(home, net.time_after(stale + look, triggers))
        oracle = stale + look + [order.unbook(slot), order.book(later, light), order.dispatch(light, later)]
    elif level == "medium":
        net.stock(sister, q + 10 * author.integer(0, 5))
        light = net.add_truck(sister, q + 10 * author.integer(0, 5), RIGID)
        look = seen + [order.trucks(), order.find(), order.slots(sister), order.route(sister, light),
                       order.release("r0"), order.unbook(slot)]  # the stale reservation and slot first
        oracle = stale + look + order.ship(sister, light, net.slot(sister, net.time_after(stale + look, triggers)))
        # as valid, where it still makes the due time: the rigid truck driven over to load the stale reservation here
        over = seen + [order.trucks(), order.route(home, light), order.unbook(slot)]
        ready = net.time_after(stale + over, triggers) + timedelta(minutes=net.minutes(sister, home, RIGID))
        here = net.slot(home, ready)
        recoveries = [stale + over + [order.book(here, light), order.dispatch(light, here, "r0")]]
    elif level == "hard":
        small = 10 * author.integer(q // 20 + 1, q // 10 - 2)
        local = net.add_truck(home, small, RIGID)
        helper = net.add_truck(sister, q - small + 10 * author.integer(0, 3), RIGID)
        look = seen + [order.trucks(), order.route(home, local), order.slots(home)]
        fix = [order.split(small, "r0", "r1"), order.unbook(slot)]
        first = net.slot(home, net.time_after(stale + look + fix, triggers))
        fix += [order.book(first, local), order.dispatch(local, first, "r1"), order.read(),
                order.route(sister, helper)]
        ready = net.time_after(stale + look + fix, triggers) + timedelta(minutes=net.minutes(sister, home, RIGID))
        second = net.slot(home, ready)
        if second == first:
            second = net.slot(home, net.state["dock_slots"][first]["end"])
        fix += [order.book(second, helper), order.dispatch(helper, second, "r0")]
        oracle = stale + look + fix
    else:
        oracle = stale + seen + [order.find()] + order.refuse(
            f"I can't get {order.oid} to {store}: a flood has closed every road into it ({', '.join(access)}), so no "
            "truck from any warehouse can reach the store.", ["district_restriction"],
            [*access, "flood", "roads closed"])
    settle_due(order, [] if level == "impossible" else oracle, triggers, plan.calls)
    query = (f"Hello, {order.record['customer']} supply team. Please ship {order.what}, from {net.name(home)} "
             f"({home}) with the articulated truck {truck}: reserve, book a dock slot and dispatch.")
    return make_task(order, query, triggers, plan, oracle, "supplying a town-centre store", {
        ("weight", "rigid", "smaller", "road", "route"): "Any truck that can legally reach the store is fine."},
        insist=f"All {q} units must be at {store} by {order.record['due_by']}.", level=level,
        recoveries=recoveries if level == "medium" else [])
