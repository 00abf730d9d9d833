"""T2 Priority Reorder: the farm office puts a seedling block ahead of the run, and it takes the pump.

The agent schedules the block's run. As it does, the farm office inserts a priority run for a block of fresh
seedlings on the same pump; priority runs go first, so the block's run is now over the pump's capacity (visible
in ``get_pump``: the priority run, and the block's run reads blocked). Easy: the block is rescheduled to start
when the seedlings' run ends, still inside the morning window. Medium: the seedlings fill the pump and the
window ends too soon to wait for them, so
the block is fed at the same time from another pump house: the neighbouring one over the bypass main, or
the far one through both bypass mains, which are opened. Both work; the manager, who asked to be consulted
first, knows that only one of them has water that suits the crop (drawn, told only when asked). Hard: the
manager asked for two blocks side by side on that pump; both are blocked, so both move to the chosen pump
house over the bypasses, one after the other. Impossible: the seedlings' run fills the pump until
the window closes and the bypass main is under repair: the oracle cancels the stale run and says so.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.envs.arena.irrigation.generator import (_SEEDLINGS, CONSULT, Author, Task, describe, iso, make_task,
                                                    new_farm, new_job)
from sttgym.task import Ref


def build(author: Author, level: str) -> Task:
    farm = new_farm(author)
    a, pred = author, author.pred
    job = new_job(farm)
    seg, pump = job.seg, job.pump
    nursery = farm.segs[0][-1]
    two = level == "hard"
    other = farm.segs[0][1] if two else ""
    segs = [seg, other] if two else [seg]
    st = farm.state
    st["segments"][nursery].update(crop=a.pick(_SEEDLINGS), priority="high")
    cap = st["pumps"][pump]["capacity"] = job.flow * (2 if two else 1) + 10 * a.integer(1, 3)
    # The seedlings take what the block's run needs. When the block must move (medium) or cannot be watered
    # (impossible) they take the whole pump, so that no lower flow fits beside them either: the manager accepts
    # any flow, and a playtester kept a medium block on its pump at a lower flow.
    pflow = cap if level in ("medium", "impossible") else cap - job.flow + 10
    st["valves"][farm.field_valve(nursery)]["max_flow"] = max(pflow, st["valves"][farm.field_valve(nursery)]
                                                              ["max_flow"])
    st["valves"][farm.mains[0]]["max_flow"] = 2 * cap
    if level == "hard":  # the seedlings hold the pump past both blocks' runs, so waiting for it is no plan (a
        # playtester waited, and the window still held both)
        st["segments"][nursery]["need_m3"] = max(st["segments"][nursery]["need_m3"],
                                                 -(-pflow * (2 * job.minutes() + 10) // 600) * 10)
    prio = f"RUN-{a.serial(10, 99)}"
    pstart = job.start
    pend = iso(datetime.fromisoformat(pstart) + timedelta(minutes=job.minutes(pflow, st["segments"][nursery]
                                                                              ["need_m3"])))
    bypass, (pump1, pump2) = farm.bypass[0], farm.pumps[1:]
    if level == "hard":
        st["valves"][bypass]["max_flow"] = job.flow + 10 * a.integer(0, 2)
        st["segments"][other]["need_m3"] = job.need
        end = job.end(job.end())
    elif level == "easy":
        end = job.end(pend)
    else:
        end = iso(datetime.fromisoformat(job.end(pend)) - timedelta(minutes=10))
        if level == "impossible":
            end = iso(datetime.fromisoformat(pend) + timedelta(minutes=5))
            st["valves"][bypass].update(status="repair", note=f"work order WO-{a.serial(1000, 9999)}: relining")
    end = max(end, job.end(), pend)
    if level in ("medium", "hard"):
        farm.far_feed(job.flow)
        source = job.choose_source([pump1, pump2])
    for s in [seg, other, nursery] if two else [seg, nursery]:
        st["segments"][s]["windows"] = [{"start": farm.at(4), "end": end}]
    plan = job.nominal()
    if two:
        plan = plan.then(second=[job.read(other), job.schedule(seg=other, step="run1")])
    note = f"priority: {st['segments'][nursery]['crop']} put ahead by the farm office"
    triggers = [farm.on_write("seedlings_first", f"the farm office puts {nursery}'s seedlings ahead on {pump}",
                              "schedule_run", [a.op.priority_run(run_id=prio, segment_id=nursery, pump_id=pump,
                                                                 start=pstart, flow=pflow, note=note)],
                              ("get_pump", {"pump_id": pump}), when=pred.has_run(segment_id=other or seg))]
    stale = plan.upto("commit")
    seen = [job.pump_read(), job.read()] + ([] if level == "easy" else [a.call.list_pumps()])
    if level == "easy":
        oracle = stale + seen + [job.cancel(), job.schedule(pend, step="run2")]
    elif level == "medium":
        oracle = stale + seen + [job.ask_source(), job.cancel(), job.path(source, flow=0), *job.feed_from(source),
                                 job.schedule(pump=source, step="run2")]
    elif level == "hard":
        oracle = plan.calls + seen + [job.read(other), job.ask_source(), job.cancel(), job.cancel("run1"),
                                      job.path(source, flow=0), a.call.get_pump(pump_id=source),
                                      *job.feed_from(source), job.schedule(pump=source, step="run2"),
                                      job.schedule(Ref(step="run2", path=("data", "end")), pump=source, seg=other,
                                                   step="run3")]
    else:
        oracle = stale + seen + [job.path(pump1, flow=0), job.cancel()] + job.refuse(
            f"the block {seg} cannot be watered today: the seedlings' priority run {prio} holds pump {pump} "
            f"until {pend[11:]}, when the window closes, and the bypass main {bypass} is under repair.",
            ["seedlings_first"], [prio, pend[11:], bypass, "priority run", "seedlings", "under repair"])
    farm.run(oracle, triggers)
    what = describe(job)
    if two:
        what += f", and segment {other} ({job.need} m3) from the same pump at {job.flow} m3/h at the same time"
    query = f"Hi, farm manager here. Please schedule {what}." + (CONSULT if job.withheld else "")
    return make_task(job, query, triggers, plan, oracle, "keeping the blocks on their watering plan", level, {
        ("seedlings", "priority", "first"): "The seedlings go first, of course; find another way for my block."},
        insist=job.insist("today", any_pump=False), segs=segs)
