"""T3 Quota Reset: the home lab's daily capacity is used up by a screening batch and the accession is bumped.

The ward's specimen is accessioned at the home lab (one of today's places in its daily capacity) and a
courier booked. As the pickup is booked, the lab registers a screening batch that fills today's capacity and
bumps every accession beyond the limit, the ward's among them (``get_lab`` shows no capacity left today and
the batch; ``get_order`` the bumped accession). The quota resets only at midnight, long after the specimen
goes off, so the specimen must be accessioned elsewhere today. Easy: the earliest lab with capacity, at once.
Medium: read the labs and couriers first; two labs can take the specimen in time and the ward, who asked to
be consulted, wants the one that holds the patient's baseline (drawn, told only when asked). Hard: as medium,
and the lab nearest the ward is full as well (a trap for the nearest lab). Impossible: no other lab runs the
test; tomorrow's reset comes too late for the specimen.
"""

from __future__ import annotations

from sttgym.clock import format_time
from sttgym.envs.arena.clinicallab.generator import Author, Task, finish, new_case, retrying


def _build(author: Author, level: str) -> Task:
    case = new_case(author, n_labs=4 if level == "hard" else 3)  # hard: a choice beside the trap
    plan = case.nominal()
    day = format_time(case.start)[:10]
    batch = f"BATCH-{author.serial(1000, 9999)}"
    limit = case.state["labs"][case.home]["capacity"]["limit"]
    note = f"screening batch {batch} registered: today's capacity of {limit} reached; resets at 00:00"
    trigger = case.on_write(
        "capacity_exhausted", f"{case.home} fills today's capacity with {batch}", "book_pickup",
        [case.set("labs", case.home, "capacity", "used", day, value=limit),
         case.set("labs", case.home, "notice", value=note),
         author.op.bump_accessions(lab_id=case.home, note=f"bumped: {batch} filled today's capacity")],
        ("get_lab", {"lab_id": case.home}))
    query = (f"{case.name(case.ward)} here: please get specimen {case.sid} (order {case.oid}, {case.test}) "
             f"accessioned at {case.name(case.home)} ({case.home}) today, collected by courier {case.courier}.")
    return finish(case, level, [trigger], plan, [case.lab(case.home)], [case.unbook("r0")],
                  f"{case.home} has no capacity left today after screening batch {batch}, its quota resets only "
                  f"at midnight, and no other lab runs {case.test}; specimen {case.sid} would spoil first.",
                  [batch, "screening batch", "capacity reached", "no capacity"], query,
                  "sending a specimen to a busy lab", reason=note, consult=True)


build = retrying(_build)
