"""S3 Route Restriction: the corridor into the city closes, blocking the planned route.

The regional hub reaches the clinic fastest along one corridor road; the slower detours run through
the other clinics. Routes keep the roads they were planned on, so a closure invalidates them.

- easy: the corridor closes once the van's route over it is planned, before the van leaves (the route
  shows it); re-planning finds the detour, which still makes the session.
- medium: the corridor closes while the van is on the road, so it cannot arrive; it is recalled,
  re-routed on the detour and sent again.
- hard: as medium, but the detour after the recall would miss the session: the shipment is cancelled
  and the doses go from the city hub instead.
- impossible: once the van's route is planned, a flood closes every road into the clinic.

Any route, usable stock and van that holds the band will do, as long as the doses reach the clinic itself in time.
"""

from sttgym.clock import minutes_between
from sttgym.envs.arena.coldchain.generator import DELIVERED, Author, Task, build_base, maybe

# What closes the corridor under a route over it (the write, the van's status then), and the phase of the stale
# plan that write ends.
CLOSES_ON = {"easy": ("add_or_update_route_plan", "idle", "route"), "medium": ("update_vehicle_status", "in_transit",
                                                                            "go")}
CLOSES_ON["hard"], CLOSES_ON["impossible"] = CLOSES_ON["medium"], CLOSES_ON["easy"]


def build(author: Author, level: str) -> Task:
    r = build_base(author, level)
    call, pred, van = author.call, author.pred, r.vehicle
    details, roads = call.get_route_stop_details(vehicle_id=van), call.list_roads(site_id=r.clinic)
    write, status, phase = CLOSES_ON[level]
    cause = dict(activation=[write], timing="after", when=pred.vehicle_route_uses(
        vehicle_id=van, road_id=r.roads["depot1-clinic"], status=status))
    if level == "impossible":  # a flood shuts every road into the clinic under the planned route
        closed = sorted(rid for rid, road in r.state["roads"].items() if r.clinic in (road["a"], road["b"]))
        why, seen, oracle = "flooding: every road into the clinic is shut", roads, r.respond(roads, phase=phase)
    else:
        closed, why, seen = [r.roads["depot1-clinic"]], "bridge closed after a collision", details
        recall = [call.update_vehicle_status(vehicle_id=van, status="idle")] if status == "in_transit" else []
        again = r.ship(r.lot, r.hub, van, booked=True)[1:]  # re-routed, sent (again) and received
        oracle = r.plan.upto(phase) + [details, *recall, *maybe(r, roads)] + again
    triggers = [r.change("road_closed", f"{', '.join(closed)} closed: {why}", seen,
                         r.set_all("roads", closed, open=False, note=why), **cause)]
    if level == "medium":  # the late registrations come with the closure: topped up on the re-routed van
        oracle = r.recounted(oracle, triggers)
    if level == "hard":  # the detour would be late: the session starts before the re-routed van could arrive
        detour = r.arrival(oracle, triggers)
        oracle = r.recounted(r.respond(details, phase="go", recall=True, then=[r.travel(r.hub)] + r.source()),
                             triggers)
        fast = max(r.arrival(r.plan.calls), r.arrival(oracle, triggers))
        assert r.settle_after(oracle, triggers, slack=(1, max(1, min(6, minutes_between(fast, detour) // 5 - 1)))) < detour, \
            "the re-routed van must miss the session"
    everywhere = [s for c in ("distribution_hubs", "depots", "clinics") for s in r.state[c]]
    return r.task(
        triggers, oracle, milestones=r.ladder("road_closed", unwind=level == "hard"),
        blocking=[*closed, "closed", "flooding"], facts=["Any route is fine as long as the doses arrive in time."],
        insist=r.insist("No other site can run this session."),
        refusal=f"I can't get the doses to {r.clinic}: flooding has closed every road into the clinic "
                f"({', '.join(closed)}), so no vehicle can reach it today.",
        forbidden=[r.none_sent("no_doses_sent_elsewhere", f"no dose of {r.product} was sent to another site instead",
                               DELIVERED, everywhere)])
