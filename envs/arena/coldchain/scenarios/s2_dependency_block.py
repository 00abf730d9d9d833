"""S2 Dependency Block: the regulator revokes a batch release, halting every downstream shipment of it.

Every lot belongs to a manufacturer batch; a lot can only leave a site while its batch is released.

- easy: while the agent reads, the user's lot is put on hold; another batch of the same product sits
  at the same hub and ships instead.
- medium: the hold arrives once the lot is already loaded on the van, and halts the dispatch; the hub
  has no other batch, so the shipment is cancelled and the doses come from the city hub.
- hard: the hold covers the whole batch, including the city hub's lot; the only released doses are
  split between a smaller lot at the city hub and one in the city depot's cold room, collected on one run
  (the depot also keeps a third small lot, of what the late registrations will add once the recovery
  commits: ``Region.recounted``).
- impossible: every lot of the product in the region belongs to the held batch.

Any released lot (or, at hard, the two small lots together) in any van that holds the band will do.
"""

from sttgym.envs.arena.coldchain.generator import COLD, Author, Task, build_base, collect


def build(author: Author, level: str) -> Task:
    r = build_base(author, level)
    inventory, stock = r.state["goods_inventory"], r.stock_at(r.hub)
    held, batch = [r.lot] if level in ("easy", "medium") else [r.lot, r.lot2], inventory[r.lot]["batch"]
    for lot in held:
        inventory[lot]["batch"] = batch
    # Easy, impossible: there before anything is booked; else it lands once the lot is loaded, and shows only when
    # the van should leave.
    triggers = [r.change("batch_release_revoked", f"batch {batch} is put on regulatory hold", stock, r.set_all(
        "goods_inventory", held, status="on_hold", note=f"batch {batch} release revoked by the regulator"), **r.cause(
        activation=["assign_shipment_to_vehicle"], timing="after",
        when=author.pred.shipment_exists(statuses=["assigned"], goods_id=r.lot)))]

    def split():  # released doses split between the city hub and the city depot's cold room, one run
        part = author.integer(2, r.qty // 50 - 1) * 50
        # Together the two lots hold exactly the doses asked for: shipping both whole is the request, no more.
        r.split = [(r.add_lot(r.hub2, part), r.hub2, part), (r.add_lot(r.depot2, r.qty - part), r.depot2, r.qty - part)]
        r.add_lot(r.depot2, r.registrations())  # and a third, small one, what the late registrations will add
        return r.look() + collect(r, r.split, r.vehicle2, r.clinic)

    # The released doses: another batch at the same hub (easy), the city hub's lot (medium), or two lots (hard).
    other = r.add_lot(r.hub, r.qty + author.integer(1, 5) * 50) if level == "easy" else r.lot2
    fix = {"easy": lambda: r.ship(other, r.hub, r.vehicle), "medium": r.source, "hard": split,
           "impossible": lambda: [r.lots()]}[level]()
    return r.task(
        triggers, r.recounted(r.respond(stock, then=fix), triggers),
        milestones=r.ladder("batch_release_revoked"), facts=["Any released batch of the product is acceptable."],
        refusal=f"I can't ship the doses: the regulator revoked batch {batch}, and every lot of {r.product} in the "
                f"region ({r.lot} and {r.lot2}) belongs to it and is now on_hold, so no released stock is left.",
        blocking=["on_hold", "on hold", batch, "revoked"],
        forbidden=[r.unshipped(held, "held_lots_untouched", "on regulatory hold", COLD)])
