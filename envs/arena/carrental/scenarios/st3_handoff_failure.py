"""ST3 Handoff Failure: the car's previous renter drops it late, at another depot.

The user needs a car this afternoon. The only one of the class at their depot is on rent,
due back there before the pickup: a tight but valid handoff. Once the agent holds it, the
previous renter reports they will drop it later and at another depot (visible in
``get_vehicle_status``), so the handoff fails in time and place at once. Easy: a transfer
from the drop-off depot right after the return still makes the pickup. Medium: it would not,
so a free car from another depot takes over the booking. Hard: the evening rush slows every
road out of the drop-off depot, and a car from elsewhere must take over. Impossible: nothing
else of the class can be there in time.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.authoring import Author, Plan
from sttgym.envs.arena.carrental.generator import Request, car, iso, make_task, new_city, one
from sttgym.task import Task

RUSH = 35  # minutes the evening rush adds to every road out of the drop-off depot
SLACK = {"easy": 10, "medium": -10, "hard": 10, "impossible": -10}  # minutes a transfer right after the drop-off


def build(author: Author, level: str) -> Task:  # arrives before the pickup
    city = new_city(author)
    s, pred, op = city.state, author.pred, author.op
    depot = one(author, city.depots_in(one(author, ["business", "residential"])))
    others = city.nearest(depot, sorted(s["depots"]))
    dropoff = one(author, others)
    donor_depot = one(author, [d for d in others if d != dropoff])
    pickup = city.start + timedelta(minutes=5 * author.integer(30, 39))
    ret = iso(city.at(author.integer(2, 3), author.integer(9, 17)))
    first = city.add_vehicle(dropoff, city.focus)
    req = Request(city, depot, iso(pickup), ret)
    # How long the drive from the drop-off takes, measured with the real transfer tool.
    sent = author.dry_run(s, iso(city.start), [req.move(first)]).results[0]["data"]
    late = pickup - (datetime.fromisoformat(sent["arrives"]) - datetime.fromisoformat(sent["departs"])) \
        - timedelta(minutes=SLACK[level])
    due = late - timedelta(minutes=5 * author.integer(6, 9))
    s["vehicles"][first].update(depot=depot, available_from=iso(due))
    city.afford(depot, city.focus, req.pickup, ret)
    triggers = [city.trigger(
        "late_dropoff", f"{first}'s renter will drop it at {dropoff} at {iso(late)}, not at {depot}",
        pred.has_live_booking(customer=city.user, vehicle_id=first),
        [op.set_field(path=["vehicles", first, "depot"], value=dropoff),
         op.set_field(path=["vehicles", first, "available_from"], value=iso(late))],
        "get_vehicle_status", {"vehicle_id": first}, activation=["hold_vehicle"], timing="after")]
    plan = Plan(look=[req.search()], hold=[req.hold(first)], check=[req.quote()], confirm=[req.confirm()])
    head = plan.upto("check") + [req.status(first), req.route(dropoff)]
    donor = city.add_vehicle(donor_depot, city.focus) if level in ("medium", "hard") else ""
    fetch = [req.depots(), req.search(donor_depot)] + ([req.route(donor_depot)] if level == "hard" else [])
    impossible = None
    if level == "easy":
        oracle = head + [req.move(first), req.confirm()]
    elif level in ("medium", "hard"):
        oracle = head + fetch + [req.move(donor), req.swap(donor), req.confirm()]
        if level == "hard":
            triggers.append(city.trigger(
                "evening_rush", f"the evening rush adds {RUSH} minutes to every road out of {dropoff}",
                pred.field_equals(path=["vehicles", first, "depot"], value=dropoff),
                [op.set_field(path=["roads", r, "minutes"], value=x["minutes"] + RUSH)
                 for r, x in sorted(s["roads"].items()) if dropoff in (x["a"], x["b"])],
                "plan_route", {"origin_id": dropoff, "destination_id": depot}))
    else:
        city.add_vehicle(depot, city.focus, status="maintenance")
        oracle = head + [req.search(), req.tell(
            f"I'm sorry, I can't have {car(city.focus)} ready at {depot} at {req.pickup[11:]}: {first} is now "
            f"returned late, at {dropoff} at {iso(late)[11:]}, and the depot's other one is in the workshop.")]
        impossible = req.refusal(["late_dropoff"], [iso(late)[11:], dropoff])

    name = s["customers"][city.user]["name"]
    query = (f"Hello, this is {name}, customer {city.user}. Please book me {car(city.focus)} at {city.name(depot)} "
             f"({depot}) for this afternoon: pickup {req.pickup} sharp, return there {ret}. Hold a car, check the "
             f"price and confirm it.")
    answers = {("car", "vehicle", "another", "other"): f"Any {city.focus} is fine.",
               ("time", "later", "pickup", "wait"): f"I have to leave at {req.pickup}; I can't wait for a car."}
    return make_task(req, query, triggers, plan.calls, oracle, "a customer with an afternoon appointment", answers,
                     impossible, insist=f"I must drive off from {depot} at {req.pickup}; a later car is no use.")
