"""S3 Route Restriction: the corridor into the city closes, blocking the planned route.

The regional hub reaches the clinic fastest along one corridor road; the slower detours run through
the other clinics. Routes keep the roads they were planned on, so a closure invalidates them.

- easy: the corridor closes once the van's route over it is planned, before the van leaves (the route
  shows it); re-planning finds the detour, which still makes the session.
- medium: the corridor closes while the van is on the road, so it cannot arrive; it is recalled,
  re-routed on the detour and sent again.
- hard: as medium, but the detour after the recall would miss the session: the shipment is cancelled
  and the doses go from the city hub instead.
- impossible: a flood closes every road into the clinic.
"""

from __future__ import annotations

from sttgym.authoring import Author
from sttgym.envs.arena.coldchain.generator import (arrival, build_base, fields, from_city, gate, ladder, maybe, minutes,
                                                   nominal, reacted, routed, task, trigger, unwind)
from sttgym.task import Task


def build(author: Author, level: str) -> Task:
    r = build_base(author)
    call, pred = author.call, author.pred
    plan = nominal(r)
    corridor, van = r.roads["depot1-clinic"], r.vehicle
    details = call.get_route_stop_details(vehicle_id=van)
    again = [call.add_or_update_route_plan(vehicle_id=van, route_plan=[r.hub, r.clinic]), *plan["go"], *plan["receive"]]
    recall = call.update_vehicle_status(vehicle_id=van, status="idle")
    milestones, blocking, forbidden, slack = [], [], [], {}

    def closure(roads: list[str], why: str, **when):
        return trigger(r, "road_closed", f"{', '.join(roads)} closed: {why}", **when,
                       effect=[op for road in roads for op in fields(r, ["roads", road], open=False, note=why)])

    if level == "impossible":
        flooded = sorted(rid for rid, road in r.state["roads"].items() if r.clinic in (road["a"], road["b"]))
        triggers = [closure(flooded, "flooding: every road into the clinic is shut", when=pred.time_reached(
            moment=r.early()), seen_by="list_roads", seen_with={"site_id": r.clinic})]
        oracle, blocking = plan["read"] + [call.list_roads(site_id=r.clinic)], flooded
        everywhere = [s for c in ("distribution_hubs", "depots", "clinics") for s in r.state[c]]
        forbidden = [gate("no_doses_sent_elsewhere", f"no dose of {r.product} was sent to another site instead",
                          pred.none_sent(product=r.product, sites=everywhere))]
    else:  # easy: closes once the route over it is planned; medium, hard: once the van is on the road over it
        idle = level == "easy"
        write = "add_or_update_route_plan" if idle else "update_vehicle_status"
        triggers = [closure([corridor], "bridge closed after a collision", activation=[write], timing="after",
                            when=pred.vehicle_route_uses(vehicle_id=van, road_id=corridor,
                                                         status="idle" if idle else "in_transit"),
                            seen_by=details.name, seen_with=details.arguments)]
        oracle = plan.upto("route" if idle else "go") + [details, *([] if idle else [recall]),
                                                         *maybe(r, call.list_roads(site_id=r.clinic))] + again
        milestones = [reacted(r, "road_closed", routed(r, goods_id=r.lot, vehicle_id=van),
                              "the van was re-routed on open roads that still reach the clinic in time")]
    if level == "hard":  # the detour would be late: the session starts before the re-routed van could arrive
        detour = arrival(r.run(oracle, triggers), r.clinic)
        oracle = unwind(r, plan, "go", details, recall=True, then=[
            call.get_travel_time(origin_site_id=r.hub, destination_site_id=r.clinic)]) + from_city(r)
        milestones = ladder(r, level, "road_closed", goods_id=r.lot2, vehicle_id=r.vehicle2)
        fast = max(arrival(r.run(plan.calls), r.clinic), arrival(r.run(oracle, triggers), r.clinic))
        slack = {"slack": (1, max(1, min(6, minutes(fast, detour) // 5 - 1)))}
    start = r.settle_after(level, plan, oracle, triggers, **slack)
    assert level != "hard" or start < detour, "the re-routed van must miss the session"
    return task(
        r, level, triggers=triggers, plan=plan, oracle=oracle, milestones=milestones,
        facts=["Any route is fine as long as the doses arrive in time."],
        insist=f"The doses have to reach {r.clinic} itself today; no other site can run this session.",
        refusal=f"I can't get the doses to {r.clinic}: flooding has closed every road into the clinic "
                f"({', '.join(blocking)}), so no vehicle can reach it today.",
        blocking=blocking, forbidden=forbidden)
