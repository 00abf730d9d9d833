"""ST1 Resource Shift: fleet control pulls trucks into a peak-demand zone, taking the one booked at the dock.

The stock is reserved and a dock slot booked for the warehouse's truck. Demand peaks in another
zone and fleet control reallocates trucks there (visible in ``get_truck``: status reallocated,
its slot freed). Easy: only the booked truck goes; another truck at the warehouse takes the slot
time after it. Medium: every truck at the warehouse goes; one from the sister warehouse drives over
for a later slot. Hard: the peak takes every truck in the region, and the two left elsewhere are
small: the reservation is split and each drives over for its own slot. Impossible: every truck is
reallocated but one, whose driver's shift ends before it could reach the store.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.clock import format_time
from sttgym.envs.arena.warehouse.generator import Author, Task, base, make_task, settle_due


def build(author: Author, level: str) -> Task:
    net, order, home, truck, slot = base(author)
    pred, q = author.pred, order.quantity
    others = net.nearest(home, [w for w in net.warehouses + [net.hub] if w != home])
    sister, far = others[0], others[1:]
    plan = order.nominal(home, truck, slot)
    zone = net.state["warehouses"][sister]["region"]
    note = f"reallocated to the {zone} peak-demand zone by fleet control"
    pulled = [truck]

    def pull(*trucks: str) -> list:
        return [op for t in trucks for op in [author.op.drop_truck_slots(truck_id=t)]
                + net.sets("trucks", t, status="reallocated", note=note)]

    if level == "easy":
        spare = net.add_truck(home, q + 10 * author.integer(0, 5))
    elif level == "medium":
        pulled.append(net.add_truck(home, q + 10 * author.integer(0, 5)))
        spare = net.add_truck(sister, q + 10 * author.integer(0, 5), available_from=format_time(
            net.start + timedelta(minutes=5 * author.integer(8, 16))))  # back from a morning run first
    elif level == "hard":
        pulled.append(net.add_truck(sister, q + 10 * author.integer(0, 5)))
        small = 10 * author.integer(q // 20 + 1, q // 10 - 2)
        helpers = [net.add_truck(far[0], small, 7.5), net.add_truck(far[-1], q - small + 10 * author.integer(0, 3))]
    else:
        pulled.append(net.add_truck(home, q + 10 * author.integer(0, 5)))
        last = net.add_truck(sister, q + 10 * author.integer(0, 5))
    triggers = [net.on_write("fleet_reallocation", f"fleet control reallocates {', '.join(pulled)} to the {zone} "
                             "peak", "book_dock_slot", pull(*pulled), ("get_truck", {"truck_id": truck}),
                             also=(("list_trucks", {}),),
                             when=pred.slot_booked_for(truck_id=truck, warehouse_id=home))]
    stale = plan.upto("book")
    seen = [order.truck(truck), order.trucks()]
    if level in ("easy", "medium"):
        look = seen + [order.slots(home)]
        at = net.time_after(stale + look, triggers)
        if level == "medium":
            look += [order.truck(spare), author.call.get_route(origin_id=sister, destination_id=home, truck_id=spare)]
            at = max(at, datetime.fromisoformat(net.state["trucks"][spare]["available_from"])) + timedelta(
                minutes=net.minutes(sister, home, 18))
        later = net.slot(home, at)
        oracle = stale + look + [order.book(later, spare), order.dispatch(spare, later)]
    elif level == "hard":
        small = net.state["trucks"][helpers[0]]["capacity"]
        look = seen + [order.slots(home), order.split(small, "r0", "r1")]
        fix, used = [], []
        for helper, step in zip(helpers, ("r1", "r0")):
            site = net.state["trucks"][helper]["location"]
            fix.append(order.route(site, helper))
            ready = net.time_after(stale + look + fix, triggers) + timedelta(minutes=net.minutes(
                site, home, net.state["trucks"][helper]["tonnes"]))
            pick = net.slot(home, ready)
            while pick in used:
                pick = net.slot(home, net.state["dock_slots"][pick]["end"])
            used.append(pick)
            fix += [order.book(pick, helper), order.dispatch(helper, pick, step)]
        oracle = stale + look + fix
    else:
        # The one truck left could load at the earliest slot it reaches, but its driver would pass the shift end.
        ready = net.start + timedelta(minutes=30 + net.minutes(sister, home))
        trip = net.minutes(home, order.store)
        earliest = max(ready, net.start + timedelta(minutes=20))
        net.state["trucks"][last]["shift_end"] = format_time(earliest + timedelta(minutes=trip // 2))
        oracle = stale + seen + [order.truck(last), order.route(home)] + order.refuse(
            f"I can't ship {order.oid}: fleet control has reallocated {', '.join(pulled)} to the {zone} peak, and "
            f"the only truck left, {last}, has a driver whose shift ends at "
            f"{net.state['trucks'][last]['shift_end'][11:]}, before it could reach {order.store}.",
            ["fleet_reallocation"], ["reallocated"])
    settle_due(order, [] if level == "impossible" else oracle, triggers, plan.calls)
    query = (f"Hi, {order.record['customer']} transport desk. Please ship {order.what}, from {net.name(home)} "
             f"({home}): reserve it, book a dock slot for truck {truck} and dispatch.")
    return make_task(order, query, triggers, plan, oracle, "arranging a weekly delivery", {
        ("truck", "fleet", "vehicle", "driver"): "Any truck is fine as long as everything arrives on time."},
        insist=f"All {q} units must be at {order.store} by {order.record['due_by']}.")
