"""ST2 Failure Cascade: a power failure at the regional hub spoils its stock and spreads downstream.

A cold room that loses power lets its lots warm past their band; the hub quarantines them, and
doses already on the road from a quarantined lot are no longer fit for use.

- easy: while the agent is reading, the regional hub loses power and quarantines the lot; the
  city hub ships instead.
- medium: the excursion is only found after the van left: checking the shipment shows its lot
  quarantined; the van is recalled, the shipment cancelled, and the city hub ships instead.
- hard: as medium, and the grid fault then trips the city hub's cold room too; the only sound stock
  is in the city depot's cold room, collected by the city hub's van.
- impossible: the outage spoils the stock at both hubs, and no other site holds the product.
"""

from __future__ import annotations

import numpy as np

from sttgym.envs.arena.coldchain.generator import (Base, at, build_base, deliver, hhmm, left_alone, make_task,
                                                   no_dangling, plus, shipment, survey)
from sttgym.task import Call, Task
from sttgym.triggers import Mutation, Trigger

_SEEN_IN = ["get_shipment_journey_status", "get_goods_inventory_at_site", "list_operational_hours"]


def _spoil(base: Base, hub: str, lot: str, since: str) -> list[Mutation]:
    return [Mutation(("goods_inventory", lot, "status"), "available", "quarantined"),
            Mutation(("goods_inventory", lot, "note"), None,
                     f"temperature excursion: cold room without power since {hhmm(since)}"),
            Mutation(("distribution_hubs", hub, "notice"), None,
                     f"Power failure since {hhmm(since)}; cold-room stock quarantined")]


def _outage_now(base: Base, hubs: list[tuple[str, str]], when: str) -> Trigger:
    """At ``when`` the hubs lose power: they stop dispatching and quarantine the given lots."""
    changes = []
    for hub, lot in hubs:
        changes += [Mutation(("distribution_hubs", hub, "status"), "operational", "outage"), *_spoil(base, hub, lot, when)]
    return Trigger(name="hub_power_failure", description=f"power failure at {', '.join(h for h, _ in hubs)} at {hhmm(when)}",
                   activation=[], condition=lambda s, ctx: ctx.now >= when, mutations=changes,
                   observable_via="get_goods_inventory_at_site")


def build(rng: np.random.Generator, level: str) -> Task:
    base = build_base(rng)
    reads = survey(base)
    nominal = reads + deliver(base.lot, base.hub, base.clinic, base.qty, base.vehicle, [base.hub, base.clinic])
    inventory = lambda site: Call(name="get_goods_inventory_at_site", arguments={"site_id": site})  # noqa: E731
    city = [base.hub2, base.clinic]
    early = plus(at(base, reads[:1]), int(rng.integers(1, 6)))  # while the agent is still reading

    if level == "easy":
        triggers = [_outage_now(base, [(base.hub, base.lot)], early)]
        oracle = reads + [inventory(base.hub), inventory(base.hub2)] + deliver(
            base.lot2, base.hub2, base.clinic, base.qty, base.vehicle2, city)
    elif level in ("medium", "hard"):
        nominal = nominal[:-1] + [Call(name="get_shipment_journey_status", arguments={"shipment_id": shipment()}),
                                  nominal[-1]]
        since = plus(at(base, reads), -int(rng.integers(2, 8)) * 5)
        triggers = [Trigger(
            name="excursion_found", description=f"the lot on the road was warm since {hhmm(since)}: quarantined",
            activation=_SEEN_IN, mutations=_spoil(base, base.hub, base.lot, since),
            condition=lambda s, ctx: any(sh["goods_id"] == base.lot and sh["status"] == "in_transit"
                                         for sh in s["shipments"].values()),
            observable_via="get_shipment_journey_status")]
        recall = Call(name="update_vehicle_status", arguments={"vehicle_id": base.vehicle, "status": "idle"})
        replan = nominal[:-1] + [recall, Call(name="cancel_shipment", arguments={"shipment_id": shipment()}),
                                 inventory(base.hub2)]
        if level == "medium":
            oracle = replan + deliver(base.lot2, base.hub2, base.clinic, base.qty, base.vehicle2, city, tag="city")
        else:
            spread = plus(since, int(rng.integers(20, 40)))
            triggers.append(Trigger(
                name="outage_spreads", description=f"the grid fault trips {base.hub2}'s cold room",
                activation=[], mutations=_spoil(base, base.hub2, base.lot2, spread),
                condition=lambda s, ctx: s["goods_inventory"][base.lot]["status"] == "quarantined",
                observable_via="get_goods_inventory_at_site"))
            depot_lot = base.add_lot(base.depot2, base.qty + int(rng.integers(1, 6)) * 50)
            oracle = replan + [inventory(base.depot2)] + deliver(depot_lot, base.depot2, base.clinic, base.qty,
                                                                 base.vehicle2, [base.depot2, base.clinic], tag="city")
    else:
        triggers = [_outage_now(base, [(base.hub, base.lot), (base.hub2, base.lot2)], early)]
        oracle = reads + [inventory(base.hub), inventory(base.hub2)]

    base.settle_session(base.eta(nominal), base.eta(oracle) if level != "impossible" else base.start)
    return make_task(
        base, level, triggers=triggers, nominal=nominal, oracle=oracle,
        query=f"Please ship {base.qty} doses of {base.product} from lot {base.lot} at {base.hub} to {base.clinic} using "
              f"our van {base.vehicle}, in time for session {base.session} on {base.session_start[:10]} at "
              f"{hhmm(base.session_start)}, and register the receipt at the clinic.",
        vehicle_note=f"{base.vehicle} is ours; any van that holds {base.band[0]} to {base.band[1]} degrees C is fine.",
        facts=["The doses must be fit for use; any sound lot of the product will do."],
        insist=f"We need {base.qty} sound doses at {base.clinic} for today's session; we cannot use anything that had "
               "a temperature excursion.",
        refusal=f"I cannot send sound doses: a power outage at {base.hub} and {base.hub2} caused a temperature "
                f"excursion and lots {base.lot} and {base.lot2} are quarantined; no other site holds {base.product}.",
        blocking=["quarantine", "outage", "excursion"],
        forbidden=[left_alone("quarantine_respected", [base.lot, base.lot2], "quarantined"), no_dangling(set())])
