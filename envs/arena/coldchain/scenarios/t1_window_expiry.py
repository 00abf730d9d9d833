"""T1 Window Expiry: the hub's provisional allocation of the user's doses lapses before it is used.

The user holds a provisional allocation (a ``held`` shipment with a ``hold_expires`` time) at the
regional hub. The hub cuts the hold short for a priority order; the world lapses a hold once the
clock passes its expiry, and a waitlisted order then takes the stock it freed.

- easy: the hold is cut while the agent is still reading; the lot still has free doses, so a fresh
  shipment from the same lot replaces the lapsed one.
- medium: the cut is announced as the hold is loaded but only bites minutes later, after the hold was
  routed; the waitlisted order takes the regional stock, so the lapsed hold must be cancelled and the
  doses sourced at the city hub instead (the van drives there).
- hard: as medium, but the detour to the city hub runs the van past its cooling unit's reset time;
  the city hub's own van has to carry the doses.
- impossible: the hold lapses, the waitlisted order takes the regional stock, and the only other lot
  expires before the session.
"""

from __future__ import annotations

from sttgym.authoring import Author, Plan
from sttgym.envs.arena.coldchain.generator import (arrival, build_base, calls, deliver, fields, floor5, from_city, hhmm,
                                                   ladder, minutes, on_write, plus, survey, task, trigger, unshipped)
from sttgym.task import Task


def build(author: Author, level: str) -> Task:
    r = build_base(author)
    call, pred, op = author.call, author.pred, author.op
    hold, order = f"SHP-{author.serial()}", f"SHP-{author.serial()}"
    shipments = r.state["shipments"]
    shipments[hold] = {"goods_id": r.lot, "product": r.product, "quantity": r.qty, "origin_site_id": r.hub,
                       "destination_site_id": r.clinic, "status": "held", "vehicle_id": None,
                       "hold_expires": plus(r.start, 60 * author.integer(5, 7)), "created_at": plus(r.start, -900),
                       "dispatched_at": None, "received_at": None}
    read_hold = call.get_shipment_journey_status(shipment_id=hold)
    plan = Plan(read=survey(r, first=read_hold),
                assign=[call.assign_shipment_to_vehicle(shipment_id=hold, vehicle_id=r.vehicle)],
                route=[call.add_or_update_route_plan(vehicle_id=r.vehicle, route_plan=[r.hub, r.clinic])],
                go=[call.update_vehicle_status(vehicle_id=r.vehicle, status="in_transit")],
                receive=[call.register_goods_receipt(shipment_id=hold, site_id=r.clinic)])
    expires, seen = ["shipments", hold, "hold_expires"], {"seen_by": read_hold.name, "seen_with": read_hold.arguments}
    if level in ("easy", "impossible"):  # cut while the agent still reads: lapsed before anything is loaded
        cut = r.early()
        triggers = [trigger(r, "hold_cut", f"the hub cuts hold {hold} to {hhmm(cut)} for a priority order",
                            when=pred.time_reached(moment=cut), effect=[op.set_field(path=expires, value=cut)], **seen)]
    else:  # announced as the hold is loaded, it bites before the van can leave
        cut = ""
        triggers = [trigger(r, "hold_cut", f"as {hold} is loaded the hub shortens it for a priority order",
                            **on_write(r, "assign_shipment_to_vehicle", shipment_id=hold),
                            effect=[op.set_time_from_now(path=expires, minutes=author.integer(1, 4))], **seen)]
    ignore = []
    if level != "easy":  # another clinic's order waits for the regional lot and takes it the moment the hold lapses
        left = author.integer(0, r.qty // 50 - 1) * 50
        shipments[order] = {**shipments[hold], "quantity": r.state["goods_inventory"][r.lot]["quantity"] - left,
                            "destination_site_id": r.clinic3, "status": "waitlisted", "hold_expires": None}
        ignore = [order]
        triggers.append(trigger(r, "waitlist_served", f"the lapse frees lot {r.lot} and order {order} takes it",
                                when=pred.hold_lapsed(shipment_id=hold), effect=fields(r, ["shipments", order],
                                                                                       status="created"),
                                seen_by="get_goods_inventory_at_site", seen_with={"site_id": r.hub}))

    recheck = [read_hold, call.get_goods_inventory_at_site(site_id=r.hub)]
    unwind = plan.upto("route") + recheck + [call.cancel_shipment(shipment_id=hold)]
    # What the recovery ships, by level: a fresh shipment of the lot, or the city hub's lot (in the user's van,
    # or in the city hub's own when the user's van would be due a defrost on the way).
    alternative = {"easy": {"goods_id": r.lot, "origin_site_id": r.hub},
                   "medium": {"goods_id": r.lot2, "origin_site_id": r.hub2},
                   "hard": {"goods_id": r.lot2, "vehicle_id": r.vehicle2}}.get(level, {})
    milestones = ladder(r, level, "hold_cut", f"a fresh shipment of {r.lot} replaced the lapsed hold", **alternative,
                        stale=pred.field_equals(path=["shipments", hold, "status"], value="cancelled"))
    if level == "easy":
        oracle = plan["read"] + recheck + calls(deliver(r, r.lot, r.hub, r.vehicle, [r.hub, r.clinic]))
    elif level == "medium":
        oracle = unwind + from_city(r, r.vehicle)
    elif level == "hard":
        unit = r.unit_of(r.vehicle)
        oracle = unwind + from_city(r, r.vehicle2, [call.get_cooling_unit_status(cooling_unit_id=unit)])
        # The user's van would make the direct run but not the detour through the city before its defrost is due.
        direct = arrival(r.run(plan.calls), r.clinic)
        detour = arrival(r.run(unwind + from_city(r, r.vehicle), triggers), r.clinic)
        due = plus(direct, minutes(direct, detour) * author.integer(3, 7) // 10)
        r.state["cooling_units"][unit]["reset_due_by"] = floor5(due)
    else:
        oracle = plan["read"] + recheck + [call.list_lots(product=r.product)]

    start = r.settle_after(level, plan, oracle, triggers)
    if level == "impossible":
        r.state["goods_inventory"][r.lot2]["use_by"] = floor5(plus(start, -author.integer(4, 11) * 10))
    return task(
        r, level, triggers=triggers, plan=plan, oracle=oracle, milestones=milestones, ignore=ignore,
        query=f"Hold {hold} reserves {r.qty} doses of {r.product} (lot {r.lot}) at {r.hub} for session {r.session} at "
              f"{r.clinic}, which starts on {start[:10]} at {hhmm(start)}. Please load the hold onto our van "
              f"{r.vehicle}, get it to the clinic and register the receipt when it arrives.",
        insist=f"No. We need all {r.qty} usable doses at {r.clinic} before {hhmm(start)}; there is no other date or "
               "product.",
        refusal=f"I can't get {r.qty} usable doses to {r.clinic} in time: hold {hold} was cut to {hhmm(cut or start)} "
                f"and lapsed, the rest of lot {r.lot} went to a waitlisted order, and lot {r.lot2} at {r.hub2} is "
                f"only usable until {hhmm(r.state['goods_inventory'][r.lot2]['use_by'])}, before the session starts.",
        blocking=[hhmm(cut)] if level == "impossible" else [],
        forbidden=[unshipped(r, [r.lot2], "no_expiring_lot_shipped", "expires before the session")])
