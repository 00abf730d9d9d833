"""S2 Dependency Block: the home lab's analyser faults, blocking every test that depends on it.

The ward's specimen is accessioned at the home lab and a courier booked. As the pickup is booked, the lab's
analyser for the test goes into fault after a reagent lot recall (``get_lab`` shows the analyser in fault):
the lab can take no specimen for that test, so the booked run would deliver to a lab that cannot test it.
Easy: redirect at once to the earliest lab whose analyser runs the test. Medium: read the labs and couriers
first; two labs can take the specimen in time and the ward, who asked to be consulted, wants the one that
holds the patient's baseline (drawn, told only when asked). Hard: as medium, and the lab nearest the ward is
full today (a trap). Impossible: no other lab runs the test, so the
specimen cannot be tested before it goes off.
"""

from __future__ import annotations

from sttgym.envs.arena.clinicallab.generator import Author, Task, finish, new_case, retrying


def _build(author: Author, level: str) -> Task:
    case = new_case(author, n_labs=4 if level == "hard" else 3)  # hard: a choice beside the trap
    plan = case.nominal()
    lot = f"RL-{author.serial(1000, 9999)}"
    note = f"fault: reagent lot {lot} recalled, analyser stopped"
    machines = [m for m, x in sorted(case.state["analysers"].items()) if x["lab"] == case.home]
    trigger = case.on_write(
        "analyser_fault", f"the {case.test} analyser at {case.home} faults ({lot})", "book_pickup",
        [op for m in machines for op in case.sets("analysers", m, status="fault", note=note)],
        ("get_lab", {"lab_id": case.home}))
    query = (f"{case.name(case.ward)}: specimen {case.sid} for order {case.oid} needs a {case.test}. Please "
             f"accession it at {case.name(case.home)} ({case.home}) and send courier {case.courier}.")
    return finish(case, level, [trigger], plan, [case.lab(case.home)], [case.unbook("r0"), case.unaccession("a0")],
                  f"the {case.test} analyser at {case.home} is in fault after reagent lot {lot} was recalled and no "
                  f"other lab runs {case.test}, so specimen {case.sid} cannot be tested within its stability limit.",
                  [lot, "fault", "reagent lot", "recalled"], query, "sending a specimen for a routine test",
                  reason=note, consult=True)


build = retrying(_build)
