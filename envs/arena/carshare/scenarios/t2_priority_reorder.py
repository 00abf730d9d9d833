"""T2 Priority Reorder: a business account's priority booking bumps the member's reservation.

The member wants a car of a category they can walk to, unlocked for a drive. The agent checks the
member and the price and reserves the nearest car; right after, a business account's priority
booking takes that car and the member's reservation reads ``preempted`` (visible in
``list_member_reservations`` and ``get_car``). Easy: another car is free in the home zone. Medium:
the only other one is in the neighbouring zone, within the walk. Hard: the business account is
booking a block: it takes the neighbour's car too (the agent's earlier listing still shows it, so
reserving it from memory fails), so the agent must look again and choose between two cars two zones
away, one of them too low on charge or fuel. Impossible: the block takes every car of the category
within walking reach.
"""

from __future__ import annotations

from sttgym.envs.arena.carshare.generator import Author, Plan, Task, draw_ride, make_task, new_city, one


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    ride, near = draw_ride(city, reach=2 if level == "hard" else 1)
    home, n1, n2 = city.home, near[0], near[1]
    boss = city.add_member(one(author, city.kinds["business"]), plan="business")
    car0 = city.add_car(home)
    alt = city.add_car(home if level == "easy" else n1)
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

    def hard() -> list:
        low = city.add_car(n2, level=author.integer(5, ride.min_level - 5))
        good = city.add_car(n2, level=author.integer(60, 95))
        return [ride.bookings(), ride.find(), ride.walk_to(n1), ride.reserve(alt, "bumped"), ride.find(),
                ride.look(low), ride.look(good), ride.walk_to(n2), *ride.take(good, n2)]

    fixes = {
        "easy": lambda: [ride.bookings(), ride.find(), *ride.take(alt, home)],
        "medium": lambda: [ride.bookings(), ride.find(), ride.walk_to(n1), ride.look(alt), *ride.take(alt, n1)],
        "hard": hard,
        "impossible": lambda: [ride.bookings(), ride.look(car0), ride.find(), *ride.refuse(
            f"I can't get you {ride.wants()} within {ride.max_walk} minutes' walk: business account {boss} took "
            f"{car0} with priority booking {first} and {alt} with {block[0]}, and no other one is within reach.",
            ["priority_booking"], [first, *block])]}
    oracle = plan.upto("go") + fixes[level]()
    query = (f"This is {ride.who}. Please find me {ride.wants()} within {ride.max_walk} minutes' walk of {home}, "
             f"with at least {ride.min_level}% charge or fuel for a drive to {ride.destination}. Check my account "
             "and the price, reserve the nearest and unlock it for me.")
    return make_task(city, ride, query, triggers, plan, oracle, "a member in a hurry",
                     ride.checklist("priority_booking"), ride.goal(),
                     insist=f"I can't walk more than {ride.max_walk} minutes.")
