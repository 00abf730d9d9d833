"""S3 Route Restriction: the destination becomes a low-emission zone, so the petrol trip cannot end there.

The member is arriving at their destination in a petrol car and asks the console to end the trip
there, or anywhere within a few minutes' walk if parking there fails. The agent reads the trip and
the zone; as it ends the trip, the city's low-emission scheme switches on for the destination and
petrol cars may no longer park in it (visible in ``get_zone`` and ``list_zones``). Easy: the nearest
zone on foot takes petrol cars: end the trip there. Medium: that zone is closed to parking for
street works (a standing rule), and two zones further within the walk take petrol cars. Hard: the
scheme spreads to the nearest zone too as the agent parks, and again two zones within the walk are
left. Impossible: the nearest zone on foot is closed to parking for street works (as at medium) and
the rest of the walk is an older clean-air zone that takes no petrol cars either (standing rules,
in ``list_zones`` and each ``get_zone``), which a refusal must say.

The member has an errand in a zone near the destination on every level, told when asked. At medium and
hard it is one of the two zones left (drawn apart from walk, id and listing order): the member asked to
be consulted before the car is left outside the destination.
"""

from __future__ import annotations

from sttgym.checklist import Check
from sttgym.clock import hhmm, shift
from sttgym.envs.arena.carshare.generator import (Author, Plan, Ride, Task, consulted, drive_away, make_task, new_city,
                                                  one, withheld_zone)
from sttgym.judge import Impossibility

REACH = {"easy": 1, "medium": 3, "hard": 3, "impossible": 2}  # the member walks as far as this nearest zone
ASKED = ["zone", "zones", "where", "park", "parking", "requirement", "requirements", "prefer", "preference"]


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s, call, pred = city.state, author.call, author.pred
    dest = one(author, city.kinds["business"] + city.kinds["nightlife"])
    near = [z for z in city.by_walk(dest) if s["zones"][z]["kind"] != "airport"]
    walk = city.walk(dest, near[REACH[level] - 1])
    ride = Ride(city, dest, walk)
    # The member drove in from beyond the walk (the airport, if nothing in town is): the zone the car was taken
    # in is no place to leave it.
    origin = one(author, drive_away(city, dest, walk, [z for z in sorted(s["zones"]) if z != dest]))
    car = city.add_car(origin, energy="petrol", status="in_use")
    trip = f"TRP-{author.serial()}"
    s["trips"][trip] = {"member": city.user, "car": car, "reservation": None, "start_zone": origin,
                        "destination": dest, "started_at": shift(city.start, -author.integer(10, 30)),
                        "level_at_start": s["cars"][car]["level_pct"], "status": "open", "end_zone": None,
                        "ended_at": None, "planned_end_at": shift(city.start, author.integer(2, 8)), "promo": None,
                        "estimate": 12, "price": None}
    code = f"LEZ-{author.serial()}"
    notice = f"low-emission zone {code}: no petrol cars from {hhmm(city.start)}"
    within = [z for z in near if city.walk(dest, z) <= walk]
    works = "street works: no parking"
    if level in ("medium", "impossible"):
        s["zones"][near[0]].update(parking="no_parking", notice=works)
    caz = f"CAZ-{author.serial(10, 99)}" if level == "impossible" else ""
    if caz:  # the rest of the walk is an older clean-air zone: it takes no petrol cars either
        for zone in within[1:]:
            s["zones"][zone].update(petrol_allowed=False, notice=f"clean-air zone {caz}: no petrol cars")
    spread = [near[0]] if level == "hard" else []
    triggers = [city.trigger("low_emission_zone", f"{dest} becomes a low-emission zone as the member parks",
                             pred.call_argument(name="trip_id", value=trip),
                             city.sets("zones", dest, petrol_allowed=False, notice=notice),
                             ("get_zone", {"zone_id": dest}), activation=("end_trip",))]
    if spread:
        triggers.append(city.cascade(
            "scheme_widens", f"the scheme covers {', '.join(spread)} as well", ["zones", dest, "petrol_allowed"], False,
            [op for z in spread for op in city.sets("zones", z, petrol_allowed=False, notice=notice)],
            ("get_zone", {"zone_id": spread[0]}), activation=("end_trip",)))
    plan = Plan(look=[call.get_trip(trip_id=trip), call.get_zone(zone_id=dest)],
                park=[call.end_trip(trip_id=trip, zone_id=dest)])

    def walk_from(zone: str):
        return call.get_travel_time(from_zone_id=dest, to_zone_id=zone, mode="walk")

    def park(zone: str) -> list:
        return [walk_from(zone), call.end_trip(trip_id=trip, zone_id=zone)]

    see = [call.get_zone(zone_id=dest), call.list_zones()]
    asks = level in ("medium", "hard")  # the member's errand decides between the zones left
    # Where the errand may be: one of the two zones left (medium, hard: it decides between them), the zone the car
    # goes to anyway (easy), or any zone of the walk, as barred as the rest (impossible).
    left = {"easy": [near[0]], "impossible": within}.get(level, [z for z in within if z != near[0]])
    wanted, errand = withheld_zone(city, left, ASKED, "If it can't be in the destination, leave it in {zone}: "
                                   "I'm collecting my daughter from school there afterwards.")
    ask = ride.tell(f"Your destination no longer takes petrol cars. Within your walk, {' and '.join(left)} "
                    "still do: in which zone should I park it?")
    fixes = {
        "easy": lambda: [*see, *park(near[0])],
        "medium": lambda: [*see, call.get_zone(zone_id=near[0]), call.get_zone(zone_id=near[1]),
                           call.get_zone(zone_id=near[2]), ask, *park(wanted)],
        "hard": lambda: [*see, call.get_zone(zone_id=near[0]), call.get_zone(zone_id=near[1]), walk_from(near[1]),
                         call.get_zone(zone_id=near[2]), walk_from(near[0]), ask, *park(wanted)],
        "impossible": lambda: [*see, *(call.get_zone(zone_id=z) for z in within), walk_from(near[0]), ride.tell(
            f"I'm sorry, I can't end your trip within {walk} minutes' walk of {dest}: low-emission zone {code} now "
            f"bans petrol cars like {car} from {dest}, {near[0]} is closed to parking for street works, and "
            f"{' and '.join(within[1:])} {'is' if len(within) == 2 else 'are'} in clean-air zone {caz}, where petrol "
            "cars can't park either, so the car has to be parked further out.")]}
    consult = "ask me before you leave it elsewhere"
    elsewhere = (f"{consult} within {walk} minutes' walk: I have an errand to run" if asks
                 else f"anywhere within {walk} minutes' walk of it will do")
    where = f"if I can't park in {dest}, {elsewhere}"
    if level == "impossible":
        ride.impossible = Impossibility(changed_by=["low_emission_zone"], blocking_facts=[
            code, "low-emission zone", "bans petrol", "petrol ban", "petrol cars banned"], no_alternative=[
            "street works", "road works", "roadworks", "parking closed", caz, "clean-air zone", "clean air"],
            forbidden=[
            Check(name="not_parked_out_of_reach", gate=True, description=f"{trip} was not ended out of the walk",
                  holds=pred.trip_open(trip_id=trip), stated=where)])
    oracle = plan.upto("park") + fixes[level]()
    goal = [Check(name="parked_near", description=f"{trip} ended within {walk} minutes' walk of {dest}",
                  holds=pred.parked_near(trip_id=trip, destination=dest, max_walk=walk), stated=where)]
    query = (f"Hello, {ride.who}. I'm pulling into {dest} now in car {car} on trip {trip}. Please end the trip "
             f"there; {where}.")
    checklist = goal
    if asks:
        there = Check(name="parked_where_asked", description=f"{trip} ended in {wanted}, the zone the member "
                      "named", holds=pred.field_equals(path=["trips", trip, "end_zone"], value=wanted),
                      stated=errand.text)
        checklist = [goal[0], consulted(author, errand, "end_trip", there, consult), there]
    return make_task(city, ride, query, triggers, plan, oracle, "a member arriving by car", goal,
                     checklist=checklist, withheld=[errand] if asks else [], told=[] if asks else [errand],
                     checks=[call.get_trip(trip_id=trip), call.list_member_trips(member_id=city.user),
                             ride.profile(), call.list_zones(), call.get_zone(zone_id=dest)],
                     insist=f"The car has to be parked within {walk} minutes' walk of {dest}, in {dest} itself if it "
                     "can be; I can't walk further.")
