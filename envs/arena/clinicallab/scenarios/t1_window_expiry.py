"""T1 Window Expiry: the home lab's accessioning bench closes early while the pickup is being booked.

The ward asks for its specimen to be accessioned at the home lab and collected by the assigned courier. As
the pickup is booked, the home lab posts a staffing notice: intake closes today at a new, earlier time, before
the courier can arrive (``get_lab`` shows the new close; the run reads not on track). Easy: the earliest route
still open is taken at once (another lab, or a faster courier to the same one). Medium: the coordinator reads
the labs running the test and the couriers first, then redirects. Hard: the lab nearest the ward is full today
(a trap for redirecting to the nearest lab blindly); the coordinator reads every lab and the courier it picks.
Impossible: no other lab runs the test, so with the home bench closed the specimen cannot be accessioned
before it goes off: cancel, ask the ward to recollect and say so, naming the new close time.
"""

from __future__ import annotations

from datetime import timedelta

from sttgym.clock import format_time
from sttgym.envs.arena.clinicallab.generator import Author, Task, finish, new_case, retrying


def _build(author: Author, level: str) -> Task:
    case = new_case(author)
    plan = case.nominal()
    arrival = case.blind_arrival(plan)
    close = arrival - timedelta(minutes=5 * author.integer(1, 3) + arrival.minute % 5)
    notice = f"Accessioning bench short-staffed: intake closes at {close:%H:%M} today"
    trigger = case.on_write("intake_closes_early", f"{case.home} closes intake early at {close:%H:%M}",
                            "book_pickup", [case.set("labs", case.home, "intake", "close", value=f"{close:%H:%M}"),
                                            case.set("labs", case.home, "notice", value=notice)],
                            ("get_lab", {"lab_id": case.home}))
    unwind = [case.unbook("r0"), case.unaccession("a0")]
    query = (f"Hello, {case.name(case.ward)} here. Specimen {case.sid} for order {case.oid} ({case.test}) is ready. "
             f"Please accession it at {case.name(case.home)} ({case.home}) and book courier {case.courier} "
             "to collect it.")
    return finish(case, level, [trigger], plan, [case.lab(case.home)], unwind,
                  f"{case.home} now closes intake at {close:%H:%M} today, before specimen {case.sid} can reach it, "
                  f"and no other lab runs {case.test}, so it cannot be accessioned within its stability limit.",
                  [f"{close:%H:%M}", format_time(close), "short-staffed", "closes early"], query,
                  "sending a routine specimen to the lab", reason=notice)


build = retrying(_build)
