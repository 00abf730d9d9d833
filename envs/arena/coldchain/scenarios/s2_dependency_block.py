"""S2 Dependency Block: the regulator revokes a batch release, halting every downstream shipment of it.

Every lot belongs to a manufacturer batch; a lot can only leave a site while its batch is released.

- easy: reading the hub's stock shows the user's lot put on hold; another batch of the same product
  sits at the same hub and ships instead.
- medium: the hold arrives once the lot is already loaded on the van, and halts the dispatch; the hub
  has no other batch, so the shipment is cancelled and the doses come from the city hub.
- hard: the hold covers the whole batch, including the city hub's lot; the only released doses are
  split between a smaller lot at the city hub and one in the city depot's cold room, collected on one run.
- impossible: every lot of the product in the region belongs to the held batch.
"""

from __future__ import annotations

import numpy as np

from sttgym.envs.arena.coldchain.generator import (Base, build_base, deliver, hhmm, left_alone, load_and_go, make_task,
                                                   no_dangling, shipment, survey)
from sttgym.task import Call, Task
from sttgym.triggers import Mutation, Trigger


def _batch_hold(base: Base, lots: list[str], staged: bool) -> Trigger:
    """The batch of ``lots`` goes on hold: when the hub's stock is read, or (``staged``) once a lot is loaded."""
    batch = base.state["goods_inventory"][lots[0]]["batch"]
    if staged:
        activation, condition = [], lambda s, ctx: any(
            sh["goods_id"] == base.lot and sh["status"] == "assigned" for sh in s["shipments"].values())
    else:
        activation, condition = ["get_goods_inventory_at_site"], lambda s, ctx: ctx.arguments.get("site_id") == base.hub
    changes = []
    for lot in lots:
        changes += [Mutation(("goods_inventory", lot, "status"), "available", "on_hold"),
                    Mutation(("goods_inventory", lot, "note"), None, f"batch {batch} release revoked by the regulator")]
    return Trigger(name="batch_release_revoked", description=f"batch {batch} is put on regulatory hold",
                   activation=activation, condition=condition, mutations=changes,
                   observable_via="get_goods_inventory_at_site")


def build(rng: np.random.Generator, level: str) -> Task:
    base = build_base(rng)
    reads = survey(base)
    nominal = reads + deliver(base.lot, base.hub, base.clinic, base.qty, base.vehicle, [base.hub, base.clinic])
    inventory = lambda site: Call(name="get_goods_inventory_at_site", arguments={"site_id": site})  # noqa: E731
    replan = nominal[:7] + [inventory(base.hub), Call(name="cancel_shipment", arguments={"shipment_id": shipment()}),
                            inventory(base.hub2)]
    city = [base.hub2, base.clinic]
    held = [base.lot]

    if level == "easy":
        other = base.add_lot(base.hub, base.qty + int(rng.integers(1, 6)) * 50)
        oracle = reads + deliver(other, base.hub, base.clinic, base.qty, base.vehicle, [base.hub, base.clinic])
    elif level == "medium":
        oracle = replan + deliver(base.lot2, base.hub2, base.clinic, base.qty, base.vehicle2, city)
    elif level == "hard":
        lots = base.state["goods_inventory"]
        lots[base.lot2]["batch"] = lots[base.lot]["batch"]
        held.append(base.lot2)
        part = int(rng.integers(2, base.qty // 50)) * 50
        small = base.add_lot(base.hub2, part)
        rest = base.add_lot(base.depot2, base.qty - part + int(rng.integers(1, 5)) * 50)
        oracle = replan + [inventory(base.depot2)]
        for tag, lot, origin, doses in (("small", small, base.hub2, part), ("rest", rest, base.depot2, base.qty - part)):
            oracle.append(Call(name="create_new_shipment", save_as=tag, arguments={
                "goods_id": lot, "origin_site_id": origin, "destination_site_id": base.clinic, "quantity": doses}))
        first, second = (load_and_go(shipment(t), base.vehicle2, [base.hub2, base.depot2, base.clinic], base.clinic)
                         for t in ("small", "rest"))
        oracle += [first[0], second[0], first[1], first[2], first[3], second[3]]
    else:
        lots = base.state["goods_inventory"]
        lots[base.lot2]["batch"] = lots[base.lot]["batch"]
        held.append(base.lot2)
        oracle = reads + [inventory(base.hub2)]
    triggers = [_batch_hold(base, held, staged=level in ("medium", "hard"))]

    base.settle_session(base.eta(nominal), base.eta(oracle) if level != "impossible" else base.start)
    batch = base.state["goods_inventory"][base.lot]["batch"]
    return make_task(
        base, level, triggers=triggers, nominal=nominal, oracle=oracle,
        query=f"Please ship {base.qty} doses of {base.product} from lot {base.lot} at {base.hub} to {base.clinic} in "
              f"our van {base.vehicle}, for session {base.session} on {base.session_start[:10]} at "
              f"{hhmm(base.session_start)}, and register the receipt at the clinic.",
        vehicle_note=f"{base.vehicle} is ours; any van holding {base.band[0]} to {base.band[1]} degrees C is fine.",
        facts=["Any released batch of the product is acceptable."],
        insist=f"We need {base.qty} doses of {base.product} for today's session, and only released stock may be used.",
        refusal=f"I cannot ship the doses: the regulator put batch {batch} on hold, and every lot of {base.product} "
                f"at {base.hub} and {base.hub2} ({base.lot}, {base.lot2}) belongs to it, so no released stock is left.",
        blocking=["hold", "batch", "release"],
        forbidden=[left_alone("held_lots_untouched", held, "on_hold"), no_dangling(set())])
