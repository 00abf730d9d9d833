"""T1 Window Expiry: a demand peak cuts the reservation hold so the car would be gone before the member walks up.

The member leaves home at a given time and asks for a car of a category to be reserved and held
until they reach it. The agent checks the member and the price and reserves the nearest car: long
off-peak holds cover the walk. As the reservation is made, demand peaks in the home zone and the
zone's hold time drops to five minutes, cutting the open reservation too (visible in
``list_member_reservations`` and ``get_zone``), so it would lapse before the member arrives.
Easy: the member leaves soon, and the one twenty-minute extension covers the walk (they leave after
the cut hold of a car reserved even ten minutes later would lapse, so an agent slow to reserve
needs the extension too). Medium: the member leaves later than an extension reaches: release the
car and reserve the one in the neighbouring zone, where holds stay long. Hard: the peak spreads to
the neighbouring zone at once, so its car is a trap: the car two zones away, still within the walk,
is the one to hold. Impossible: as at medium, the member leaves long after the cut hold and an
extension lapse (and once the member's hold is gone the peak queue takes the car, so it cannot be
held again later), and the only other car within the walk has less charge or fuel than the member
needs, which a refusal must say.
"""

from __future__ import annotations

from sttgym.authoring import Plan
from sttgym.checklist import Check
from sttgym.clock import hhmm, shift
from sttgym.envs.arena.carshare.generator import Author, Task, draw_ride, make_task, new_city, rid

PEAK_HOLD, OFF_PEAK_HOLD = 5, 120
# When the member leaves, in minutes from the start: at easy within what one extension adds to the cut hold (and past
# the cut hold of a reservation made ten minutes later than the oracle's); else far past it (so no later reservation
# of the peak zone's car plus an extension reaches it, short of half an hour's dawdling before reserving).
LEAVE = {"easy": (22, 27), "medium": (50, 60), "hard": (50, 60), "impossible": (50, 60)}


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    ride, near = draw_ride(city, reach=2 if level == "hard" else 1)
    home, n1, n2 = city.home, near[0], near[1]
    s, pred = city.state, author.pred
    for zone in ride.reach():
        s["zones"][zone]["hold_minutes"] = OFF_PEAK_HOLD
    leave_at = shift(city.start, author.integer(*LEAVE[level]))
    car0 = city.add_car(home)
    alt = {"easy": list, "medium": lambda: [city.add_car(n1)], "hard": lambda: [city.add_car(n1), city.add_car(n2)],
           "impossible": lambda: [ride.low_car(n1)]}[level]()  # impossible: the neighbour's car is too low
    city.add_car(ride.beyond()[0])
    code = f"PK-{author.serial()}"
    plan = Plan(look=[ride.find(), ride.profile(), ride.quote(car0)], book=[ride.reserve(car0)])

    def peak(zone: str):
        return author.op.shorten_holds(zone_id=zone, hold_minutes=PEAK_HOLD,
                                       notice=f"Peak {code}: reservations here are held {PEAK_HOLD} minutes")

    spread = [n1] if level == "hard" else []
    triggers = [city.trigger("peak_hold_cut", f"demand peaks in {home}: holds there drop to {PEAK_HOLD} minutes",
                             pred.holds_car(member=city.user, car_id=car0), [peak(home)],
                             ("list_member_reservations", {"member_id": city.user}), activation=("reserve_car",),
                             timing="after")]
    if spread:
        triggers.append(city.cascade("peak_spreads", f"the peak spreads to {', '.join(spread)} at once",
                                     ["zones", home, "demand"], "peak", [peak(z) for z in spread],
                                     ("get_zone", {"zone_id": spread[0]}), activation=("reserve_car",),
                                     timing="after"))
    if level == "impossible":  # the peak queue takes the car once the member's hold is gone: no second hold
        queue = f"RES-{author.serial(100000, 999999)}"
        triggers.append(city.cascade_on(
            "peak_queue", f"the {code} peak queue takes {car0} once the member's hold on it ends",
            pred.all_of(preds=[pred.field_equals(path=["zones", home, "demand"], value="peak"), pred.any_of(preds=[
                pred.none_of(preds=[pred.holds_car(member=city.user, car_id=car0)]),
                pred.lapsed(member=city.user, car_id=car0)])]),
            [author.op.preempt(car_id=car0, reservation_id=queue, member_id=city.other_member(),
                               note=f"held for the {code} peak queue")],
            ("get_car", {"car_id": car0}), timing="after"))

    def impossible() -> list:
        why, short = ride.short_of(alt[0])
        return [ride.bookings(), ride.cancel(), ride.find(), ride.look(alt[0]), *ride.refuse(
            f"I can't keep a car held until you get there: a demand peak ({code}) cut holds in {home} to {PEAK_HOLD} "
            f"minutes, so a reservation on {car0} lapses long before you leave at {hhmm(leave_at)}, and one extension "
            f"cannot bridge it; the only other one within your walk, {why}.",
            ["peak_hold_cut"], [code, "demand peak", f"{PEAK_HOLD} minutes", "holds cut", "hold time"], short)]

    fixes = {
        "easy": lambda: [ride.bookings(), author.call.extend_reservation(reservation_id=rid("res"))],
        "medium": lambda: [ride.bookings(), ride.find(), author.call.get_zone(zone_id=n1), ride.walk_to(n1),
                           ride.cancel(), ride.reserve(alt[0], "again")],
        "hard": lambda: [ride.bookings(), ride.zones(), ride.find(), author.call.get_zone(zone_id=n1),
                         author.call.get_zone(zone_id=n2), ride.walk_to(n2), ride.look(alt[1]), ride.cancel(),
                         ride.reserve(alt[1], "again")],
        "impossible": impossible}
    oracle = plan.calls + fixes[level]()
    held = "make sure it stays held until I get to it"
    goal = [Check(name="held_until_arrival", description=f"a {city.focus} car within reach is held for "
                  f"{city.user} until they walk up to it (leaving {leave_at})",
                  holds=pred.held_for(ride=ride.spec(), leave_at=leave_at), stated=held),
            Check(name="no_trip_yet", gate=True, description="no trip was started before the member got there",
                  holds=pred.no_new_trip(member=city.user), stated="stays held until then, not on a trip")]
    query = (f"Hello, {ride.who} here. I'm leaving home in {home} at {hhmm(leave_at)} and will walk at most "
             f"{ride.max_walk} minutes to {ride.wants()} with at least {ride.min_level}% charge or fuel, to drive to "
             f"{ride.destination}. Check my account and the price, reserve the nearest one, and {held}.")
    return make_task(city, ride, query, triggers, plan, oracle, "a member planning to leave home soon", goal,
                     insist=f"{ride.constraints()}, held for me until I get to it; I can't leave before "
                     f"{hhmm(leave_at)}, and any such car will do.")

