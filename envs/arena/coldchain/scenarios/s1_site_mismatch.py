"""S1 Site Mismatch: the goods or the reserved van are not where the plan assumes.

- easy: reading the hub's stock, the records catch up with an overnight rebalancing: the lot now sits
  in the cold room of the depot on the corridor, so the shipment starts there and the van picks it
  up on the way.
- medium: just after the agent checked it, the reserved van is moved to the city depot for an
  inspection; a route from there back to the regional hub arrives hours late, so the shipment is
  recreated at the city hub, next to where the van now is.
- hard: as medium, but the van was moved because its cooling unit is overdue for a defrost reset;
  the city hub's van is out, so the agent books and completes a reset at the city depot first.
- impossible: the lot was transferred to a clinic that is closed today, and the city hub holds too
  few doses.
"""

from __future__ import annotations

import numpy as np

from sttgym.envs.arena.coldchain.generator import (Base, at, build_base, ceil5, deliver, hhmm, make_task, no_dangling,
                                                   none_sent, plus, shipment, survey)
from sttgym.task import Call, Task
from sttgym.triggers import Mutation, Trigger


def _lot_moved(base: Base, site: str, timing: str) -> Trigger:
    lot = ("goods_inventory", base.lot)
    return Trigger(
        name="lot_relocated", description=f"the records show lot {base.lot} moved from {base.hub} to {site}",
        activation=["get_goods_inventory_at_site"], timing=timing,
        condition=lambda s, ctx: ctx.arguments.get("site_id") == base.hub
        and s["goods_inventory"][base.lot]["site_id"] == base.hub,
        mutations=[Mutation(lot + ("site_id",), base.hub, site),
                   Mutation(lot + ("note",), None, f"transferred to {site} by the overnight rebalancing")],
        observable_via="get_goods_inventory_at_site")


def _van_moved(base: Base, overdue: str | None) -> Trigger:
    """Right after the agent reads the van, it is moved to the city depot (with its unit overdue for reset, if given)."""
    van = ("vehicles", base.vehicle)
    unit_id = base.state["vehicles"][base.vehicle]["cooling_unit_id"]
    unit = base.state["cooling_units"][unit_id]
    why = "its cooling unit is overdue for a defrost reset" if overdue else "a door-seal inspection"
    changes = [Mutation(van + ("site_id",), base.hub, base.depot2),
               Mutation(van + ("note",), None, f"moved to {base.depot2} for {why}")]
    if overdue:
        changes += [Mutation(("cooling_units", unit_id, "status"), "operational", "reset_required"),
                    Mutation(("cooling_units", unit_id, "reset_due_by"), unit["reset_due_by"], overdue)]
    return Trigger(
        name="van_relocated", description=f"{base.vehicle} is moved to {base.depot2} for {why}",
        activation=["get_vehicle_status"], timing="after",
        condition=lambda s, ctx: ctx.arguments.get("vehicle_id") == base.vehicle
        and s["vehicles"][base.vehicle]["site_id"] == base.hub,
        mutations=changes, observable_via="get_vehicle_status")


def build(rng: np.random.Generator, level: str) -> Task:
    base = build_base(rng)
    reads = survey(base)
    nominal = reads + deliver(base.lot, base.hub, base.clinic, base.qty, base.vehicle, [base.hub, base.clinic])
    city = [base.hub2, base.clinic]
    recheck = nominal[:7] + [Call(name="get_vehicle_status", arguments={"vehicle_id": base.vehicle}),
                             Call(name="cancel_shipment", arguments={"shipment_id": shipment()}),
                             Call(name="get_goods_inventory_at_site", arguments={"site_id": base.hub2})]

    if level == "easy":
        triggers = [_lot_moved(base, base.depot1, "after")]
        oracle = reads + [Call(name="get_goods_inventory_at_site", arguments={"site_id": base.depot1})] + deliver(
            base.lot, base.depot1, base.clinic, base.qty, base.vehicle, [base.depot1, base.clinic])
    elif level == "medium":
        triggers = [_van_moved(base, None)]
        oracle = recheck + deliver(base.lot2, base.hub2, base.clinic, base.qty, base.vehicle, city)
        arrivals = [base.eta(nominal), base.eta(oracle, parked=base.depot2)]
    elif level == "hard":
        triggers = [_van_moved(base, plus(at(base, reads), -int(rng.integers(2, 9)) * 5))]
        unit_id = base.state["vehicles"][base.vehicle]["cooling_unit_id"]
        service = recheck + [Call(name="get_cooling_unit_status", arguments={"cooling_unit_id": unit_id}),
                             Call(name="list_depot_maintenance_schedule", arguments={"depot_id": base.depot2})]
        window = base.add_reset_window(base.depot2, ceil5(plus(at(base, service), int(rng.integers(1, 4)) * 5)),
                                       int(rng.integers(6, 9)) * 5)
        oracle = service + [Call(name="schedule_cooling_unit_reset", arguments={"cooling_unit_id": unit_id,
                                                                                "reset_window_id": window}),
                            Call(name="record_cooling_unit_reset", arguments={"reset_window_id": window,
                                                                              "action": "completed"})]
        oracle += deliver(base.lot2, base.hub2, base.clinic, base.qty, base.vehicle, city)
        base.state["vehicles"][base.vehicle2]["available_from"] = plus(base.start, 60 * 8)  # out on a long run
        # The van leaves the city depot only once its reset window ends.
        arrivals = [base.eta(nominal), base.eta(oracle, ready=base.state["cooling_unit_resets"][window]["end"],
                                                parked=base.depot2)]
    else:
        triggers = [_lot_moved(base, base.clinic3, "before")]
        closed = base.state["clinics"][base.clinic3]
        closed.update(status="closed", notice="Closed today for refurbishment")
        base.state["goods_inventory"][base.lot2]["quantity"] = base.qty - int(rng.integers(2, base.qty // 50 + 1)) * 50 + 50
        oracle = reads + [Call(name="list_operational_hours", arguments={"site_id": base.clinic3}),
                          Call(name="get_goods_inventory_at_site", arguments={"site_id": base.hub2})]
    if level in ("easy", "impossible"):
        arrivals = [base.eta(nominal), base.eta(oracle) if level == "easy" else base.start]
    base.settle_session(*arrivals)

    return make_task(
        base, level, triggers=triggers, nominal=nominal, oracle=oracle,
        query=f"Please ship {base.qty} doses of {base.product} from lot {base.lot} at {base.hub} to {base.clinic} for "
              f"session {base.session} on {base.session_start[:10]} at {hhmm(base.session_start)}. Our van "
              f"{base.vehicle} is reserved for this run at {base.hub}; register the receipt when the doses arrive.",
        vehicle_note=f"{base.vehicle} is reserved for us; another van holding {base.band[0]} to {base.band[1]} "
                     "degrees C would be fine too.",
        insist=f"All {base.qty} doses, no fewer, have to reach {base.clinic} before {hhmm(base.session_start)} today.",
        refusal=f"I cannot ship the {base.qty} doses: lot {base.lot} was transferred to {base.clinic3}, which is "
                f"closed today, and {base.hub2} holds only {base.state['goods_inventory'][base.lot2]['quantity']} "
                "doses, which is short of what you need.",
        blocking=["closed", "short"],
        forbidden=[none_sent("no_partial_delivery", "no short delivery was sent to the clinic", base, (base.clinic,)),
                   no_dangling(set())])
