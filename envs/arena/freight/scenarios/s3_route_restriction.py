"""S3 Route Restriction: a new customs rule closes the planned crossing to the consignment's goods.

The plan is the plain one: declare at the fastest crossing, book its slot, assign the truck, dispatch.
As the truck is assigned, customs publishes a rule (``CR-nnnn``) banning the commodity at that crossing
(visible in ``get_crossing`` and ``check_route``): the dispatch is refused, and re-booking the same
crossing cannot help. Both other crossings would take the goods, but the user asked to be consulted
before a switch: their customs broker clears only at one of them (drawn, and shown by no tool), which
they say when asked. Easy: that crossing admits the goods: declare there, book its slot, dispatch.
Medium: the other crossings admit them only with a permit from their desks: apply, declare, book,
dispatch. Hard: they also want a bonded truck and the assigned one is not: a bonded truck of another
carrier at the terminal takes the load as well. Impossible: the rule is regional and bans the goods at
every crossing.
"""

from __future__ import annotations

from sttgym.envs.arena.freight.generator import Answer, Author, Consult, Task, new_job, redrawn


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
    closed = job.crossings if level == "impossible" else [job.main]
    notice = f"customs rule {rule}: no {g} across {'any crossing' if level == 'impossible' else job.main}"
    effect = [op for x in closed for op in (job.set("crossings", x, "banned", value=job.rules(x)["banned"] + [g]),
                                            job.set("crossings", x, "notice", value=notice))]
    triggers = [job.on_write("customs_rule", f"customs bans {g} at {', '.join(closed)} as the truck is assigned",
                             "assign_truck", effect, ("get_crossing", {"crossing_id": job.main}),
                             also=(("check_route", {"consignment_id": job.cid, "crossing_id": job.main}),
                                   ("get_consignment", {"consignment_id": job.cid})))]
    look = [job.crossing(job.main), job.crossings_list(), job.crossing(job.second), job.crossing(job.third)]
    impossible = consult = None
    if level == "impossible":
        said, impossible = job.refuse(
            f"{job.cid} cannot cross: customs rule {rule} now bans {g} at every crossing ({', '.join(job.crossings)}),"
            " so there is no compliant way to get it to the consignee.", ["customs_rule"], [rule])
        oracle = stale + look + said
        job.settle([], triggers, plan.calls)
    else:
        want, other = others if author.chance(0.5) else others[::-1]
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
        name = job.state["sites"][want]["name"]
        consult = Consult(
            answer=Answer(keywords=["crossing", "crossings", "border", "broker", "requirement", "require", "prefer",
                                    "preference"],
                          text=f"Our customs broker in {job.abroad} clears our goods only at the {name} ({want}), so "
                               f"if {job.main} is out, it has to cross at {want}."),
            choice=author.pred.via(consignment_id=job.cid, crossing_id=want),
            label=f"through {want}, where the user's broker works",
            request="If it cannot cross there, ask me before you switch: I have a requirement about the crossing.")
    query = job.request(f"Hello, this is {job.record['shipper']}'s export desk.")
    return job.task(query, triggers, plan, oracle, "shipping through the usual corridor", impossible,
                    {("rule", "ban", "banned", "permit", "bonded"): "Use whatever crossing and truck the rules allow."
                     if impossible else "Do whatever the rules ask for: a permit, a bonded truck."},
                    insist=f"The {g} must reach {job.record['consignee']} by {job.record['deliver_by']}.",
                    consult=consult)
