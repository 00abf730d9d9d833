"""ST1 Resource Shift: trucks are pulled off the terminal to a peak corridor.

As the named truck is assigned, the carrier's dispatcher pulls trucks to the peak corridor of the
day (order ``PK-nnnn``, visible in ``list_trucks`` for the terminal and ``get_consignment``: the truck
reads reassigned): the dispatch is refused. Easy: only the assigned truck is pulled; another truck at
the terminal takes the load. Medium: every truck at the terminal is pulled; one stands at another
terminal: the consignment is transloaded there by rail shuttle, that truck assigned and a later slot
booked (the shuttle takes time). Hard: the peak corridor also claims the planned crossing's later slots:
transload, declare at the second crossing, book there, assign, dispatch. Impossible: the order pulls every
truck at every terminal. Where a replacement exists there are two, of the two other carriers, and the user
asked to be consulted before a switch: their cargo insurance names one of those carriers (drawn, and shown
by no tool) as the only backup haulier, which they say when asked.
"""

from __future__ import annotations

from sttgym.clock import shift

from sttgym.envs.arena.freight.generator import Answer, Author, Consult, Task, new_job, redrawn


@redrawn
def build(author: Author, level: str) -> Task:
    job = new_job(author)
    order = f"PK-{author.serial(1000, 9999)}"
    note = f"pulled to the peak corridor by order {order}"
    other = [t for t in job.terminals if t != job.origin]
    site = other[author.integer(0, len(other) - 1)]
    if level == "impossible":
        job.add_truck(site, shift_hours=16)  # the order pulls it too
    else:  # one truck of each carrier but the booked truck's, where the replacement must be
        backups = [c for c in job.carriers if c != job.state["trucks"][job.truck]["carrier"]]
        spares = {c: job.add_truck(job.origin if level == "easy" else site, shift_hours=16, carrier=c)
                  for c in backups}
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
    impossible = consult = None
    if level == "impossible":
        said, impossible = job.refuse(
            f"{job.cid} cannot be moved: peak corridor order {order} has pulled every truck at every terminal "
            f"({', '.join(job.terminals)}), so no truck can collect it.", ["peak_corridor"], [order])
        oracle = stale + look + [job.trucks()] + said
        job.settle([], triggers, plan.calls)
    else:
        want, rival = backups if author.chance(0.5) else backups[::-1]
        names = [job.state["carriers"][c]["name"] for c in backups]
        look += [] if level == "easy" else [job.trucks()]
        look.append(job.tell(f"Peak corridor order {order} has pulled truck {job.truck}. Trucks of {names[0]} and "
                             f"{names[1]} could take the load instead: which carrier do you require?"))
        alt, pre = job.main, []
        if level != "easy":
            look += [job.call.transload(consignment_id=job.cid, terminal_id=site), job.slots(job.main)]
        if level == "hard":
            alt = job.second
            look += [job.crossings_list(), job.crossing(job.second), job.slots(job.second)]
            pre = [job.declare(job.second)]

        def recovery(carrier: str) -> list:
            tail = [job.assign(spares[carrier]), job.go()]
            if level == "easy":
                return stale + look + tail
            return job.working(lambda s: stale + look + pre + [job.book(s)] + tail, alt, triggers)[1]

        oracle = recovery(want)
        job.settle(oracle, triggers, plan.calls, alternatives=[recovery(rival)])
        consult = Consult(
            answer=Answer(keywords=["truck", "trucks", "carrier", "carriers", "haulier", "insurance", "requirement",
                                    "require", "prefer", "preference"],
                          text=f"Our cargo insurance names {job.state['carriers'][want]['name']} ({want}) as the only "
                               f"backup haulier: if {job.truck} cannot take the load, the replacement truck must be "
                               "one of theirs."),
            choice=author.pred.carried_by(consignment_id=job.cid, carrier_id=want),
            label=f"on a truck of {want}, the user's backup haulier",
            request="If that truck falls through, ask me before you switch: I have a requirement about the carrier.")
    query = job.request(f"Hi, {job.record['shipper']} dispatch here.")
    return job.task(query, triggers, plan, oracle, "in the week of the harvest peak", impossible,
                    {("truck", "carrier", "peak", "transload", "terminal"): "Any carrier's truck is fine, and you "
                     "may shuttle the goods to another terminal."} if impossible else
                    {("peak", "transload", "terminal", "shuttle"): "You may shuttle the goods to another terminal."},
                    insist=f"It must reach {job.record['consignee']} by {job.record['deliver_by']}.", consult=consult)
