"""ST3 Handoff Failure: the team that must sign for the doses is at a given site only within a time window.

The immunization team takes cold deliveries in person: at the clinic in the morning, then at an
outreach site. Doses are handed over only where the team is when the van arrives; their timetable
drifts during the day.

- easy: while the agent reads, the team's timetable drifts: it leaves the clinic before the van would
  arrive; the doses go to the outreach site, where the team is by then.
- medium: the drift is posted once the van is on the road; it is recalled and the doses are
  re-addressed to the outreach site.
- hard: as medium, but the recalled van would reach the outreach site after the team leaves; the city
  hub ships there instead; then the late registrations (``Region.recounted``).
- impossible: once the van is on the road, the drifted timetable has the team leave both sites before any
  van could reach either.

Any usable stock in any van that holds the band will do, to whichever site the team is at when it arrives.
"""

from sttgym.clock import hhmm, shift
from sttgym.envs.arena.coldchain.generator import TEAM, Author, Task, build_base, maybe


def build(author: Author, level: str) -> Task:
    r = build_base(author, level)
    r.sites, r.team = [r.clinic, r.clinic2], True
    call, session = author.call, r.state["clinics"][r.clinic]["immunization_schedule"][r.session]
    opens, reached = r.start[:11] + r.state["clinics"][r.clinic]["hours"]["open"], r.arrival(r.plan.calls)

    def windows(morning_ends: str, outreach_from: str, outreach_until: str) -> list[dict]:
        return [{"site_id": r.clinic, "from": opens, "until": morning_ends},
                {"site_id": r.clinic2, "from": outreach_from, "until": outreach_until}]

    outreach = shift(r.later(reached, 4, 8), 30)  # the team's timetable as booked: at the clinic when the van comes
    session.update(start=outreach, handoff=windows(shift(outreach, -30), outreach, shift(outreach, 180)))
    r.settled, leaves = True, r.earlier(reached, 2, 4)  # the drifted morning: gone before the van arrives
    schedule = call.list_clinic_immunization_schedule(site_id=r.clinic)
    to_outreach, travel = r.ship(r.lot, r.hub, r.vehicle, to=r.clinic2, tag="outreach"), r.travel(r.hub, r.clinic2)
    # The doses re-addressed to the outreach site (hard: the city hub's, as the recalled van would be too late).
    fix = {"easy": lambda: maybe(r, travel) + to_outreach, "medium": lambda: to_outreach,
           "hard": lambda: [travel] + r.source(to=r.clinic2),
           "impossible": lambda: [r.lots(), r.travel(r.hub2, r.clinic2)]}[level]()
    # Topped up for the late registrations before the team's timetable is drawn round the oracle's arrival; the
    # story's trigger follows from that timetable, so the top-up is laid out without it.
    oracle = r.recounted(r.respond(schedule, then=fix, phase="go", recall=True), [])
    if level == "impossible":  # gone from both sites before any van could be loaded and driven to either
        new = windows(shift(r.moment, 8), shift(r.moment, 10), shift(r.moment, 16))
        for site, team in ((r.clinic, new[0]), (r.clinic2, new[1])):  # even the city hub's van, loaded at once
            assert team["until"] < r.arrival(r.ship(r.lot2, r.hub2, r.vehicle2, to=site), site=site), "too early"
    else:  # the team is at the outreach site when the van gets there; until when, by level
        there, stale = r.arrival(oracle, site=r.clinic2), r.respond(schedule, then=to_outreach, phase="go", recall=True)
        until = {"easy": lambda: shift(outreach, 180), "medium": lambda: r.later(there, 6, 11),
                 "hard": lambda: r.earlier(r.arrival(stale, site=r.clinic2), 2, 3)}[level]()
        new = windows(leaves, r.earlier(there, 2, 4), until)
        new[0]["until"] = min(new[0]["until"], shift(new[1]["from"], -10))  # the team needs time to drive there
    triggers = [r.change("team_timetable_drift", f"the team now leaves {r.clinic} at {hhmm(new[0]['until'])}",
                         schedule, r.set(r.session_path, handoff=new), **r.cause(**r.on_road()))]
    team, gone = session["handoff"], [hhmm(new[0]["until"]), hhmm(new[1]["until"])]
    return r.task(
        triggers, oracle, blocking=[*gone, "timetable"], milestones=r.ladder("team_timetable_drift"),
        query=f"Please get doses of {r.product} from lot {r.lot} at {r.hub} to the immunization team running "
              f"session {r.session}, in our van {r.vehicle}. {TEAM}: on "
              f"{r.start[:10]} they are at {r.clinic} until {hhmm(team[0]['until'])}, then at the outreach site "
              f"{r.clinic2} from {hhmm(team[1]['from'])} to {hhmm(team[1]['until'])}. Register the receipt where the "
              "team takes the doses.",
        facts=["The doses may go to whichever site the team is at when they arrive."],
        insist=r.insist("Leaving them without the team is not allowed.", where="be signed for by the team in person "
                        "today, at whichever of its sites it is when they arrive"),
        refusal=f"I can't hand the doses to the team: their timetable moved, and the team now leaves {r.clinic} at "
                f"{gone[0]} and {r.clinic2} at {gone[1]}, before any van can reach either site.",
        forbidden=[r.none_sent("no_unattended_delivery", "no doses were left at a site without the team", TEAM,
                               [r.clinic, r.clinic2])])
