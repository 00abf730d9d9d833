"""T2 Priority Reorder: a humanitarian convoy is moved ahead and takes the booked slot (and more).

As the truck is assigned, the border authority gives the consignment's crossing slot to a priority
relief consignment (``CN-nnnnn``, visible in ``list_slots`` and ``get_consignment``: the slot reads
taken): the dispatch is refused. Easy: book the next free slot at the same crossing and dispatch.
Medium: the relief convoy takes every slot at the planned crossing for the next day and a half: the
consignment is declared at the second crossing and booked on its slot. Hard: the convoy also
commandeers the assigned truck: on top, another truck at the terminal is assigned. Impossible: as at
medium, the convoy takes every slot at the planned crossing (that much the change shows); each other crossing
is shut to the consignment by a standing rule of its own, drawn (the goods banned, a bonded truck required, a
document the consignment lacks, every slot before the deliver-by time held by other forwarders), which only
reading that crossing shows.

At hard the recovery also meets a second change (``Job.cascade``): the crossing of the first slot booked
after the change backs up, so that trip would arrive late; nothing refuses it, only the times show it, and
the recovery moves on to another crossing.
"""

from __future__ import annotations

from sttgym.clock import shift

from sttgym.envs.arena.freight.generator import Author, Task, new_job, redrawn

RULES = ("banned", "bonded", "document", "slots")  # what may shut each other crossing (Job.shut)


@redrawn
def build(author: Author, level: str) -> Task:
    job = new_job(author)
    relief = f"CN-{author.serial(10000, 99999)}"
    job.state["consignments"][relief] = {
        "shipper": "UN Relief Logistics", "consignee": f"{job.abroad} Red Cross", "commodity": "relief supplies",
        "weight_kg": 20000, "declared_value": 0, "origin": job.origin, "location": job.origin,
        "available_from": job.start, "destination": job.dest, "deliver_by": shift(job.start, hours=8),
        "documents": {}, "reissuable": [], "priority": "humanitarian", "truck": None, "note": ""}
    spare = job.add_truck(job.origin) if level == "hard" else ""
    plan = job.nominal()
    stale = plan.upto("assign")
    order = f"RC-{author.serial(1000, 9999)}"
    note = f"given to humanitarian consignment {relief} by priority order {order}"
    if level == "easy":
        effect = [job.set("slots", job.slot, "status", value="taken"),
                  job.set("slots", job.slot, "consignment", value=relief),
                  job.set("slots", job.slot, "note", value=note)]
    else:
        until = shift(job.start, hours=job.slot_hours + 2)
        effect = [author.op.take_slots(crossing_id=job.main, until=until, by=relief, note=note)]
    if level == "hard":
        effect += [job.set("trucks", job.truck, "status", value="reassigned"),
                   job.set("trucks", job.truck, "consignment", value=relief),
                   job.set("trucks", job.truck, "note", value=f"commandeered for {relief}"),
                   job.set("consignments", job.cid, "truck", value=None)]
    triggers = [job.on_write("relief_priority", f"relief consignment {relief} is moved ahead and takes the slot",
                             "assign_truck", effect, ("list_slots", {"crossing_id": job.main}))]
    look = [job.read(), job.slots(job.main)]
    impossible = None
    if level == "easy":
        oracle = job.working(lambda s: stale + look + [job.book(s), job.go()], job.main, triggers)[1]
    elif level == "impossible":
        job.settle([], triggers, plan.calls)
        others, facts, reads = job.shut_others(RULES)
        job.no_way([job.assign(job.truck)], triggers)
        said, impossible = job.refuse(
            f"{job.cid} cannot cross in time: priority order {order} gave humanitarian consignment {relief} every "
            f"slot at {job.main} until well after the deliver-by time; of the other crossings, {others}.",
            ["relief_priority"], [order, relief, "humanitarian consignment", "relief consignment"], facts)
        oracle = stale + look + reads + said
    else:
        look += [job.crossings_list(), job.crossing(job.second), job.slots(job.second)]
        tail = []
        if level == "hard":
            look += [job.trucks(job.origin), job.truck_read(job.truck)]
            tail = [job.assign(spare)]
        oracle = job.working(lambda s: stale + look + [job.declare(job.second), job.book(s)] + tail + [job.go()],
                             job.second, triggers)[1]
    if not impossible:
        more = []
        if level == "hard":  # the recovery meets a second change (Job.cascade)
            oracle, triggers, more = job.cascade(oracle, triggers, plan.calls)
        job.settle(oracle, triggers, plan.calls, alternatives=more)
    query = job.request(f"Hi, {job.record['shipper']} here.")
    return job.task(query, triggers, plan, oracle, "with a customer waiting at the other end",
                    "Our customer is waiting at the other end.", impossible,
                    {("priority", "relief", "humanitarian", "convoy"): "Relief goes first, of course; just find "
                     "us another way across in time."}, moves=level)
