"""T1 Window Expiry: the consignment's crossing permit is cut short before the truck gets there.

The planned crossing admits the goods only with a permit, and one is on file (``PRM-nnn``, valid all
day). As the truck is assigned, the permit authority curtails it: it now lapses at a time before the
booked slot (visible in ``get_consignment`` and ``get_permit``), so the dispatch is refused. Easy: apply
for a fresh permit at the crossing's desk (it is valid within minutes) and dispatch. Medium: the desk
now has a lead time of several hours: the new permit starts after the booked slot, so a later slot
inside its window is booked as well. Hard: that later slot falls after the assigned driver's shift
ends: a truck of another carrier at the terminal is assigned too. Impossible: the permit is curtailed and
the planned crossing's desk is suspended for two days (that much the change shows); each other crossing is
shut to the consignment by a standing rule of its own, drawn (the goods banned, a bonded truck required,
a document the consignment lacks, every slot before the deliver-by time held by others), which only reading
that crossing shows.

At hard the recovery also meets a second change (``Job.cascade``): the crossing of the first slot booked
after the change backs up, so that trip would arrive late; nothing refuses it, only the times show it, and
the recovery moves on to another crossing.
"""

from __future__ import annotations

from sttgym.clock import floor_to, shift

from sttgym.envs.arena.freight.generator import Author, Task, new_job, redrawn

RULES = ("banned", "bonded", "document", "slots")  # what may shut each other crossing (Job.shut)


@redrawn
def build(author: Author, level: str) -> Task:
    job = new_job(author)
    g = job.commodity
    job.rules(job.main)["permit_for"].append(g)
    held = job.permit(job.main, hours=author.integer(14, 18))
    desk = job.state["permit_desks"][job.main]
    desk["lead_minutes"] = 5 * author.integer(0, 2)
    spare = job.add_truck(job.origin, shift_hours=16) if level == "hard" else ""
    plan = job.nominal()
    stale = plan.upto("assign")
    if level == "hard":  # the assigned driver's shift ends soon after the planned arrival
        job.state["trucks"][job.truck]["shift_end"] = shift(job.arrival(plan.calls), author.integer(20, 40))
    lapse = floor_to(job.run(stale).end, 5)
    order = f"PA-{author.serial(1000, 9999)}"
    effect = [job.set("permits", held, "valid_to", value=lapse),
              job.set("permits", held, "note", value=f"curtailed by permit authority order {order}")]
    if level in ("medium", "hard"):
        effect.append(job.set("permit_desks", job.main, "lead_minutes", value=5 * author.integer(36, 50)))
    if level == "impossible":
        until = shift(job.start, days=2)[:10]
        effect += [job.set("permit_desks", job.main, "status", value="suspended"),
                   job.set("permit_desks", job.main, "note", value=f"no permits issued until {until}")]
    triggers = [job.on_write("permit_curtailed", f"permit {held} is curtailed to {lapse} as the truck is assigned",
                             "assign_truck", effect, ("get_consignment", {"consignment_id": job.cid}))]
    look = [job.read(), job.call.get_permit(permit_id=held)]
    impossible = None
    if level == "easy":
        oracle = stale + look + [job.apply(job.main), job.go()]
    elif level == "impossible":
        job.settle([], triggers, plan.calls)
        others, facts, reads = job.shut_others(RULES)
        job.no_way([job.assign(job.truck)], triggers)
        said, impossible = job.refuse(
            f"{job.cid} cannot cross in time: permit authority order {order} curtailed its permit to lapse at "
            f"{lapse[11:]} and the permit desk at {job.main} is suspended until {until}; of the other crossings, "
            f"{others}.", ["permit_curtailed"], [lapse, order, until, "permit curtailed", "desk suspended"], facts)
        oracle = stale + look + [job.crossing(job.main)] + reads + said
    else:
        look += [job.crossing(job.main), job.apply(job.main), job.slots(job.main)]
        if level == "hard":
            look += [job.trucks(job.origin), job.truck_read(job.truck)]
        tail = [job.assign(spare)] if spare else []
        oracle = job.working(lambda s: stale + look + [job.book(s)] + tail + [job.go()], job.main, triggers)[1]
    if not impossible:
        more = []
        if level == "hard":  # the recovery meets a second change (Job.cascade)
            oracle, triggers, more = job.cascade(oracle, triggers, plan.calls)
        job.settle(oracle, triggers, plan.calls, alternatives=more)
    query = job.request(f"Good morning, {job.record['shipper']} logistics here; the permit {held} is on file.")
    return job.task(query, triggers, plan, oracle, "moving permit-controlled goods",
                    "The buyer's contract has a penalty for late delivery.", impossible,
                    {("permit", "lapse", "expired", "window"): "Get whatever permit the crossing needs."},
                    moves=level)
