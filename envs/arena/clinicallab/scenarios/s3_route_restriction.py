"""S3 Route Restriction: a road closure forces the courier into a detour past the stability limit.

The ward's specimen is accessioned at the home lab and a courier booked. As the pickup is booked, the road
between the ward and the lab that the run takes is closed (``get_travel_time`` from the ward to the lab shows
it closed; the run is retimed over the detour, or halted when no detour exists), so the specimen would be
accessioned after it goes off. Easy: the earliest route still open (another lab or another way), at once.
Medium: read the labs and couriers first. Hard: the lab nearest the ward is full today (a trap). Impossible:
the only lab running the test is reachable only over the detour, which takes too long.
"""

from __future__ import annotations

from sttgym.envs.arena.clinicallab.generator import Author, Task, draw, finish, new_case, retrying


def _build(author: Author, level: str) -> Task:
    case = new_case(author)
    if level != "impossible":
        case.add_courier(draw(author, case.hubs + case.wards[1:] + case.labs[1:]))
    plan = case.nominal()
    path = case.result_of(plan.calls)["data"]["legs"][-1]["path"]
    if len(path) < 2:
        raise ValueError("the run does not drive")
    roads = case.state["roads"]
    hops = {frozenset(pair) for pair in zip(path, path[1:])}
    cut = [r for r, x in sorted(roads.items()) if frozenset((x["a"], x["b"])) in hops]
    works = f"RW-{author.serial(1000, 9999)}"
    note = f"closed: emergency works {works}"
    trigger = case.on_write("road_closed", f"roads {', '.join(cut)} close for works {works}", "book_pickup",
                            [op for r in cut for op in case.sets("roads", r, open=False, note=note)]
                            + [author.op.retime_runs(note=f"detour around works {works}")],
                            ("get_travel_time", {"origin_id": case.ward, "destination_id": case.home}))
    query = (f"{case.name(case.ward)} here. Specimen {case.sid} (order {case.oid}, {case.test}) is ready: please "
             f"accession it at {case.name(case.home)} ({case.home}) and book courier {case.courier}.")
    return finish(case, level, [trigger], plan, [case.travel(case.ward, case.home)],
                  [case.unbook("r0"), case.unaccession("a0")],
                  f"the roads from the ward are closed for works {works}; the detour gets specimen {case.sid} to "
                  f"{case.home}, the only lab running {case.test}, only after its stability limit.",
                  [works, *cut, "roads closed", "closed for works", "emergency works"], query,
                  "sending a specimen across town", reason=works)


build = retrying(_build)
