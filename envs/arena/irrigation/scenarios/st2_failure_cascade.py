"""ST2 Failure Cascade: the pump station trips, the line pressure falls and the runs on it fail one by one.

The agent schedules the block's run. As it does, the pump feeding it trips (visible in ``list_pumps`` and
``get_pump``: failed; ``read_sensors`` shows the pressure drop; the run reads blocked). Easy: the pump house
has a standby pump; the run is rescheduled on it. Medium: the pressure drop trips the standby pump as well,
so the block must be fed from another pump house: the neighbouring one over the bypass main, or the far one
through both bypass mains, which are opened. Both work; the manager, who asked to be consulted first, knows
that only one of them has water that suits the crop (drawn, told only when asked). Hard: as medium, for two
blocks at once; the bypasses carry one run at a time, so both blocks run from the chosen pump house one after
the other. Impossible: the drop trips every station on the farm: the oracle cancels the stale run and tells
the manager that the pumps have failed.
"""

from __future__ import annotations

from sttgym.clock import ceil_to
from sttgym.envs.arena.irrigation.generator import CONSULT, Author, Task, describe, make_task, new_farm, new_job
from sttgym.task import Ref


def build(author: Author, level: str) -> Task:
    farm = new_farm(author)
    a, pred, st = author, author.pred, farm.state
    job = new_job(farm)
    seg, pump, (b0, b1), (pump1, pump2) = job.seg, job.pump, farm.bypass, farm.pumps[1:]
    two = level == "hard"
    other = farm.segs[0][1]
    segs = [seg, other] if two else [seg]
    trip = f"station {farm.houses[0]} tripped: alarm A-{a.serial(100, 999)}, line pressure 0.4 bar"
    standby = ""
    if level != "impossible":
        standby = f"P-{a.serial(100, 999)}"
        st["pumps"][standby] = {"name": "standby pump", "house": farm.houses[0], "capacity": job.flow + 10 *
                                a.integer(0, 4), "status": "ready", "note": "standby"}
    if level == "medium":
        st["valves"][b0]["max_flow"] = job.flow + 10 * a.integer(0, 2)
    if two:
        st["segments"][other]["need_m3"] = job.need
        st["pumps"][pump]["capacity"] = max(st["pumps"][pump]["capacity"], 2 * job.flow)
        st["valves"][farm.mains[0]]["max_flow"] = max(st["valves"][farm.mains[0]]["max_flow"], 2 * job.flow)
        st["valves"][b0]["max_flow"] = st["valves"][b1]["max_flow"] = job.flow + 10 * a.integer(0, 1)
        for s in segs:
            st["segments"][s]["windows"][0]["end"] = ceil_to(job.end(job.end()), 30)
    if level in ("medium", "hard"):
        farm.far_feed(job.flow)
        source = job.choose_source([pump1, pump2])
    plan = job.nominal()
    if two:
        plan = plan.then(second=[job.read(other), job.schedule(seg=other, step="run1")])
    triggers = [farm.on_write("pump_trip", f"{pump} trips at {farm.houses[0]}", "schedule_run",
                              farm.sets("pumps", pump, status="failed", note=trip), ("list_pumps", {}),
                              when=pred.has_run(segment_id=segs[-1]))]
    drop = f"pressure drop after {pump} tripped"
    spread = {"medium": [standby], "hard": [standby], "impossible": [pump1, pump2]}.get(level, [])
    for i, p in enumerate(spread):
        triggers.append(farm.cascade(f"trip_spreads_{i + 1}", f"the pressure drop trips {p}",
                                     ["pumps", pump, "status"], "failed",
                                     farm.sets("pumps", p, status="failed", note=drop), ("get_pump", {"pump_id": p})))
    stale = plan.calls
    if level == "easy":
        oracle = stale + [a.call.list_pumps(), job.cancel(), job.schedule(pump=standby, step="run2")]
    elif level == "medium":
        oracle = stale + [a.call.list_pumps(), job.pump_read(standby), a.call.read_sensors(segment_id=seg),
                          job.ask_source(), job.path(source), job.cancel(), *job.feed_from(source),
                          job.schedule(pump=source, step="run2")]
    elif level == "hard":
        oracle = stale + [a.call.list_pumps(), job.pump_read(standby), job.read(), job.read(other), job.ask_source(),
                          job.path(source), job.cancel(), job.cancel("run1"), *job.feed_from(source),
                          job.schedule(pump=source, step="run2"),
                          job.schedule(Ref(step="run2", path=("data", "end")), pump=source, seg=other, step="run3")]
    else:
        oracle = stale + [a.call.list_pumps(), job.read(), job.cancel()] + job.refuse(
            f"the block {seg} cannot be watered now: pump {pump} has failed ({trip}) and the pressure drop has "
            f"failed {pump1} and {pump2} as well, so no pump on the farm can run.", ["pump_trip"],
            ["failed", pump, pump1, pump2, "tripped", "pressure drop"])
    farm.run(oracle, triggers)
    what = describe(job)
    if two:
        what += f", and segment {other} ({job.need} m3) from the same pump at {job.flow} m3/h at the same time"
    query = f"Hello, farm manager here. Please schedule {what}." + (CONSULT if job.withheld else "")
    return make_task(job, query, triggers, plan, oracle, "running the morning irrigation", level, {
        ("failed", "trip", "pressure", "standby"): "Use a pump that still works, as long as the water arrives."},
        insist=job.insist("this morning", any_pump=False), segs=segs)
