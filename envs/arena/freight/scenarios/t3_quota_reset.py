"""T3 Quota Reset: a surge of checks uses up the day's inspection quota at the planned crossing.

The goods are subject to physical inspection at the crossing, and each crossing inspects only so
many consignments a day (counted by the date they cross, afresh at 00:00). As the truck is assigned, a
surge of spot checks uses up today's quota (visible in ``get_crossing``: none left today, inspections
resume at midnight): the dispatch is refused. Easy: the crossing is open round the clock and the
driver works a night shift: book the first slot after midnight, when the quota has reset, and dispatch.
Medium: the driver's shift ends in the evening, so waiting is no answer: the second crossing, which
inspects the goods too, still has inspections today: declare there, book, dispatch. Hard: the surge
exhausts the second crossing as well; the third still has inspections but wants a permit for the goods:
apply, declare, book, dispatch. Impossible: the surge uses up the planned crossing's quota until midnight,
and midnight is after the deliver-by time (that much the change shows); each other crossing is shut to the
consignment by a standing rule of its own, drawn (today's inspections already used up by other forwarders, the
goods banned, a bonded truck required, a document the consignment lacks), which only reading that crossing
shows.
"""

from __future__ import annotations

from sttgym.clock import shift

from sttgym.envs.arena.freight.generator import Author, Redraw, Task, new_job, redrawn

RULES = ("inspection", "banned", "bonded", "document")  # what may shut each other crossing (Job.shut)


@redrawn
def build(author: Author, level: str) -> Task:
    job = new_job(author, round_clock=True)
    g = job.commodity
    for x in job.crossings:
        job.rules(x)["inspected"].append(g)
    if level == "hard":
        job.rules(job.third)["permit_for"].append(g)
    if level == "easy":
        job.state["trucks"][job.truck]["shift_end"] = shift(job.start, hours=30)
    plan = job.nominal()
    stale = plan.upto("assign")
    today, tomorrow = job.start[:10], shift(job.start, days=1)[:10]
    resume = f"{tomorrow}T00:00"
    surge = f"SC-{author.serial(1000, 9999)}"
    hit = {"easy": [job.main], "medium": [job.main], "hard": [job.main, job.second],
           "impossible": [job.main]}[level]
    effect = []
    for x in hit:
        quota = job.rules(x)["inspection"]
        effect += [job.set("crossings", x, "inspection", "used", today, value=quota["limit"]),
                   job.set("crossings", x, "notice", value=f"spot-check surge {surge}: no inspections left on "
                           f"{today}; they resume at {resume}")]
    triggers = [job.on_write("inspection_surge", f"surge {surge} uses up the inspection quota at {', '.join(hit)}",
                             "assign_truck", effect, ("get_crossing", {"crossing_id": job.main}))]
    look = [job.crossing(job.main), job.read()]
    impossible = None
    if level == "easy":
        look += [job.slots(job.main)]
        oracle = job.working(lambda s: stale + look + [job.book(s), job.go()], job.main, triggers, after=resume)[1]
        job.settle(oracle, triggers, plan.calls)
    elif level == "impossible":
        job.settle([], triggers, plan.calls)
        if job.record["deliver_by"] >= resume:
            raise Redraw("the quota resets before the deliver-by time")
        others, facts, reads = job.shut_others(RULES)
        job.no_way([job.assign(job.truck)], triggers)
        said, impossible = job.refuse(
            f"{job.cid} cannot cross in time: spot-check surge {surge} has used up today's inspections at "
            f"{job.main}, which resume only at midnight, after the deliver-by time; of the other crossings, "
            f"{others}.", ["inspection_surge"], [surge, resume, "inspection quota", "no inspections"], facts)
        oracle = stale + look + reads + said
    else:
        alt = job.second if level == "medium" else job.third
        look += [job.crossings_list(), job.crossing(job.second)]
        pre = []
        if level == "hard":
            look += [job.crossing(job.third), job.route(job.third)]
            pre = [job.apply(alt)]
        look += [job.slots(alt)]
        oracle = job.working(lambda s: stale + look + pre + [job.declare(alt), job.book(s), job.go()], alt,
                             triggers)[1]
        job.settle(oracle, triggers, plan.calls)
    query = job.request(f"Hello, {job.record['shipper']} export office.")
    return job.task(query, triggers, plan, oracle, "shipping goods that customs inspects",
                    "The consignee has booked the unloading bay.", impossible,
                    {("inspection", "quota", "midnight", "tomorrow"): "Any crossing and time is fine if it "
                     "arrives by the deliver-by time."}, moves=level)
