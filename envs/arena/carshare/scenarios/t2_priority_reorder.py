"""T2 Priority Reorder: a business account's priority booking bumps the member's reservation.

The member wants a car of a category they can walk to, unlocked for a drive. The agent checks the
member and the price and reserves the nearest car; right after, a business account's priority
booking takes that car and the member's reservation reads ``preempted`` (visible in
``list_member_reservations`` and ``get_car``). Easy: another car is free in the home zone. Medium:
the only other one is in the neighbouring zone, within the walk. Hard: the business account is
booking a block: it takes the neighbour's car too (the agent's earlier listing still shows it, so
reserving it from memory fails), so the agent must look again: of the cars two and three zones away,
one is too low on charge or fuel. Impossible: the block takes every car of the category within
walking reach.

At medium and hard the bump leaves cars in two zones within the walk, and the member can only go to
one of them (an errand on the way, drawn apart from walk, id and listing order): they said to be asked
before a car outside their zone is taken, and tell which zone only when asked.
"""

from __future__ import annotations

from dataclasses import replace

from sttgym.envs.arena.carshare.generator import (Author, Plan, Task, consulted, draw_ride, make_task, new_city, one,
                                                  withheld_zone)

ASKED = ["zone", "zones", "where", "car", "cars", "requirement", "requirements", "prefer", "preference", "another",
         "other"]


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    ride, near = draw_ride(city, reach={"medium": 2, "hard": 3}.get(level, 1))
    home, n1, n2, n3 = city.home, *near[:3]
    boss = city.add_member(one(author, city.kinds["business"]), plan="business")
    car0 = city.add_car(home)
    alt = city.add_car(home if level == "easy" else n1)
    second = city.add_car(n2) if level == "medium" else ""  # the other zone the bump leaves a car in
    city.add_car(one(author, ride.beyond()))
    city.add_car(home, status="in_use")

    def bump(car: str) -> tuple[str, object]:
        ident = f"RES-{author.serial(100000, 999999)}"
        return ident, author.op.preempt(car_id=car, reservation_id=ident, member_id=boss,
                                        note=f"priority booking {ident} by business account {boss}")

    first, op = bump(car0)
    triggers = [city.on_write("priority_booking", f"business account {boss} takes {car0} with priority",
                              "reserve_car", "car_id", car0, [op],
                              ("list_member_reservations", {"member_id": city.user}), timing="after",
                              also=(("get_car", {"car_id": car0}),))]
    block = []
    if level in ("hard", "impossible"):
        second, op2 = bump(alt)
        block = [second]
        triggers.append(city.cascade(
            "block_booking", f"the business block takes {alt} as well", ["reservations", first, "status"], "active",
            [op2], ("get_car", {"car_id": alt}), also=(("find_cars", {"zone_id": home}),),
            activation=("reserve_car",), timing="after"))
    plan = Plan(look=[ride.find(), ride.profile(), ride.quote(car0)], book=[ride.reserve(car0)],
                go=[ride.start(home)])

    choice = {}  # medium, hard: the zone the user will walk to, its car, and the fact that decides it

    def ask(cars: dict[str, str]) -> list:
        """The question, then the car in the zone the user names."""
        zone, choice["answer"] = withheld_zone(city, list(cars), ASKED, "Outside my own zone I can only take a car "
                                               "in {zone}: I'm dropping my son at school there on the way.")
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

    fixes = {
        "easy": lambda: [ride.bookings(), ride.find(), *ride.take(alt, home)],
        "medium": medium,
        "hard": hard,
        "impossible": lambda: [ride.bookings(), ride.look(car0), ride.find(), *ride.refuse(
            f"I can't get you {ride.wants()} within {ride.max_walk} minutes' walk: business account {boss} took "
            f"{car0} with priority booking {first} and {alt} with {block[0]}, and no other one is within reach.",
            ["priority_booking"], [first, *block])]}
    oracle = plan.upto("go") + fixes[level]()
    query = (f"This is {ride.who}. Please find me {ride.wants()} within {ride.max_walk} minutes' walk of {home}, "
             f"with at least {ride.min_level}% charge or fuel for a drive to {ride.destination}. Check my account "
             "and the price, reserve the nearest and unlock it for me.")
    checklist = ride.checklist("priority_booking")
    if choice:
        query += f" If it can't be a car in {home}, ask me before you take one elsewhere: I can't go just anywhere."
        checklist = [checklist[0], consulted(author, "priority_booking", choice["answer"], "reserve_car"),
                     *replace(ride, pickup_zones=[choice["zone"]]).checklist("priority_booking")[1:]]
    return make_task(city, ride, query, triggers, plan, oracle, "a member in a hurry", checklist, ride.goal(),
                     insist=f"I can't walk more than {ride.max_walk} minutes.",
                     withheld=[choice["answer"]] if choice else [])
