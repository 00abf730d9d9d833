"""T3 Quota Reset: the district cuts tonight's water allocation; the daily quota starts afresh at midnight.

An evening run is scheduled for a block that may be watered overnight. As it is, the district water board cuts
the farm's allocation for today (visible in ``get_quota``: the new limit and the notice; the run reads blocked,
over the quota). Easy: nothing is left today, so the stale run is cancelled and the block rescheduled at
00:00, when the quota resets, inside the night window. Medium: a little is left today and the night window
ends early: the remainder of today's quota is run tonight and the rest of the need after the reset. Hard: as
medium, but the pump is booked after midnight by another block, so the rest runs from the neighbouring pump
house over the bypass main, which is opened. Impossible: nothing is left today and the block may only be
watered until shortly before midnight: the oracle cancels the stale run and tells the manager.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.clock import ceil_to
from sttgym.envs.arena.irrigation.generator import Author, Task, describe, make_task, new_farm, new_job


def build(author: Author, level: str) -> Task:
    a, pred = author, author.pred
    day = datetime(a.integer(2024, 2025), 1, 1) + timedelta(days=a.integer(120, 250))
    farm = new_farm(a, start=day + timedelta(hours=20, minutes=5 * a.integer(6, 17)), background=False)
    job = new_job(farm, flow=10 * a.integer(8, 9) if level == "hard" else 0)
    seg, st = job.seg, farm.state
    if level == "hard":  # tonight's run ends before midnight, when the other block's run starts
        st["segments"][seg]["need_m3"] = 10 * a.integer(8, 11)
    today, midnight = farm.at(0)[:10], farm.at(0, days=1)
    notice_id = f"DN-{a.serial(1000, 9999)}"
    cut = {"easy": 0, "impossible": 0}.get(level, 10 * a.integer(3, job.need // 20))
    night_end = farm.at(6, days=1)
    if level in ("medium", "hard"):
        night_end = ceil_to(job.end(midnight, volume=job.need - cut), 5)
        assert night_end < job.end(midnight)
    if level == "impossible":
        night_end = job.end()
    farm.windows(seg, (farm.at(19), night_end))
    bypass, pump1 = farm.bypass[0], farm.pumps[1]
    if level == "hard":
        other = farm.segs[0][1]
        farm.windows(other, (farm.at(19), farm.at(6, days=1)))
        bflow = 10 * a.integer(6, 8)
        st["pumps"][job.pump]["capacity"] = bflow + job.flow - 10
        farm.background(other, job.pump, midnight, bflow)
    notice = f"District notice {notice_id}: allocation for {today} cut to {cut} m3"
    plan = job.nominal()
    triggers = [farm.on_write("quota_cut", f"the district cuts the allocation for {today} to {cut} m3",
                              "schedule_run", [farm.set("allocation", "limit", today, value=cut),
                                               farm.set("allocation", "notice", value=notice)],
                              ("get_quota", {}), when=pred.has_run(segment_id=seg))]
    stale = plan.upto("commit")
    quota = a.call.get_quota()
    if level == "easy":
        oracle = stale + [quota, job.cancel(), job.schedule(midnight, step="run1")]
    elif level == "medium":
        oracle = stale + [quota, job.cancel(), quota, job.read(), job.schedule(volume=cut, step="run1"),
                          job.schedule(midnight, step="run2")]
    elif level == "hard":
        oracle = stale + [quota, job.cancel(), quota, job.read(), job.schedule(volume=cut, step="run1"),
                          job.pump_read(), a.call.list_pumps(), job.path(pump1, flow=0),
                          a.call.open_valve(valve_id=bypass), job.schedule(midnight, pump=pump1, step="run2")]
    else:
        oracle = stale + [quota, job.read(), job.cancel()] + job.refuse(
            f"the block {seg} cannot be watered tonight: district notice {notice_id} cut today's allocation to "
            f"{cut} m3, and the quota resets only at 00:00, after the block's window closes at {night_end[11:]}.",
            ["quota_cut"], [notice_id, f"{cut} m3", "allocation", "quota resets"])
    farm.run(oracle, triggers)
    query = (f"Evening, farm manager here. Please schedule {describe(job)} tonight, on permit "
             f"{st['allocation']['permit']}.")
    return make_task(job, query, triggers, plan, oracle, "watering overnight to save water", level, {
        ("quota", "allocation", "midnight", "tomorrow", "split"): "Splitting or running after midnight is fine, "
        "as long as it is inside the block's night window."}, insist=job.insist("tonight"))
