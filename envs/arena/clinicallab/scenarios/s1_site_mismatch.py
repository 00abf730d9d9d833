"""S1 Site Mismatch: the specimen is not where the order says; it left with the transferred patient.

The order names the ward; the coordinator accessions the specimen at the home lab and books the courier to
collect it there. As the pickup is booked, the ward reports that the patient was transferred and the specimen
went along in the transfer bag: it is at another site (``get_specimen`` shows the new site; the run is halted
for a wrong pickup site). The pickup must be rebooked from where the specimen is, which changes which lab and
courier get it accessioned first. Easy: the earliest route from the new site, at once. Medium: read the labs
and couriers first. Hard: the lab nearest the ward is full today (the nearest lab from the old site is a trap).
Impossible: from the new site no courier reaches the only lab running the test before the specimen goes off.
"""

from __future__ import annotations

from sttgym.envs.arena.clinicallab.generator import Author, Task, draw, finish, new_case, retrying


def _build(author: Author, level: str) -> Task:
    case = new_case(author)
    plan = case.nominal()
    far = [w for w in case.wards[1:]]
    if not far or level == "impossible":
        far = [case.add_site("clinic", "Outreach Clinic", "CLN")]
        case.road(far[0], draw(author, case.hubs + case.wards), author.integer(35, 60) if level == "impossible"
                  else author.integer(15, 30))
    dest = draw(author, far)
    note = f"patient transferred to {case.name(dest)}; specimen went with them in the transfer bag"
    trigger = case.on_write("specimen_elsewhere", f"{case.sid} turns out to be at {dest}", "book_pickup",
                            [author.op.move_specimen(specimen_id=case.sid, site_id=dest, note=note)],
                            ("get_specimen", {"specimen_id": case.sid}))
    query = (f"Hello from {case.name(case.ward)}. Order {case.oid} ({case.test}): specimen {case.sid} is on our "
             f"ward. Please accession it at {case.name(case.home)} ({case.home}) and book courier {case.courier}.")
    return finish(case, level, [trigger], plan, [case.specimen()], [case.unbook("r0"), case.unaccession("a0")],
                  f"specimen {case.sid} is at {dest}, not on the ward, and from there no courier gets it to "
                  f"{case.home}, the only lab running {case.test}, within its stability limit.",
                  [dest, case.name(dest), "transferred"], query, "sending a specimen from a busy ward", reason=dest)


build = retrying(_build)
