"""ST2 Failure Cascade: a power failure at the regional hub spoils its stock and spreads downstream.

A cold room that loses power lets its lots warm past their band; the hub quarantines them, and
doses already on the road from a quarantined lot are no longer fit for use.

- easy: while the agent is reading, the regional hub loses power and quarantines the lot; the
  city hub ships instead.
- medium: the excursion is only found once the van has left: the lot is quarantined while its doses
  are on the road (delivering them would hand over spoiled doses); the van is recalled, the shipment
  cancelled, and the city hub ships instead.
- hard: as medium, and the grid fault then trips the city hub's cold room too; the only sound stock
  is in the city depot's cold room, collected by the city hub's van.
- impossible: the outage spoils the stock at both hubs, and no other site holds the product.
"""

from __future__ import annotations

from sttgym.authoring import Author
from sttgym.envs.arena.coldchain.generator import (EARLY, build_base, calls, deliver, fields, from_city, ladder, maybe,
                                                   nominal, posted, task, trigger, unshipped, unwind)
from sttgym.task import Task


def build(author: Author, level: str) -> Task:
    r = build_base(author)
    call, pred = author.call, author.pred
    plan = nominal(r)

    def spoil(hubs: list[str], lots: list[str]) -> list:
        return [op for lot in lots for op in fields(r, ["goods_inventory", lot], status="quarantined",
                                                     note="temperature excursion after a power failure")] + \
            [op for hub in hubs for op in fields(r, ["distribution_hubs", hub], status="outage",
                                                  notice="Power failure: cold room down")]

    # The hubs that lose power and the lots spoiled, by level.
    hubs, lots = {"easy": ([r.hub], [r.lot]), "medium": ([], [r.lot]), "hard": ([], [r.lot]),
                  "impossible": ([r.hub, r.hub2], [r.lot, r.lot2])}[level]
    stock = call.get_goods_inventory_at_site(site_id=r.hub)
    # Easy, impossible: the power fails while the agent still reads; else the excursion is found once the doses
    # are on the road.
    what = f"{', '.join(hubs)} lose power" if level in EARLY else f"an excursion at {r.hub} is found"
    triggers = [trigger(r, "power_failure", f"{what}; {', '.join(lots)} quarantined", effect=spoil(hubs, lots),
                        seen_by=stock.name, seen_with=stock.arguments,
                        **posted(r, level, activation=["update_vehicle_status"], timing="after",
                                 when=pred.on_road_to(site_id=r.clinic, product=r.product)))]
    unwinding = unwind(r, plan, "go", stock, recall=True)
    # The sound stock that ships instead: the city hub's lot, or (hard) the city depot's, in the city hub's van.
    sound = r.add_lot(r.depot2, r.qty + author.integer(1, 4) * 50) if level == "hard" else r.lot2
    milestones = ladder(r, level, "power_failure", f"the doses were booked from {sound}, away from the failed cold "
                        "room", after="grid_fault_spreads" if level == "hard" else None, goods_id=sound,
                        vehicle_id=r.vehicle2)
    blocking = []
    if level == "easy":
        oracle = plan["read"] + [stock, *maybe(r, call.list_operational_hours(site_id=r.hub))] + from_city(r)
    elif level == "medium":
        oracle = unwinding + from_city(r)
    elif level == "hard":  # the grid fault spreads to the city hub; the city depot's cold room holds sound stock
        city_stock = call.get_goods_inventory_at_site(site_id=r.hub2)
        triggers.append(trigger(r, "grid_fault_spreads", f"{r.hub2} loses power too; {r.lot2} quarantined",
                                when=pred.field_equals(path=["goods_inventory", r.lot, "status"], value="quarantined"),
                                effect=spoil([r.hub2], [r.lot2]), seen_by=city_stock.name,
                                seen_with=city_stock.arguments))
        oracle = unwinding + [*maybe(r, call.list_sites()), call.list_lots(product=r.product), city_stock,
                              call.list_vehicles_at_site(site_id=r.hub2)] + calls(
            deliver(r, sound, r.depot2, r.vehicle2, [r.depot2, r.clinic], tag="city"))
    else:
        oracle, blocking = plan["read"] + [stock, call.list_lots(product=r.product)], ["quarantined", "outage"]
    r.settle_after(level, plan, oracle, triggers)
    return task(
        r, level, triggers=triggers, plan=plan, oracle=oracle, milestones=milestones, blocking=blocking,
        insist=f"Only doses that stayed in their cold chain may be used, and all {r.qty} are needed today.",
        refusal=f"I can't ship usable doses: a power failure put {r.hub} and {r.hub2} in outage and both lots of "
                f"{r.product} ({r.lot}, {r.lot2}) are quarantined after the temperature excursion; no other site "
                "holds the product.",
        forbidden=[unshipped(r, lots, "no_spoiled_lot_shipped", "quarantined")])
