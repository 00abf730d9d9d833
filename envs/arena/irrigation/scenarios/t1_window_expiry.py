"""T1 Window Expiry: a heat advisory pulls the morning watering window forward while the run is being set up.

The agent schedules the block's run for this morning. As it does, the district issues a heat advisory:
the block's morning window now ends earlier (visible in ``get_segment``: the new window end, and the run
reads blocked). Easy: the evening window still stands; the stale run is cancelled and the block rescheduled
at the evening window's start. Medium: the advisory suspends the evening window as well; at the requested flow
the run no longer ends in time, so it is rescheduled at the path's maximum flow (read from the network path),
which just fits. Hard: the manager asked for two blocks one after the other from the same pump; the second no
longer fits, so it runs at the same time from the neighbouring pump house over the bypass main, which must be
opened. Impossible: the window now closes before any run could deliver the need and the evening window is
suspended: the oracle cancels the stale run and tells the manager, naming the advisory.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.clock import ceil_to, floor_to
from sttgym.envs.arena.irrigation.generator import Author, Task, describe, iso, make_task, new_farm, new_job


def build(author: Author, level: str) -> Task:
    farm = new_farm(author)
    a, pred = author, author.pred
    job = new_job(farm, flow=10 * author.integer(5, 6) if level == "medium" else 0)
    seg, advisory = job.seg, f"HA-{a.serial(1000, 9999)}"
    two = level == "hard"
    other = farm.segs[0][1]
    segs = [seg, other] if two else [seg]
    farm.state["segments"][seg]["windows"][0]["end"] = max(
        farm.state["segments"][seg]["windows"][0]["end"], ceil_to(job.end(), 30))
    evening = farm.state["segments"][seg]["windows"][1]
    plan = job.nominal()
    if two:
        farm.state["segments"][other]["need_m3"] = job.need
        plan = plan.then(second=[job.read(other), job.schedule(job.end(), seg=other, step="run1")])
        morning_end = iso(datetime.fromisoformat(job.end(job.end())) + timedelta(minutes=20))
        for s in segs:
            farm.state["segments"][s]["windows"][0]["end"] = morning_end
    look = plan["look"]
    fired_at = farm.time_after(look + plan["commit"])
    if level == "easy":
        cut = floor_to(iso(datetime.fromisoformat(job.start) + timedelta(minutes=job.minutes() // 2)), 5)
    elif level == "medium":
        maxflow = farm.state["valves"][farm.field_valve(seg)]["max_flow"]
        cut = ceil_to(job.end(flow=maxflow), 5)
        assert cut < job.end(), "the higher flow must be what fits"
    elif level == "hard":
        cut = ceil_to(job.end(), 5)
    else:
        cut = ceil_to(iso(fired_at + timedelta(minutes=20)), 5)
    notice = f"Heat advisory {advisory}: morning watering ends {cut[11:]}" + (
        "" if level == "easy" else "; evening window suspended today")
    effect = []
    for s in segs:
        windows = [{"start": farm.state["segments"][s]["windows"][0]["start"], "end": cut}]
        if level == "easy":
            windows.append(evening)
        effect += farm.sets("segments", s, windows=windows, note=notice)
    triggers = [farm.on_write("heat_advisory", f"heat advisory {advisory} moves the morning window end to {cut}",
                              "schedule_run", effect, ("get_segment", {"segment_id": seg}),
                              when=pred.has_run(segment_id=seg))]
    stale = plan.upto("commit")
    if level == "easy":
        oracle = stale + [job.read(), job.cancel(), job.schedule(evening["start"], step="run1")]
    elif level == "medium":
        oracle = stale + [job.read(), job.cancel(), job.path(flow=0), job.pump_read(),
                          a.call.get_valve(valve_id=farm.field_valve(seg)),
                          job.schedule(flow=maxflow, step="run1")]
    elif level == "hard":
        bypass, pump1 = farm.bypass[0], farm.pumps[1]
        farm.state["pumps"][farm.pumps[0]]["capacity"] = job.flow + 10 * a.integer(0, 2)
        oracle = stale + [job.read(), job.read(other), a.call.list_pumps(), job.pump_read(pump1),
                          job.path(pump1, other, 0), a.call.get_valve(valve_id=bypass),
                          a.call.open_valve(valve_id=bypass), job.schedule(pump=pump1, seg=other, step="run2"),
                          job.read(other)]
    else:
        oracle = stale + [job.read(), job.path(flow=0), job.cancel()] + job.refuse(
            f"the block {seg} cannot be watered today: heat advisory {advisory} ends the morning window at "
            f"{cut[11:]} and suspends the evening window, and no run can deliver {job.need} m3 before then.",
            ["heat_advisory"], [advisory, cut[11:], "heat advisory", "evening window suspended"])
    farm.run(oracle, triggers)
    what = describe(job)
    if two:
        what += f", then segment {other} ({job.need} m3) from the same pump at {job.flow} m3/h starting {job.end()}"
    query = (f"Good morning, this is the farm manager. Please schedule {what}. The crop needs its water today.")
    return make_task(job, query, triggers, plan, oracle, "watering before the heat", level, {
        ("advisory", "heat", "evening", "window"): "Whatever the weather service allows is fine, as long as the "
        "block gets its water today."}, insist=job.insist("today"), segs=segs,
        kept=(seg,) if two else ())
