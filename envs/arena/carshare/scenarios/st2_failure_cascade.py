"""ST2 Failure Cascade: a charging hub fails, locking the electric cars plugged in there, and the outage spreads.

The member needs an electric car of a category (their destination is inside the low-emission
core), within walking reach, unlocked for the drive. The agent checks the member and the price and
reserves the nearest one, which stands charged at the home zone's hub. As it unlocks a car (whichever
it reserved), the hub fails: its connectors lock every car plugged in there (visible in ``get_car`` and
``list_chargers``; the failed unlock names the outage).
Easy: another electric car stands on the street in the home zone. Medium: the other home one is on
the failed hub too, and the petrol car nearby does not serve: the electric car in the neighbouring
zone does. Hard: the load shift trips the neighbouring zone's hub as well, locking its car; of the
two electric cars two zones away, one is too low on charge. Impossible: as at medium, but the
neighbouring zone's electric car has less charge than the member needs, which a refusal must say.

At easy an agent that reserves the street car first never meets the outage, and rides as well as one
that recovered.
"""

from __future__ import annotations

from sttgym.envs.arena.carshare.generator import _SPOTS, Author, Plan, Task, draw_ride, make_task, new_city, one


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    ride, near = draw_ride(city, reach=2 if level == "hard" else 1, energy="ev", moves=level)
    home, n1, n2 = city.home, near[0], near[1]
    s, call = city.state, author.call

    def hub(zone: str) -> tuple[str, str]:
        spots = [x for x, v in sorted(s["spots"].items()) if v["zone"] == zone and v["kind"] == "hub"]
        spot = spots[0] if spots else f"SP-{author.serial(100, 999)}"
        s["spots"].setdefault(spot, {"zone": zone, "name": author.pick(_SPOTS), "kind": "hub"})
        chargers = [c for c, v in sorted(s["chargers"].items()) if v["spot"] == spot]
        charger = chargers[0] if chargers else f"CH-{author.serial(10, 99)}"
        s["chargers"].setdefault(charger, {"zone": zone, "spot": spot, "status": "working",
                                           "slots": author.integer(2, 4), "notice": ""})
        return charger, spot

    def street(zone: str) -> str:
        spots = [x for x, v in sorted(s["spots"].items()) if v["zone"] == zone and v["kind"] != "hub"]
        spot = spots[0] if spots else f"SP-{author.serial(100, 999)}"
        s["spots"].setdefault(spot, {"zone": zone, "name": author.pick(_SPOTS), "kind": "street"})
        return spot

    s["zones"][ride.destination].update(petrol_allowed=False, notice="low-emission core: no petrol cars")
    home_hub, home_spot = hub(home)
    car0 = city.add_car(home, energy="ev", spot=home_spot, level=author.integer(80, 100))
    code = f"HO-{author.serial()}"
    spread, alt = [], None
    city.add_car(one(author, ride.beyond()), energy="ev")
    if level == "easy":
        alt = city.add_car(home, energy="ev", spot=street(home))
    else:
        city.add_car(home, energy="ev", spot=home_spot)
        city.add_car(home, energy="petrol", spot=street(home))
        if level in ("medium", "impossible"):  # impossible: the neighbour's electric car is too low
            alt = (ride.low_car if level == "impossible" else city.add_car)(n1, energy="ev", spot=street(n1))
        else:
            n1_hub, n1_spot = hub(n1)
            spread = [n1_hub]
            stuck = city.add_car(n1, energy="ev", spot=n1_spot)
    triggers = [city.trigger("hub_outage", f"the hub {home_hub} in {home} fails and locks its cars",
                             author.pred.holds_any(member=city.user),
                             [author.op.hub_outage(charger_id=home_hub, notice=f"outage {code}: connectors locked")],
                             ("get_car", {"car_id": car0}), activation=("start_trip",))]
    if spread:
        triggers.append(city.cascade(
            "outage_spreads", "the load shift trips the next hubs", ["chargers", home_hub, "status"], "fault",
            [author.op.hub_outage(charger_id=c, notice=f"outage {code}: tripped by load shift") for c in spread],
            ("get_car", {"car_id": stuck}), activation=("start_trip",)))
    plan = Plan(look=[ride.find(), ride.profile(), ride.quote(car0)], book=[ride.reserve(car0)],
                go=[ride.start(home)])
    unwind = [ride.look(car0), ride.cancel(), ride.find()]

    def hard() -> list:
        low = city.add_car(n2, energy="ev", level=author.integer(5, ride.min_level - 5), spot=street(n2))
        good = city.add_car(n2, energy="ev", level=author.integer(60, 95), spot=street(n2))
        return [*unwind, call.list_chargers(), call.list_chargers(zone_id=n1), ride.look(low), ride.look(good),
                ride.walk_to(n2), ride.quote(good), *ride.take(good, n2)]

    def impossible() -> list:
        why, short = ride.short_of(alt)
        return [*unwind, call.list_chargers(zone_id=home), ride.look(alt), *ride.refuse(
            f"I can't unlock an electric {city.focus} car for you: charging outage {code} locked {car0} and the other "
            f"electric one at the {home} hub, a petrol car cannot enter your destination's low-emission core, and "
            f"the only other electric one within {ride.max_walk} minutes' walk, {why}.", ["hub_outage"],
            [code, "charging outage", "hub outage", "chargers locked", "locked chargers"], short)]

    fixes = {
        "easy": lambda: [*unwind, *ride.take(alt, home)],
        "medium": lambda: [*unwind, call.list_chargers(zone_id=home), ride.walk_to(n1), ride.look(alt),
                           *ride.take(alt, n1)],
        "hard": hard,
        "impossible": impossible}
    oracle = plan.upto("go") + fixes[level]()
    # Easy: the street car in the home zone is as near; reserved first, the outage never touches it.
    street_first = [[ride.find(), ride.profile(), ride.quote(alt), *ride.take(alt, home, "res")]] \
        if level == "easy" else []
    ride.asked = (f"need an electric {ride.wants().split(' ', 1)[1]} with at least {ride.min_level}% charge to drive "
                  f"from {home} to {ride.to}")
    query = (f"Hi, {ride.who}. I {ride.asked}, which is in the low-emission core, so petrol won't do. I'll walk up to "
             f"{ride.max_walk} minutes. Check my account and the price, then reserve the nearest one and unlock it.")
    return make_task(city, ride, query, triggers, plan, oracle, "a member who only drives electric", ride.goal(),
                     answers={("petrol", "fuel", "combustion"): "No, it has to be electric."},
                     alternatives=street_first,
                     insist=f"{ride.constraints()}; any such car will do.")
