"""ST2 Failure Cascade: the planned crossing's customs system goes down and the failure spreads.

As the truck is assigned, the crossing's customs system fails (outage ``OUT-nnnn``, visible in
``get_crossing`` and ``list_crossings``): every slot before the time it is due back is cancelled, the
consignment's among them, so the dispatch is refused and the truck stands on demurrage. Easy: a short
outage: book the first slot after it at the same crossing and dispatch. Medium: the outage is longer and
the cancelled slot takes the lodged declarations with it (the system lost them): declare again and book
after the outage. Hard: the outage lasts into the next day: the consignment goes by the second crossing,
where diverted traffic has filled the next hours' slots, so the later slot there is past the assigned
driver's shift: declare there, book, assign another truck at the terminal, dispatch. Impossible: the
planned crossing is down until after the deliver-by time (that much the change shows); each other crossing is
shut to the consignment by a standing rule of its own, drawn (the goods banned, a bonded truck required, a
document the consignment lacks, every slot before the deliver-by time held by other forwarders), which only
reading that crossing shows.

At hard the recovery also meets a second change (``Job.cascade``): the crossing of the first slot booked
after the change backs up, so that trip would arrive late; nothing refuses it, only the times show it, and
the recovery moves on to another crossing.
"""

from __future__ import annotations

from sttgym.clock import ceil_to, shift

from sttgym.envs.arena.freight.generator import Author, Task, new_job, redrawn

RULES = ("banned", "bonded", "document", "slots")  # what may shut each other crossing (Job.shut)


@redrawn
def build(author: Author, level: str) -> Task:
    job = new_job(author)
    spare = job.add_truck(job.origin, shift_hours=16) if level == "hard" else ""
    plan = job.nominal()
    stale = plan.upto("assign")
    if level == "hard":
        job.state["trucks"][job.truck]["shift_end"] = shift(job.arrival(plan.calls), author.integer(20, 40))
    outage = f"OUT-{author.serial(1000, 9999)}"
    begin = job.run(stale).end
    if level == "impossible":
        job.settle([], [], plan.calls)
        until = ceil_to(shift(job.record["deliver_by"], 60 * author.integer(2, 5)), 60)
    else:
        hours = {"easy": author.integer(1, 2), "medium": author.integer(2, 4), "hard": 30}[level]
        until = ceil_to(shift(job.slot_start(job.slot), 60 * hours), 60)
    down = [job.main]
    note = f"customs system outage {outage}: no crossings until {until}"
    effect = []
    for x in down:
        effect += [job.set("crossings", x, "status", value="outage"), job.set("crossings", x, "outage_until",
                                                                               value=until),
                   job.set("crossings", x, "notice", value=note),
                   author.op.take_slots(crossing_id=x, until=until, by="", note=note, status="cancelled")]
    if level == "hard":
        effect.append(author.op.take_slots(crossing_id=job.second, until=shift(begin, 60 * author.integer(3, 4)),
                                           by="", note=f"diverted traffic from {job.main}"))
    triggers = [job.on_write("system_outage", f"outage {outage} at {', '.join(down)} as the truck is assigned",
                             "assign_truck", effect, ("get_crossing", {"crossing_id": job.main}))]
    if level == "medium":
        triggers.append(job.author.check_trigger(triggers[0].model_copy(update=dict(
            name="declarations_lost", description=f"the outage loses {job.cid}'s declarations at {job.main}",
            when=author.pred.field_equals(path=["slots", job.slot, "status"], value="cancelled"),
            effect=[author.op.void_declarations(consignment_id=job.cid, crossing_id=job.main,
                                                note=f"lost in outage {outage}; lodge again")],
            activation=[], observable=triggers[0].observable.model_copy(update=dict(
                tool="get_consignment", args={"consignment_id": job.cid}))))))
    look = [job.crossing(job.main), job.read()]
    impossible = None
    if level == "easy":
        look += [job.slots(job.main)]
        oracle = job.working(lambda s: stale + look + [job.book(s), job.go()], job.main, triggers, after=until)[1]
    elif level == "medium":
        look += [job.slots(job.main)]
        oracle = job.working(lambda s: stale + look + [job.declare(job.main), job.book(s), job.go()], job.main,
                             triggers, after=until)[1]
    elif level == "hard":
        look += [job.crossings_list(), job.crossing(job.second), job.slots(job.second), job.trucks(job.origin)]
        oracle = job.working(lambda s: stale + look + [job.declare(job.second), job.book(s), job.assign(spare),
                                                       job.go()], job.second, triggers)[1]
    else:
        others, facts, reads = job.shut_others(RULES)
        job.no_way([job.assign(job.truck)], triggers)
        said, impossible = job.refuse(
            f"{job.cid} cannot arrive in time: customs outage {outage} has shut {job.main} until {until[11:]} on "
            f"{until[:10]}, after the deliver-by time; of the other crossings, {others}.",
            ["system_outage"], [until, outage, "customs outage", "system outage"], facts)
        oracle = stale + look + reads + said
    if not impossible:
        more = []
        if level == "hard":  # the recovery meets a second change (Job.cascade)
            oracle, triggers, more = job.cascade(oracle, triggers, plan.calls)
        job.settle(oracle, triggers, plan.calls, alternatives=more)
    query = job.request(f"Good day, {job.record['shipper']} shipping desk.")
    return job.task(query, triggers, plan, oracle, "paying demurrage by the hour", "We pay demurrage by the hour.",
                    impossible,
                    {("outage", "system", "down", "demurrage"): "Get it across as soon as any crossing allows, as long as it still "
                                                                 "arrives by the deliver-by time."},
                    moves=level)
