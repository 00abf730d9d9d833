"""ST3 Handoff Failure: clock drift on the collecting courier's tracker makes it miss the relay at the hub.

The ward's specimen goes to the home lab by relay: the assigned courier collects it and hands it over at a
hub to a second courier finishing a job there. As the handoff is scheduled, the collecting courier's tracker
is found to run behind (clock drift): it is free much later than planned, reaches the hub after the relay
courier has had to leave and the handoff is missed (``get_courier`` shows the drift; the run is halted). The
accession stands; the specimen needs a new route before its stability runs out. Easy: the earliest direct
route, at once. Medium: read the couriers and labs first. Hard: read every lab and check the chosen courier.
Impossible: the relay courier's shift ends right after the planned handoff and the delayed courier's own run
arrives past the stability limit; nobody else keeps the specimen's condition.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.authoring import Plan
from sttgym.clock import format_time
from sttgym.envs.arena.clinicallab.generator import Author, Task, draw, finish, new_case, retrying


def _build(author: Author, level: str) -> Task:
    case = new_case(author)
    hub = case.hubs[0]
    first = case.courier
    here = case.state["couriers"][first]["location"]
    look = [case.read(), case.specimen(), case.lab(case.home), case.couriers(), case.travel(case.ward, hub),
            *case.ward_records()]
    register = case.register(case.home)
    cost = case.time_after(look + register)
    meets = cost + timedelta(minutes=(case.minutes(here, case.ward) or 0) + 5 + (case.minutes(case.ward, hub) or 0))
    relay = case.add_courier(hub, available_from=format_time(meets - timedelta(minutes=5)))
    plan = Plan(look=look, register=register, book=[case.relay(first, hub, relay)])
    if not case.result_of(plan.calls).get("success"):
        raise ValueError(f"the relay does not work: {case.result_of(plan.calls)}")
    if level == "impossible":
        end = datetime.fromisoformat(case.result_of(plan.calls)["data"]["arrives"]) + timedelta(minutes=10)
        case.state["couriers"][relay]["shift_end"] = format_time(end)
    else:
        for _ in range(author.integer(0, 1)):
            case.add_courier(draw(author, case.hubs + case.wards[1:] + case.labs[1:]))
    minutes = 5 * author.integer(20, 30) if level == "impossible" else 5 * author.integer(8, 14)
    note = f"tracker clock drift: true availability {minutes} minutes later than shown"
    trigger = case.on_write("handoff_slips", f"{first}'s clock drift makes it miss the relay at {hub}",
                            "schedule_handoff",
                            [author.op.slip_courier(courier_id=first, minutes=minutes, note=note)],
                            ("get_courier", {"courier_id": first}))
    query = (f"{case.name(case.ward)}: specimen {case.sid} (order {case.oid}, {case.test}) goes to "
             f"{case.name(case.home)} ({case.home}). Please accession it and relay it: courier {first} collects, "
             f"hands over at {case.name(hub)} ({hub}) to courier {relay}.")
    return finish(case, level, [trigger], plan, [case.courier_info(first)], [case.unbook("r0")],
                  f"courier {first}'s tracker drifted {minutes} minutes, so the handoff at {hub} is missed, and no "
                  f"route left gets specimen {case.sid} to {case.home} within its stability limit.",
                  [f"{minutes} minutes", "missed", "clock drift", "handoff missed"], query,
                  "relaying a specimen across town", keep_lab=True, reason=note)


build = retrying(_build)
