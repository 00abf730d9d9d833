"""ST2 Failure Cascade: the home lab's outage sends every specimen elsewhere and overloads the next lab.

The ward's specimen is accessioned at the home lab and a courier booked. As the pickup is booked, the home
lab's information system goes down (``get_lab``: outage); in turn the specimens of the whole area are
redirected to the lab nearest the ward, which fills its daily capacity at once (its ``get_lab`` shows no
capacity left). Redirecting to the nearest lab fails; the specimen must go to a lab further out. Easy: the
earliest open route, at once. Medium: read the labs and couriers first. Hard: read every lab and check the
courier. Impossible: no lab but the home lab runs the test, and it is down.
"""

from __future__ import annotations

from sttgym.clock import format_time
from sttgym.envs.arena.clinicallab.generator import Author, Task, finish, new_case, retrying


def _build(author: Author, level: str) -> Task:
    case = new_case(author)
    plan = case.nominal()
    outage = f"OUT-{author.serial(1000, 9999)}"
    others = [x for x in case.labs if x != case.home]
    near = min(others, key=lambda x: (case.minutes(case.ward, x) or 999, x))
    day = format_time(case.start)[:10]
    limit = case.state["labs"][near]["capacity"]["limit"]
    down = case.on_write("lab_outage", f"{case.home} goes down ({outage})", "book_pickup",
                         case.sets("labs", case.home, status="outage", notice=f"LIS outage {outage}: not receiving"),
                         ("get_lab", {"lab_id": case.home}))
    overload = author.check_trigger(down.model_copy(update={
        "name": "redirects_overload", "description": f"redirected specimens fill {near} for today",
        "when": author.pred.field_equals(path=["labs", case.home, "status"], value="outage"), "activation": [],
        "effect": [case.set("labs", near, "capacity", "used", day, value=limit),
                   case.set("labs", near, "notice", value=f"capacity taken by specimens redirected from {outage}")],
        "observable": down.observable.model_copy(update={"args": {"lab_id": near}})}))
    query = (f"{case.name(case.ward)}: please accession specimen {case.sid} (order {case.oid}, {case.test}) at "
             f"{case.name(case.home)} ({case.home}) and book courier {case.courier} for it.")
    return finish(case, level, [down, overload], plan, [case.lab(case.home)],
                  [case.unbook("r0"), case.unaccession("a0")],
                  f"{case.home} is down with outage {outage} and no other lab runs {case.test}, so specimen "
                  f"{case.sid} cannot be accessioned within its stability limit.", [outage, "outage", "LIS outage"],
                  query, "sending a specimen during a lab outage", reason=outage)


build = retrying(_build)
