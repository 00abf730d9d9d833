"""S2 Dependency Block: customs holds the declaration for a rejected document, blocking every later leg.

The declaration at the planned crossing clears at first. As the truck is assigned, customs rejects one
of the consignment's documents (the certificate of origin: a stamp does not match) and puts the
declaration on hold (hold reference ``HLD-nnnn``, visible in ``get_consignment``): without a cleared
declaration nothing may be dispatched. Easy: ask the shipper to re-issue the certificate, lodge the
declaration again, dispatch. Medium: the hold also releases the consignment's crossing slot: re-issue,
re-declare, book a new slot, dispatch. Hard: the held consignment also loses its truck to another job:
a second truck at the terminal is assigned as well. Impossible: the shipper cannot re-issue the
certificate, and the planned crossing requires it (that much the change shows); each other crossing is shut to
the consignment by a standing rule of its own, drawn (the certificate of origin required there too, the goods
banned, a bonded truck required, a document the consignment lacks), which only reading that crossing shows.

At hard the recovery also meets a second change (``Job.cascade``): the crossing of the first slot booked
after the change backs up, so that trip would arrive late; nothing refuses it, only the times show it, and
the recovery moves on to another crossing.
"""

from __future__ import annotations

from sttgym.envs.arena.freight.generator import Author, Task, new_job, redrawn

DOC = "certificate_of_origin"
RULES = ("coo", "banned", "bonded", "document")  # what may shut each other crossing (Job.shut)


@redrawn
def build(author: Author, level: str) -> Task:
    job = new_job(author)
    if DOC not in job.rules(job.main)["required_docs"]:
        job.rules(job.main)["required_docs"].append(DOC)
    if level == "impossible":
        job.record["reissuable"].remove(DOC)
    spare = job.add_truck(job.origin) if level == "hard" else ""
    plan = job.nominal()
    stale = plan.upto("assign")
    ref = f"HLD-{author.serial(1000, 9999)}"
    note = f"customs hold {ref}: {DOC} rejected (stamp does not match the issuing chamber)"
    effect = [author.op.hold_declarations(consignment_id=job.cid, document=DOC, note=note),
              job.set("consignments", job.cid, "note", value=note)]
    if level in ("medium", "hard"):
        effect.append(author.op.release_booking(consignment_id=job.cid,
                                                note=f"released: consignment under customs hold {ref}"))
    if level == "hard":
        effect += [job.set("trucks", job.truck, "status", value="reassigned"),
                   job.set("trucks", job.truck, "consignment", value=None),
                   job.set("trucks", job.truck, "note", value=f"released while {job.cid} is held"),
                   job.set("consignments", job.cid, "truck", value=None)]
    triggers = [job.on_write("customs_hold", f"customs holds the declaration ({ref}) as the truck is assigned",
                             "assign_truck", effect, ("get_consignment", {"consignment_id": job.cid}))]
    look = [job.read()]
    fix = [job.call.request_document(consignment_id=job.cid, document=DOC), job.declare(job.main)]
    impossible = None
    if level == "easy":
        oracle = stale + look + fix + [job.go()]
    elif level == "impossible":
        job.settle([], triggers, plan.calls)
        why, facts, reads = job.shut_others(RULES)
        job.no_way([job.assign(job.truck)], triggers)
        said, impossible = job.refuse(
            f"{job.cid} cannot be cleared: customs hold {ref} rejected its certificate of origin, which the shipper "
            f"cannot re-issue and {job.main} requires; of the other crossings, {why}.", ["customs_hold"],
            [ref, DOC, DOC.replace("_", " "), "customs hold"], facts)
        oracle = stale + look + reads + said
    else:
        look += [job.slots(job.main)]
        tail = []
        if level == "hard":
            look += [job.trucks(job.origin), job.truck_read(job.truck)]
            tail = [job.assign(spare)]
        oracle = job.working(lambda s: stale + look + fix + [job.book(s)] + tail + [job.go()], job.main,
                             triggers)[1]
    if not impossible:
        more = []
        if level == "hard":  # the recovery meets a second change (Job.cascade)
            oracle, triggers, more = job.cascade(oracle, triggers, plan.calls)
        job.settle(oracle, triggers, plan.calls, alternatives=more)
    query = job.request(f"Hello, {job.record['shipper']} here; all documents are on file.")
    return job.task(query, triggers, plan, oracle, "with the paperwork done last week",
                    "The consignee's line stops without it.", impossible,
                    {("document", "certificate", "hold", "re-issue", "reissue"): "Ask us for any document you "
                     "need; we will re-issue what we can."}, moves=level)
