"""ST1 Resource Shift: the assigned courier is pulled to a major incident.

The ward's specimen is accessioned at the home lab and the assigned courier booked. As the pickup is
booked, dispatch reassigns the courier to a major incident (``get_courier`` shows it reassigned; the run is
halted). The accession stands; the pickup must go to another courier that keeps the specimen's condition and
gets it there in time. Easy: the earliest spare courier, at once. Medium: read the couriers and labs first.
Hard: read every lab and check the chosen courier's shift before booking. Impossible: every other courier is
off shift or carries only ambient boxes, so the specimen spoils before anyone can collect it.
"""

from __future__ import annotations

from sttgym.envs.arena.clinicallab.generator import Author, Task, draw, finish, new_case, retrying


def _build(author: Author, level: str) -> Task:
    case = new_case(author)
    if level != "impossible":
        for _ in range(author.integer(1, 2)):
            case.add_courier(draw(author, case.hubs + case.wards[1:] + case.labs))
    plan = case.nominal()
    incident = f"MI-{author.serial(1000, 9999)}"
    note = f"reassigned to major incident {incident}"
    trigger = case.on_write("courier_pulled", f"{case.courier} is pulled to {incident}", "book_pickup",
                            [author.op.pull_courier(courier_id=case.courier, note=note)],
                            ("get_courier", {"courier_id": case.courier}))
    query = (f"{case.name(case.ward)} here. Please accession specimen {case.sid} (order {case.oid}, {case.test}) "
             f"at {case.name(case.home)} ({case.home}) and book courier {case.courier} to collect it.")
    return finish(case, level, [trigger], plan, [case.courier_info(case.courier)], [case.unbook("r0")],
                  f"courier {case.courier} was reassigned to major incident {incident} and no other courier in "
                  f"service can keep specimen {case.sid} {case.storage}, so it cannot reach the lab in time.",
                  [incident, "reassigned", "major incident"], query, "sending a specimen on a day of major incidents",
                  keep_lab=True, reason=incident)


build = retrying(_build)
