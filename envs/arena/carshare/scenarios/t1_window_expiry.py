"""T1 Window Expiry: a demand peak cuts the reservation hold so the car would be gone before the member walks up.

The member leaves home at a given time and asks for a car of a category to be reserved and held
until they reach it. The agent checks the member and the price and reserves the nearest car: long
off-peak holds cover the walk. As the reservation is made, demand peaks in the home zone and the
zone's hold time drops to five minutes, cutting the open reservation too (visible in
``list_member_reservations`` and ``get_zone``), so it would lapse before the member arrives.
Easy: the member leaves soon, and the one ten-minute extension covers the walk. Medium: the member
leaves later than an extension reaches: release the car and reserve the one in the neighbouring
zone, where holds stay long. Hard: the peak spreads to the neighbouring zone at once, so its car is a
trap: the car two zones away, still within the walk, is the one to hold. Impossible: the peak covers
every zone within walking reach and no extension reaches the member's departure.
"""

from __future__ import annotations

from sttgym.authoring import Plan
from sttgym.checklist import Check
from sttgym.clock import hhmm, shift
from sttgym.envs.arena.carshare.generator import (Author, Task, draw_ride, make_task, new_city, noticed_checks,
                                                  rid)

PEAK_HOLD, OFF_PEAK_HOLD = 5, 90
LEAVE = {"easy": (12, 18), "medium": (22, 28), "hard": (22, 28), "impossible": (22, 28)}  # minutes from the start


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    ride, near = draw_ride(city, reach=2 if level == "hard" else 1)
    home, n1, n2 = city.home, near[0], near[1]
    s, pred = city.state, author.pred
    for zone in ride.reach():
        s["zones"][zone]["hold_minutes"] = OFF_PEAK_HOLD
    leave_at = shift(city.start, author.integer(*LEAVE[level]))
    car0 = city.add_car(home)
    alt = {"easy": [], "medium": [city.add_car(n1)], "hard": [city.add_car(n1), city.add_car(n2)],
           "impossible": [city.add_car(n1)]}[level]
    city.add_car(ride.beyond()[0])
    code = f"PK-{author.serial()}"
    plan = Plan(look=[ride.find(), ride.profile(), ride.quote(car0)], book=[ride.reserve(car0)])
    run = author.dry_run(s, city.start, plan.calls)
    cut = shift(run.results[-1]["data"]["expires_at"], PEAK_HOLD - OFF_PEAK_HOLD)  # the new expiry of the hold

    def peak(zone: str):
        return author.op.shorten_holds(zone_id=zone, hold_minutes=PEAK_HOLD,
                                       notice=f"Peak {code}: reservations here are held {PEAK_HOLD} minutes")

    spread = {"easy": [], "medium": [], "hard": [n1], "impossible": [z for z in ride.reach() if z != home]}[level]
    triggers = [city.trigger("peak_hold_cut", f"demand peaks in {home}: holds there drop to {PEAK_HOLD} minutes",
                             pred.holds_car(member=city.user, car_id=car0), [peak(home)],
                             ("list_member_reservations", {"member_id": city.user}), activation=("reserve_car",),
                             timing="after", also=(("get_zone", {"zone_id": home}),))]
    if spread:
        triggers.append(city.cascade("peak_spreads", f"the peak spreads to {', '.join(spread)} at once",
                                     ["zones", home, "demand"], "peak", [peak(z) for z in spread],
                                     ("get_zone", {"zone_id": spread[0]}), activation=("reserve_car",),
                                     timing="after"))
    fixes = {
        "easy": lambda: [ride.bookings(), author.call.extend_reservation(reservation_id=rid("res"))],
        "medium": lambda: [ride.bookings(), ride.find(), author.call.get_zone(zone_id=n1), ride.walk_to(n1),
                           ride.cancel(), ride.reserve(alt[0], "again")],
        "hard": lambda: [ride.bookings(), ride.zones(), ride.find(), author.call.get_zone(zone_id=n1),
                         author.call.get_zone(zone_id=n2), ride.walk_to(n2), ride.look(alt[1]), ride.cancel(),
                         ride.reserve(alt[1], "again")],
        "impossible": lambda: [ride.bookings(), ride.find(), ride.zones(), *ride.refuse(
            f"I can't keep a car held until you get there: a demand peak ({code}) cut holds to {PEAK_HOLD} minutes "
            f"in every zone within {ride.max_walk} minutes' walk, so your reservation on {car0} now lapses at "
            f"{hhmm(cut)}, long before you leave at {hhmm(leave_at)}, and one extension cannot bridge it.",
            ["peak_hold_cut"], [code, hhmm(cut)])]}
    oracle = plan.calls + fixes[level]()
    goal = [Check(name="held_until_arrival", description=f"a {city.focus} car within reach is held for "
                  f"{city.user} until they walk up to it (leaving {leave_at})",
                  holds=pred.held_for(ride=ride.spec(), leave_at=leave_at)),
            Check(name="no_trip_yet", gate=True, description="no trip was started before the member got there",
                  holds=pred.no_new_trip(member=city.user))]
    stale = [] if level == "easy" else [Check(name="stale_released", description=f"the hold on {car0} is released",
                                              holds=pred.released(member=city.user, cars=[car0]))]
    query = (f"Hello, {ride.who} here. I'm leaving home in {home} at {hhmm(leave_at)} and will walk at most "
             f"{ride.max_walk} minutes to {ride.wants()} with at least {ride.min_level}% charge or fuel, to drive to "
             f"{ride.destination}. Check my account and the price, reserve the nearest one, and make sure it stays "
             f"held until I get to it.")
    return make_task(city, ride, query, triggers, plan, oracle, "a member planning to leave home soon",
                     noticed_checks(author, "peak_hold_cut", goal, stale), goal,
                     insist=f"I can't leave before {hhmm(leave_at)} and can't walk further than {ride.max_walk} "
                     "minutes.")

