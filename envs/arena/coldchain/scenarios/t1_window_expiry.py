"""T1 Window Expiry: the hub's provisional allocation of the user's doses lapses before it is used.

The user holds a provisional allocation (a ``held`` shipment with a ``hold_expires`` time) at the
regional hub. The hub cuts the hold short for a priority order; the world lapses a hold once the
clock passes its expiry, and a waitlisted order then takes the stock it freed.

- easy: the hold is cut while the agent is still reading; the lot still has free doses, so a fresh
  shipment from the same lot replaces the lapsed one.
- medium: the cut is announced as the agent reads the hold but only bites minutes later, after the
  hold was loaded and routed; the waitlisted order takes the regional stock, so the lapsed hold must
  be cancelled and the doses sourced at the city hub instead (the van drives there).
- hard: as medium, but the detour to the city hub runs the van past its cooling unit's reset time;
  the city hub's own van has to carry the doses.
- impossible: the hold lapses, the waitlisted order takes the regional stock, and the only other lot
  expires before the session.
"""

from __future__ import annotations

import numpy as np

from sttgym.envs.arena.coldchain.generator import (Base, at, build_base, deliver, delivery_checks, floor5, hhmm,
                                                   left_alone, load_and_go, make_task, minutes_between, no_dangling,
                                                   plus)
from sttgym.envs.arena.coldchain.world import lapsed
from sttgym.task import Call, Task
from sttgym.triggers import Mutation, Trigger
from sttgym.user import Answer


def _hold(base: Base) -> str:
    hold = f"SHP-{base.serial()}"
    base.state["shipments"][hold] = {
        "goods_id": base.lot, "product": base.product, "quantity": base.qty, "origin_site_id": base.hub,
        "destination_site_id": base.clinic, "status": "held", "vehicle_id": None,
        "hold_expires": plus(base.start, 60 * int(base.rng.integers(5, 8))), "created_at": plus(base.start, -900),
        "dispatched_at": None, "received_at": None}
    return hold


def _waitlist(base: Base) -> str:
    """Another clinic's order waiting for the regional lot; served the moment the hold lapses."""
    lot = base.state["goods_inventory"][base.lot]
    free_after = int(base.rng.integers(0, base.qty // 50)) * 50  # what it leaves: always short of the mission
    order = f"SHP-{base.serial()}"
    base.state["shipments"][order] = {
        "goods_id": base.lot, "product": base.product, "quantity": lot["quantity"] - free_after,
        "origin_site_id": base.hub, "destination_site_id": base.clinic3, "status": "waitlisted", "vehicle_id": None,
        "hold_expires": None, "created_at": plus(base.start, -120), "dispatched_at": None, "received_at": None}
    return order


def _served(hold: str, order: str) -> Trigger:
    return Trigger(
        name="waitlist_served", description=f"the lapse frees the regional lot and waitlisted order {order} takes it",
        activation=[], condition=lambda s, ctx: lapsed(s["shipments"][hold], ctx.now),
        mutations=[Mutation(("shipments", order, "status"), "waitlisted", "created")],
        observable_via="get_goods_inventory_at_site")


def build(rng: np.random.Generator, level: str) -> Task:
    base = build_base(rng)
    hold = _hold(base)
    original = base.state["shipments"][hold]["hold_expires"]
    reads = [Call(name="get_shipment_journey_status", arguments={"shipment_id": hold}),
             Call(name="list_clinic_immunization_schedule", arguments={"site_id": base.clinic}),
             Call(name="list_operational_hours", arguments={"site_id": base.clinic}),
             Call(name="get_vehicle_status", arguments={"vehicle_id": base.vehicle})]
    nominal = reads + load_and_go(hold, base.vehicle, [base.hub, base.clinic], base.clinic)
    recheck = [Call(name="get_shipment_journey_status", arguments={"shipment_id": hold}),
               Call(name="get_goods_inventory_at_site", arguments={"site_id": base.hub})]
    city = [base.hub2, base.clinic]
    background: set[str] = set()

    if level in ("easy", "impossible"):
        cut = plus(at(base, reads[:2]), int(rng.integers(1, 5)))  # lands while the agent is still reading
        triggers = [Trigger(
            name="hold_cut", description=f"the hub cuts hold {hold} to {hhmm(cut)} for a priority order",
            activation=[], condition=lambda s, ctx: ctx.now >= cut,
            mutations=[Mutation(("shipments", hold, "hold_expires"), original, cut)],
            observable_via="get_shipment_journey_status")]
        prefix = reads + recheck
    else:
        cut = plus(at(base, nominal[:5]), int(rng.integers(1, 5)))  # lapses after the hold is loaded, before it leaves
        triggers = [Trigger(
            name="hold_cut", description=f"as the agent first reads hold {hold}, the hub shortens it to {hhmm(cut)}",
            activation=["get_shipment_journey_status"], timing="after",
            condition=lambda s, ctx: ctx.arguments.get("shipment_id") == hold
            and s["shipments"][hold]["hold_expires"] == original,
            mutations=[Mutation(("shipments", hold, "hold_expires"), original, cut)],
            observable_via="get_shipment_journey_status")]
        prefix = nominal[:6] + recheck + [Call(name="get_goods_inventory_at_site", arguments={"site_id": base.hub2}),
                                          Call(name="cancel_shipment", arguments={"shipment_id": hold})]
    if level != "easy":
        order = _waitlist(base)
        background.add(order)
        triggers.append(_served(hold, order))

    if level == "easy":
        oracle = prefix + deliver(base.lot, base.hub, base.clinic, base.qty, base.vehicle, [base.hub, base.clinic])
    elif level == "medium":
        oracle = prefix + deliver(base.lot2, base.hub2, base.clinic, base.qty, base.vehicle, city)
    elif level == "hard":
        unit_id = base.state["vehicles"][base.vehicle]["cooling_unit_id"]
        switch = [Call(name="get_cooling_unit_status", arguments={"cooling_unit_id": unit_id}),
                  Call(name="list_vehicles_at_site", arguments={"site_id": base.hub2})]
        oracle = prefix + switch + deliver(base.lot2, base.hub2, base.clinic, base.qty, base.vehicle2, city)
        # The van's next defrost reset falls after the direct run but before the detour through the city ends.
        direct = base.eta(nominal)
        detour = base.eta(prefix + switch + deliver(base.lot2, base.hub2, base.clinic, base.qty, base.vehicle, city))
        base.unit(base.vehicle)["reset_due_by"] = floor5(plus(direct, minutes_between(direct, detour) // 2))
    else:
        oracle = prefix + [Call(name="get_goods_inventory_at_site", arguments={"site_id": base.hub2})]

    base.settle_session(base.eta(nominal), base.eta(oracle) if level != "impossible" else base.start)
    if level == "impossible":
        lot2 = base.state["goods_inventory"][base.lot2]
        lot2["use_by"] = floor5(plus(base.session_start, -int(rng.integers(4, 12)) * 10))
    return make_task(
        base, level, triggers=triggers, nominal=nominal, oracle=oracle, checks=delivery_checks(base, background),
        query=f"Hold {hold} reserves {base.qty} doses of {base.product} (lot {base.lot}) at {base.hub} for session "
              f"{base.session} at {base.clinic}, which starts on {base.session_start[:10]} at "
              f"{hhmm(base.session_start)}. Please load the hold onto our van {base.vehicle}, get it to the clinic "
              "and register the receipt when it arrives.",
        vehicle_note=f"{base.vehicle} is our usual van; any vehicle that keeps the doses at {base.band[0]} to "
                     f"{base.band[1]} degrees C will do.",
        facts=[f"The allocation hold is {hold}."],
        withheld=[Answer(keywords=["other", "alternative", "elsewhere", "stock", "hub"],
                         text=f"{base.hub2} in the city also stocks {base.product}, if it comes to that.")],
        insist=f"No. We need all {base.qty} usable doses at {base.clinic} before {hhmm(base.session_start)}; there "
               "is no other date or product.",
        refusal=f"I cannot get {base.qty} usable doses to {base.clinic} in time: hold {hold} lapsed, the rest of lot "
                f"{base.lot} went to a waitlisted order, and lot {base.lot2} at {base.hub2} expires (use-by "
                f"{hhmm(base.state['goods_inventory'][base.lot2]['use_by'])}) before the session starts.",
        blocking=["lapsed", "expire", "use-by"],
        forbidden=[left_alone("no_expiring_lot_shipped", [base.lot2]), no_dangling(background)])
