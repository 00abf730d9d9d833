"""S2 Dependency Block: a regulatory lockdown at the source warehouse halts every dispatch that depends on it.

The user's order is to be reserved, loaded and sent from the warehouse that holds the stock.
An inspection puts that warehouse under lockdown (visible in ``get_warehouse``): it releases no
stock and dispatches nothing. Easy: the lockdown starts as the dock slot is booked; the sister
warehouse, which holds the SKU and has its own truck, ships instead. Medium: it starts once the
truck is loaded, so the dispatch is halted at the dock (it shows in ``get_order``) and the truck
is held inside; the halted dispatch is cancelled and the sister ships. Hard: the lockdown widens to
the sister warehouse too, and the far warehouse that is left only has trucks too small for the
whole order, so the stock is split over two trucks. Impossible: every warehouse that holds the SKU
is inside the lockdown. Where the order can still ship, two or three warehouses outside the lockdown
hold the SKU with trucks to carry it, and the user asked to be consulted before a switch: their quality
team accepts the product only from a site holding one certification (drawn), which only one of them holds
(``get_warehouse`` lists each site's certifications; only the user's answer says which one counts). The
user has the requirement, and asks to be consulted, on every level alike.
"""

from __future__ import annotations

from sttgym.clock import shift
from sttgym.envs.arena.warehouse.generator import Answer, Author, Task, base, make_task, settle_due

NOTICE = "Regulatory inspection: no stock may be released or dispatched"
CERTIFICATIONS = ["GDP", "ISO 22000", "BRCGS Storage", "IFS Logistics", "HACCP", "ISO 9001"]
CONSULT = "If it has to come from another warehouse, ask me first: I have a requirement about the source."


def certify(author: Author, sites: list[str], required: str, holders: list[str], state: dict) -> None:
    """Give every warehouse of ``sites`` one or two certifications, ``required`` only to ``holders``."""
    others = [c for c in CERTIFICATIONS if c != required]
    for site in sites:
        held = [others[int(i)] for i in author.rng.choice(len(others), author.integer(1, 2), replace=False)]
        state["warehouses"][site]["certifications"] = sorted(held + ([required] if site in holders else []))


def build(author: Author, level: str) -> Task:
    net, order, home, truck, slot = base(author)
    pred, q = author.pred, order.quantity
    others = net.nearest(order.store, [w for w in net.warehouses + [net.hub] if w != home])
    sister = others[0]
    plan = order.nominal(home, truck, slot)

    def lockdown(site: str) -> list:
        return net.sets("warehouses", site, status="locked_down", notice=NOTICE)

    if level == "medium":
        trigger = net.on_write("source_lockdown", f"an inspection locks down {home} as its truck is loaded: the "
                               "dispatch is halted at the dock", "dispatch_truck",
                               lockdown(home) + [author.op.halt_dispatches(warehouse_id=home, note=NOTICE)],
                               ("get_order", {"order_id": order.oid}),
                               when=pred.dispatched_from(order_id=order.oid, warehouse_id=home))
        stale, seen = plan.calls, [order.read(), order.warehouse(home)]
    else:
        trigger = net.on_write("source_lockdown", f"an inspection locks down {home} as a dock slot is booked there",
                               "book_dock_slot", lockdown(home), ("get_warehouse", {"warehouse_id": home}),
                               when=pred.slot_booked_for(truck_id=truck, warehouse_id=home))
        stale, seen = plan.upto("book"), [order.warehouse(home)]
    triggers = [trigger]
    seen = seen + [order.find()]
    required = CERTIFICATIONS[author.integer(0, len(CERTIFICATIONS) - 1)]
    requirement = Answer(keywords=["warehouse", "warehouses", "source", "site", "audit", "audited", "quality",
                                   "certified", "certification", "requirement", "require", "prefer", "preference"],
                         text=f"Our quality team accepts {order.product} only from a site certified {required}. If it "
                              f"cannot come from {home}, it must come from another warehouse with that certification.")
    sites = [net.hub] + net.warehouses
    if level in ("hard", "impossible"):
        triggers.append(net.cascade("lockdown_widens", f"the inspection widens to {sister}",
                                    ["warehouses", home, "status"], "locked_down", lockdown(sister),
                                    ("get_warehouse", {"warehouse_id": sister})))
        seen.append(order.warehouse(sister))
    if level == "impossible":
        net.stock(sister, q + 10 * author.integer(-5, 5))
        certify(author, sites, required, [home], net.state)
        order.require(requirement)
        oracle = stale + seen + order.refuse(
            f"I can't ship {order.oid}: {home} and {sister}, the only warehouses holding {order.sku}, are now "
            "locked_down by a regulatory inspection, so no stock can be released or dispatched from either.",
            ["source_lockdown", "lockdown_widens"], ["locked_down", home, sister, "regulatory inspection"])
        settle_due(order, [], [], plan.calls)
    else:
        if level == "hard":
            net.stock(sister, q)
        sources = others[1:] if level == "hard" else others[:3]
        for site in sources:
            net.stock(site, q + 10 * author.integer(0, 5))
        if level == "hard":  # only trucks too small for the whole order, at each source
            small = 10 * author.integer(q // 20 + 1, q // 10 - 2)
            fleet = {site: (net.add_truck(site, small, 7.5), net.add_truck(site, q - small + 10 * author.integer(0, 3),
                                                                           7.5)) for site in sources}
        else:
            fleet = {site: (net.add_truck(site, q + 10 * author.integer(0, 5)),) for site in sources}
        want = sources[author.integer(0, len(sources) - 1)]
        certify(author, sites, required, [home, want], net.state)
        seen += [order.ask(
            f"{home} is locked down by a regulatory inspection, and {', '.join(sources)} hold {order.sku} too: from "
            "which warehouse may it come? You mentioned a requirement.", requirement,
            author.pred.ships_only(order_id=order.oid, key="warehouse", among=[want]),
            f"from {want}, the warehouse certified {required}")]
        seen.append(net.author.call.list_warehouses())  # their certifications

        def recovery(site: str) -> list:
            """The oracle's recovery shipping from ``site``."""
            look = [order.trucks(site), order.slots(site)]
            at = net.time_after(stale + seen + look, triggers)
            if level != "hard":
                undo = [order.cancel("d0")] if level == "medium" else []
                return stale + seen + look + undo + order.ship(site, fleet[site][0], net.slot(site, at))
            t1, t2 = fleet[site]
            s1 = net.slot(site, at)
            s2 = net.slot(site, shift(net.slot_start(s1), 1))
            return stale + seen + look + [order.reserve(site, q, "r1"), order.split(small, "r1", "r2"),
                                          order.book(s1, t1), order.dispatch(t1, s1, "r2"), order.book(s2, t2),
                                          order.dispatch(t2, s2, "r1")]

        oracle = recovery(want)
        settle_due(order, oracle, triggers, plan.calls, alternatives=[recovery(x) for x in sources if x != want])
    query = (f"Hello, this is dispatch planning for {order.record['customer']}. Please get {order.what}, out of "
             f"{net.name(home)} ({home}), which holds the stock: reserve it, book a loading-dock slot for truck "
             f"{truck} and dispatch it. {CONSULT}")
    return make_task(order, query, triggers, plan, oracle, "planning a store replenishment", {
        ("lockdown", "inspection", "locked"): "We did not know about any inspection; please ship from wherever is "
        "allowed and meets my requirement."}, insist=f"The store needs all {q} units by {order.record['due_by']}; a "
        "partial or late delivery is no use to us, and the source must meet my requirement: ask me about it.",
        consult=CONSULT, level=level)
