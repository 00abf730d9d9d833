"""ST1 Resource Shift: trucks are pulled off the terminal to a peak corridor.

As the named truck is assigned, the carrier's dispatcher pulls trucks to the peak corridor of the
day (order ``PK-nnnn``, visible in ``list_trucks`` for the terminal and ``get_consignment``: the truck
reads reassigned): the dispatch is refused. Easy: only the assigned truck is pulled; another truck at
the terminal takes the load. Medium: every truck at the terminal is pulled; one stands at another
terminal: the consignment is transloaded there by rail shuttle, that truck assigned and a later slot
booked (the shuttle takes time). Hard: the peak corridor also claims the planned crossing's later slots:
transload, declare at the second crossing, book there, assign, dispatch. Impossible: the order pulls every
truck at every terminal.
"""

from __future__ import annotations

from sttgym.clock import shift

from sttgym.envs.arena.freight.generator import Author, Task, new_job, redrawn


@redrawn
def build(author: Author, level: str) -> Task:
    job = new_job(author)
    order = f"PK-{author.serial(1000, 9999)}"
    note = f"pulled to the peak corridor by order {order}"
    other = [t for t in job.terminals if t != job.origin]
    site = other[author.integer(0, len(other) - 1)]
    spare = job.add_truck(job.origin if level == "easy" else site, shift_hours=16)
    plan = job.nominal()
    stale = plan.upto("assign")
    if level == "easy":
        effect = [job.set("trucks", job.truck, "status", value="reassigned"),
                  job.set("trucks", job.truck, "consignment", value=None),
                  job.set("trucks", job.truck, "note", value=note),
                  job.set("consignments", job.cid, "truck", value=None)]
    else:
        pulled = job.terminals if level == "impossible" else [job.origin]
        effect = [author.op.pull_trucks(location=t, note=note) for t in pulled]
    if level == "hard":
        effect.append(author.op.take_slots(crossing_id=job.main, until=shift(job.start, hours=job.slot_hours + 2),
                                           by="", note=f"reserved for peak corridor order {order}"))
    triggers = [job.on_write("peak_corridor", f"order {order} pulls trucks to the peak corridor as one is assigned",
                             "assign_truck", effect, ("list_trucks", {"location": job.origin}),
                             also=(("get_consignment", {"consignment_id": job.cid}),
                                   ("get_truck", {"truck_id": job.truck})))]
    look = [job.read(), job.trucks(job.origin)]
    impossible = None
    if level == "easy":
        oracle = stale + look + [job.assign(spare), job.go()]
    elif level == "impossible":
        said, impossible = job.refuse(
            f"{job.cid} cannot be moved: peak corridor order {order} has pulled every truck at every terminal "
            f"({', '.join(job.terminals)}), so no truck can collect it.", ["peak_corridor"], [order])
        oracle = stale + look + [job.trucks()] + said
    else:
        look += [job.trucks(), job.call.transload(consignment_id=job.cid, terminal_id=site), job.slots(job.main)]
        alt = job.main
        pre = []
        if level == "hard":
            alt = job.second
            look += [job.crossings_list(), job.crossing(job.second), job.slots(job.second)]
            pre = [job.declare(job.second)]
        oracle = job.working(lambda s: stale + look + pre + [job.book(s), job.assign(spare), job.go()], alt,
                             triggers)[1]
    job.settle([] if impossible else oracle, triggers, plan.calls)
    query = job.request(f"Hi, {job.record['shipper']} dispatch here.")
    return job.task(query, triggers, plan, oracle, "in the week of the harvest peak", impossible,
                    {("truck", "carrier", "peak", "transload", "terminal"): "Any carrier's truck is fine, and you "
                     "may shuttle the goods to another terminal."},
                    insist=f"It must reach {job.record['consignee']} by {job.record['deliver_by']}.")
