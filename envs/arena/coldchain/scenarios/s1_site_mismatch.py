"""S1 Site Mismatch: the goods or the reserved van are not where the plan assumes.

- easy: while the agent reads, the records catch up with an overnight rebalancing: the lot now sits in
  the cold room of the depot on the corridor, so the shipment starts there and the van picks it up on
  the way.
- medium: as the shipment is booked, the reserved van is moved to the city depot for an inspection; a
  route from there back to the regional hub arrives hours late, so the shipment is recreated at the
  city hub, next to where the van now is.
- hard: as medium, but the van was moved because its cooling unit is overdue for a defrost reset; the
  city hub's van is out, so the agent books and completes a reset at the city depot first.
- impossible: the lot was transferred to a clinic that is closed today, and the city hub holds too
  few doses.
"""

from __future__ import annotations

from sttgym.authoring import Author
from sttgym.checklist import Check
from sttgym.envs.arena.coldchain.generator import (build_base, calls, ceil5, deliver, fields, gate, ladder, maybe,
                                                   nominal, on_write, plus, task, trigger, unwind)
from sttgym.task import Task


def build(author: Author, level: str) -> Task:
    r = build_base(author)
    call, pred = author.call, author.pred
    plan = nominal(r)
    lots = call.list_lots(product=r.product)
    milestones, blocking, forbidden = [], [], []

    def lot_moved(site: str, why: str):  # the records catch up while the agent reads
        return trigger(r, "lot_relocated", f"the records show lot {r.lot} moved to {site}",
                       when=pred.time_reached(moment=r.early()), seen_by=lots.name, seen_with={},
                       effect=fields(r, ["goods_inventory", r.lot], site_id=site, note=why))

    if level == "easy":
        triggers = [lot_moved(r.depot1, "transferred by the overnight rebalancing")]
        oracle = plan["read"] + [*maybe(r, call.get_goods_inventory_at_site(site_id=r.hub)), lots] + calls(
            deliver(r, r.lot, r.depot1, r.vehicle, [r.depot1, r.clinic]))
        milestones = ladder(r, level, "lot_relocated", f"the shipment was booked out of {r.depot1}, where the lot "
                            "now is", goods_id=r.lot, origin_site_id=r.depot1)
    elif level in ("medium", "hard"):  # the van is moved as the shipment is booked
        unit = r.unit_of(r.vehicle)
        why = "a defrost reset of its overdue cooling unit" if level == "hard" else "a door-seal inspection"
        effect = fields(r, ["vehicles", r.vehicle], site_id=r.depot2, note=f"moved to {r.depot2} for {why}")
        if level == "hard":
            effect += fields(r, ["cooling_units", unit], status="reset_required", reset_due_by=r.start)
        triggers = [trigger(r, "van_relocated", f"{r.vehicle} is moved to {r.depot2} for {why}", effect=effect,
                            **on_write(r, "create_new_shipment", goods_id=r.lot),
                            seen_by="get_vehicle_status", seen_with={"vehicle_id": r.vehicle})]
        oracle = unwind(r, plan, "ship", call.get_vehicle_status(vehicle_id=r.vehicle), then=[lots])
        milestones = ladder(r, level, "van_relocated", goods_id=r.lot2, origin_site_id=r.hub2)
        if level == "hard":  # the city hub's van is out: the relocated van is serviced first
            r.state["vehicles"][r.vehicle2]["available_from"] = plus(r.start, 60 * 8)
            oracle += [*maybe(r, call.list_vehicles_at_site(site_id=r.hub2)),
                       call.get_cooling_unit_status(cooling_unit_id=unit),
                       call.list_depot_maintenance_schedule(depot_id=r.depot2)]
            window = r.add_reset_window(r.depot2, ceil5(plus(r.run(oracle, triggers).end, author.integer(1, 3) * 5)),
                                        author.integer(6, 8) * 5)
            oracle += [call.schedule_cooling_unit_reset(cooling_unit_id=unit, reset_window_id=window),
                       call.record_cooling_unit_reset(reset_window_id=window, action="completed")]
            milestones.insert(1, Check(name="unit_reset", description="the overdue cooling unit was reset before loading",
                                    holds=pred.field_equals(path=["cooling_unit_resets", window, "status"],
                                                            value="completed")))
        oracle += calls(deliver(r, r.lot2, r.hub2, r.vehicle, [r.hub2, r.clinic], tag="city"))
    else:
        r.state["clinics"][r.clinic3].update(status="closed", notice="Closed today for refurbishment")
        r.state["goods_inventory"][r.lot2]["quantity"] = r.qty - author.integer(1, r.qty // 50 - 1) * 50
        triggers = [lot_moved(r.clinic3, f"transferred to {r.clinic3}")]
        oracle = plan["read"] + [lots, call.list_operational_hours(site_id=r.clinic3)]
        blocking = [r.clinic3]
        forbidden = [gate("no_short_delivery", "no short delivery was sent to the clinic",
                          pred.none_sent(product=r.product, sites=[r.clinic]))]
    r.settle_after(level, plan, oracle, triggers)
    return task(
        r, level, triggers=triggers, plan=plan, oracle=oracle, milestones=milestones, blocking=blocking,
        forbidden=forbidden,
        vehicle_note=f"{r.vehicle} is reserved for us; another van holding {r.band[0]} to {r.band[1]} degrees C would "
                     "be fine too.",
        refusal=f"I can't ship the {r.qty} doses: lot {r.lot} was transferred to {r.clinic3}, which is closed today, "
                f"and {r.hub2} holds only {r.state['goods_inventory'][r.lot2]['quantity']} doses, short of what you "
                "need.")
