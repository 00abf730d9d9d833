"""ST3 Handoff Failure: the crew sent to unlock the field's main is recalled, so the locked valve stays shut.

The field's main valve was locked out overnight; a crew must unlock it at its pump house before any run. The
agent dispatches the crew at the pump house and schedules the run for after the unlock. As the crew is
dispatched it is recalled to another job, the handoff at the pump house is missed and the valve stays locked
(visible in ``get_valve``: locked again; ``list_crews``: the crew recalled). Easy: a second crew at the same
place unlocks it in time for the planned start. Medium: the only other crew is at another pump house and
arrives later; the run is scheduled for its unlock time. Hard: the manager asked for two blocks; one is fed
now from the neighbouring pump house over the bypass main (opened), the other waits for the late crew's
unlock. Impossible: no other crew is on shift and the bypass is under repair: the oracle cancels nothing
(no run could be scheduled) and tells the manager the crew was recalled.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.clock import ceil_to
from sttgym.envs.arena.irrigation.generator import Author, Task, describe, iso, make_task, new_farm, new_job
from sttgym.geo import shortest_route
from sttgym.task import Ref


def build(author: Author, level: str) -> Task:
    farm = new_farm(author)
    a, pred, st = author, author.pred, farm.state
    main, b0, house, pump1 = farm.mains[0], farm.bypass[0], farm.houses[0], farm.pumps[1]
    st["valves"][main].update(status="locked", note="locked out after the night inspection: unlock on site")
    first = farm.add_crew(house)
    if level == "easy":
        second = farm.add_crew(house)
    elif level in ("medium", "hard"):
        far = sorted(farm.houses[1:], key=lambda h: (shortest_route(st["tracks"], house, h)[0], h))[0]
        second = farm.add_crew(far)
    else:
        second = ""
        st["valves"][b0].update(status="repair", note=f"relining under work order WO-{a.serial(1000, 9999)}")
    unlock = a.call.dispatch_crew(crew_id=first, valve_id=main)
    probe = new_job(farm)
    look = probe.nominal()["look"]  # the nominal plan's reads, which the crew's unlock time follows
    unlocked = farm.run(look + [unlock]).results[-1]["data"]["unlocked_at"]
    start = ceil_to(iso(datetime.fromisoformat(unlocked) + timedelta(minutes=5)), 5)
    job = new_job(farm, flow=probe.flow, start=start)
    seg = job.seg
    two = level == "hard"
    other = farm.segs[0][1]
    segs = [seg, other] if two else [seg]
    if level in ("medium", "hard"):
        for s in segs:
            st["segments"][s]["windows"][0]["end"] = farm.at(11, 30)
    if two:
        st["segments"][other]["need_m3"] = job.need
        st["pumps"][job.pump]["capacity"] = max(st["pumps"][job.pump]["capacity"], 2 * job.flow)
        st["valves"][main]["max_flow"] = max(st["valves"][main]["max_flow"], 2 * job.flow)
        st["valves"][b0]["max_flow"] = job.flow + 10 * a.integer(0, 2)
    plan = job.nominal(unlock)
    if two:
        plan = plan.then(second=[job.read(other), job.schedule(seg=other, step="run1")])
    note = f"recalled to a burst at {farm.houses[2]}: handoff at {house} missed"
    triggers = [farm.on_write("crew_recalled", f"{first} is recalled; {main} stays locked", "dispatch_crew",
                              [a.op.relock_valve(valve_id=main, crew_id=first, note=note)],
                              ("get_valve", {"valve_id": main}),
                              when=pred.field_equals(path=["crews", first, "status"], value="busy"))]
    stale = plan.upto("prepare")
    crews = a.call.list_crews()
    again = a.call.dispatch_crew(save_as="crew2", crew_id=second, valve_id=main) if second else None
    late = Ref(step="crew2", path=("data", "unlocked_at"))
    if level == "easy":
        oracle = stale + [a.call.get_valve(valve_id=main), crews, again, job.schedule(step="run2")]
    elif level == "medium":
        oracle = stale + [a.call.get_valve(valve_id=main), crews, a.call.get_travel_time(from_id=far, to_id=house),
                          again, job.read(), job.schedule(late, step="run2")]
    elif level == "hard":
        oracle = stale + [a.call.get_valve(valve_id=main), crews, again, job.read(), job.read(other),
                          a.call.list_pumps(), job.path(pump1), a.call.open_valve(valve_id=b0),
                          job.schedule(pump=pump1, step="run2"), job.schedule(late, seg=other, step="run3")]
    else:
        oracle = stale + [a.call.get_valve(valve_id=main), crews, job.path(flow=0)] + job.refuse(
            f"the block {seg} cannot be watered: crew {first} was recalled before unlocking main valve {main}, "
            f"which is still locked, no other crew is on shift and the bypass {b0} is under repair.",
            ["crew_recalled"], [first, "recalled", "locked", main, b0, "no other crew"])
    farm.run(oracle, triggers)
    what = describe(job)
    if two:
        what += f", and segment {other} ({job.need} m3) from the same pump at {job.flow} m3/h at the same time"
    query = (f"Morning, farm manager. Main valve {main} at {house} was locked out overnight; please have crew "
             f"{first} unlock it and schedule {what}.")
    return make_task(job, query, triggers, plan, oracle, "restarting irrigation after an inspection", level, {
        ("crew", "recalled", "unlock", "later"): "Any crew is fine, and a later start too, within the window."},
        insist=job.insist("this morning"), segs=segs)
