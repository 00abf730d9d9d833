"""ST3 Handoff Failure: the first leg runs late and misses its handoff to the second carrier.

The consignment reaches the export terminal on a first-leg carrier's train, due shortly; there the
named truck of a second carrier takes it over for the border leg. As that truck is assigned, the first
leg reports a delay (visible in ``get_consignment``: a later ready time and a note): the truck can no
longer reach the crossing within the booked slot, so the dispatch is refused. Easy: book a later slot
at the same crossing. Medium: the delay also runs past the waiting driver's shift: book a later slot
and hand over to another carrier's truck at the terminal. Hard: as medium, and the planned crossing's
later slots are all held by other forwarders: declare at the second crossing, book there, assign the
other truck, dispatch. Impossible: as at medium, the delay runs past the waiting driver's shift, and a later
slot with another carrier's truck at the terminal would still arrive in time (that much the change shows); but
that truck cannot take the goods (drawn: it carries less than they weigh, or its driver goes off shift before it
could set off), which only reading it shows, and no other truck can carry them.

At hard the recovery also meets a second change (``Job.cascade``): the crossing of the first slot booked
after the change backs up, so that trip would arrive late; nothing refuses it, only the times show it, and
the recovery moves on to another crossing.
"""

from __future__ import annotations

from sttgym.clock import shift

from sttgym.envs.arena.freight.generator import Author, Task, new_job, redrawn


@redrawn
def build(author: Author, level: str) -> Task:
    job = new_job(author)
    first = f"TRN-{author.serial(1000, 9999)}"
    due = shift(job.start, 5 * author.integer(8, 16))
    job.record.update(available_from=due, note=f"arriving on first-leg train {first} at {due}")
    job.state["trucks"][job.truck]["shift_end"] = shift(job.start, hours=15)
    spare = job.add_truck(job.origin, shift_hours=18) if level != "easy" else ""
    plan = job.nominal()
    stale = plan.upto("assign")
    if level != "easy":
        job.state["trucks"][job.truck]["shift_end"] = shift(job.arrival(plan.calls), author.integer(20, 40))
    if level == "hard":
        for s in job.free_slots(job.main, shift(job.slot_start(job.slot), 60)):
            job.state["slots"][s]["status"] = "taken"
    impossible = None
    late = shift(due, 5 * author.integer(30, 48))
    effect = [job.set("consignments", job.cid, "available_from", value=late),
              job.set("consignments", job.cid, "note", value=f"first-leg train {first} delayed: at the terminal "
                      f"from {late}")]
    triggers = [job.on_write("first_leg_late", f"train {first} is delayed to {late} as the truck is assigned",
                             "assign_truck", effect, ("get_consignment", {"consignment_id": job.cid}))]
    look = [job.read(), job.slots(job.main)]
    if level == "easy":
        oracle = job.working(lambda s: stale + look + [job.book(s), job.go()], job.main, triggers)[1]
    elif level in ("medium", "impossible"):
        look += [job.trucks(job.origin), job.truck_read(job.truck)]
        oracle = job.working(lambda s: stale + look + [job.book(s), job.assign(spare), job.go()], job.main,
                             triggers)[1]
    elif level == "hard":
        look += [job.trucks(job.origin), job.crossings_list(), job.crossing(job.second), job.slots(job.second)]
        oracle = job.working(lambda s: stale + look + [job.declare(job.second), job.book(s), job.assign(spare),
                                                       job.go()], job.second, triggers)[1]
    if level == "impossible":  # as at medium, the other truck would do: its fault is what rules it out
        job.settle(oracle, triggers, plan.calls)
        named = job.state["trucks"][job.truck]["shift_end"]
        why, others = job.unfit(spare, ("small", "shift")[author.integer(0, 1)], shift(late, 20))
        job.no_way([job.assign(job.truck)], triggers)
        said, impossible = job.refuse(
            f"{job.cid} cannot arrive in time: first-leg train {first} is delayed and reaches {job.origin} only at "
            f"{late[11:]}, so the driver of {job.truck}, who goes off shift at {named[11:]}, can no longer get it "
            f"across; of the other trucks at {job.origin}, {why}, and no other truck can carry it.",
            ["first_leg_late"], [late, named, "train delayed"],
            # the booked truck's shift is what the change runs into: only the other truck's fault names why it fails
            [f for f in others if "shift" not in f] + ["other truck", "also off shift", "other driver", why])
        oracle = stale + look + [job.truck_read(spare)] + said
    else:
        more = []
        if level == "hard":  # the recovery meets a second change (Job.cascade)
            oracle, triggers, more = job.cascade(oracle, triggers, plan.calls)
        job.settle(oracle, triggers, plan.calls, alternatives=more)
    query = job.request(f"Hello, {job.record['shipper']} here; the goods come in on train {first}.")
    return job.task(query, triggers, plan, oracle, "coordinating a rail-to-road handoff",
                    "The consignee's warehouse closes after that.", impossible,
                    {("train", "delay", "late", "handoff", "carrier"): "Hand it to any carrier that can make it."},
                    moves=level)
