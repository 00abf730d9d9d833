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
- impossible: once the van has left, the outage spoils the stock at both hubs (the doses on the road
  too), and no other site holds the product.

Any sound lot in any van that holds the band will do.
"""

from sttgym.envs.arena.coldchain.generator import COLD, Author, Task, build_base, maybe

# The hubs that lose power and the lots spoiled, by level (roles); medium and hard find the excursion on the road.
SPOILED = {"easy": (["hub"], ["lot"]), "medium": ([], ["lot"]), "hard": ([], ["lot"]),
           "impossible": (["hub", "hub2"], ["lot", "lot2"])}


def build(author: Author, level: str) -> Task:
    r = build_base(author, level)
    call, pred = author.call, author.pred
    hubs, lots = (r.roles(*roles) for roles in SPOILED[level])
    stock, city = (r.stock_at(hub) for hub in (r.hub, r.hub2))

    def spoil(hubs: list[str], lots: list[str]) -> list:
        return r.set_all("goods_inventory", lots, status="quarantined", note="temperature excursion after a power "
                         "failure") + r.set_all("distribution_hubs", hubs, status="outage", notice="Power failure: "
                                                "cold room down")

    what = f"{', '.join(hubs)} lose power" if hubs else f"an excursion at {r.hub} is found"
    triggers = [r.change("power_failure", f"{what}; {', '.join(lots)} quarantined", stock, spoil(hubs, lots),
                         **r.cause(**r.on_road()))]
    if level == "hard":  # the grid fault spreads to the city hub; the city depot's cold room holds sound stock
        triggers.append(r.change("grid_fault_spreads", f"{r.hub2} loses power too; {r.lot2} quarantined", city,
                                 spoil([r.hub2], [r.lot2]), when=pred.field_equals(
                                     path=["goods_inventory", r.lot, "status"], value="quarantined")))
    # the only sound lot at hard, so it holds the late registrations' doses too
    sound = r.add_lot(r.depot2, r.qty + r.registrations() + author.integer(0, 3) * 50) if level == "hard" else r.lot2
    fix = {"easy": lambda: maybe(r, call.list_operational_hours(site_id=r.hub)) + r.source(),
           "medium": lambda: r.source(), "hard": lambda: r.source(r.vehicle2, city, lot=sound, origin=r.depot2),
           "impossible": lambda: [r.lots()]}[level]()
    return r.task(
        triggers, r.recounted(r.respond(stock, then=fix, phase="go", recall=True), triggers),
        milestones=r.ladder("power_failure"),
        insist=r.insist("Only doses that stayed in their cold chain may be used."),
        refusal=f"I can't ship usable doses: a power failure put {r.hub} and {r.hub2} in outage and both lots of "
                f"{r.product} ({r.lot}, {r.lot2}) are quarantined after the temperature excursion; no other site "
                "holds the product.",
        blocking=["quarantined", "outage", "power failure", "temperature excursion"],
        forbidden=[r.unshipped(lots, "no_spoiled_lot_shipped", "quarantined", COLD)])
