"""ST1 Resource Shift: the evening peak pulls the free cars out of the member's residential zone.

The member wants a car of a category they can walk to, unlocked for a drive. The agent looks up the
cars, the member and the price; as it reserves the nearest car, demand peaks in a zone across town
and the operations desk relocates the zone's free cars of the category there, each held for the
peak (visible in ``find_cars`` for the home zone). Easy: one car leaves, another stays in the home
zone. Medium: both home cars leave; the only other one is parked in the neighbouring zone, still
within the member's walk. Hard: a second wave takes that neighbour's car as soon as it is asked
for, and of the two cars left within reach one is too low on charge or fuel for the trip.
Impossible: both home cars leave, as at medium, and the neighbour's car has less charge or fuel than
the member needs, which a refusal must say.

The peak starts as the member's first reservation is made, before it: at easy an agent that reserves
the home car the peak leaves behind never meets the change, and rides as well as one that recovered.
"""

from __future__ import annotations

from sttgym.envs.arena.carshare.generator import Author, Plan, Task, draw_ride, make_task, new_city, one

MOVED = {"easy": 1, "medium": 2, "hard": 2, "impossible": 2}  # how many of the cars in reach the peak takes


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    ride, near = draw_ride(city, reach=2 if level == "hard" else 1, moves=level)
    home, n1, n2 = city.home, near[0], near[1]
    peak = one(author, ride.beyond())
    neighbour = {"easy": list, "impossible": lambda: [ride.low_car(n1)]}.get(level, lambda: [city.add_car(n1)])
    cars = [city.add_car(home), city.add_car(home), *neighbour()]  # impossible: the neighbour's car is too low
    city.add_car(home, status="maintenance", notice="windscreen repair")
    city.add_car(one(author, ride.beyond()))
    moved = cars[:MOVED[level]]
    effect = [city.set("zones", peak, "demand", value="peak"), city.set("zones", home, "demand", value="low")]
    held = []
    for car in moved:
        ident, ops = city.taken(car, note=f"held for the {peak} peak")
        held.append(ident)
        effect += [*city.sets("cars", car, zone=peak, spot=city.spot_in(peak)), *ops]
    triggers = [city.on_write("peak_relocation", f"demand peaks in {peak}: free {city.focus} cars leave {home}",
                              "reserve_car", "member_id", city.user, effect, ("find_cars", {"zone_id": home}))]
    plan = Plan(look=[ride.find(), ride.profile(), ride.quote(cars[0])], book=[ride.reserve(cars[0])],
                go=[ride.start(home)])

    def hard() -> list:
        low = city.add_car(n2, level=author.integer(5, ride.min_level - 5))
        good = city.add_car(n2, level=author.integer(60, 95))
        ident, ops = city.taken(cars[2], note=f"held for the {peak} peak")
        triggers.append(city.cascade(
            "second_wave", f"a second wave relocates {cars[2]} as the home zone empties",
            ["zones", home, "demand"], "low",
            [*city.sets("cars", cars[2], zone=peak, spot=city.spot_in(peak)), *ops],
            ("find_cars", {"zone_id": home})))
        return [ride.find(), ride.walk_to(n1), ride.reserve(cars[2], "again"), ride.find(), ride.look(low),
                ride.look(good), ride.walk_to(n2), *ride.take(good, n2, "third")]

    def impossible() -> list:
        why, short = ride.short_of(cars[2])
        return [ride.find(), ride.look(cars[0]), ride.look(cars[2]), ride.zones(), *ride.refuse(
            f"I can't find you {ride.wants()} within {ride.max_walk} minutes' walk: the {peak} peak pulled both "
            f"cars in {home} away ({' and '.join(moved)}), and the only other one within your walk, {why}.",
            ["peak_relocation"], [*moved, *held, peak, "demand peak", "peak demand", "cars relocated"], short)]

    fixes = {
        "easy": lambda: [ride.find(), *ride.take(cars[1], home)],
        "medium": lambda: [ride.find(), ride.walk_to(n1), ride.look(cars[2]), *ride.take(cars[2], n1)],
        "hard": hard,
        "impossible": impossible}
    oracle = plan.upto("book") + fixes[level]()
    left = [[ride.find(), ride.profile(), ride.quote(cars[1]), *ride.take(cars[1], home, "res")]] \
        if level == "easy" else []  # the home car the peak leaves behind, reserved first
    ride.asked = (f"need {ride.wants()} with at least {ride.min_level}% charge or fuel to drive to "
                  f"{ride.to}. I'll walk at most {ride.max_walk} minutes")
    query = (f"Hi, this is {ride.who}. I'm at home in {home} and {ride.asked}. Check my account and the price, then "
             "reserve the nearest one and unlock it for me.")
    return make_task(city, ride, query, triggers, plan, oracle, "a member calling from home", ride.goal(),
                     alternatives=left,
                     insist=f"{ride.constraints()}; any such car will do.")
