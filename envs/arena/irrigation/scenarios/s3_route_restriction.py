"""S3 Route Restriction: the field's main is closed for repair, leaving a longer detour that carries less.

The agent schedules the block's run. As it does, a burst forces the main from the pump house to the field's
header to close for repair (visible in ``get_segment``: the run reads blocked, the main under repair). Easy:
the bypass main from the neighbouring pump house is already open and carries enough; the run is rescheduled
from that pump. Medium: the bypass is closed and carries much less, so at its flow the run no longer fits the
morning window: the bypass is opened and the block runs in the evening window at the bypass's flow. Hard: the
neighbouring pump is booked all morning, so water comes from the far pump house through both bypass mains,
which are opened, at the lower of their flows. Impossible: the only detour carries so little that no window
left today can hold the run: the oracle cancels the stale run and names the repair order.
"""

from __future__ import annotations

from sttgym.clock import ceil_to
from sttgym.envs.arena.irrigation.generator import Author, Task, describe, make_task, new_farm, new_job


def build(author: Author, level: str) -> Task:
    farm = new_farm(author)
    a, pred, st = author, author.pred, farm.state
    job = new_job(farm)
    seg, main, (b0, b1), (pump1, pump2) = job.seg, farm.mains[0], farm.bypass, farm.pumps[1:]
    order = f"WO-{a.serial(1000, 9999)}"
    windows = st["segments"][seg]["windows"]
    if level == "easy":
        st["valves"][b0].update(status="open", max_flow=job.flow + 10 * a.integer(0, 3))
    elif level == "medium":
        bmax = st["valves"][b0]["max_flow"] = 10 * a.integer(3, 4)
        windows[0]["end"] = ceil_to(job.end(), 5)
        windows[1].update(start=farm.at(17), end=farm.at(23, 30))
        assert windows[0]["end"] < job.end(flow=bmax)
    elif level == "hard":
        bmax = 10 * a.integer(5, 6)
        st["valves"][b0]["max_flow"] = st["valves"][b1]["max_flow"] = bmax
        windows[0]["end"] = ceil_to(job.end(flow=bmax), 30)
        busy = farm.segs[1][0]
        bflow = st["pumps"][pump1]["capacity"] = st["valves"][farm.field_valve(busy)]["max_flow"]
        st["segments"][busy]["windows"] = [{"start": farm.at(4), "end": farm.at(11, 30)}]
        farm.background(busy, pump1, job.start, bflow)
    else:
        st["valves"][b0]["max_flow"] = 20
        del windows[1:]
        windows[0]["end"] = ceil_to(job.end(), 5)
    plan = job.nominal()
    note = f"closed for repair under {order}: burst pipe"
    triggers = [farm.on_write("main_repair", f"main {main} closes for repair under {order}", "schedule_run",
                              farm.sets("valves", main, status="repair", note=note),
                              ("get_segment", {"segment_id": seg}), when=pred.has_run(segment_id=seg))]
    stale = plan.calls
    if level == "easy":
        oracle = stale + [job.read(), a.call.list_pumps(), job.path(pump1), job.cancel(),
                          job.schedule(pump=pump1, step="run1")]
    elif level == "medium":
        oracle = stale + [job.read(), a.call.list_pumps(), job.path(pump1, flow=0), job.cancel(),
                          a.call.open_valve(valve_id=b0), job.schedule(windows[1]["start"], pump=pump1, flow=bmax,
                                                                       step="run1")]
    elif level == "hard":
        oracle = stale + [job.read(), a.call.list_pumps(), job.pump_read(pump1), job.path(pump2, flow=0),
                          a.call.get_valve(valve_id=b1), a.call.get_valve(valve_id=b0),
                          job.cancel(), a.call.open_valve(valve_id=b1), a.call.open_valve(valve_id=b0),
                          job.schedule(pump=pump2, flow=bmax, step="run1")]
    else:
        oracle = stale + [job.read(), a.call.list_pumps(), job.path(pump1, flow=0), job.cancel()] + job.refuse(
            f"the block {seg} cannot be watered today: main {main} is closed for repair under {order}, and the "
            f"only detour, bypass {b0}, carries 20 m3/h, too little to deliver {job.need} m3 before the window "
            f"closes at {windows[0]['end'][11:]}.", ["main_repair"], [order, main, b0, "closed for repair", "20 m3/h"])
    farm.run(oracle, triggers)
    query = f"Hi, farm manager here. Please schedule {describe(job)}."
    return make_task(job, query, triggers, plan, oracle, "keeping the irrigation plan on track", level, {
        ("repair", "detour", "bypass", "evening"): "Any route and any window today is fine, as long as the block "
        "gets its full volume."}, insist=job.insist("today"))
