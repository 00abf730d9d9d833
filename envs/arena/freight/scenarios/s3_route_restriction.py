"""S3 Route Restriction: a new customs rule closes the planned crossing to the consignment's goods.

The plan is the plain one: declare at the fastest crossing, book its slot, assign the truck, dispatch.
As the truck is assigned, customs publishes a rule (``CR-nnnn``) banning the commodity at that crossing
(visible in ``get_crossing`` and ``check_route``): the dispatch is refused, and re-booking the same
crossing cannot help. Both other crossings would take the goods, but the user asked to be consulted
before a switch: their goods cross only where their customs broker has an office, and they name the broker
only when asked (``get_crossing`` lists each crossing's brokers; the broker works at the planned crossing and
at one other, drawn, and each pair of crossings shares one broker, so no tool tells which without asking).
Easy: that crossing admits the goods: declare there, book its slot, dispatch. Medium: the other crossings
admit them only with a permit from their desks: apply, declare, book, dispatch. Hard: they also want a bonded
truck and the assigned one is not: a bonded truck of another carrier at the terminal takes the load as well.
Impossible: the rule bans the goods at the planned crossing (that much the change shows); each other crossing
is shut to the consignment by a standing rule of its own, drawn (the goods banned under an older rule, a bonded
truck required, a document the consignment lacks, every slot before the deliver-by time held by other
forwarders), which only reading that crossing shows (the user asked to be consulted here too: whether they
have a requirement tells nothing).
"""

from __future__ import annotations

from sttgym.envs.arena.freight.generator import Answer, Author, Consult, Task, new_job, redrawn

RULES = ("banned", "bonded", "document", "slots")  # what may shut each other crossing (Job.shut)


@redrawn
def build(author: Author, level: str) -> Task:
    job = new_job(author)
    g = job.commodity
    rule = f"CR-{author.serial(1000, 9999)}"
    others = [job.second, job.third]
    for x in others if level in ("medium", "hard") else []:
        job.rules(x)["permit_for"].append(g)
    spare = ""
    if level == "hard":
        for x in others:
            job.rules(x)["bonded_for"].append(g)
        spare = job.add_truck(job.origin, bonded=True)
    plan = job.nominal()
    stale = plan.upto("assign")
    closed = [job.main]
    notice = f"customs rule {rule}: no {g} across {job.main}"
    effect = [op for x in closed for op in (job.set("crossings", x, "banned", value=job.rules(x)["banned"] + [g]),
                                            job.set("crossings", x, "notice", value=notice))]
    triggers = [job.on_write("customs_rule", f"customs bans {g} at {', '.join(closed)} as the truck is assigned",
                             "assign_truck", effect, ("get_crossing", {"crossing_id": job.main}))]
    look = [job.crossing(job.main), job.crossings_list(), job.crossing(job.second), job.crossing(job.third)]
    want, other = others if author.chance(0.5) else others[::-1]
    broker = job.share_brokers(job.main, want, other)
    consult = Consult(
        answer=Answer(keywords=["crossing", "crossings", "border", "broker", "requirement", "require", "prefer",
                                "preference"],
                      text=f"We clear through our customs broker, {broker}: the goods have to cross where {broker} "
                           "has an office."),
        choice=author.pred.via(consignment_id=job.cid, crossing_id=want), topic="crossing",
        label=f"through {want}, where the user's broker works",
        request="If it cannot cross there, ask me before you switch: I have a requirement about the crossing.")
    impossible = None
    if level == "impossible":  # the user's broker still matters to them, though no crossing is left
        job.settle([], triggers, plan.calls)
        why, facts, reads = job.shut_others(RULES)
        job.no_way([job.assign(job.truck)], triggers)
        said, impossible = job.refuse(
            f"{job.cid} cannot cross: customs rule {rule} now bans {g} at {job.main}; of the other crossings, "
            f"{why}.", ["customs_rule"], [rule, "customs rule"], facts)
        oracle = stale + look + [r for r in reads if r not in look] + said
    else:
        look.append(job.tell(f"Customs rule {rule} now bans {g} at {job.main}. {job.second} and {job.third} would "
                             "both take it: which crossing do you require?"))
        if level == "hard":
            look += [job.trucks(job.origin), job.truck_read(spare)]

        def recovery(x: str) -> list:
            pre = [job.apply(x)] if level != "easy" else []
            tail = [job.assign(spare)] if spare else []
            return job.working(lambda s: stale + look + [job.slots(x)] + pre + [job.declare(x), job.book(s)] + tail
                               + [job.go()], x, triggers)[1]

        oracle = recovery(want)
        job.settle(oracle, triggers, plan.calls, alternatives=[recovery(other)])
    query = job.request(f"Hello, this is {job.record['shipper']}'s export desk.")
    return job.task(query, triggers, plan, oracle, "shipping through the usual corridor",
                    "The goods are sold on arrival.", impossible,
                    {("rule", "ban", "banned", "permit", "bonded"): "Do whatever the rules ask for: a permit, a "
                     "bonded truck."}, consult=consult, moves=level)
