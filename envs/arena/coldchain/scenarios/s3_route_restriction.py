"""S3 Route Restriction: the corridor into the city closes, blocking the planned route.

The regional hub reaches the clinic fastest along one corridor road; the slower detours run through
the other clinics. Routes keep the roads they were planned on, so a closure invalidates them.

- easy: checking the planned route shows the corridor closed before the van leaves; re-planning
  finds the detour, which still makes the session.
- medium: the corridor closes while the van is on the road (seen when the agent checks its route),
  so it cannot arrive; it is recalled, re-routed on the detour and sent again.
- hard: as medium, but the detour after the recall would miss the session: the shipment is cancelled
  and the doses go from the city hub instead.
- impossible: a flood closes every road into the clinic.
"""

from __future__ import annotations

import numpy as np

from sttgym.checklist import Check
from sttgym.envs.arena.coldchain.generator import (at, build_base, deliver, floor5, hhmm, make_task, no_dangling,
                                                   plus, shipment, survey)
from sttgym.task import Call, Task
from sttgym.triggers import Mutation, Trigger


def _rides(state: dict, vehicle: str, road: str, status: str) -> bool:
    """``vehicle`` has status ``status`` and its planned route uses ``road``."""
    return state["vehicles"][vehicle]["status"] == status and any(
        stop["vehicle_id"] == vehicle and road in stop["road_ids"] for stop in state["route_stops"].values())


def _closure(roads: list[str], why: str, condition, activation: list[str]) -> Trigger:
    changes = []
    for road in roads:
        changes += [Mutation(("roads", road, "open"), True, False), Mutation(("roads", road, "note"), None, why)]
    return Trigger(name="road_closed", description=f"{', '.join(roads)} closed: {why}", activation=activation,
                   condition=condition, mutations=changes, observable_via="get_route_stop_details")


def build(rng: np.random.Generator, level: str) -> Task:
    base = build_base(rng)
    corridor = base.roads["depot1-clinic"]
    check_route = Call(name="get_route_stop_details", arguments={"vehicle_id": base.vehicle})
    go = deliver(base.lot, base.hub, base.clinic, base.qty, base.vehicle, [base.hub, base.clinic])
    reroute = [Call(name="add_or_update_route_plan", arguments={"vehicle_id": base.vehicle,
                                                                "route_plan": [base.hub, base.clinic]}),
               go[3], go[4]]
    recall = Call(name="update_vehicle_status", arguments={"vehicle_id": base.vehicle, "status": "idle"})
    closed = frozenset({corridor})
    why = "bridge closed after a collision"

    if level == "easy":
        nominal = survey(base) + go[:3] + [check_route] + go[3:]
        oracle = nominal[:8] + reroute
        triggers = [_closure([corridor], why, lambda s, ctx: _rides(s, base.vehicle, corridor, "idle"), [check_route.name])]
    else:
        nominal = survey(base) + go[:4] + [check_route, go[4]]
        triggers = [_closure([corridor], why, lambda s, ctx: _rides(s, base.vehicle, corridor, "in_transit"),
                             [check_route.name])]
        if level == "medium":
            oracle = nominal[:9] + [recall] + reroute
        elif level == "hard":
            oracle = nominal[:9] + [recall, Call(name="get_travel_time", arguments={"origin_site_id": base.hub,
                                                                                    "destination_site_id": base.clinic}),
                                    Call(name="cancel_shipment", arguments={"shipment_id": shipment()}),
                                    Call(name="get_goods_inventory_at_site", arguments={"site_id": base.hub2})]
            oracle += deliver(base.lot2, base.hub2, base.clinic, base.qty, base.vehicle2, [base.hub2, base.clinic],
                              tag="city")
            detour = base.eta(nominal[:9] + [recall] + reroute, closed)  # what re-routing the van would give
            base.set_session_start(floor5(plus(detour, -int(rng.integers(2, 5)) * 5)))
        else:
            flooded = [base.roads[k] for k in ("depot1-clinic", "clinic2-clinic", "clinic-hub2")]
            flood = plus(at(base, survey(base)[:2]), int(rng.integers(1, 5)))  # rising water while the agent reads
            triggers = [_closure(flooded, "flooding: every road into the clinic is shut",
                                 lambda s, ctx: ctx.now >= flood, [])]
            oracle = survey(base) + [Call(name="get_travel_time", arguments={"origin_site_id": base.hub2,
                                                                             "destination_site_id": base.clinic})]
    if level != "hard":
        base.settle_session(base.eta(nominal), base.eta(oracle, closed) if level != "impossible" else base.start)

    return make_task(
        base, level, triggers=triggers, nominal=nominal, oracle=oracle,
        query=f"Please ship {base.qty} doses of {base.product} from lot {base.lot} at {base.hub} to {base.clinic} with "
              f"our van {base.vehicle}; they are for session {base.session} on {base.session_start[:10]} at "
              f"{hhmm(base.session_start)}. Register the receipt at the clinic when they arrive.",
        vehicle_note=f"{base.vehicle} is ours; any van holding {base.band[0]} to {base.band[1]} degrees C is fine.",
        facts=["Any route is fine as long as the doses arrive in time."],
        insist=f"The doses have to reach {base.clinic} itself today; no other site can run this session.",
        refusal=f"I cannot get the doses to {base.clinic}: flooding has closed every road into the clinic, so no "
                "vehicle can reach it today.",
        blocking=["closed", "flood", "road"],
        forbidden=[Check("no_doses_sent_elsewhere", f"no dose of {base.product} was sent to another site instead",
                         lambda s, _: not [sh for sh in s["shipments"].values() if sh["product"] == base.product
                                           and sh["destination_site_id"] != base.clinic and sh["created_at"] >= base.start]),
                   no_dangling(set())])
