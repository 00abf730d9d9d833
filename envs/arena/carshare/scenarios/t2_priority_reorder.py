"""T2 Priority Reorder: a business account's priority booking bumps the member's reservation.

The member wants a car of a category they can walk to, unlocked for a drive. The agent checks the
member and the price and reserves the nearest car; right after, a business account's priority
booking takes the reserved car, whichever it is, and the member's reservation reads ``preempted``
(visible in ``list_member_reservations`` and ``get_car``; the failed unlock says so). Easy: another
car is free in the home zone. Medium: the only other one is in the neighbouring zone, within the
walk. Hard: the business account is booking a block: it takes the neighbour's car too (the agent's
earlier listing still shows it, so reserving it from memory fails), so the agent must look again: of
the cars two and three zones away, one is too low on charge or fuel. Impossible: the priority booking
takes the nearest car, whichever the member reserved first; the only other one within the walk has less
charge or fuel than the member needs, which a refusal must say.

The member has an errand on the way, in a zone within the walk, on every level, told when asked. At
medium and hard the bump leaves cars in two zones within the walk and the errand's is the only one
the member can go to (drawn apart from walk, id and listing order): they said to be asked before a car
outside their zone is taken.
"""

from __future__ import annotations

from dataclasses import replace

from sttgym.envs.arena.carshare.generator import (Author, Plan, Task, consulted, draw_ride, make_task, new_city, one,
                                                  withheld_zone)

ERRAND = "Outside my own zone I can only take a car in {zone}: I'm dropping my son at school there on the way."

# Not "another"/"other": a question proposing a change of plan gets the member's hard constraints instead.
ASKED = ["zone", "zones", "where", "car", "cars", "requirement", "requirements", "prefer", "preference"]


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    ride, near = draw_ride(city, reach={"medium": 2, "hard": 3}.get(level, 1), moves=level)
    home, n1, n2, n3 = city.home, *near[:3]
    boss = city.add_member(one(author, city.kinds["business"]), plan="business")
    car0 = city.add_car(home)
    alt = ride.low_car(n1) if level == "impossible" else city.add_car(home if level == "easy" else n1)
    second = city.add_car(n2) if level == "medium" else ""  # the other zone the bump leaves a car in
    city.add_car(one(author, ride.beyond()))
    city.add_car(home, status="in_use")

    def booked_by_boss() -> tuple[str, str]:
        ident = f"RES-{author.serial(100000, 999999)}"
        return ident, f"priority booking {ident} by business account {boss}"

    first, note = booked_by_boss()  # on whichever car the member reserved (impossible: on the nearest, whichever)
    bump = author.op.preempt(car_id=car0, reservation_id=first, member_id=boss, note=note) if level == "impossible" \
        else author.op.preempt_reserved(member=city.user, reservation_id=first, member_id=boss, note=note)
    triggers = [city.on_write("priority_booking", f"business account {boss} takes the reserved car with priority",
                              "reserve_car", "member_id", city.user, [bump],
                              ("list_member_reservations", {"member_id": city.user}), timing="after")]
    if level == "hard":
        second, note = booked_by_boss()
        triggers.append(city.cascade(
            "block_booking", f"the business block takes {alt} as well", ["reservations", first, "status"], "active",
            [author.op.preempt(car_id=alt, reservation_id=second, member_id=boss, note=note)],
            ("get_car", {"car_id": alt}), activation=("reserve_car",), timing="after"))

    def booking(car: str) -> Plan:
        return Plan(look=[ride.find(), ride.profile(), ride.quote(car)], book=[ride.reserve(car)],
                    go=[ride.start(home)])

    plan = booking(car0)
    choice = {}  # medium, hard: the zone the user will walk to, its car, and the fact that decides it

    def ask(cars: dict[str, str]) -> list:
        """The question, then the car in the zone the user names."""
        zone, choice["answer"] = withheld_zone(city, list(cars), ASKED, ERRAND)
        choice["zone"] = zone
        return [ride.tell(f"Your reserved car was taken by a priority booking. There are free {city.focus} cars "
                          f"within your walk in {' and '.join(sorted(cars))}: which zone works for you?"),
                *ride.take(cars[zone], zone)]

    def medium() -> list:
        return [ride.bookings(), ride.find(), ride.walk_to(n1), ride.walk_to(n2), ride.look(alt), ride.look(second),
                *ask({n1: alt, n2: second})]

    def hard() -> list:
        low = city.add_car(n2, level=author.integer(5, ride.min_level - 5))
        good = city.add_car(n2, level=author.integer(60, 95))
        other = city.add_car(n3, level=author.integer(60, 95))
        return [ride.bookings(), ride.find(), ride.walk_to(n1), ride.reserve(alt, "bumped"), ride.find(),
                ride.look(low), ride.look(good), ride.look(other), ride.walk_to(n2), ride.walk_to(n3),
                *ask({n2: good, n3: other})]

    def impossible() -> list:
        why, short = ride.short_of(alt)
        return [ride.bookings(), ride.look(car0), ride.find(), ride.look(alt), *ride.refuse(
            f"I can't get you {ride.wants()} within {ride.max_walk} minutes' walk: business account {boss} took "
            f"{car0} with priority booking {first}, and the only other one within your walk, {why}.",
            ["priority_booking"], [first, boss, "priority booking", "business account"], short)]

    fixes = {
        "easy": lambda: [ride.bookings(), ride.find(), *ride.take(alt, home)],
        "medium": medium,
        "hard": hard,
        "impossible": impossible}
    oracle = plan.upto("go") + fixes[level]()
    # Easy: the home zone's other car is as near; reserved first, the priority booking takes it instead.
    alternatives = [booking(alt).upto("go") + [ride.bookings(), ride.find(), *ride.take(car0, home)]] \
        if level == "easy" else []
    ride.asked = (f"find me {ride.wants()} within {ride.max_walk} minutes' walk of {home}, with at least "
                  f"{ride.min_level}% charge or fuel for a drive to {ride.to}")
    query = (f"This is {ride.who}. Please {ride.asked}. Check my account and the price, reserve the nearest and "
             "unlock it for me.")
    checklist, told = ride.goal(), []
    if choice:
        consult = "ask me before you take one elsewhere"
        query += f" If it can't be a car in {home}, {consult}: I can't go just anywhere."
        goal = replace(ride, pickup_zones=[choice["zone"]]).goal()
        checklist = [consulted(author, choice["answer"], "reserve_car", goal[0], consult), *goal]
    else:  # the errand decides nothing: the zone is one within the walk, where no car is needed (impossible: the
        # low car's, so that only its level rules it out)
        told = [withheld_zone(city, [n1] if level == "impossible" else ride.reach()[1:], ASKED, ERRAND)[1]]
    return make_task(city, ride, query, triggers, plan, oracle, "a member in a hurry", ride.goal(),
                     checklist=checklist, alternatives=alternatives, told=told,
                     withheld=[choice["answer"]] if choice else [],
                     insist=f"{ride.constraints()}, taken in my own zone or the one I need to pass through.")
