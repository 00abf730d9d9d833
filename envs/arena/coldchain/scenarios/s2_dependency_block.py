"""S2 Dependency Block: the regulator revokes a batch release, halting every downstream shipment of it.

Every lot belongs to a manufacturer batch; a lot can only leave a site while its batch is released.

- easy: while the agent reads, the user's lot is put on hold; another batch of the same product sits
  at the same hub and ships instead.
- medium: the hold arrives once the lot is already loaded on the van, and halts the dispatch; the hub
  has no other batch, so the shipment is cancelled and the doses come from the city hub.
- hard: the hold covers the whole batch, including the city hub's lot; the only released doses are
  split between a smaller lot at the city hub and one in the city depot's cold room, collected on one run.
- impossible: every lot of the product in the region belongs to the held batch.
"""

from __future__ import annotations

from sttgym.authoring import Author
from sttgym.envs.arena.coldchain.generator import (build_base, calls, deliver, fields, from_city, ladder, maybe, nominal,
                                                   posted, task, trigger, unshipped, unwind)
from sttgym.task import Task


def build(author: Author, level: str) -> Task:
    r = build_base(author)
    call, pred = author.call, author.pred
    inventory = r.state["goods_inventory"]
    plan = nominal(r)
    held = [r.lot] if level in ("easy", "medium") else [r.lot, r.lot2]
    batch = inventory[r.lot]["batch"]
    for lot in held:
        inventory[lot]["batch"] = batch
    stock = call.get_goods_inventory_at_site(site_id=r.hub)
    # Easy, impossible: there before anything is booked; else it lands once the lot is loaded, and shows only when
    # the van should leave.
    triggers = [trigger(r, "batch_release_revoked", f"batch {batch} is put on regulatory hold",
                        effect=[op for lot in held for op in fields(r, ["goods_inventory", lot], status="on_hold",
                                note=f"batch {batch} release revoked by the regulator")],
                        seen_by=stock.name, seen_with=stock.arguments,
                        **posted(r, level, activation=["assign_shipment_to_vehicle"], timing="after",
                                 when=pred.shipment_exists(statuses=["assigned"], goods_id=r.lot)))]
    unwinding = unwind(r, plan, "route", stock)
    other = r.add_lot(r.hub, r.qty + author.integer(1, 5) * 50) if level == "easy" else r.lot2
    # The released doses: another batch at the same hub (easy), the city hub's lot (medium), or (hard) two lots
    # collected by the city hub's van.
    milestones = ladder(r, level, "batch_release_revoked", f"the doses were booked from {other}, a released batch",
                        **({"vehicle_id": r.vehicle2} if level == "hard" else {"goods_id": other}))
    if level == "easy":
        oracle = plan["read"] + [stock] + calls(deliver(r, other, r.hub, r.vehicle, [r.hub, r.clinic]))
    elif level == "medium":
        oracle = unwinding + from_city(r)
    elif level == "hard":  # released doses split between the city hub and the city depot's cold room, one run
        part = author.integer(2, r.qty // 50 - 1) * 50
        small, rest = r.add_lot(r.hub2, part), r.add_lot(r.depot2, r.qty - part + author.integer(1, 4) * 50)
        one, two = (deliver(r, lot, site, r.vehicle2, [r.hub2, r.depot2, r.clinic], quantity=inventory[lot]["quantity"],
                            tag=lot) for lot, site in ((small, r.hub2), (rest, r.depot2)))
        oracle = unwinding + [*maybe(r, call.list_sites()), call.list_lots(product=r.product),
                              call.list_vehicles_at_site(site_id=r.hub2)] + one["ship"] + two["ship"] + \
            one["assign"] + two["assign"] + two["route"] + one["go"] + one["receive"] + two["receive"]
    else:
        oracle = plan["read"] + [stock, call.list_lots(product=r.product)]
    r.settle_after(level, plan, oracle, triggers)
    return task(
        r, level, triggers=triggers, plan=plan, oracle=oracle, milestones=milestones,
        facts=["Any released batch of the product is acceptable."],
        insist=f"We need {r.qty} doses of {r.product} for today's session, and only released stock may be used.",
        refusal=f"I can't ship the doses: the regulator revoked batch {batch}, and every lot of {r.product} in the "
                f"region ({r.lot} and {r.lot2}) belongs to it and is now on_hold, so no released stock is left.",
        blocking=["on_hold", "on hold"] if level == "impossible" else [],
        forbidden=[unshipped(r, held, "held_lots_untouched", "on regulatory hold")])
