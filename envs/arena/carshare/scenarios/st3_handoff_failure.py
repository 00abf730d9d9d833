"""ST3 Handoff Failure: the member bringing the car back is late, so the handoff at the member's door fails.

Another member is driving a car of the right category back to the user's home zone and is due
within minutes; the user asks to take it over there (a handoff reservation) and have it unlocked,
leaving by a given time. The agent reads the incoming trip, checks the member, queues the handoff
and prices the drive; as the handoff is queued, the driver reports they are running late: the
trip's planned end moves far past the user's departure and the handoff reads ``handoff_failed``
(visible in ``get_trip`` and ``list_member_reservations``). Easy: another car of the category is
free in the home zone. Medium: the only one is in the neighbouring zone, within the walk. Hard: a
second member whose handoff failed grabs the neighbour's car at the agent's next booking; of the two
cars two zones away one is too low on charge or fuel. Impossible: the late car arrives after the user
must leave, and the only car of the category free within the walk has less charge or fuel than the
member needs, which a refusal must say.
"""

from __future__ import annotations

from sttgym.clock import hhmm, minutes_between, shift
from sttgym.envs.arena.carshare.generator import Author, Plan, Task, draw_ride, make_task, new_city, one


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    ride, near = draw_ride(city, reach=2 if level == "hard" else 1, moves=level)
    home, n1, n2 = city.home, near[0], near[1]
    s, call = city.state, author.call
    ride.by = shift(city.start, 40)
    driver = city.other_member()
    origin = one(author, ride.beyond())
    car0 = city.add_car(origin, status="in_use", level=author.integer(50, 90))
    trip = f"TRP-{author.serial()}"
    due = shift(city.start, author.integer(4, 6))
    s["trips"][trip] = {"member": driver, "car": car0, "reservation": None, "start_zone": origin,
                        "destination": home, "started_at": shift(city.start, -author.integer(15, 40)),
                        "level_at_start": 95, "status": "open", "end_zone": None, "ended_at": None,
                        "planned_end_at": due, "promo": None, "estimate": 10, "price": None}
    alt = ride.low_car(n1) if level == "impossible" else city.add_car(home if level == "easy" else n1)
    city.add_car(one(author, ride.beyond()))
    late = shift(due, author.integer(45, 90))
    triggers = [city.on_write(
        "driver_late", f"the member on {trip} runs late: the planned end moves to {late}", "reserve_handoff",
        "trip_id", trip, [author.op.delay_trip(trip_id=trip, minutes=minutes_between(due, late),
                                               note=f"{trip} now ends {hhmm(late)}")],
        ("get_trip", {"trip_id": trip}), timing="after")]
    plan = Plan(look=[call.get_trip(trip_id=trip), ride.profile()],
                book=[call.reserve_handoff(save_as="res", member_id=city.user, trip_id=trip)],
                check=[ride.quote(car0)], go=[ride.start(home)])

    def hard() -> list:
        low = city.add_car(n2, level=author.integer(5, ride.min_level - 5))
        good = city.add_car(n2, level=author.integer(60, 95))
        ident, ops = city.taken(alt, note=f"rebooked after a failed handoff on {trip}")
        triggers.append(city.cascade("ripple", f"a second stranded member takes {alt}",
                                     ["trips", trip, "planned_end_at"], late, ops, ("find_cars", {"zone_id": home})))
        return [ride.find(), ride.walk_to(n1), ride.reserve(alt, "grabbed"), ride.find(), ride.look(low),
                ride.look(good), ride.walk_to(n2), *ride.take(good, n2)]

    def impossible() -> list:
        why, short = ride.short_of(alt)
        return [ride.bookings(), ride.find(), ride.look(alt), ride.zones(), *ride.refuse(
            f"I can't get you a car in time: the member bringing {car0} back on {trip} is running late and now "
            f"arrives at {hhmm(late)}, after you must leave at {hhmm(ride.by)}, and the only other {city.focus} car "
            f"within {ride.max_walk} minutes' walk, {why}.", ["driver_late"],
            [hhmm(late), late, "running late", "arrives late", "driver late"], short)]

    fixes = {
        "easy": lambda: [ride.find(), *ride.take(alt, home)],
        "medium": lambda: [ride.find(), ride.walk_to(n1), ride.look(alt), *ride.take(alt, n1)],
        "hard": hard,
        "impossible": impossible}
    oracle = plan.upto("check") + [call.get_trip(trip_id=trip)] + fixes[level]()
    ride.asked = (f"I'm driving to {ride.to}, need at least {ride.min_level}% charge or fuel and must leave "
                  f"by {hhmm(ride.by)}")
    query = (f"Hi, {ride.who}. Car {car0} ({ride.wants()}) is being driven back to {home} on trip {trip} and is due "
             f"any minute. Please put me down to take it over there and unlock it for me: {ride.asked}. I could walk "
             f"{ride.max_walk} minutes if it came to that. Check my account and the price too.")
    return make_task(city, ride, query, triggers, plan, oracle, "a member waiting at home for a returning car",
                     ride.goal(), insist=f"{ride.constraints()}, unlocked by {hhmm(ride.by)}; any such car will do.")

