"""S2 Dependency Block: a damage report (and a model recall) blocks the car the trip depends on.

The member wants a car of a category they can walk to, unlocked for a drive. The agent checks the
member and the price and reserves the nearest car; as it unlocks it, the previous driver's damage
report lands and the reserved car, whichever it is, goes into maintenance (visible in ``get_car``;
the failed unlock names the report), so the trip cannot start. Easy: release it and take the other
car in the home zone. Medium: the only other one is in the neighbouring zone, within the walk. Hard:
the report is on a known fault of the model, and a recall grounds every car of that model at once,
the other home car and the neighbour's included: only a car of another model two zones away is left.
Impossible: the report lands on the nearest car (whenever it is unlocked), and the only other
one within the walk, of another model, has less charge or fuel than the member needs, which a
refusal must say.
"""

from __future__ import annotations

from sttgym.envs.arena.carshare.generator import CATEGORIES, Author, Plan, Task, draw_ride, make_task, new_city, one


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    ride, near = draw_ride(city, reach=2 if level == "hard" else 1, moves=level)
    home, n1, n2 = city.home, near[0], near[1]
    s, pred, op = city.state, author.pred, author.op
    models = CATEGORIES[city.focus][0]
    model = one(author, models)
    other = one(author, [m for m in models if m != model])
    car0 = city.add_car(home)
    placed = {"easy": [(home, other)], "medium": [(n1, other)], "hard": [(home, model), (n1, model), (n2, other)],
              "impossible": [(n1, other)]}[level]
    alts = [ride.low_car(zone) if level == "impossible" else city.add_car(zone) for zone, _ in placed]
    for car, (_, m) in zip([car0, *alts], [(home, model), *placed]):
        s["cars"][car]["model"] = m
    city.add_car(one(author, ride.beyond()))
    report, recall = f"DR-{author.serial()}", f"RC-{author.serial()}"
    damaged = f"damage report {report}: do not rent"
    # Impossible: the report is on the nearest car (unlocked whenever); the other one within the walk is too low.
    held = pred.holds_car(member=city.user, car_id=car0) if level == "impossible" else pred.holds_any(member=city.user)
    triggers = [city.trigger(
        "damage_report", "a damage report puts the reserved car into maintenance as it is unlocked",
        held, [op.ground_reserved(member=city.user, notice=damaged)],
        ("get_car", {"car_id": car0}), activation=("start_trip",))]
    if any(m == model for _, m in placed):
        triggers.append(city.cascade_on(
            "model_recall", f"recall {recall} grounds every {model}",
            pred.reserved_car_is(member=city.user, field="notice", value=damaged),
            [op.recall_model(model=model, notice=f"recall {recall} for the {model}")],
            ("get_car", {"car_id": alts[0]}), activation=("start_trip",)))

    def booking(car: str) -> Plan:
        return Plan(look=[ride.find(), ride.profile(), ride.quote(car)], book=[ride.reserve(car)],
                    go=[ride.start(home)])

    def unwind(car: str) -> list:
        return [ride.look(car), ride.cancel(), ride.find()]

    def hard(first: str, second: str) -> list:  # the recall leaves only the other model two zones away
        return [*unwind(first), ride.look(second), ride.look(alts[1]), ride.look(alts[2]), ride.walk_to(n2),
                ride.quote(alts[2]), *ride.take(alts[2], n2)]

    def impossible() -> list:
        why, short = ride.short_of(alts[0])
        return [*unwind(car0), ride.look(alts[0]), *ride.refuse(
            f"I can't unlock {ride.wants()} for you: {car0} went into maintenance on damage report {report}, and the "
            f"only other one within {ride.max_walk} minutes' walk, {why}.", ["damage_report"],
            [report, "damage report"], short)]

    plan = booking(car0)
    fixes = {
        "easy": lambda: [*unwind(car0), *ride.take(alts[0], home)],
        "medium": lambda: [*unwind(car0), ride.walk_to(n1), ride.look(alts[0]), *ride.take(alts[0], n1)],
        "hard": lambda: hard(car0, alts[0]),
        "impossible": impossible}
    oracle = plan.upto("go") + fixes[level]()
    # Easy, hard: the home zone's other car is as near; reserved first, the report finds it instead.
    first_alt = booking(alts[0]).upto("go")
    alternatives = {"easy": lambda: [first_alt + [*unwind(alts[0]), *ride.take(car0, home)]],
                    "hard": lambda: [first_alt + hard(alts[0], car0)]}.get(level, list)()
    ride.asked = (f"need {ride.wants()} with at least {ride.min_level}% charge or fuel to drive from {home} to "
                  f"{ride.to}; I can walk {ride.max_walk} minutes at most")
    query = (f"Hello, this is {ride.who}. I {ride.asked}. Please check my account and the price, reserve the nearest "
             "one and unlock it.")
    return make_task(city, ride, query, triggers, plan, oracle, "a member standing at the kerb", ride.goal(),
                     alternatives=alternatives,
                     insist=f"{ride.constraints()}; any such car will do.")
