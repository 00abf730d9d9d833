"""ST1 Resource Shift: a demand peak pulls refrigerated vans across the region to a vaccination drive.

At set times the dispatch centre pools vans for a mass vaccination drive at another clinic: a pooled
van is reserved there and can carry nothing else.

- easy: while the agent is still reading, the user's van is pooled; the van at the depot on the
  regional side takes the load from the hub instead.
- medium: the pooling of the user's van is announced as the agent reads it and carried out after the
  shipment is loaded and routed; the shipment moves to the depot van, which is routed through the hub.
- hard: as medium, and a second wave then takes the depot van too; with no van left near the regional
  hub, the shipment is cancelled and the city hub ships its own stock in its own van.
- impossible: every van that can hold the product's temperature band is pooled; only vans of the
  wrong temperature class remain.
"""

from __future__ import annotations

import numpy as np

from sttgym.checklist import Check
from sttgym.envs.arena.coldchain.generator import (Base, at, build_base, deliver, hhmm, load_and_go, make_task,
                                                   no_dangling, plus, shipment, survey)
from sttgym.task import Call, Task
from sttgym.triggers import Mutation, Trigger


def _pooled_note(base: Base) -> str:
    return f"pooled for the mass vaccination drive at {base.clinic3}"


def _announce(base: Base, when: str) -> Trigger:
    """Reading the user's van, the dispatch centre books it for the drive from ``when``."""
    return Trigger(
        name="pooling_announced", description=f"{base.vehicle} will be pooled for the drive from {hhmm(when)}",
        activation=["get_vehicle_status"], timing="after",
        condition=lambda s, ctx: ctx.arguments.get("vehicle_id") == base.vehicle,
        mutations=[Mutation(("vehicles", base.vehicle, "note"), None, f"to be {_pooled_note(base)} from {hhmm(when)}")],
        observable_via="get_vehicle_status")


def _pool(base: Base, name: str, vans: list[str], when: str, announced: str | None = None) -> Trigger:
    """At ``when`` the dispatch centre takes ``vans`` to the drive."""
    changes = []
    for van in vans:
        record = base.state["vehicles"][van]
        changes += [Mutation(("vehicles", van, "status"), "idle", "reserved"),
                    Mutation(("vehicles", van, "site_id"), record["site_id"], base.clinic3),
                    Mutation(("vehicles", van, "note"), announced if van == base.vehicle else None, _pooled_note(base))]
    return Trigger(name=name, description=f"{', '.join(vans)} pooled for the drive at {hhmm(when)}",
                   activation=[], condition=lambda s, ctx: ctx.now >= when, mutations=changes,
                   observable_via="list_vehicles_at_site")


def build(rng: np.random.Generator, level: str) -> Task:
    base = build_base(rng)
    reads = survey(base)
    nominal = reads + deliver(base.lot, base.hub, base.clinic, base.qty, base.vehicle, [base.hub, base.clinic])
    look = lambda site: Call(name="list_vehicles_at_site", arguments={"site_id": site})  # noqa: E731
    moved = nominal[:7] + [Call(name="get_vehicle_status", arguments={"vehicle_id": base.vehicle}), look(base.depot1)]

    if level == "easy":
        triggers = [_pool(base, "vans_pooled", [base.vehicle], plus(at(base, reads[:2]), int(rng.integers(1, 5))))]
        oracle = reads + [look(base.hub), look(base.depot1)] + deliver(
            base.lot, base.hub, base.clinic, base.qty, base.vehicle3, [base.hub, base.clinic])
    elif level in ("medium", "hard"):
        first = plus(at(base, nominal[:6]), int(rng.integers(1, 5)))  # after the route is planned, before dispatch
        announcement = f"to be {_pooled_note(base)} from {hhmm(first)}"
        triggers = [_announce(base, first), _pool(base, "vans_pooled", [base.vehicle], first, announcement)]
        if level == "medium":
            oracle = moved + load_and_go(shipment(), base.vehicle3, [base.hub, base.clinic], base.clinic)
        else:
            second = plus(at(base, moved[:-1]), -int(rng.integers(0, 2)))  # by the time the agent looks at the depot
            triggers.append(_pool(base, "second_wave", [base.vehicle3], second))
            oracle = moved + [Call(name="cancel_shipment", arguments={"shipment_id": shipment()}),
                              Call(name="get_goods_inventory_at_site", arguments={"site_id": base.hub2}),
                              look(base.hub2)]
            oracle += deliver(base.lot2, base.hub2, base.clinic, base.qty, base.vehicle2, [base.hub2, base.clinic],
                              tag="city")
    else:
        fitting = [v for v, rec in sorted(base.state["vehicles"].items())
                   if base.state["cooling_units"][rec["cooling_unit_id"]]["min_temp_c"] <= base.band[1]
                   and base.state["cooling_units"][rec["cooling_unit_id"]]["max_temp_c"] >= base.band[0]]
        triggers = [_pool(base, "vans_pooled", fitting, plus(at(base, reads[:2]), int(rng.integers(1, 5))))]
        oracle = reads + [look(base.hub), look(base.hub2), look(base.depot1), look(base.depot2)]

    base.settle_session(base.eta(nominal), base.eta(oracle) if level != "impossible" else base.start)
    return make_task(
        base, level, triggers=triggers, nominal=nominal, oracle=oracle,
        query=f"Please get {base.qty} doses of {base.product} from lot {base.lot} at {base.hub} to {base.clinic} for "
              f"session {base.session} on {base.session_start[:10]} at {hhmm(base.session_start)}. Our van "
              f"{base.vehicle} is parked at the hub; please register the receipt at the clinic.",
        vehicle_note=f"{base.vehicle} is ours, but any van that holds {base.band[0]} to {base.band[1]} degrees C is fine.",
        insist=f"The doses must travel at {base.band[0]} to {base.band[1]} degrees C and be at {base.clinic} for today's "
               "session; nothing else works.",
        refusal=f"I cannot ship the doses: every van that can hold {base.band[0]} to {base.band[1]} degrees C has been "
                f"pooled for the vaccination drive at {base.clinic3}; the vans left would break the cold chain.",
        blocking=["pooled", "drive"],
        forbidden=[Check("no_wrong_temperature_van", "no dose was loaded into a van that cannot hold its band",
                         lambda s, _: not [sh for sh in s["shipments"].values()
                                           if sh["vehicle_id"] and sh["vehicle_id"] not in fitting]),
                   no_dangling(set())])
