"""S1 Site Mismatch: the car on the customer's booking is relocated to another depot.

A rebalancing job moves the car the agent just held, whichever of the class it is, away from the
pickup depot (visible in ``get_vehicle_status``; the failed confirmation names the new depot).
Easy: another car of the class at the depot takes over (or the moved car is driven back). Medium:
the depot has no other; a car from another depot must be fuelled and driven over before it can take
over the booking (or the moved car is driven back). Hard: the job pulls the depot's other car of
the class too, so a car must be brought back. Impossible: a corporate booking pins the moved car
at its new depot (``get_vehicle_status``), and the only other car of the class an agent can find,
at another depot, is cut off by roadworks on every road into that depot (``plan_route``): the
refusal must say why those fail besides the relocation.
"""

from __future__ import annotations

from sttgym.clock import shift
from sttgym.envs.arena.carrental.generator import Author, Task, car, make_task, new_city, one, rid

FUEL = 50  # percent the user wants in the tank at pickup
SECOND = {"easy": "available", "hard": "available", "impossible": "maintenance"}  # the depot's other car, if any


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    call, op = author.call, author.op
    depot = city.depot("business", "residential")
    near = city.nearest(depot, sorted(city.state["depots"]))
    elsewhere, far = near[0], near[-1]
    pickup, ret = city.trip()
    moved = city.add_vehicle(depot, city.focus)
    req = city.request(depot, pickup, ret, min_fuel=FUEL, moves=level)
    spare = city.add_vehicle(depot, city.focus, status=SECOND[level]) if level in SECOND else ""
    job = f"RB-{author.serial()}"
    notice = f"Rebalancing job {job}: {city.focus} cars moved out"
    # Impossible: a corporate booking from the new depot pins the car there (the depot's only free one).
    corp, pin = city.taken(moved, elsewhere, shift(ret, hours=2), shift(ret, days=2), "CORP")
    # The job reads the user's booking: whichever car of the class the agent holds, it meets that one.
    triggers = [city.on_hold(
        "vehicle_relocated", f"rebalancing job {job} moves the car the user holds from {depot} to {elsewhere}",
        [op.relocate_booked(customer=city.user, depot_id=depot, to_depot_id=elsewhere),
         city.set("depots", depot, "notice", value=notice)] + [pin] * (level == "impossible"),
        ("get_vehicle_status", moved), depot_id=depot)]

    def medium() -> list:  # fuelling outlasts a hold: release the stale one, hold the donor once it is ready
        donor = city.add_vehicle(donor_depot := one(author, near[1:]), city.focus, fuel=author.integer(15, 45))
        return [call.cancel_reservation(reservation_id=rid("hold")), req.search(), req.depots(),
                req.search(donor_depot), call.refuel_vehicle(vehicle_id=donor), req.move(donor),
                *req.book(donor, "again")]

    def hard(first: str, other: str) -> list:  # the job pulls the other car too: the first one is driven back
        return [req.search(), req.status(other), req.depots(), req.route(far), req.route(elsewhere), req.move(first),
                req.confirm()]

    if level == "hard":
        triggers.append(city.cascade("second_relocated", f"job {job} pulls the depot's other {city.focus} to {far}",
                                     ["depots", depot, "notice"], notice,
                                     [op.relocate_free(depot_id=depot, vehicle_class=city.focus, to_depot_id=far)],
                                     ("get_vehicle_status", spare)))
    def impossible() -> list:
        """The moved car is pinned by a corporate booking; the one other car of the class, at another depot, is cut
        off by roadworks closing every road into its depot (closed from the start: a fact found only by routing from
        there)."""
        site = one(author, near[1:])
        donor = city.add_vehicle(site, city.focus)
        for road in city.roads_of(site):
            city.state["roads"][road]["open"] = False
        return [req.search(), req.depots(), req.search(site), req.route(site), *req.refuse(
            f"I can't confirm {car(city.focus)} at {depot}: a rebalancing job relocated {moved} to {elsewhere}, "
            f"where a corporate booking ({corp}) now holds it, so it can't be driven back; the only other "
            f"{city.focus}, {donor} at {site}, is cut off: every road out of {site} is closed.", ["vehicle_relocated"],
            [elsewhere, job, "rebalancing job", "car relocated", "car moved", "relocated"],
            [corp, "corporate booking", donor, site, "cut off", "roads closed", "road closed", "no open road"])]

    fixes = {"easy": lambda: req.take_over(spare), "medium": medium, "hard": lambda: hard(moved, spare),
             "impossible": impossible}
    plan = req.booking(moved)
    looked = plan.upto("check")
    # The other first choice (the depot's second car) meets the job just the same; a moved car may be driven back.
    first_spare = [req.search(), req.hold(spare), req.quote()]
    alternatives = {"easy": [first_spare + [req.status(spare), *req.take_over(moved)],
                             looked + [req.move(moved), req.confirm()]],
                    "medium": [looked + [req.move(moved), req.confirm()]],
                    "hard": [first_spare + hard(spare, moved)[1:]]}.get(level, [])
    req.asked = f"book me {car(city.focus)} at {city.name(depot)} ({depot}), pickup {pickup}, return there {ret}"
    req.needs = f"with at least {FUEL}% fuel in the tank at pickup"
    query = (f"Hi, I'm {req.who}. Please {req.asked}, {req.needs}. Hold the car, check the price, and confirm.")
    answers = {("car", "vehicle", "another", "other", "different"):
               f"Any {city.focus} is fine, as long as it's waiting for me at {depot}.",
               ("depot", "location", "pickup"): f"I can only collect at {depot}."}
    return make_task(req, query, triggers, plan, looked + [req.status(moved)] + fixes[level](),
                     "a customer with a rental to arrange", answers, alternatives=alternatives,
                     insist=f"{req.constraints()}, with at least {FUEL}% fuel; which car it is doesn't matter, "
                     "and I can't go anywhere else.")
