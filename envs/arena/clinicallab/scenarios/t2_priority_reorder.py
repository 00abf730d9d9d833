"""T2 Priority Reorder: a STAT specimen is moved ahead and takes the assigned courier first.

The ward's routine specimen is accessioned at the home lab and the assigned courier booked. As the pickup is
booked, the emergency department raises one of its orders to STAT and dispatch sends the same courier there first:
the courier is free only much later (``get_courier`` shows the diversion and the STAT order; the run is
retimed past the specimen's stability). The run must be cancelled and the specimen moved to another courier
(the earliest route still open: a spare courier with the right storage, to whichever lab accessions it first).
Easy: take that route at once. Medium: read the labs and couriers first. Hard: the lab nearest the ward is
full today, a trap for redirecting blindly. Impossible: no spare courier keeps the specimen's condition and no
other lab runs the test; waiting for the diverted courier spoils it, so the ward must recollect.
"""

from __future__ import annotations

from sttgym.clock import format_time
from sttgym.envs.arena.clinicallab.generator import Author, Task, draw, finish, new_case, retrying


def _build(author: Author, level: str) -> Task:
    case = new_case(author)
    if level != "impossible":
        for _ in range(author.integer(1, 2)):
            case.add_courier(draw(author, case.hubs + case.wards[1:] + case.labs[1:]))
    plan = case.nominal()
    stat_oid, stat_sid = f"ORD-{author.serial(10000, 99999)}", f"SP-{author.serial(10000, 99999)}"
    er = case.add_site("ward", "Emergency Department", "WRD")
    case.road(er, draw(author, case.hubs), author.integer(10, 25))
    minutes = 5 * author.integer(18, 30)
    note = f"diverted to STAT order {stat_oid} first; free about {minutes} minutes later than planned"
    test = case.test
    patient = f"MRN-{author.serial(100000, 999999)}"  # the ED's order is on the books from the start, as routine
    case.state["orders"][stat_oid] = {"patient": patient, "ward": er, "test": test, "specimen": stat_sid,
                                      "priority": "routine", "status": "open", "note": ""}
    case.state["specimens"][stat_sid] = {"order": stat_oid, "patient": patient, "type": case.spec["type"],
                                         "storage": case.storage, "site": er, "note": "",
                                         "collected_at": format_time(case.start), "stable_minutes": 60}
    trigger = case.on_write(
        "stat_takes_courier", f"STAT order {stat_oid} takes courier {case.courier} first", "book_pickup",
        [*case.sets("orders", stat_oid, priority="STAT", note=f"raised to STAT; courier {case.courier} assigned"),
         author.op.slip_courier(courier_id=case.courier, minutes=minutes, note=note)],
        ("get_courier", {"courier_id": case.courier}))
    query = (f"Hi, {case.name(case.ward)}. Routine specimen {case.sid} (order {case.oid}, {test}) is bagged. "
             f"Please accession it at {case.name(case.home)} ({case.home}) and have courier {case.courier} pick "
             "it up.")
    return finish(case, level, [trigger], plan, [case.courier_info(case.courier)],
                  [case.unbook("r0"), case.unaccession("a0")],
                  f"courier {case.courier} was diverted to STAT order {stat_oid}, no other courier can keep "
                  f"specimen {case.sid} {case.storage}, and no other lab runs {test}, so it cannot be accessioned "
                  "within its stability limit.", [stat_oid, "STAT order", "diverted"], query,
                  "sending a routine specimen while the emergency department has STAT work", reason=stat_oid)


build = retrying(_build)
