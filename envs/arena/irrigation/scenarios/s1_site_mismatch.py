"""S1 Site Mismatch: after maintenance the block is fed through another valve, and the run still names the old one.

The agent schedules the block's run. As it does, the maintenance team finishes re-plumbing the block: its old
field valve is capped off and a new valve feeds it (visible in ``get_segment``: the new field valve, and the
run reads blocked: its valve no longer joins the header to the block). Easy: the new valve hangs off the same
header but carries less flow; the run is rescheduled at the new valve's maximum flow (the window allows it).
Medium: the new valve hangs off the neighbouring field's header, so the block is now fed from that field's
pump. Hard: both blocks the manager asked for were moved to the neighbouring header, whose pump carries one
run at a time: one block runs from it, the other from the original pump over the bypass main, which is opened.
Impossible: the new valve is still being commissioned under a work order until tomorrow, so nothing reaches
the block today: the oracle cancels the stale run and tells the manager.
"""

from __future__ import annotations

from sttgym.clock import ceil_to
from sttgym.envs.arena.irrigation.generator import Author, Task, describe, make_task, new_farm, new_job


def build(author: Author, level: str) -> Task:
    farm = new_farm(author)
    a, pred, st = author, author.pred, farm.state
    job = new_job(farm)
    two = level == "hard"
    other = farm.segs[0][1]
    segs = [job.seg, other] if two else [job.seg]
    order = f"WO-{a.serial(1000, 9999)}"
    header = farm.headers[0] if level == "easy" else farm.headers[1]
    nmax = job.flow - 10 * a.integer(1, 2) if level == "easy" else job.flow + 10 * a.integer(0, 3)
    bypass, pump1 = farm.bypass[0], farm.pumps[1]
    if level == "easy":
        st["segments"][job.seg]["windows"][0]["end"] = ceil_to(job.end(flow=nmax), 30)
    if two:
        st["segments"][other]["need_m3"] = job.need
        st["pumps"][job.pump]["capacity"] = max(st["pumps"][job.pump]["capacity"], 2 * job.flow)
        st["valves"][farm.mains[0]]["max_flow"] = max(st["valves"][farm.mains[0]]["max_flow"], 2 * job.flow)
        st["pumps"][pump1]["capacity"] = job.flow + 10 * a.integer(0, 2)
        st["valves"][bypass]["max_flow"] = job.flow + 10 * a.integer(0, 2)
    effect, new = [], {}
    for s in segs:
        old = farm.field_valve(s)
        vid = new[s] = f"V-{a.serial(100, 999)}"
        status = "repair" if level == "impossible" else "closed"
        effect += farm.sets("valves", old, b=f"CAP-{a.serial(10, 99)}", note=f"capped off under {order}; {s} is "
                            f"now fed by {vid}")
        effect.append(farm.set("valves", vid, value={
            "name": f"field valve {header}-{s}", "a": header, "b": s, "kind": "field", "max_flow": nmax,
            "length": 5, "status": status, "house": farm.houses[farm.headers.index(header)], "unlocked_at": None,
            "note": f"commissioning under {order} until tomorrow" if status == "repair" else f"fitted under {order}"}))
    plan = job.nominal()
    if two:
        plan = plan.then(second=[job.read(other), job.schedule(seg=other, step="run1")])
    triggers = [farm.on_write("valve_remapped", f"maintenance {order} moves {', '.join(segs)} to new field valves",
                              "schedule_run", effect, ("get_segment", {"segment_id": job.seg}),
                              when=pred.has_run(segment_id=segs[-1]))]
    stale = plan.calls
    if level == "easy":
        oracle = stale + [job.read(), job.path(flow=0), job.cancel(), job.schedule(flow=nmax, step="run2")]
    elif level == "medium":
        oracle = stale + [job.read(), a.call.list_valves(node_id=job.seg), a.call.list_pumps(), job.path(pump1),
                          job.cancel(),
                          job.schedule(pump=pump1, step="run2")]
    elif level == "hard":
        oracle = stale + [job.read(), job.read(other), a.call.list_pumps(), job.cancel(), job.cancel("run1"),
                          job.path(pump1), job.pump_read(pump1), job.schedule(pump=pump1, step="run2"),
                          job.path(seg=other, flow=0), a.call.open_valve(valve_id=bypass),
                          job.schedule(seg=other, step="run3")]
    else:
        oracle = stale + [job.read(), job.path(flow=0), job.cancel()] + job.refuse(
            f"the block {job.seg} cannot be watered today: after maintenance {order} it is fed only by the new "
            f"valve {new[job.seg]}, which is being commissioned until tomorrow, and no other valve reaches it.",
            ["valve_remapped"], [new[job.seg], order, "commissioning", "until tomorrow"])
    farm.run(oracle, triggers)
    what = describe(job)
    if two:
        what += f", and segment {other} ({job.need} m3) from the same pump at {job.flow} m3/h at the same time"
    query = f"Morning, farm manager here. Maintenance was on the pipes last night; please schedule {what}."
    return make_task(job, query, triggers, plan, oracle, "getting back to normal after pipe maintenance", level, {
        ("maintenance", "valve", "remap", "new"): "I don't know what the fitters changed; use whatever valve feeds "
        "the block now."}, insist=job.insist("today"), segs=segs)
