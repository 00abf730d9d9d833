"""S2 Dependency Block: a damage report (and a model recall) blocks the car the trip depends on.

The member wants a car of a category they can walk to, unlocked for a drive. The agent checks the
member and the price and reserves the nearest car; as it unlocks it, the previous driver's damage
report lands and the car goes into maintenance (visible in ``get_car``), so the trip cannot start.
Easy: release it and take the other car in the home zone. Medium: the only other one is in the
neighbouring zone, within the walk. Hard: the report is on a known fault of the model, and a recall
flags every car of that model at once, the other home car and the neighbour's included: only a
car of another model two zones away is left. Impossible: every car of the category within reach is
of the recalled model.
"""

from __future__ import annotations

from sttgym.envs.arena.carshare.generator import CATEGORIES, Author, Plan, Task, draw_ride, make_task, new_city, one


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    ride, near = draw_ride(city, reach=2 if level == "hard" else 1)
    home, n1, n2 = city.home, near[0], near[1]
    s = city.state
    models = CATEGORIES[city.focus][0]
    model = one(author, models)
    other = one(author, [m for m in models if m != model])
    car0 = city.add_car(home)
    placed = {"easy": [(home, other)], "medium": [(n1, other)], "hard": [(home, model), (n1, model), (n2, other)],
              "impossible": [(home, model), (n1, model)]}[level]
    alts = [city.add_car(zone) for zone, _ in placed]
    for car, (_, m) in zip([car0, *alts], [(home, model), *placed]):
        s["cars"][car]["model"] = m
    city.add_car(one(author, ride.beyond()))
    report, recall = f"DR-{author.serial()}", f"RC-{author.serial()}"
    triggers = [city.trigger(
        "damage_report", f"a damage report on {car0} puts it into maintenance as it is unlocked",
        author.pred.holds_car(member=city.user, car_id=car0),
        city.sets("cars", car0, status="maintenance", notice=f"damage report {report}: do not rent"),
        ("get_car", {"car_id": car0}), activation=("start_trip",))]
    recalled = [a for a, (_, m) in zip(alts, placed) if m == model]
    if recalled:
        triggers.append(city.cascade(
            "model_recall", f"recall {recall} grounds every {model}", ["cars", car0, "status"], "maintenance",
            [op for a in recalled for op in city.sets("cars", a, status="maintenance",
                                                       notice=f"recall {recall} for the {model}")],
            ("get_car", {"car_id": recalled[0]}), activation=("start_trip",),
            also=(("find_cars", {"zone_id": home}),)))
    plan = Plan(look=[ride.find(), ride.profile(), ride.quote(car0)], book=[ride.reserve(car0)],
                go=[ride.start(home)])
    unwind = [ride.look(car0), ride.cancel(), ride.find()]
    fixes = {
        "easy": lambda: [*unwind, *ride.take(alts[0], home)],
        "medium": lambda: [*unwind, ride.walk_to(n1), ride.look(alts[0]), *ride.take(alts[0], n1)],
        "hard": lambda: [*unwind, ride.look(alts[0]), ride.look(alts[1]), ride.look(alts[2]), ride.walk_to(n2),
                         ride.quote(alts[2]), *ride.take(alts[2], n2)],
        "impossible": lambda: [*unwind, ride.look(alts[0]), *ride.refuse(
            f"I can't unlock {ride.wants()} for you: {car0} went into maintenance on damage report {report}, "
            f"and recall {recall} grounds every {model}, which is every such car within {ride.max_walk} "
            "minutes' walk.", ["damage_report"], [report, recall])]}
    oracle = plan.upto("go") + fixes[level]()
    query = (f"Hello, this is {ride.who}. I need {ride.wants()} with at least {ride.min_level}% charge or fuel to "
             f"drive from {home} to {ride.destination}; I can walk {ride.max_walk} minutes at most. Please check my "
             "account and the price, reserve the nearest one and unlock it.")
    return make_task(city, ride, query, triggers, plan, oracle, "a member standing at the kerb",
                     ride.checklist("damage_report", [car0]), ride.goal(),
                     insist=f"It has to be within {ride.max_walk} minutes' walk of {home}.")
