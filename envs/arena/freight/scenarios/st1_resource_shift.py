"""ST1 Resource Shift: trucks are pulled off the terminal to a peak corridor.

As the named truck is assigned, the carrier's dispatcher pulls trucks to the peak corridor of the
day (order ``PK-nnnn``, visible in ``list_trucks`` for the terminal and ``get_consignment``: the truck
reads reassigned): the dispatch is refused. Easy: only the assigned truck is pulled; another truck at
the terminal takes the load. Medium: every truck at the terminal is pulled; one stands at another
terminal: the consignment is transloaded there by rail shuttle, that truck assigned and a later slot
booked (the shuttle takes time). Hard: the peak corridor also claims the planned crossing's later slots:
transload, declare at the second crossing, book there, assign, dispatch. Impossible: as at medium, every truck
at the terminal is pulled and the two trucks of the other carriers stand at another terminal, where the goods
could be shuttled in time (that much the change shows); but neither can take them, one carrying less than
they weigh and the other's driver going off shift before it could set off (drawn which), which only reading
the trucks shows. There are two trucks, of the two other carriers, and the user asked to be consulted before
a switch (on every level, the impossible one too): their cargo insurance names one of those carriers (drawn,
and shown by no tool) as the only backup haulier, which they say when asked.
"""

from __future__ import annotations

from sttgym.clock import shift

from sttgym.envs.arena.freight.generator import Answer, Author, Consult, Task, new_job, redrawn
from sttgym.envs.arena.freight.world import leg_minutes


@redrawn
def build(author: Author, level: str) -> Task:
    job = new_job(author)
    order = f"PK-{author.serial(1000, 9999)}"
    note = f"pulled to the peak corridor by order {order}"
    other = [t for t in job.terminals if t != job.origin]
    site = other[author.integer(0, len(other) - 1)]
    backups = [c for c in job.carriers if c != job.state["trucks"][job.truck]["carrier"]]
    # one truck of each carrier but the booked truck's, where the replacement must be
    spares = {c: job.add_truck(job.origin if level == "easy" else site, shift_hours=16, carrier=c) for c in backups}
    plan = job.nominal()
    stale = plan.upto("assign")
    if level == "easy":
        effect = [job.set("trucks", job.truck, "status", value="reassigned"),
                  job.set("trucks", job.truck, "consignment", value=None),
                  job.set("trucks", job.truck, "note", value=note),
                  job.set("consignments", job.cid, "truck", value=None)]
    else:
        effect = [author.op.pull_trucks(location=job.origin, note=note)]
    if level == "hard":
        effect.append(author.op.take_slots(crossing_id=job.main, until=shift(job.start, hours=job.slot_hours + 2),
                                           by="", note=f"reserved for peak corridor order {order}"))
    triggers = [job.on_write("peak_corridor", f"order {order} pulls trucks to the peak corridor as one is assigned",
                             "assign_truck", effect, ("list_trucks", {"location": job.origin}))]
    look = [job.read(), job.trucks(job.origin)]
    want, rival = backups if author.chance(0.5) else backups[::-1]
    consult = Consult(
        answer=Answer(keywords=["truck", "trucks", "carrier", "carriers", "haulier", "insurance", "requirement",
                                "require", "prefer", "preference"],
                      text=f"Our cargo insurance names {job.state['carriers'][want]['name']} ({want}) as the only "
                           f"backup haulier: if {job.truck} cannot take the load, the replacement truck must be "
                           "one of theirs."),
        choice=author.pred.carried_by(consignment_id=job.cid, carrier_id=want), topic="carrier",
        label=f"on a truck of {want}, the user's backup haulier",
        request="If that truck falls through, ask me before you switch: I have a requirement about the carrier.")
    impossible = None
    if level == "impossible":  # the user's insurance still names a backup haulier, though neither truck will do
        look += [job.trucks()]
        shuttle = [job.call.transload(consignment_id=job.cid, terminal_id=site), job.slots(job.main)]
        could = [job.working(lambda s: stale + look + shuttle + [job.book(s), job.assign(spares[c]), job.go()],
                             job.main, triggers)[1] for c in backups]  # as at medium, either truck would do
        job.settle(could[0], triggers, plan.calls, alternatives=could[1:])
        gone = shift(job.start, 5 + leg_minutes(job.state, job.origin, site) + 80)  # the soonest either could leave
        faults = ("small", "shift")[::(1, -1)[author.integer(0, 1)]]  # which truck is too small: drawn
        fits = [job.unfit(spares[c], how, gone) for c, how in zip(backups, faults)]
        job.no_way([job.assign(job.truck)], triggers)
        said, impossible = job.refuse(
            f"{job.cid} cannot be moved in time: peak corridor order {order} has pulled every truck at {job.origin}; "
            f"the two trucks of the other carriers wait at {site}, but {fits[0][0]}, and {fits[1][0]}; no other "
            "truck can carry it.", ["peak_corridor"], [order, "peak corridor", "trucks pulled"],
            fits[0][1] + fits[1][1] + ["other truck", f"{fits[0][0]}, and {fits[1][0]}"])
        oracle = stale + look + [job.truck_read(spares[c]) for c in backups] + said
    else:
        names = [job.state["carriers"][c]["name"] for c in backups]
        look += [] if level == "easy" else [job.trucks()]
        look.append(job.tell(f"Peak corridor order {order} has pulled truck {job.truck}. Trucks of {names[0]} and "
                             f"{names[1]} could take the load: which carrier do you require?"))
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
    query = job.request(f"Hi, {job.record['shipper']} dispatch here.")
    return job.task(query, triggers, plan, oracle, "in the week of the harvest peak",
                    "It is harvest week and the buyer won't wait.", impossible,
                    {("peak", "transload", "terminal", "shuttle"): "You may shuttle the goods to another terminal."},
                    consult=consult, moves=level)
