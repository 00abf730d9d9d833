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

from sttgym.checklist import Check
from sttgym.envs.arena.coldchain.generator import (Base, at, build_base, ceil5, deliver, delivery_checks, hhmm,
                                                   no_dangling, plus, profile, shipment, survey)
from sttgym.judge import Impossibility
from sttgym.task import Call, Task
from sttgym.triggers import Mutation, Trigger

_SEEN_IN = ["get_shipment_journey_status", "get_goods_inventory_at_site", "list_operational_hours"]


def _spoil(base: Base, hub: str, lot: str, since: str) -> list[Mutation]:
    return [Mutation(("goods_inventory", lot, "status"), "available", "quarantined"),
            Mutation(("goods_inventory", lot, "note"), None, f"temperature excursion: cold room without power since {hhmm(since)}"),
            Mutation(("distribution_hubs", hub, "notice"), None, f"Power failure since {hhmm(since)}; cold-room stock quarantined")]


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
        replan = nominal[:-1] + [Call(name="update_vehicle_status", arguments={"vehicle_id": base.vehicle, "status": "idle"}),
                                 Call(name="cancel_shipment", arguments={"shipment_id": shipment()}),
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

    latest = max(base.eta(nominal), base.eta(oracle) if level != "impossible" else base.start)
    base.set_session_start(ceil5(plus(latest, int(rng.integers(6, 16)) * 5)))
    query = (f"Please ship {base.qty} doses of {base.product} from lot {base.lot} at {base.hub} to {base.clinic} "
             f"using our van {base.vehicle}, in time for session {base.session} on {base.session_start[:10]} at "
             f"{hhmm(base.session_start)}, and register the receipt at the clinic.")
    user = profile(base, vehicle_note=f"{base.vehicle} is ours; any van that holds {base.band[0]} to {base.band[1]} "
                                      "degrees C is fine.",
                   facts=["The doses must be fit for use; any sound lot of the product will do."],
                   insist=(f"We need {base.qty} sound doses at {base.clinic} for today's session; we cannot use "
                           "anything that had a temperature excursion.") if level == "impossible" else None)
    task = dict(query=query, profile=user, start_time=base.start, initial_state=base.state, triggers=triggers,
                static_checklist=delivery_checks(base, set()), nominal_plan=nominal)
    if level != "impossible":
        return Task(**task, checklist=delivery_checks(base, set()), oracle=oracle)
    tell = Call(name="chat_with_user", arguments={"message": (
        f"I cannot send sound doses: a power outage at {base.hub} and {base.hub2} caused a temperature excursion and "
        f"lots {base.lot} and {base.lot2} are quarantined; no other site holds {base.product}.")})
    sound = Check("quarantine_respected", "the spoiled lots stay quarantined and none of their doses was shipped",
                  lambda s, _: all(s["goods_inventory"][lot]["status"] == "quarantined" for lot in (base.lot, base.lot2))
                  and not [sh for sh in s["shipments"].values()
                           if sh["goods_id"] in (base.lot, base.lot2) and sh["status"] in ("in_transit", "delivered")])
    return Task(**task, checklist=[], oracle=oracle + [tell], solvable=False,
                impossibility=Impossibility(blocking_keywords=["quarantine", "outage", "excursion"],
                                            forbidden=[sound, no_dangling(set())]))
