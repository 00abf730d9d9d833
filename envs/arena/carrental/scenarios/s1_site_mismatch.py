"""S1 Site Mismatch: the car on the customer's booking is relocated to another depot.

A rebalancing job moves the very car the agent just held away from the pickup depot
(visible in ``get_vehicle_status``). Easy: another car of the class at the depot takes over.
Medium: the depot has no other; a car from another depot must be fuelled and driven over
before it can take over the booking. Hard: the job pulls the depot's second car of the class
too, so the first car must be brought back. Impossible: the car is booked at its new depot
and the only other one is in the workshop.
"""

from __future__ import annotations

from sttgym.clock import shift
from sttgym.envs.arena.carrental.generator import Author, Task, car, make_task, new_city, one, rid

FUEL = 50  # percent the user wants in the tank at pickup
SECOND = {"easy": "available", "hard": "available", "impossible": "maintenance"}  # the depot's other car, if any


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    call, pred = author.call, author.pred
    depot = city.depot("business", "residential")
    near = city.nearest(depot, sorted(city.state["depots"]))
    elsewhere, far = near[0], near[-1]
    pickup, ret = city.trip()
    moved = city.add_vehicle(depot, city.focus)
    req = city.request(depot, pickup, ret, min_fuel=FUEL)
    spare = city.add_vehicle(depot, city.focus, status=SECOND[level]) if level in SECOND else ""
    # Impossible: a corporate booking from the new depot pins the car there.
    corp, pin = city.taken(moved, elsewhere, shift(ret, hours=2), shift(ret, days=2), "CORP")
    triggers = [city.on_hold(
        "vehicle_relocated", f"a rebalancing job moves {moved} from {depot} to {elsewhere}",
        [city.set("vehicles", moved, "depot", value=elsewhere)] + [pin] * (level == "impossible"),
        ("get_vehicle_status", moved),
        pred.all_of(preds=[pred.has_live_booking(customer=city.user, vehicle_id=moved),
                           pred.field_equals(path=["vehicles", moved, "depot"], value=depot)]))]

    def medium() -> list:  # fuelling outlasts a hold: release the stale one, hold the donor once it is ready
        donor = city.add_vehicle(donor_depot := one(author, near[1:]), city.focus, fuel=author.integer(15, 45))
        return [call.cancel_reservation(reservation_id=rid("hold")), req.search(), req.depots(),
                req.search(donor_depot), call.refuel_vehicle(vehicle_id=donor), req.move(donor),
                *req.book(donor, "again")]

    def hard() -> list:
        triggers.append(city.cascade("second_relocated", f"the same job pulls {spare} from {depot} to {far}",
                                     ["vehicles", moved, "depot"], elsewhere, city.sets("vehicles", spare, depot=far),
                                     ("get_vehicle_status", spare)))
        return [req.search(), req.status(spare), req.depots(), req.route(far), req.route(elsewhere), req.move(moved),
                req.confirm()]

    fixes = {"easy": lambda: req.take_over(spare), "medium": medium, "hard": hard, "impossible": lambda: [
        req.search(), *req.refuse(f"I can't confirm {car(city.focus)} at {depot}: {moved} was relocated to "
                                  f"{elsewhere} and is booked there ({corp}), and the depot's only other one is in "
                                  f"the workshop.", ["vehicle_relocated"], [elsewhere, corp])]}
    plan = req.booking(moved)
    query = (f"Hi, I'm {req.who}. Please book me {car(city.focus)} at {city.name(depot)} ({depot}), pickup "
             f"{pickup}, return there {ret}, with at least {FUEL}% fuel in the tank at pickup. Hold the car, check "
             f"the price, and confirm.")
    answers = {("car", "vehicle", "another", "other", "different"):
               f"Any {city.focus} is fine, as long as it's waiting for me at {depot}.",
               ("depot", "location", "pickup"): f"I can only collect at {depot}."}
    return make_task(req, query, triggers, plan, plan.upto("check") + [req.status(moved)] + fixes[level](),
                     "a customer with a rental to arrange", answers,
                     insist=f"It has to be at {depot} at {pickup}; I can't go anywhere else.")
