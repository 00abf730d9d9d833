"""S1 Site Mismatch: the car the console lists in the member's zone is really parked across town.

The member wants a car of a category they can walk to, unlocked for a drive. The agent checks the
member and the price and reserves the nearest listed car. Reserving it pings the car's telematics:
the GPS fix puts it in a zone beyond the member's walk (visible in ``get_car``: the new zone, spot
and a fix notice), so it cannot be unlocked where the member stands. Easy: release it and take the
other car in the home zone. Medium: the only other one is in the neighbouring zone, within the walk.
Hard: the same fix sweep relocates the neighbour's car too; of the two cars two zones away, one is
too low on charge or fuel, so the agent must read each before choosing. Impossible: the sweep shows
every car of the category within reach is really elsewhere.
"""

from __future__ import annotations

from sttgym.envs.arena.carshare.generator import Author, Plan, Task, draw_ride, make_task, new_city, one


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    ride, near = draw_ride(city, reach=2 if level == "hard" else 1)
    home, n1, n2 = city.home, near[0], near[1]
    far = ride.beyond()
    car0 = city.add_car(home)
    alt = city.add_car(home if level == "easy" else n1)
    city.add_car(one(author, far))
    city.add_car(home, status="maintenance", notice="tyre change")
    code = f"GF-{author.serial()}"

    def fix(car: str) -> list:
        zone = one(author, far)
        spot = city.spot_in(zone)
        return city.sets("cars", car, zone=zone, spot=spot,
                         notice=f"GPS fix {code}: reported at {city.state['spots'][spot]['name']} in {zone}")

    first = fix(car0)
    triggers = [city.on_write("gps_fix", f"the telematics fix shows {car0} parked beyond the member's walk",
                              "reserve_car", "car_id", car0, first, ("get_car", {"car_id": car0}), timing="after")]
    if level in ("hard", "impossible"):
        triggers.append(city.cascade("gps_sweep", f"the fix sweep finds {alt} elsewhere too",
                                     ["cars", car0, "notice"], first[-1].args["value"], fix(alt),
                                     ("get_car", {"car_id": alt}), activation=("reserve_car",), timing="after",
                                     also=(("find_cars", {"zone_id": home}),)))
    plan = Plan(look=[ride.find(), ride.profile(), ride.quote(car0)], book=[ride.reserve(car0)],
                go=[ride.start(home)])
    unwind = [ride.look(car0), ride.cancel(), ride.find()]

    def hard() -> list:
        low = city.add_car(n2, level=author.integer(5, ride.min_level - 5))
        good = city.add_car(n2, level=author.integer(60, 95))
        return [*unwind, ride.look(alt), ride.look(low), ride.look(good), ride.walk_to(n2), *ride.take(good, n2)]

    fixes = {
        "easy": lambda: [*unwind, *ride.take(alt, home)],
        "medium": lambda: [*unwind, ride.walk_to(n1), ride.look(alt), *ride.take(alt, n1)],
        "hard": hard,
        "impossible": lambda: [*unwind, ride.look(alt), *ride.refuse(
            f"I can't find you {ride.wants()} within {ride.max_walk} minutes' walk: the GPS fix {code} shows "
            f"{car0} and {alt} are really parked beyond your walk, and no other one is near {home}.",
            ["gps_fix"], [code])]}
    oracle = plan.upto("go") + fixes[level]()
    query = (f"Hi, {ride.who}. I'm in {home} and need {ride.wants()} with at least {ride.min_level}% charge or fuel "
             f"for a drive to {ride.destination}; I'll walk up to {ride.max_walk} minutes. Check my account and the "
             "price, then reserve the nearest one and unlock it for me when I'm there.")
    return make_task(city, ride, query, triggers, plan, oracle, "a member out on foot",
                     ride.checklist("gps_fix", [car0]), ride.goal(),
                     insist=f"I can only walk {ride.max_walk} minutes; I need a car near {home}.")
