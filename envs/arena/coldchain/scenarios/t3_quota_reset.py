"""T3 Quota Reset: a hub's cold-dispatch quota resets at a shift change that comes before the van loads.

Hubs release refrigerated loads against a per-shift quota, counted at the time a vehicle loads at the
dock; the next shift's slots are already booked by standing orders, so a load that slips past the
shift change has no slot.

- easy: reading the regional hub's hours shows the shift change brought forward to minutes from now;
  the doses leave from the city hub instead.
- medium: the shift change is brought forward just after the agent read the hub's hours, and lands
  after the shipment was created and routed but before the van leaves; the shipment is cancelled
  and recreated at the city hub.
- hard: as medium, but the city hub's shift also ends soon and its own van is back only after it;
  the user's van cannot reach the city dock in time either, so the van from the city depot loads there.
- impossible: the regional hub's shift change comes at once and the city hub has no slot left in
  this shift or the next.
"""

from __future__ import annotations

import numpy as np

from sttgym.envs.arena.coldchain.generator import (Base, at, build_base, ceil5, deliver, hhmm, make_task, no_dangling,
                                                   plus, shipment)
from sttgym.task import Call, Task
from sttgym.triggers import Mutation, Trigger


def _quota(base: Base, hub: str, ends: str, remaining: int, following: int) -> None:
    base.state["distribution_hubs"][hub]["cold_dispatch"] = {"shift_ends": ends, "remaining": remaining,
                                                             "next_shift_remaining": following}


def _shift_moved(base: Base, new_end: str, timing: str) -> Trigger:
    """Reading the regional hub's hours, the supervisor brings the shift change forward to ``new_end``."""
    hub = ("distribution_hubs", base.hub)
    original = base.state["distribution_hubs"][base.hub]["cold_dispatch"]["shift_ends"]
    return Trigger(
        name="shift_change_forward", description=f"{base.hub}'s shift change moves from {hhmm(original)} to {hhmm(new_end)}",
        activation=["list_operational_hours"], timing=timing,
        condition=lambda s, ctx: ctx.arguments.get("site_id") == base.hub
        and s["distribution_hubs"][base.hub]["cold_dispatch"]["shift_ends"] == original,
        mutations=[Mutation(hub + ("cold_dispatch", "shift_ends"), original, new_end),
                   Mutation(hub + ("notice",), None, f"Staff shortage: shift change at {hhmm(new_end)}; "
                                                    "the next shift's cold-dispatch slots are all booked.")],
        observable_via="list_operational_hours")


def build(rng: np.random.Generator, level: str) -> Task:
    base = build_base(rng)
    reads = [Call(name="get_goods_inventory_at_site", arguments={"site_id": base.hub}),
             Call(name="list_operational_hours", arguments={"site_id": base.hub}),
             Call(name="list_clinic_immunization_schedule", arguments={"site_id": base.clinic}),
             Call(name="list_operational_hours", arguments={"site_id": base.clinic}),
             Call(name="get_vehicle_status", arguments={"vehicle_id": base.vehicle})]
    nominal = reads + deliver(base.lot, base.hub, base.clinic, base.qty, base.vehicle, [base.hub, base.clinic])
    loading = at(base, nominal[:8])  # the van is parked at the dock: it loads when dispatched
    _quota(base, base.hub, ceil5(plus(loading, int(rng.integers(12, 25)) * 5)), int(rng.integers(1, 3)), 0)
    _quota(base, base.hub2, ceil5(plus(loading, int(rng.integers(18, 30)) * 5)), int(rng.integers(2, 4)),
           int(rng.integers(1, 3)))
    city = [base.hub2, base.clinic]
    city_reads = [Call(name="get_goods_inventory_at_site", arguments={"site_id": base.hub2}),
                  Call(name="list_operational_hours", arguments={"site_id": base.hub2})]
    replan = nominal[:8] + [Call(name="list_operational_hours", arguments={"site_id": base.hub}),
                            Call(name="cancel_shipment", arguments={"shipment_id": shipment()})] + city_reads

    if level in ("easy", "impossible"):
        triggers = [_shift_moved(base, plus(at(base, reads[:2]), int(rng.integers(3, 12))), "before")]
    else:
        triggers = [_shift_moved(base, plus(at(base, nominal[:6]), int(rng.integers(1, 7))), "after")]
    if level == "easy":
        oracle = reads + city_reads + deliver(base.lot2, base.hub2, base.clinic, base.qty, base.vehicle2, city)
    elif level == "medium":
        oracle = replan + deliver(base.lot2, base.hub2, base.clinic, base.qty, base.vehicle2, city)
    elif level == "hard":
        depot_van = base.add_vehicle(base.depot2)
        oracle = replan + [Call(name="list_vehicles_at_site", arguments={"site_id": base.hub2}),
                           Call(name="list_vehicles_at_site", arguments={"site_id": base.depot2})] + deliver(
            base.lot2, base.hub2, base.clinic, base.qty, depot_van, city)
        dock = plus(at(base, oracle[:-2]), base.minutes(base.depot2, base.hub2))  # the depot van loads here
        city_end = ceil5(plus(dock, int(rng.integers(3, 7)) * 5))
        _quota(base, base.hub2, city_end, int(rng.integers(1, 3)), 0)
        base.state["vehicles"][base.vehicle2]["available_from"] = ceil5(plus(city_end, int(rng.integers(2, 6)) * 5))
    else:
        oracle = reads + city_reads
        base.state["distribution_hubs"][base.hub2]["cold_dispatch"].update(remaining=0, next_shift_remaining=0)

    base.settle_session(base.eta(nominal), base.eta(oracle) if level != "impossible" else base.start)
    return make_task(
        base, level, triggers=triggers, nominal=nominal, oracle=oracle,
        query=f"Please send {base.qty} doses of {base.product} from lot {base.lot} at {base.hub} to {base.clinic} for "
              f"session {base.session} on {base.session_start[:10]} at {hhmm(base.session_start)}. Our van "
              f"{base.vehicle} is at the hub; register the receipt at the clinic once it is delivered.",
        vehicle_note=f"{base.vehicle} is at {base.hub}; any van holding {base.band[0]} to {base.band[1]} degrees C is "
                     "fine.",
        insist=f"It has to be today's session: {base.qty} doses at {base.clinic} before {hhmm(base.session_start)}, "
               "nothing else.",
        refusal=f"I cannot dispatch the doses today: {base.hub}'s shift change was brought forward and its next shift "
                f"has no cold-dispatch slot, and {base.hub2} has no slot left this shift or the next.",
        blocking=["slot", "shift", "quota"], forbidden=[no_dangling(set())])
