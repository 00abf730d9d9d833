"""ST3 Handoff Failure: the team that must sign for the doses is at a given site only within a time window.

The immunization team takes cold deliveries in person: at the clinic in the morning, then at an
outreach site. Doses are handed over only where the team is when the van arrives; their timetable
drifts during the day.

- easy: while the agent reads, the team's timetable drifts: it leaves the clinic before the van would
  arrive; the doses go to the outreach site, where the team is by then.
- medium: the drift is posted once the van is on the road; it is recalled and the doses are
  re-addressed to the outreach site.
- hard: as medium, but the recalled van would reach the outreach site after the team leaves; the city
  hub ships there instead.
- impossible: the team leaves both sites before any van could reach either.
"""

from __future__ import annotations

from sttgym.authoring import Author
from sttgym.envs.arena.coldchain.generator import (arrival, build_base, calls, ceil5, deliver, fields, floor5, gate,
                                                   hhmm, ladder, maybe, nominal, plus, posted, task, trigger, unwind)
from sttgym.task import Task


def build(author: Author, level: str) -> Task:
    r = build_base(author)
    call, pred = author.call, author.pred
    plan = nominal(r)
    session = r.state["clinics"][r.clinic]["immunization_schedule"][r.session]
    opens = r.start[:11] + r.state["clinics"][r.clinic]["hours"]["open"]

    def windows(morning_ends: str, outreach_from: str, outreach_until: str) -> list[dict]:
        return [{"site_id": r.clinic, "from": opens, "until": morning_ends},
                {"site_id": r.clinic2, "from": outreach_from, "until": outreach_until}]

    reached = arrival(r.run(plan.calls), r.clinic)
    morning_ends = ceil5(plus(reached, author.integer(4, 8) * 5))
    outreach = ceil5(plus(morning_ends, 30))
    session.update(start=outreach, handoff=windows(morning_ends, outreach, plus(outreach, 180)))
    leaves = floor5(plus(reached, -author.integer(2, 4) * 5))  # the drifted morning: gone before the van arrives
    schedule = call.list_clinic_immunization_schedule(site_id=r.clinic)
    moment = r.early()  # when the drift is posted at the levels where it comes while the agent reads
    to_outreach = deliver(r, r.lot, r.hub, r.vehicle, [r.hub, r.clinic2], destination=r.clinic2, tag="outreach")
    unwinding = unwind(r, plan, "go", schedule, recall=True)
    # The doses re-addressed to the outreach site: the user's lot, or (hard) the city hub's.
    milestones = ladder(r, level, "team_timetable_drift", f"the doses were re-addressed to {r.clinic2}, where the "
                        "team will be", stale={"goods_id": r.lot, "destination_site_id": r.clinic},
                        goods_id=r.lot2 if level == "hard" else r.lot, destination_site_id=r.clinic2)
    blocking = []
    if level == "easy":
        oracle = plan["read"] + [schedule, *maybe(r, call.get_travel_time(origin_site_id=r.hub,
                                                                          destination_site_id=r.clinic2))] + calls(
            to_outreach)
        there = arrival(r.run(oracle), r.clinic2)
        new = windows(leaves, floor5(plus(there, -author.integer(2, 4) * 5)), plus(outreach, 180))
    elif level == "medium":
        oracle = unwinding + calls(to_outreach)
        there = arrival(r.run(oracle), r.clinic2)
        new = windows(leaves, floor5(plus(there, -author.integer(2, 4) * 5)),
                      ceil5(plus(there, author.integer(6, 11) * 5)))
    elif level == "hard":
        too_late = arrival(r.run(unwinding + calls(to_outreach)), r.clinic2)
        oracle = unwinding + [
            call.get_travel_time(origin_site_id=r.hub, destination_site_id=r.clinic2), *maybe(r, call.list_sites()),
            call.list_lots(product=r.product), call.list_vehicles_at_site(site_id=r.hub2)] + calls(
            deliver(r, r.lot2, r.hub2, r.vehicle2, [r.hub2, r.clinic2], destination=r.clinic2, tag="city"))
        there = arrival(r.run(oracle), r.clinic2)
        new = windows(leaves, floor5(plus(there, -author.integer(2, 5) * 5)),
                      floor5(plus(too_late, -author.integer(2, 3) * 5)))
    else:  # gone from both sites before any van could be loaded and driven to either
        new = windows(plus(moment, 8), plus(moment, 10), plus(moment, 16))
        for site, team in ((r.clinic, new[0]), (r.clinic2, new[1])):  # even the city hub's van, loaded at once
            fastest = deliver(r, r.lot2, r.hub2, r.vehicle2, [r.hub2, site], destination=site)
            assert team["until"] < arrival(r.run(calls(fastest)), site), "the team must be gone before any van"
        oracle = plan["read"] + [schedule, call.list_lots(product=r.product),
                                 call.get_travel_time(origin_site_id=r.hub2, destination_site_id=r.clinic2)]
        blocking = [hhmm(new[0]["until"]), hhmm(new[1]["until"])]
    if level != "impossible":  # the team needs time to drive to the outreach site
        new[0]["until"] = min(new[0]["until"], plus(new[1]["from"], -10))
    triggers = [trigger(r, "team_timetable_drift", f"the team now leaves {r.clinic} at {hhmm(new[0]['until'])}",
                        effect=fields(r, r.session_path, handoff=new), seen_by=schedule.name,
                        seen_with=schedule.arguments,  # medium, hard: posted once the van is on the road
                        **posted(r, level, moment, activation=["update_vehicle_status"], timing="after",
                                 when=pred.on_road_to(site_id=r.clinic, product=r.product)))]

    team = session["handoff"]
    return task(
        r, level, triggers=triggers, plan=plan, oracle=oracle, milestones=milestones, sites=[r.clinic, r.clinic2],
        team=True,
        query=f"Please get {r.qty} doses of {r.product} from lot {r.lot} at {r.hub} to the immunization team running "
              f"session {r.session}, in our van {r.vehicle}. The team signs for cold deliveries in person: on "
              f"{r.start[:10]} they are at {r.clinic} until {hhmm(team[0]['until'])}, then at the outreach site "
              f"{r.clinic2} from {hhmm(team[1]['from'])} to {hhmm(team[1]['until'])}. Register the receipt where the "
              "team takes the doses.",
        facts=["The doses may go to whichever site the team is at when they arrive."],
        insist=f"The team has to sign for all {r.qty} doses today; leaving them without the team is not allowed.",
        refusal=f"I can't hand the doses to the team: their timetable moved, and the team now leaves {r.clinic} at "
                f"{hhmm(new[0]['until'])} and {r.clinic2} at {hhmm(new[1]['until'])}, before any van can reach "
                "either site.",
        blocking=blocking,
        forbidden=[gate("no_unattended_delivery", "no doses were left at a site without the team",
                        pred.none_sent(product=r.product, sites=[r.clinic, r.clinic2]))])
