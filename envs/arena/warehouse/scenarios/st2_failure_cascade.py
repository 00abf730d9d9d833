"""ST2 Failure Cascade: a power outage at the regional hub quarantines its stock and spreads to the warehouses.

The order (a temperature-controlled SKU) is to ship from the hub. As the agent reserves it, the
hub's power fails: the cold store goes down, every unit of the SKU there is quarantined and the
reservation is voided (visible in ``get_inventory`` of the hub). Easy: the nearest warehouse holds
the whole order and ships it. Medium (the paper's case study): the fallback holds only part of it;
the rest, the order's open balance, must come from a third warehouse: two reservations, two
trucks, and stopping at the partial fill fails the order. Hard: the outage spreads to the
fallback's cold room, quarantining part of its stock too, so three warehouses each send a part.
Impossible: what the other warehouses hold together falls short of the order.
"""

from __future__ import annotations

from sttgym.envs.arena.warehouse.generator import Author, Task, base, make_task, settle_due

NOTICE = "Power outage: cold store down, stock quarantined"
COLD = ["insulin pens", "flu vaccine doses", "chilled yoghurt trays", "blood test kits", "fresh salmon crates",
        "probiotic drink packs", "vaccine vials", "frozen pea sacks"]


def build(author: Author, level: str) -> Task:
    net, order, hub, truck, slot = base(author, quantity=10 * author.integer(30, 60), warehouse="hub")
    pred, q, sku = author.pred, order.quantity, order.sku
    net.state["skus"][sku]["name"] = author.pick(COLD)
    plan = order.nominal(hub, truck, slot)
    on_hand = net.state["inventory"][hub][sku]["on_hand"]
    sites = net.nearest(order.store, net.warehouses)
    effect = net.sets("warehouses", hub, status="outage", notice=NOTICE) + net.sets(
        "inventory", hub, sku, quarantined=on_hand, note=NOTICE) + [
        author.op.void_reservations(warehouse_id=hub, sku=sku, note="voided: stock quarantined in the outage")]
    triggers = [net.on_write("hub_outage", f"the power fails at {hub}: its {sku} is quarantined", "reserve_stock",
                             effect, ("get_inventory", {"warehouse_id": hub}),
                             when=pred.has_reservation(order_id=order.oid, warehouse_id=hub))]
    parts = {"easy": [q], "medium": [10 * author.integer(q // 20, q // 15)], "impossible": [
        10 * author.integer(q // 40, q // 25), 10 * author.integer(q // 40, q // 25)]}.get(level)
    if level == "hard":
        parts = [10 * author.integer(q // 40, q // 30), 10 * author.integer(q // 40, q // 30)]
    if parts[0] != q and level != "impossible":
        parts.append(q - sum(parts))
    sources = sites[:len(parts)]
    for i, (site, part) in enumerate(zip(sources, parts)):
        last = i == len(parts) - 1 and level != "impossible"
        net.stock(site, part + 10 * author.integer(0, 2) * last)
    stale = plan.upto("reserve")
    seen = [order.inventory(hub), order.find()]
    if level == "hard":
        spoiled = 10 * author.integer(3, 10)
        net.stock(sources[0], parts[0] + spoiled)
        triggers.append(net.cascade("outage_spreads", f"the outage reaches {sources[0]}'s cold room",
                                    ["warehouses", hub, "status"], "outage",
                                    net.sets("inventory", sources[0], sku, quarantined=spoiled, note=NOTICE),
                                    ("get_inventory", {"warehouse_id": sources[0]})))
        seen += [order.inventory(sources[0])]
    if level == "impossible":
        oracle = stale + seen + order.refuse(
            f"I can't ship all {q} units of {order.oid}: a power outage at {hub} quarantined its {on_hand} units, and "
            f"the other warehouses hold only {sum(parts)} between them ({', '.join(sources)}).",
            ["hub_outage"], ["outage", str(on_hand), "power outage", "quarantined"])
    else:
        trucks = [net.add_truck(site, q + 10 * author.integer(0, 3)) for site in sources]
        fix = seen + [order.trucks()]
        steps = [f"r{i + 1}" for i in range(len(parts))]
        for i, (site, part) in enumerate(zip(sources, parts)):
            if i == len(parts) - 1 and i:
                fix.append(order.read())  # the last part is what is left open
            fix.append(order.reserve(site, part, steps[i]))
        for site, lorry, step in zip(sources, trucks, steps):
            fix.append(order.slots(site))
            pick = net.slot(site, net.time_after(stale + fix, triggers))
            fix += [order.book(pick, lorry), order.dispatch(lorry, pick, step)]
        oracle = stale + fix
    settle_due(order, [] if level == "impossible" else oracle, triggers, plan.calls)
    query = (f"Hello, {order.record['customer']} cold-chain desk. Please ship {order.what}, from the "
             f"{net.name(hub)} ({hub}): reserve the units, book a dock slot for truck {truck} and dispatch.")
    return make_task(order, query, triggers, plan, oracle, "supplying temperature-controlled stock", {
        ("partial", "part", "split", "fewer", "less"): f"We need all {q} units; splitting over trucks is fine."},
        insist=f"All {q} units must be at {order.store} by {order.record['due_by']}; a partial delivery is no use.",
        level=level)
