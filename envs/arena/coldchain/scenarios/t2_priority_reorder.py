"""T2 Priority Reorder: an emergency moves the clinic's deadline earlier, invalidating the planned run.

- easy: while the agent is still reading, the session is pulled earlier for an outbreak response; the
  user's van is still out on another run and would arrive too late, so the idle van parked next to it
  takes the load.
- medium (the paper's worked example): once the van is on the road, an emergency order cuts the
  clinic's receiving hours (a guarded trigger, shown by the clinic's hours); the van can no longer
  arrive in time, so it is recalled, its shipment cancelled, and the doses sent from the city hub.
- hard: as medium, and the same emergency then requisitions the city hub's van; the doses leave
  the city hub in the van from the city depot.
- impossible: the session is pulled so early that no stock anywhere can reach the clinic before it.
"""

from __future__ import annotations

from sttgym.authoring import Author
from sttgym.envs.arena.coldchain.generator import (arrival, build_base, calls, ceil5, deliver, fields, floor5,
                                                   from_city, gate, hhmm, ladder, loaded, maybe, nominal, plus, reacted,
                                                   task, trigger, unwind)
from sttgym.task import Task


def build(author: Author, level: str) -> Task:
    r = build_base(author)
    call, pred = author.call, author.pred
    plan = nominal(r)
    schedule = call.list_clinic_immunization_schedule(site_id=r.clinic)
    late = arrival(r.run(plan.calls), r.clinic)
    r.settle(late)
    milestones, blocking = [], []

    def pull_session(new_start: str):
        """An outbreak response takes the morning: the session moves earlier while the agent still reads."""
        return trigger(r, "session_pulled_earlier", f"session {r.session} moves to {hhmm(new_start)}",
                       when=pred.time_reached(moment=r.early()), seen_by=schedule.name, seen_with=schedule.arguments,
                       effect=fields(r, r.session_path, start=new_start, note="moved earlier: outbreak response first"))

    if level == "easy":
        spare = r.add_vehicle(r.hub)
        oracle = plan["read"] + [schedule, call.list_vehicles_at_site(site_id=r.hub)] + calls(
            deliver(r, r.lot, r.hub, spare, [r.hub, r.clinic]))
        # The user's van is back from its morning run only after the spare one has left.
        r.state["vehicles"][r.vehicle]["available_from"] = ceil5(plus(r.run(oracle).end, author.integer(8, 13) * 5))
        late = arrival(r.run(plan.calls), r.clinic)
        r.settle(late)
        triggers = [pull_session(floor5(plus(late, -5)))]
        assert arrival(r.run(oracle), r.clinic) < floor5(plus(late, -5)), "the spare van must make the new start"
        milestones = [reacted(r, "session_pulled_earlier", loaded(r, vehicle_id=spare),
                              f"the doses were loaded on {spare}, the idle van that can still make it")]
    elif level in ("medium", "hard"):
        # Receiving closes before the van could arrive even had it left without a single read.
        close = hhmm(floor5(plus(arrival(r.run(plan.without("read").calls), r.clinic), -5)))
        hours = call.list_operational_hours(site_id=r.clinic)
        triggers = [trigger(
            r, "receiving_hours_cut", f"an emergency order closes {r.clinic}'s receiving at {close}",
            mode="conditional_guarded", timing="after", when=pred.on_road_to(site_id=r.clinic, product=r.product),
            recovery=pred.planned_to_arrive_by(site_id=r.clinic, product=r.product, deadline=f"{r.start[:11]}{close}"),
            effect=fields(r, ["clinics", r.clinic], notice=f"Emergency order: receiving closes at {close} today") +
            fields(r, ["clinics", r.clinic, "hours"], close=close), seen_by=hours.name, seen_with=hours.arguments)]
        van, find = r.vehicle2, []
        if level == "hard":  # the same emergency takes the city hub's van
            van = r.add_vehicle(r.depot2)
            triggers.append(trigger(
                r, "city_van_requisitioned", f"the emergency order requisitions {r.vehicle2} at {r.hub2}",
                when=pred.field_equals(path=["clinics", r.clinic, "hours", "close"], value=close),
                effect=fields(r, ["vehicles", r.vehicle2], status="reserved", note="requisitioned by emergency order"),
                seen_by="list_vehicles_at_site", seen_with={"site_id": r.hub2}))
            find = [call.list_sites(), call.list_vehicles_at_site(site_id=r.depot2)]
        oracle = unwind(r, plan, "go", hours, recall=True, then=maybe(
            r, call.get_travel_time(origin_site_id=r.hub, destination_site_id=r.clinic))) + from_city(r, van, find)
        assert hhmm(arrival(r.run(oracle, triggers), r.clinic)) <= close, "the city run must beat the new closing"
        milestones = ladder(r, level, "receiving_hours_cut", goods_id=r.lot2, vehicle_id=van,
                            after="city_van_requisitioned" if level == "hard" else None)
    else:  # earlier than the city hub's van could get there had it been loaded at the very start
        fastest = arrival(r.run(calls(deliver(r, r.lot2, r.hub2, r.vehicle2, [r.hub2, r.clinic]))), r.clinic)
        new_start = floor5(plus(fastest, -5))
        triggers, blocking = [pull_session(new_start)], [hhmm(new_start)]
        oracle = plan["read"] + [schedule, call.list_lots(product=r.product),
                                 call.get_travel_time(origin_site_id=r.hub2, destination_site_id=r.clinic)]
    return task(
        r, level, triggers=triggers, plan=plan, oracle=oracle, milestones=milestones, blocking=blocking,
        insist=f"The session cannot move: all {r.qty} doses must be at {r.clinic} before it starts. Please don't send "
               "anything that arrives late.",
        refusal=f"I can't meet session {r.session}: it was moved earlier to {(blocking or [''])[0]}, and even the "
                f"closest stock, at {r.hub2}, cannot be loaded and driven to {r.clinic} before then.",
        forbidden=[gate("no_late_delivery", "nothing was sent that could only arrive after the session",
                        pred.none_sent(product=r.product, sites=[r.clinic]))])
