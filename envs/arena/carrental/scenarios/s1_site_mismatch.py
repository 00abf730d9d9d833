"""S1 Site Mismatch: the car on the customer's booking is relocated to another depot.

A rebalancing job moves the very car the agent just held away from the pickup depot
(visible in ``get_vehicle_status``). Easy: another car of the class at the depot takes over.
Medium: the depot has no other; a car from another depot must be fuelled and driven over
before it can take over the booking. Hard: the job pulls the depot's second car of the class
too, so the first car must be brought back. Impossible: the car is booked at its new depot
and the only other one is in the workshop.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.authoring import Author, Plan
from sttgym.envs.arena.carrental.generator import Request, car, iso, make_task, new_city, one, rid
from sttgym.task import Task

FUEL = 50  # percent the user wants in the tank at pickup


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s, call, pred, op = city.state, author.call, author.pred, author.op
    depot = one(author, city.depots_in(one(author, ["business", "residential"])))
    near = city.nearest(depot, sorted(s["depots"]))
    elsewhere, far = near[0], near[-1]
    pickup, ret = city.trip()
    moved = city.add_vehicle(depot, city.focus)
    city.afford(depot, city.focus, pickup, ret)
    req = Request(city, depot, pickup, ret, min_fuel=FUEL)
    plan = Plan(look=[req.search()], hold=[req.hold(moved)], check=[req.quote()], confirm=[req.confirm()])
    effect = [op.set_field(path=["vehicles", moved, "depot"], value=elsewhere)]
    if level == "impossible":  # a corporate booking from the new depot pins the car there
        corp, record = city.booking_by_other(moved, elsewhere, iso(datetime.fromisoformat(ret) + timedelta(hours=2)),
                                             iso(datetime.fromisoformat(ret) + timedelta(days=2)), prefix="CORP")
        effect.append(op.set_field(path=["reservations", corp], value=record))
    triggers = [city.trigger(
        "vehicle_relocated", f"a rebalancing job moves {moved} from {depot} to {elsewhere}",
        pred.all_of(preds=[pred.has_live_booking(customer=city.user, vehicle_id=moved),
                           pred.field_equals(path=["vehicles", moved, "depot"], value=depot)]),
        effect, "get_vehicle_status", {"vehicle_id": moved}, activation=["hold_vehicle"], timing="after")]

    head = plan.upto("check") + [req.status(moved)]
    impossible = None
    if level == "easy":
        spare = city.add_vehicle(depot, city.focus)
        oracle = head + [req.swap(spare), req.confirm()]
    elif level == "medium":
        donor_depot = one(author, near[1:])
        donor = city.add_vehicle(donor_depot, city.focus, fuel=author.integer(15, 45))
        # Fuelling takes longer than a hold may last: release the stale hold, hold the donor once it is ready.
        oracle = head + [call.cancel_reservation(reservation_id=rid("hold")), req.search(), req.depots(),
                         req.search(donor_depot), call.refuel_vehicle(vehicle_id=donor), req.move(donor),
                         req.hold(donor, "again"), req.confirm("again")]
    elif level == "hard":
        spare = city.add_vehicle(depot, city.focus)
        triggers.append(city.trigger(
            "second_relocated", f"the same job pulls {spare} from {depot} to {far}",
            pred.field_equals(path=["vehicles", moved, "depot"], value=elsewhere),
            [op.set_field(path=["vehicles", spare, "depot"], value=far)], "get_vehicle_status", {"vehicle_id": spare}))
        oracle = head + [req.search(), req.status(spare), req.depots(), req.route(far), req.route(elsewhere),
                         req.move(moved), req.confirm()]
    else:
        city.add_vehicle(depot, city.focus, status="maintenance")
        oracle = head + [req.search(), req.tell(
            f"I'm sorry, I can't confirm {car(city.focus)} at {depot}: {moved} was relocated to {elsewhere} and is "
            f"booked there ({corp}), and the depot's only other one is in the workshop.")]
        impossible = req.refusal(["vehicle_relocated"], [elsewhere, corp])

    name = s["customers"][city.user]["name"]
    query = (f"Hi, I'm {name}, customer {city.user}. Please book me {car(city.focus)} at {city.name(depot)} "
             f"({depot}), pickup {pickup}, return there {ret}, with at least {FUEL}% fuel in the tank at pickup. "
             f"Hold the car, check the price, and confirm.")
    answers = {("car", "vehicle", "another", "other", "different"):
               f"Any {city.focus} is fine, as long as it's waiting for me at {depot}.",
               ("depot", "location", "pickup"): f"I can only collect at {depot}."}
    return make_task(req, query, triggers, plan.calls, oracle, "a customer with a rental to arrange", answers,
                     impossible, insist=f"It has to be at {depot} at {pickup}; I can't go anywhere else.")
