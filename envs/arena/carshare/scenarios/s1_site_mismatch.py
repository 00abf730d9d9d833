"""S1 Site Mismatch: the car the console lists in the member's zone is really parked across town.

The member wants a car of a category they can walk to, unlocked for a drive. The agent checks the
member and the price and reserves the nearest listed car. Reserving it pings the car's telematics:
the GPS fix puts the reserved car, whichever it is, in a zone beyond the member's walk (visible in
``get_car``: the new zone, spot and a fix notice; the failed unlock names the zone), so it cannot be
unlocked where the member stands. Easy: release it and take the other car in the home zone. Medium:
the only other one is in the neighbouring zone, within the walk. Hard: the same fix sweep relocates
the neighbour's car too; of the two cars two zones away, one is too low on charge or fuel, so the
agent must read each before choosing. Impossible: the fix finds the nearest car (whenever it is
reserved) beyond the walk; the only other one within the walk is listed where it stands, but with
less charge or fuel than the member needs, which a refusal must say.
"""

from __future__ import annotations

from sttgym.envs.arena.carshare.generator import Author, Plan, Task, draw_ride, make_task, new_city, one


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    ride, near = draw_ride(city, reach=2 if level == "hard" else 1, moves=level)
    home, n1, n2 = city.home, near[0], near[1]
    far = ride.beyond()
    car0 = city.add_car(home)
    alt = ride.low_car(n1) if level == "impossible" else city.add_car(home if level == "easy" else n1)
    city.add_car(one(author, far))
    city.add_car(home, status="maintenance", notice="tyre change")
    code = f"GF-{author.serial()}"
    zones = [one(author, far) for _ in range(2)]  # where the fix puts the reserved car, and the sweep the next
    spots = [city.spot_in(z) for z in zones]
    notices = [f"GPS fix {code}: reported at {city.state['spots'][s]['name']} in {z}" for z, s in zip(zones, spots)]
    pred, op = author.pred, author.op
    # Impossible: the fix finds the nearest car elsewhere (when it is reserved, whenever that is); the one other car
    # within the walk stays where it is listed, too low for the drive.
    pick = ("car_id", car0) if level == "impossible" else ("member_id", city.user)
    triggers = [city.on_write("gps_fix", "the telematics fix shows the reserved car parked beyond the member's walk",
                              "reserve_car", *pick,
                              [op.relocate_reserved(member=city.user, zone_id=zones[0], spot_id=spots[0],
                                                    notice=notices[0])], ("get_car", {"car_id": car0}),
                              timing="after")]
    if level == "hard":
        triggers.append(city.cascade_on("gps_sweep", f"the fix sweep finds {alt} elsewhere too",
                                        pred.reserved_car_is(member=city.user, field="notice", value=notices[0]),
                                        city.sets("cars", alt, zone=zones[1], spot=spots[1], notice=notices[1]),
                                        ("get_car", {"car_id": alt}), activation=("reserve_car",), timing="after"))

    def booking(car: str) -> Plan:
        return Plan(look=[ride.find(), ride.profile(), ride.quote(car)], book=[ride.reserve(car)],
                    go=[ride.start(home)])

    def unwind(car: str) -> list:
        return [ride.look(car), ride.cancel(), ride.find()]

    def hard() -> list:
        low = city.add_car(n2, level=author.integer(5, ride.min_level - 5))
        good = city.add_car(n2, level=author.integer(60, 95))
        return [*unwind(car0), ride.look(alt), ride.look(low), ride.look(good), ride.walk_to(n2),
                *ride.take(good, n2)]

    def impossible() -> list:
        why, short = ride.short_of(alt)
        return [*unwind(car0), ride.look(alt), *ride.refuse(
            f"I can't find you {ride.wants()} within {ride.max_walk} minutes' walk: the GPS fix {code} shows {car0} "
            f"is really parked in {zones[0]}, beyond your walk, and the only other one within it, {why}.",
            ["gps_fix"], [code, zones[0], "GPS fix", "parked elsewhere", "really parked"], short)]

    plan = booking(car0)
    fixes = {
        "easy": lambda: [*unwind(car0), *ride.take(alt, home)],
        "medium": lambda: [*unwind(car0), ride.walk_to(n1), ride.look(alt), *ride.take(alt, n1)],
        "hard": hard,
        "impossible": impossible}
    oracle = plan.upto("go") + fixes[level]()
    # Easy: the home zone's other car is as near; reserved first, the fix finds it instead.
    alternatives = [booking(alt).upto("go") + [*unwind(alt), *ride.take(car0, home)]] if level == "easy" else []
    ride.asked = (f"need {ride.wants()} with at least {ride.min_level}% charge or fuel for a drive to "
                  f"{ride.to}; I'll walk up to {ride.max_walk} minutes")
    query = (f"Hi, {ride.who}. I'm in {home} and {ride.asked}. Check my account and the price, then reserve the "
             "nearest one and unlock it for me now; I'm heading straight to it.")
    return make_task(city, ride, query, triggers, plan, oracle, "a member out on foot", ride.goal(),
                     alternatives=alternatives,
                     insist=f"{ride.constraints()}; any such car will do.")
