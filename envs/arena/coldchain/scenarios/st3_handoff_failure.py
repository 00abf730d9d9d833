"""ST3 Handoff Failure: the team that must sign for the doses is at a given site only within a time window.

The immunization team takes cold deliveries in person: at the clinic in the morning, then at an
outreach site. Doses are handed over only where the team is when the van arrives; their timetable
drifts during the day.

- easy: reading the session shows the team leaving the clinic before the van would arrive; the doses
  go to the outreach site, where the team is by then.
- medium: the drift is posted while the van is on the road; it is recalled and the doses are
  re-addressed to the outreach site.
- hard: as medium, but the recalled van would reach the outreach site after the team leaves; the city
  hub ships instead, and its van has to be timed to arrive once the team is there.
- impossible: the team leaves both sites before any van could reach either.
"""

from __future__ import annotations

import numpy as np

from sttgym.envs.arena.coldchain.generator import (Base, at, build_base, ceil5, deliver, delivery_checks, floor5, hhmm,
                                                   make_task, no_dangling, none_sent, plus, shipment, survey)
from sttgym.task import Call, Task
from sttgym.triggers import Mutation, Trigger


def _windows(base: Base, morning_ends: str, outreach: tuple[str, str]) -> list[dict]:
    opens = base.start[:11] + base.state["clinics"][base.clinic]["hours"]["open"]
    return [{"site_id": base.clinic, "from": opens, "until": morning_ends},
            {"site_id": base.clinic2, "from": outreach[0], "until": outreach[1]}]


def _team_there(base: Base) -> callable:
    """Whether a shipment was received where and while the team was, by the timetable in the final state."""
    def check(state: dict, shipment_: dict) -> bool:
        team = state["clinics"][base.clinic]["immunization_schedule"][base.session]["handoff"]
        return any(w["site_id"] == shipment_["destination_site_id"] and w["from"] <= shipment_["received_at"] <= w["until"]
                   for w in team)
    return check


def _drift(base: Base, new: list[dict], after_dispatch: bool) -> Trigger:
    """Reading the session shows the team's timetable shifted (once the van is on the road, if ``after_dispatch``)."""
    path = ("clinics", base.clinic, "immunization_schedule", base.session, "handoff")
    old = base.state["clinics"][base.clinic]["immunization_schedule"][base.session]["handoff"]

    def condition(s: dict, ctx) -> bool:
        rolling = s["vehicles"][base.vehicle]["status"] == "in_transit"
        return ctx.arguments.get("site_id") == base.clinic and (rolling or not after_dispatch)

    return Trigger(name="team_timetable_drift", description=f"the team now leaves {base.clinic} at {hhmm(new[0]['until'])}",
                   activation=["list_clinic_immunization_schedule"], condition=condition,
                   mutations=[Mutation(path, old, new)], observable_via="list_clinic_immunization_schedule")


def build(rng: np.random.Generator, level: str) -> Task:
    base = build_base(rng)
    reads = survey(base)
    go = deliver(base.lot, base.hub, base.clinic, base.qty, base.vehicle, [base.hub, base.clinic])
    schedule = base.state["clinics"][base.clinic]["immunization_schedule"][base.session]
    outreach = [base.hub, base.clinic2]
    recall = [Call(name="update_vehicle_status", arguments={"vehicle_id": base.vehicle, "status": "idle"}),
              Call(name="cancel_shipment", arguments={"shipment_id": shipment()})]

    if level in ("easy", "impossible"):
        nominal = reads + go
    else:  # the coordinator confirms the team's timetable once the van is on the road
        nominal = reads + go[:4] + [reads[1], go[4]]
    arrival = base.eta(nominal)
    morning_ends = ceil5(plus(arrival, int(rng.integers(4, 9)) * 5))
    starts = ceil5(plus(morning_ends, 30))
    schedule.update(start=starts, handoff=_windows(base, morning_ends, (starts, plus(starts, 180))))
    leaves = floor5(plus(arrival, -int(rng.integers(2, 5)) * 5))  # the drifted morning: gone before the van arrives

    if level == "easy":
        oracle = reads + deliver(base.lot, base.hub, base.clinic2, base.qty, base.vehicle, outreach)
        there = base.eta(oracle)
        new = _windows(base, leaves, (floor5(plus(there, -int(rng.integers(2, 5)) * 5)), plus(starts, 180)))
    elif level == "medium":
        oracle = nominal[:9] + recall + deliver(base.lot, base.hub, base.clinic2, base.qty, base.vehicle, outreach,
                                                tag="outreach")
        there = base.eta(oracle)
        new = _windows(base, leaves, (floor5(plus(there, -int(rng.integers(2, 5)) * 5)),
                                      ceil5(plus(there, int(rng.integers(6, 12)) * 5))))
    elif level == "hard":
        too_late = base.eta(nominal[:9] + recall + deliver(base.lot, base.hub, base.clinic2, base.qty, base.vehicle,
                                                           outreach, tag="outreach"))
        until = floor5(plus(too_late, -int(rng.integers(2, 4)) * 5))
        opens = floor5(plus(until, -int(rng.integers(6, 9)) * 5))
        prefix = nominal[:9] + recall + [Call(name="get_travel_time", arguments={"origin_site_id": base.hub,
                                                                                 "destination_site_id": base.clinic2}),
                                         Call(name="get_goods_inventory_at_site", arguments={"site_id": base.hub2})]
        timed = deliver(base.lot2, base.hub2, base.clinic2, base.qty, base.vehicle2, [base.hub2, base.clinic2], tag="city")
        leave_at = plus(opens, 5 - 15 - base.minutes(base.hub2, base.clinic2))  # load, drive, and arrive just after it opens
        timed[2].arguments["departure_time"] = max(leave_at, at(base, prefix + timed[:3]))
        oracle = prefix + timed
        new = _windows(base, leaves, (opens, until))
    else:
        seen = at(base, reads[:2])
        oracle = reads + [Call(name="get_travel_time", arguments={"origin_site_id": base.hub2,
                                                                  "destination_site_id": base.clinic2})]
        new = _windows(base, plus(seen, 10), (plus(seen, 20), plus(seen, 35)))
    if level != "impossible":  # the team needs time to drive to the outreach site
        new[0]["until"] = min(new[0]["until"], plus(new[1]["from"], -10))
    triggers = [_drift(base, new, after_dispatch=level in ("medium", "hard"))]

    window = schedule["handoff"]
    return make_task(
        base, level, triggers=triggers, nominal=nominal, oracle=oracle,
        checks=delivery_checks(base, set(), sites=(base.clinic, base.clinic2), on_time=_team_there(base),
                               when="where and while the immunization team was there"),
        query=f"Please get {base.qty} doses of {base.product} from lot {base.lot} at {base.hub} to the immunization "
              f"team running session {base.session}, in our van {base.vehicle}. The team signs for cold deliveries in "
              f"person: on {base.start[:10]} they are at {base.clinic} until {hhmm(window[0]['until'])}, then at the "
              f"outreach site {base.clinic2} from {hhmm(window[1]['from'])} to {hhmm(window[1]['until'])}. Register "
              "the receipt where the team takes the doses.",
        vehicle_note=f"{base.vehicle} is ours; any van holding {base.band[0]} to {base.band[1]} degrees C is fine.",
        facts=["The doses may go to whichever site the team is at when they arrive."],
        insist=f"The team has to sign for all {base.qty} doses today; leaving them without the team is not allowed.",
        refusal=f"I cannot hand the doses to the team: their timetable moved and the team leaves {base.clinic} at "
                f"{hhmm(new[0]['until'])} and {base.clinic2} at {hhmm(new[1]['until'])}, before any van can reach "
                "either site.",
        blocking=["team", "leaves", "timetable"],
        forbidden=[none_sent("no_unattended_delivery", "no doses were left at a site without the team", base,
                             (base.clinic, base.clinic2)), no_dangling(set())])
