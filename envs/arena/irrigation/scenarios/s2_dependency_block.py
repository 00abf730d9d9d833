"""S2 Dependency Block: the field's main valve turns faulty and every block downstream of it goes dry.

The agent schedules the block's run. As it does, the main valve between the pump house and the field's header
reports a fault (visible in ``get_segment``: the run reads blocked on the faulty valve; ``get_valve`` shows the
fault). Easy: a spare main runs parallel to it; it is opened and the run rescheduled along it. Medium: there is
no spare, so the block is fed from the neighbouring pump house over the bypass main, which is opened; the
bypass carries less, so the run goes at its maximum flow. Hard: the manager asked for two blocks at once; the
fault blocks both and the bypass carries one run at a time, so both move to the neighbouring pump, one after
the other. Impossible: the bypass main is under repair as well, so nothing reaches the field: the oracle
cancels the stale run and tells the manager, naming the faulty valve.
"""

from __future__ import annotations

from sttgym.clock import ceil_to
from sttgym.envs.arena.irrigation.generator import Author, Task, describe, make_task, new_farm, new_job
from sttgym.task import Ref


def build(author: Author, level: str) -> Task:
    farm = new_farm(author)
    a, pred, st = author, author.pred, farm.state
    job = new_job(farm)
    seg, main, bypass, pump1 = job.seg, farm.mains[0], farm.bypass[0], farm.pumps[1]
    two = level == "hard"
    other = farm.segs[0][1]
    segs = [seg, other] if two else [seg]
    fault = f"fault code E-{a.serial(100, 999)}: actuator jammed"
    if level == "easy":
        spare = farm.valve(farm.houses[0], farm.headers[0], "main", st["valves"][main]["max_flow"],
                           st["valves"][main]["length"] + a.integer(10, 30), "closed", farm.houses[0])
    if level == "medium":
        bmax = st["valves"][bypass]["max_flow"] = job.flow - 10 * a.integer(1, 2)
        st["segments"][seg]["windows"][0]["end"] = max(st["segments"][seg]["windows"][0]["end"],
                                                       ceil_to(job.end(flow=bmax), 30))
    if two:
        st["segments"][other]["need_m3"] = job.need
        st["pumps"][job.pump]["capacity"] = max(st["pumps"][job.pump]["capacity"], 2 * job.flow)
        st["valves"][main]["max_flow"] = max(st["valves"][main]["max_flow"], 2 * job.flow)
        st["valves"][bypass]["max_flow"] = job.flow + 10 * a.integer(0, 2)
        for s in segs:
            st["segments"][s]["windows"][0]["end"] = ceil_to(job.end(job.end()), 30)
    if level == "impossible":
        st["valves"][bypass].update(status="repair", note=f"relining under work order WO-{a.serial(1000, 9999)}")
    plan = job.nominal()
    if two:
        plan = plan.then(second=[job.read(other), job.schedule(seg=other, step="run1")])
    triggers = [farm.on_write("main_faulty", f"main valve {main} to {farm.headers[0]} turns faulty", "schedule_run",
                              farm.sets("valves", main, status="faulty", note=fault),
                              ("get_segment", {"segment_id": seg}), when=pred.has_run(segment_id=segs[-1]))]
    stale = plan.calls
    if level == "easy":
        oracle = stale + [job.read(), job.path(), a.call.open_valve(valve_id=spare), job.cancel(),
                          job.schedule(step="run2")]
    elif level == "medium":
        oracle = stale + [job.read(), a.call.get_valve(valve_id=main), a.call.list_pumps(), job.pump_read(pump1),
                          job.path(pump1, flow=0),
                          job.cancel(), a.call.open_valve(valve_id=bypass), job.schedule(pump=pump1, flow=bmax,
                                                                                          step="run2")]
    elif level == "hard":
        oracle = stale + [job.read(), job.read(other), a.call.list_pumps(), job.path(pump1), job.cancel(),
                          job.cancel("run1"), a.call.open_valve(valve_id=bypass),
                          job.schedule(pump=pump1, step="run2"),
                          job.schedule(Ref(step="run2", path=("data", "end")), pump=pump1, seg=other, step="run3")]
    else:
        oracle = stale + [job.read(), job.path(flow=0), job.cancel()] + job.refuse(
            f"the block {seg} cannot be watered: main valve {main} is faulty ({fault}) and the bypass main {bypass} "
            "is under repair, so no pipe path reaches the field.", ["main_faulty"],
            [main, "faulty", bypass, "under repair"])
    farm.run(oracle, triggers)
    what = describe(job)
    if two:
        what += f", and segment {other} ({job.need} m3) from the same pump at {job.flow} m3/h at the same time"
    query = f"Hello, farm manager. Please schedule {what}."
    return make_task(job, query, triggers, plan, oracle, "running the morning irrigation", level, {
        ("fault", "faulty", "valve", "bypass"): "Use any working path you can find; the field must get its water."},
        insist=job.insist("this morning"), segs=segs)
