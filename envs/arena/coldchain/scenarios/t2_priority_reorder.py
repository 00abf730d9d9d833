"""T2 Priority Reorder: an emergency moves the clinic's deadline earlier, invalidating the planned run.

- easy: reading the clinic's schedule reveals the session was pulled earlier for an outbreak
  response; the user's van is still out on another run and would arrive too late, so the idle van
  parked next to it takes the load.
- medium (the paper's worked example): once the van is on the road, an emergency order cuts the
  clinic's receiving hours (a guarded trigger, shown by the clinic's hours); the van can no longer
  arrive in time, so it is recalled, its shipment cancelled, and the doses sent from the city hub.
- hard: as medium, and the same emergency then requisitions the city hub's van; the doses leave
  the city hub in the van from the city depot.
- impossible: the session is pulled so early that no stock anywhere can reach the clinic before it.
"""

from __future__ import annotations

import numpy as np

from sttgym.envs.arena.coldchain.generator import (Base, at, build_base, ceil5, deliver, floor5, hhmm, make_task,
                                                   no_dangling, none_sent, plus, shipment, survey)
from sttgym.task import Call, Task
from sttgym.triggers import Mutation, Trigger

_SESSION_READ = "list_clinic_immunization_schedule"


def _pull_session(base: Base, new_start: str) -> Trigger:
    """Reading the clinic's schedule shows the session moved earlier for an outbreak response."""
    schedule = ("clinics", base.clinic, "immunization_schedule", base.session)
    original = base.session_start
    return Trigger(
        name="session_pulled_earlier",
        description=f"session {base.session} moves from {hhmm(original)} to {hhmm(new_start)}",
        activation=[_SESSION_READ],
        condition=lambda s, ctx: ctx.arguments.get("site_id") == base.clinic,
        mutations=[Mutation(schedule + ("start",), original, new_start),
                   Mutation(schedule + ("note",), None, "moved earlier: outbreak response has priority")],
        observable_via=_SESSION_READ)


def _in_transit_to_clinic(base: Base, state: dict) -> bool:
    return any(sh["status"] == "in_transit" and sh["product"] == base.product
               and sh["destination_site_id"] == base.clinic for sh in state["shipments"].values())


def _arrives_by(base: Base, state: dict, deadline: str) -> bool:
    """Some vehicle loaded with the product is planned to reach the clinic by ``deadline``."""
    loaded = {sh["vehicle_id"] for sh in state["shipments"].values()
              if sh["product"] == base.product and sh["destination_site_id"] == base.clinic
              and sh["status"] in ("assigned", "in_transit")}
    return any(stop["vehicle_id"] in loaded and stop["site_id"] == base.clinic and stop["planned_arrival"] <= deadline
               for stop in state["route_stops"].values())


def _cut_hours(base: Base, close: str) -> Trigger:
    """Once a van is on the road, an emergency order cuts the clinic's receiving hours until a fast enough run exists."""
    clinic = base.state["clinics"][base.clinic]
    deadline = base.start[:11] + close
    return Trigger(
        name="receiving_hours_cut", description=f"an emergency order closes {base.clinic}'s receiving at {close}",
        activation=["list_operational_hours"], mode="conditional_guarded",
        condition=lambda s, ctx: ctx.arguments.get("site_id") == base.clinic and _in_transit_to_clinic(base, s),
        recovery=lambda s, ctx: _arrives_by(base, s, deadline),
        mutations=[Mutation(("clinics", base.clinic, "hours", "close"), clinic["hours"]["close"], close),
                   Mutation(("clinics", base.clinic, "notice"), None,
                            f"Emergency order: receiving closes at {close} today")],
        observable_via="list_operational_hours")


def build(rng: np.random.Generator, level: str) -> Task:
    base = build_base(rng)
    reads = survey(base)
    nominal = reads + deliver(base.lot, base.hub, base.clinic, base.qty, base.vehicle, [base.hub, base.clinic])
    band = f"any van that holds {base.band[0]} to {base.band[1]} degrees C is fine"
    vehicle_note = f"{base.vehicle} is our usual van; {band}."

    if level == "easy":
        spare = base.add_vehicle(base.hub)
        oracle = reads + [Call(name="list_vehicles_at_site", arguments={"site_id": base.hub})] + deliver(
            base.lot, base.hub, base.clinic, base.qty, spare, [base.hub, base.clinic])
        busy_until = ceil5(plus(at(base, oracle[:-2]), int(rng.integers(8, 14)) * 5))
        base.state["vehicles"][base.vehicle]["available_from"] = busy_until  # back from its morning run
        late = base.eta(nominal)
        base.set_session_start(ceil5(plus(late, int(rng.integers(6, 12)) * 5)))
        triggers = [_pull_session(base, floor5(plus(late, -5)))]
        vehicle_note = f"{base.vehicle} is ours and is back from its morning run at {hhmm(busy_until)}; {band}."
    elif level in ("medium", "hard"):
        nominal = nominal[:-1] + [Call(name="list_operational_hours", arguments={"site_id": base.clinic}), nominal[-1]]
        stand_down = nominal[:-1] + [
            Call(name="update_vehicle_status", arguments={"vehicle_id": base.vehicle, "status": "idle"}),
            Call(name="cancel_shipment", arguments={"shipment_id": shipment()}),
            Call(name="get_goods_inventory_at_site", arguments={"site_id": base.hub2})]
        if level == "medium":
            oracle = stand_down + deliver(base.lot2, base.hub2, base.clinic, base.qty, base.vehicle2,
                                          [base.hub2, base.clinic], tag="city")
        else:
            depot_van = base.add_vehicle(base.depot2)
            oracle = stand_down + [Call(name="list_vehicles_at_site", arguments={"site_id": base.hub2}),
                                   Call(name="list_vehicles_at_site", arguments={"site_id": base.depot2})] + deliver(
                base.lot2, base.hub2, base.clinic, base.qty, depot_van, [base.hub2, base.clinic], tag="city")
        late = base.eta(nominal)
        base.set_session_start(ceil5(plus(late, int(rng.integers(3, 9)) * 5)))
        close = hhmm(floor5(plus(late, -5)))
        triggers = [_cut_hours(base, close)]
        if level == "hard":
            van = ("vehicles", base.vehicle2)
            triggers.append(Trigger(
                name="city_van_requisitioned",
                description=f"the emergency order requisitions {base.vehicle2} at {base.hub2}",
                activation=[], condition=lambda s, ctx: s["clinics"][base.clinic]["hours"]["close"] == close,
                mutations=[Mutation(van + ("status",), "idle", "reserved")],
                observable_via="list_vehicles_at_site"))
    else:
        oracle = reads + [Call(name="get_travel_time", arguments={"origin_site_id": base.hub2,
                                                                  "destination_site_id": base.clinic})]
        base.set_session_start(ceil5(plus(base.eta(nominal), int(rng.integers(6, 12)) * 5)))
        # Earlier than a van already loaded at the city hub could get there.
        impossible = floor5(plus(at(base, reads[:2]), base.minutes(base.hub2, base.clinic) + 15))
        triggers = [_pull_session(base, impossible)]

    new_start = triggers[0].mutations[0].new
    return make_task(
        base, level, triggers=triggers, nominal=nominal, oracle=oracle,
        query=f"Please ship {base.qty} doses of {base.product} from lot {base.lot} at {base.hub} to {base.clinic} for "
              f"immunization session {base.session}, which starts on {base.session_start[:10]} at "
              f"{hhmm(base.session_start)}. Use our van {base.vehicle}, and register the receipt at the clinic.",
        vehicle_note=vehicle_note,
        insist=f"The session cannot move: all {base.qty} doses must be at {base.clinic} before it starts. Please "
               "don't send anything that arrives late.",
        refusal=f"I cannot meet session {base.session}: it was moved earlier to {hhmm(new_start)}, and even the city "
                f"hub {base.hub2}, the closest stock, cannot get {base.qty} doses to {base.clinic} before then.",
        blocking=["earlier", hhmm(new_start)],
        forbidden=[none_sent("no_late_delivery", "nothing was sent that could only arrive after the session", base,
                             (base.clinic,)), no_dangling(set())])
