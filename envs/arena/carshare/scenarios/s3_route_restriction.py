"""S3 Route Restriction: the destination becomes a low-emission zone, so the petrol trip cannot end there.

The member is arriving at their destination in a petrol car and asks the console to end the trip
there, or anywhere within a few minutes' walk if parking there fails. The agent reads the trip and
the zone; as it ends the trip, the city's low-emission scheme switches on for the destination and
petrol cars may no longer park in it (visible in ``get_zone`` and ``list_zones``). Easy: the nearest
zone on foot takes petrol cars: end the trip there. Medium: that zone is closed to parking for
street works (a standing rule), so the next one within the walk is the place. Hard: the scheme
covers the nearest zone too and the next one is closed to parking: only the third zone within the
walk works. Impossible: the scheme covers every zone within the member's walk.
"""

from __future__ import annotations

from sttgym.checklist import Check
from sttgym.clock import hhmm, shift
from sttgym.envs.arena.carshare.generator import Author, Plan, Ride, Task, make_task, new_city, noticed_checks, one
from sttgym.judge import Impossibility

REACH = {"easy": 1, "medium": 2, "hard": 3, "impossible": 2}  # the member walks as far as this nearest zone


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s, call, pred = city.state, author.call, author.pred
    dest = one(author, city.kinds["business"] + city.kinds["nightlife"])
    near = [z for z in city.by_walk(dest) if s["zones"][z]["kind"] != "airport"]
    walk = city.walk(dest, near[REACH[level] - 1])
    ride = Ride(city, dest, walk)
    origin = one(author, [z for z in s["zones"] if z != dest and s["zones"][z]["kind"] != "airport"])
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
    if level == "medium":
        s["zones"][near[0]].update(parking="no_parking", notice=works)
    if level == "hard":
        s["zones"][near[1]].update(parking="no_parking", notice=works)
    spread = {"easy": [], "medium": [], "hard": [near[0]], "impossible": within}[level]
    triggers = [city.trigger("low_emission_zone", f"{dest} becomes a low-emission zone as the member parks",
                             pred.call_argument(name="trip_id", value=trip),
                             city.sets("zones", dest, petrol_allowed=False, notice=notice),
                             ("get_zone", {"zone_id": dest}), activation=("end_trip",),
                             also=(("list_zones", {}),))]
    if spread:
        triggers.append(city.cascade(
            "scheme_widens", f"the scheme covers {', '.join(spread)} as well", ["zones", dest, "petrol_allowed"], False,
            [op for z in spread for op in city.sets("zones", z, petrol_allowed=False, notice=notice)],
            ("get_zone", {"zone_id": spread[0]}), also=(("list_zones", {}),), activation=("end_trip",)))
    plan = Plan(look=[call.get_trip(trip_id=trip), call.get_zone(zone_id=dest)],
                park=[call.end_trip(trip_id=trip, zone_id=dest)])

    def walk_from(zone: str):
        return call.get_travel_time(from_zone_id=dest, to_zone_id=zone, mode="walk")

    def park(zone: str) -> list:
        return [walk_from(zone), call.end_trip(trip_id=trip, zone_id=zone)]

    see = [call.get_zone(zone_id=dest), call.list_zones()]
    fixes = {
        "easy": lambda: [*see, *park(near[0])],
        "medium": lambda: [*see, call.get_zone(zone_id=near[0]), call.get_zone(zone_id=near[1]), *park(near[1])],
        "hard": lambda: [*see, call.get_zone(zone_id=near[0]), call.get_zone(zone_id=near[1]), walk_from(near[1]),
                         call.get_zone(zone_id=near[2]), walk_from(near[0]), *park(near[2])],
        "impossible": lambda: [*see, walk_from(near[0]), ride.tell(
            f"I'm sorry, I can't end your trip within {walk} minutes' walk of {dest}: low-emission zone {code} now "
            f"bans petrol cars like {car} from {dest} and every zone that close, so the car has to be parked further "
            "out.")]}
    if level == "impossible":
        ride.impossible = Impossibility(changed_by=["low_emission_zone"], blocking_facts=[code], forbidden=[
            Check(name="not_parked_out_of_reach", gate=True, description=f"{trip} was not ended out of the walk",
                  holds=pred.trip_open(trip_id=trip))])
    oracle = plan.upto("park") + fixes[level]()
    goal = [Check(name="parked_near", description=f"{trip} ended within {walk} minutes' walk of {dest}",
                  holds=pred.parked_near(trip_id=trip, destination=dest, max_walk=walk))]
    query = (f"Hello, {ride.who}. I'm pulling into {dest} now in car {car} on trip {trip}. Please end the trip "
             f"there; if I can't park in {dest}, anywhere within {walk} minutes' walk of it will do.")
    return make_task(city, ride, query, triggers, plan, oracle, "a member arriving by car",
                     noticed_checks(author, "low_emission_zone", goal), goal,
                     checks=[call.get_trip(trip_id=trip), call.list_member_trips(member_id=city.user),
                             ride.profile(), call.list_zones(), call.get_zone(zone_id=dest)],
                     insist=f"I can't walk more than {walk} minutes from {dest}.")
