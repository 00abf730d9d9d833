"""ST1 Resource Shift: at peak tariff the farm office shifts the pump's capacity to another field.

The agent schedules the block's run. As it does, the farm office moves most of the pump's capacity to another
field for the peak-tariff hours (visible in ``get_pump``: the new capacity and the note; the run reads
blocked, over capacity). Easy: what is left still waters the block inside the window at a lower flow; the run
is rescheduled at the pump's new capacity. Medium: what is left is too little, so the block is fed from the
neighbouring pump house over the bypass main, which is opened. Hard: the neighbouring pump is shifted to the
same field as well, so the far pump house feeds the block through both bypass mains, which are opened, at
their flow. Impossible: both near pumps are reassigned and the far pump house's bypass is under repair: the
oracle cancels the stale run and tells the manager, naming the field that took the capacity.
"""

from __future__ import annotations

from sttgym.clock import ceil_to
from sttgym.envs.arena.irrigation.generator import Author, Task, describe, make_task, new_farm, new_job


def build(author: Author, level: str) -> Task:
    farm = new_farm(author)
    a, pred, st = author, author.pred, farm.state
    job = new_job(farm)
    seg, pump, (b0, b1), (pump1, pump2) = job.seg, job.pump, farm.bypass, farm.pumps[1:]
    taker = farm.fields[2]
    windows = st["segments"][seg]["windows"]
    left = {"easy": job.flow - 10 * a.integer(1, 2), "medium": 10 * a.integer(1, 2)}.get(level, 0)
    if level == "easy":
        windows[0]["end"] = max(windows[0]["end"], ceil_to(job.end(flow=left), 30))
    elif level == "medium":
        st["valves"][b0]["max_flow"] = job.flow + 10 * a.integer(0, 2)
    elif level == "hard":
        bmax = 10 * a.integer(5, 6)
        st["valves"][b0]["max_flow"] = st["valves"][b1]["max_flow"] = bmax
        windows[0]["end"] = ceil_to(job.end(flow=bmax), 30)
    else:
        st["valves"][b1].update(status="repair", note=f"relining under work order WO-{a.serial(1000, 9999)}")
    note = f"peak tariff: capacity shifted to field {taker} until 14:00"
    status = "reassigned" if level == "impossible" else "ready"
    plan = job.nominal()
    triggers = [farm.on_write("capacity_shift", f"{pump}'s capacity is shifted to field {taker}", "schedule_run",
                              farm.sets("pumps", pump, capacity=left, status=status, note=note),
                              ("get_pump", {"pump_id": pump}), when=pred.has_run(segment_id=seg))]
    if level in ("hard", "impossible"):
        triggers.append(farm.cascade("second_shift", f"{pump1} is reassigned to field {taker} too",
                                     ["pumps", pump, "note"], note,
                                     farm.sets("pumps", pump1, status="reassigned", note=note),
                                     ("get_pump", {"pump_id": pump1})))
    stale = plan.calls
    if level == "easy":
        oracle = stale + [job.pump_read(), job.cancel(), job.read(), job.schedule(flow=left, step="run1")]
    elif level == "medium":
        oracle = stale + [job.pump_read(), job.read(), a.call.list_pumps(), job.path(pump1), job.cancel(),
                          a.call.open_valve(valve_id=b0), job.schedule(pump=pump1, step="run1")]
    elif level == "hard":
        oracle = stale + [job.pump_read(), job.read(), a.call.list_pumps(), job.pump_read(pump1),
                          job.path(pump2, flow=0), job.cancel(), a.call.open_valve(valve_id=b1),
                          a.call.open_valve(valve_id=b0), job.schedule(pump=pump2, flow=bmax, step="run1")]
    else:
        oracle = stale + [job.pump_read(), a.call.list_pumps(), job.path(pump2, flow=0), job.cancel()] + job.refuse(
            f"the block {seg} cannot be watered this morning: pumps {pump} and {pump1} are reassigned to field "
            f"{taker} for the peak tariff, and bypass {b1} from the far pump house is under repair.",
            ["capacity_shift", "second_shift"], [taker, "reassigned", pump1, b1, "peak tariff", "under repair"])
    farm.run(oracle, triggers)
    query = f"Morning, farm manager. Please schedule {describe(job)}."
    return make_task(job, query, triggers, plan, oracle, "watering while the tariff changes", level, {
        ("tariff", "capacity", "pump", "shift"): "The other field keeps its water; find another way for my block."},
        insist=job.insist("this morning"))
