"""S1 Site Mismatch: the rail operator transloads the consignment early to another terminal.

The booking says the consignment waits at its export terminal, where the named truck stands. As the
slot is booked, the rail operator reports that it moved the consignment ahead of plan to another
terminal (visible in ``get_consignment``: a new location and the time it is ready there): the truck
assignment and the dispatch are refused, since trucks collect only where the goods are. Easy: a truck
waits at the new terminal: assign it and dispatch on the booked slot. Medium: the goods are ready there
only hours later: assign that terminal's truck and book a later slot. Hard: the later slots at the
planned crossing are all taken by other forwarders: declare at the second crossing, book its slot,
assign the truck, dispatch. Impossible: as at easy, the goods are ready at the new terminal in time for
the booked slot (that much the change shows), but the truck waiting there cannot take them (drawn: it carries
less than they weigh, or its driver goes off shift before it could set off), which only reading it shows; the
other trucks there and at the other terminals are too small, and shuttling the goods back to the named truck
gets them there too late.

At hard the recovery also meets a second change (``Job.cascade``): the crossing of the first slot booked
after the change backs up, so that trip would arrive late; nothing refuses it, only the times show it, and
the recovery moves on to another crossing.
"""

from __future__ import annotations

from sttgym.clock import shift

from sttgym.envs.arena.freight.generator import Author, Redraw, Task, new_job, redrawn


@redrawn
def build(author: Author, level: str) -> Task:
    job = new_job(author)
    other = [t for t in job.terminals if t != job.origin]
    plan = job.nominal()
    stale = plan.upto("book")
    wagon = f"RW-{author.serial(1000, 9999)}"
    impossible = None

    def story(site: str, ready: str) -> list:
        return [author.op.set_field(path=["consignments", job.cid, "location"], value=site),
                job.set("consignments", job.cid, "available_from", value=ready),
                job.set("consignments", job.cid, "note", value=f"transloaded early to {site} on rail wagon {wagon}; "
                        f"ready from {ready}")]

    def trig(site: str, ready: str) -> list:
        return [job.on_write("early_transload", f"the consignment is moved to {site} as the slot is booked",
                             "book_slot", story(site, ready), ("get_consignment", {"consignment_id": job.cid}))]

    if level == "impossible":
        site = other[author.integer(0, len(other) - 1)]
        truck = job.add_truck(site)  # it could take the load on the booked slot, as at easy, were it fit to
        look = [job.read(), job.trucks(site)]
        ready = job.run(stale + look[:1]).end
        triggers = trig(site, ready)
        could = stale + look + [job.assign(truck), job.go()]
        if not job.succeeds(could, triggers):
            raise Redraw("the booked slot is out of reach")
        job.settle(could, triggers, plan.calls, margin=(25, 45))  # shuttling back must stay too slow
        why, others = job.unfit(truck, ("small", "shift")[author.integer(0, 1)], shift(ready, 20))
        job.no_way([job.book(job.slot)], triggers)
        said, impossible = job.refuse(
            f"{job.cid} cannot arrive in time: it was transloaded early onto rail wagon {wagon} to {site}, where "
            f"{why}; no other truck there can carry it, and shuttling it back to {job.origin} for {job.truck} would "
            "get it across too late.", ["early_transload"], [ready, wagon, site, "transloaded early"],
            others + ["other truck", f"back to {job.origin}", "shuttle back", "shuttling it back", why])
        oracle = stale + look + [job.truck_read(truck)] + said
    else:
        look = [job.read()]
        if level == "hard":  # other forwarders hold the planned crossing's later slots
            for s in job.free_slots(job.main, shift(job.slot_start(job.slot), 60)):
                job.state["slots"][s]["status"] = "taken"
        found = None
        for site in other:
            truck = job.add_truck(site)
            end = job.run(stale + look).end
            ready = end if level == "easy" else shift(end, 5 * author.integer(18, 30))
            triggers = trig(site, ready)
            steps = look + [job.trucks(site)]
            try:
                if level == "easy":
                    calls = stale + steps + [job.assign(truck), job.go()]
                    if not job.succeeds(calls, triggers):
                        raise Redraw("the booked slot is out of reach")
                elif level == "medium":
                    steps += [job.slots(job.main)]
                    calls = job.working(lambda s: stale + steps + [job.book(s), job.assign(truck), job.go()],
                                        job.main, triggers)[1]
                else:
                    steps += [job.slots(job.main), job.crossings_list(), job.crossing(job.second),
                              job.slots(job.second)]
                    calls = job.working(lambda s: stale + steps + [job.declare(job.second), job.book(s),
                                                                   job.assign(truck), job.go()],
                                        job.second, triggers)[1]
                found = (site, calls, triggers)
                break
            except Redraw:
                del job.state["trucks"][truck]
        if found is None:
            raise Redraw("no terminal makes the story work")
        site, oracle, triggers = found
        more = []
        if level == "hard":  # the recovery meets a second change (Job.cascade)
            oracle, triggers, more = job.cascade(oracle, triggers, plan.calls)
        job.settle(oracle, triggers, plan.calls, alternatives=more)
    query = job.request(f"Hi, {job.record['shipper']} here; the goods are at {job.origin}.")
    return job.task(query, triggers, plan, oracle, "trusting the booking's terminal",
                    "The consignee has staff waiting to unload.", impossible,
                    {("terminal", "location", "transload", "moved"): "Collect it wherever it is now."},
                    moves=level)
