"""T3 Quota Reset: a hub's cold-dispatch quota resets at a shift change that comes before the van loads.

Hubs release refrigerated loads against a per-shift quota, counted at the time a vehicle loads at the
dock; the next shift's slots are already booked by standing orders, so a load that slips past the
shift change has no slot.

- easy: while the agent is still reading, the regional hub's shift change is brought forward to
  minutes from now; the doses leave from the city hub instead.
- medium: the shift change is brought forward as the shipment is booked and lands after the shipment
  was loaded and routed but before the van leaves; the shipment is cancelled and recreated at the
  city hub.
- hard: as medium, but the city hub's shift also ends soon and its own van is back only after it;
  the user's van cannot reach the city dock in time either, so the van from the city depot loads there.
- impossible: the regional hub's shift change comes at once and the city hub has no slot left in
  this shift or the next.
"""

from __future__ import annotations

from sttgym.authoring import Author, Plan
from sttgym.envs.arena.coldchain.generator import (build_base, ceil5, deliver, fields, from_city, hhmm, ladder, maybe,
                                                   on_write, plus, survey, task, trigger, unwind)
from sttgym.task import Task


def build(author: Author, level: str) -> Task:
    r = build_base(author)
    call, pred, op = author.call, author.pred, author.op
    hubs = r.state["distribution_hubs"]
    hours = call.list_operational_hours(site_id=r.hub)
    plan = Plan(read=survey(r) + [hours], **deliver(r, r.lot, r.hub, r.vehicle, [r.hub, r.clinic]))
    loading = r.run(plan.upto("route")).end  # the van is parked at the dock: it loads when dispatched
    hubs[r.hub]["cold_dispatch"] = {"shift_ends": ceil5(plus(loading, author.integer(12, 24) * 5)),
                                    "remaining": author.integer(1, 2), "next_shift_remaining": 0}
    hubs[r.hub2]["cold_dispatch"] = {"shift_ends": ceil5(plus(loading, author.integer(18, 29) * 5)),
                                     "remaining": author.integer(2, 3), "next_shift_remaining": author.integer(1, 2)}
    ends = ["distribution_hubs", r.hub, "cold_dispatch", "shift_ends"]
    notice = fields(r, ["distribution_hubs", r.hub], notice="Staff shortage: shift change brought forward; the next "
                    "shift's cold-dispatch slots are all booked.")
    seen = {"seen_by": hours.name, "seen_with": hours.arguments}
    if level in ("easy", "impossible"):  # posted while the agent still reads
        moment = r.early()
        new_end = plus(moment, author.integer(1, 3))
        triggers = [trigger(r, "shift_change_forward", f"{r.hub}'s shift change moves to {hhmm(new_end)}",
                            when=pred.time_reached(moment=moment), effect=[op.set_field(path=ends, value=new_end),
                                                                          *notice], **seen)]
    else:  # posted as the shipment is booked; it lands before the van can leave
        new_end = ""
        triggers = [trigger(r, "shift_change_forward", f"as the shipment is booked, {r.hub}'s shift change comes "
                            "forward", **on_write(r, "create_new_shipment", origin_site_id=r.hub),
                            effect=[op.set_time_from_now(path=ends, minutes=author.integer(1, 6)), *notice], **seen)]

    city_hours = maybe(r, call.list_operational_hours(site_id=r.hub2))
    van = r.add_vehicle(r.depot2) if level == "hard" else r.vehicle2
    milestones = ladder(r, level, "shift_change_forward", f"the doses were booked out of {r.hub2}, which still has a "
                        "slot", stale={"origin_site_id": r.hub}, origin_site_id=r.hub2, vehicle_id=van)
    if level == "easy":
        oracle = plan["read"] + [hours] + from_city(r, find=city_hours)
    elif level == "medium":
        oracle = unwind(r, plan, "route", hours) + from_city(r, find=city_hours)
    elif level == "hard":  # the city shift ends soon after the depot van docks, and the city hub's van is back later
        oracle = unwind(r, plan, "route", hours) + from_city(
            r, van, city_hours + [call.list_sites(), call.list_vehicles_at_site(site_id=r.depot2)])
        dock = next(s["planned_arrival"] for s in r.run(oracle, triggers).state["route_stops"].values()
                    if s["vehicle_id"] == van and s["site_id"] == r.hub2)
        city_end = ceil5(plus(dock, author.integer(3, 6) * 5))
        hubs[r.hub2]["cold_dispatch"].update(shift_ends=city_end, next_shift_remaining=0)
        r.state["vehicles"][r.vehicle2]["available_from"] = ceil5(plus(city_end, author.integer(2, 5) * 5))
    elif level == "impossible":
        hubs[r.hub2]["cold_dispatch"].update(remaining=0, next_shift_remaining=0)
        oracle = plan["read"] + [hours, call.list_lots(product=r.product), call.list_operational_hours(site_id=r.hub2)]
    start = r.settle_after(level, plan, oracle, triggers)
    return task(
        r, level, triggers=triggers, plan=plan, oracle=oracle, milestones=milestones,
        insist=f"It has to be today's session: {r.qty} doses at {r.clinic} before {hhmm(start)}, nothing else.",
        refusal=f"I can't dispatch the doses today: {r.hub} brought its shift change forward to "
                f"{hhmm(new_end or start)} and its next shift has no cold-dispatch slot, and {r.hub2} has no slot left "
                "this shift or the next.",
        blocking=[hhmm(new_end)] if new_end else [])
