"""ST3 Handoff Failure: the car's previous renter drops it late, at another depot.

The user needs a car this afternoon. The only one of the class at their depot is on rent,
due back there before the pickup: a tight but valid handoff. Once the agent holds it, the
previous renter reports they will drop it later and at another depot (visible in
``get_vehicle_status``), so the handoff fails in time and place at once. Easy: a transfer
from the drop-off depot right after the return still makes the pickup. Medium: it would not,
so a free car from another depot takes over the booking. Hard: the evening rush slows every
road out of the drop-off depot, and a car from elsewhere must take over. Impossible: driven over
from the drop-off the car arrives ten minutes late, and the other depot's car of the class is out
on rent, back only shortly before the pickup and too far to make it (its ``available_from`` in
``search_available_vehicles`` there, the drive in ``plan_route``): the refusal must say why those
fail besides the late return.

The user has a requirement for the car on every level (see ``City.requirement``), told when asked. At
medium and hard the depot that sends a car has two and only one of them meets it (see
``City.rivals``): the user asked to be consulted before another car is put on the booking.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.clock import format_time, shift
from sttgym.envs.arena.carrental.generator import ASK_FIRST, Author, Request, Task, car, make_task, new_city, one

RUSH = 35  # minutes the evening rush adds to every road out of the drop-off depot
SLACK = {"easy": 10, "medium": -10, "hard": 10, "impossible": -10}  # minutes between the pickup and the arrival
# of a transfer sent right after the drop-off (negative: it arrives late)


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    depot = city.depot("business", "residential")
    others = city.nearest(depot, sorted(city.state["depots"]))
    dropoff = one(author, others)
    donor_depot = one(author, [d for d in others if d != dropoff])
    pickup = city.start + timedelta(minutes=5 * author.integer(30, 39))
    first = city.add_vehicle(dropoff, city.focus)
    req = Request(city, depot, format_time(pickup), format_time(city.at(author.integer(2, 3), author.integer(9, 17))),
                  moves=level)
    # How long the drive from the drop-off takes, measured with the real transfer tool.
    sent = author.dry_run(city.state, format_time(city.start), [req.move(first)]).results[0]["data"]
    late = format_time(pickup - (datetime.fromisoformat(sent["arrives"]) - datetime.fromisoformat(sent["departs"]))
               - timedelta(minutes=SLACK[level]))
    city.state["vehicles"][first].update(depot=depot, available_from=shift(late, minutes=-5 * author.integer(6, 9)))
    city.afford(depot, city.focus, req.pickup, req.ret)
    triggers = [city.on_hold("late_dropoff", f"{first}'s renter will drop it at {dropoff} at {late}, not at {depot}",
                             city.sets("vehicles", first, depot=dropoff, available_from=late),
                             ("get_vehicle_status", first), vehicle_id=first)]

    def donor(rush: bool) -> list:  # a free car from another depot takes over the booking
        spare, theirs = city.rivals(req, first, donor_depot, "transfer_vehicle")
        triggers.extend([city.cascade(
            "evening_rush", f"the evening rush adds {RUSH} minutes to every road out of {dropoff}",
            ["vehicles", first, "depot"], dropoff,
            [city.set("roads", r, "minutes", value=city.state["roads"][r]["minutes"] + RUSH)
             for r in city.roads_of(dropoff)], ("plan_route", {"origin_id": dropoff, "destination_id": depot}))] * rush)
        ask = req.tell(f"The car on your booking will be back too late. {' and '.join(sorted((spare, theirs)))} at "
                       f"{donor_depot} could be driven over: do you have a requirement for the car?")
        return [req.depots(), req.search(donor_depot), *[req.route(donor_depot)] * rush, ask, req.move(spare),
                *req.take_over(spare)]

    def impossible() -> list:  # driven over from the drop-off it is late; the other depot's car is back too late
        donor = city.add_vehicle(donor_depot, city.focus)
        city.requirement(req, [first, donor])
        city.add_vehicle(depot, city.focus, status="maintenance")
        back, reach = city.back_late(donor, depot, req.pickup)
        over = shift(late, minutes=city.minutes(dropoff, depot))  # the late car, sent the moment it is dropped
        return [req.search(), req.depots(), req.search(donor_depot), req.route(donor_depot), *req.refuse(
            f"I can't have {car(city.focus)} ready for your pickup: {first} is now returned late, at {dropoff} at "
            f"{late[11:]}, and driven over from there it would only arrive at {over[11:]}; the only other "
            f"{city.focus}, {donor} at {donor_depot}, is only back from a rental at {back[11:]} and would arrive "
            f"after your pickup too.", ["late_dropoff"],
            [late[11:], dropoff, "returned late", "dropped late", "running late", "late return"],
            [donor, donor_depot, over[11:], back[11:], reach[11:], "back from", "only back", "back at",
             "arrive after"])]

    def easy() -> list:
        city.requirement(req, [first])
        return [req.move(first), req.confirm()]

    fixes = {"easy": easy, "medium": lambda: donor(False),
             "hard": lambda: donor(True), "impossible": impossible}
    plan = req.booking(first)
    oracle = plan.upto("check") + [req.status(first), req.route(dropoff)] + fixes[level]()
    req.asked = f"book me {car(city.focus)} at {city.name(depot)} ({depot}), pickup {req.pickup}, return there {req.ret}"
    query = f"Hello, this is {req.who}. Please {req.asked}. Hold a car, check the price and confirm it."
    if req.withheld:
        query += f" If it has to be another car, {ASK_FIRST}"
    return make_task(req, query, triggers, plan, oracle, "a customer with an appointment", {
        ("time", "later", "pickup", "wait"): f"I need the car {req.when()}; I can't wait for one."},
        insist=f"{req.constraints()}; a later car is no use, and the car has to meet my requirement for it.")
