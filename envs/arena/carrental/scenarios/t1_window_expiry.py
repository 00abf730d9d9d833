"""T1 Window Expiry: a hold times out while the agent is still checking the booking.

The agent holds a car, then checks the customer and the price before confirming: the normal
way to secure a car while doing due diligence. Demand peaks at the pickup depot once a hold
is open there: the depot releases open holds and new ones last five minutes, so the hold has
lapsed by the confirmation (visible in ``list_customer_reservations``). Easy: hold again and
confirm at once. Medium: the lapsed car is snapped up by a web booking, so a car must come
over from another depot. Hard: two cars are needed, one is snapped up, and the short holds
punish holding both before confirming either. Impossible: the lapsed car is snapped up too, and
the only other car of the class, at the farthest depot, cannot reach the depot by the pickup even
sent at once (what rules it out shows only on that car's depot: ``search_available_vehicles``,
``plan_route``; the refusal must say so).
"""

from __future__ import annotations

from datetime import timedelta

from sttgym.clock import format_time, shift
from sttgym.envs.arena.carrental.generator import Author, Plan, Request, Task, car, make_task, new_city

SHORT_HOLD = 5  # minutes: longer than one hold call, shorter than two holds or a hold plus the checks
LEVELS = {"easy": (1, None), "medium": (1, "nearest"), "hard": (2, "nearest"), "impossible": (1, "farthest")}
# ^ cars booked; where the one spare of the class waits (none on easy, where the lapsed car is not snapped up)


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    count, where = LEVELS[level]
    depot = city.depot("business")
    pickup, ret = city.trip()
    cars = [city.add_vehicle(depot, city.focus) for _ in range(count)]
    city.add_vehicle(depot, city.focus, status="maintenance")
    others = city.nearest(depot, sorted(city.state["depots"]))
    spare_depot = others[-1] if where == "farthest" else others[0]
    spare = city.add_vehicle(spare_depot, city.focus) if where else ""

    def booking(pickup: str) -> tuple[Request, Plan]:
        req = Request(city, depot, pickup, ret, count=count, moves=level)
        return req, Plan(look=[req.search()], hold=[req.hold(v, f"hold{i}") for i, v in enumerate(cars)],
                         check=[req.profile(), req.quote()], confirm=[req.confirm(f"hold{i}") for i in range(count)])

    req, plan = booking(pickup)
    if where == "farthest":  # the pickup is so near that even sent at once, before anything else, the spare is late
        drive = city.minutes(spare_depot, depot)
        early = timedelta(minutes=5 * author.integer(1, min(3, max(1, drive // 10))))
        soon = city.arrival([req.move(spare)], spare) - early
        req, plan = booking(pickup := format_time(soon - timedelta(minutes=soon.minute % 5)))
    city.afford(depot, city.focus, pickup, ret)
    triggers = [city.on_hold(
        "peak_hold_policy", f"demand peaks at {depot} once a hold is open there: open holds are released and new "
        f"ones last {SHORT_HOLD} minutes", [author.op.release_holds(
            depot_id=depot, hold_minutes=SHORT_HOLD,
            notice=f"Peak demand: open holds released; holds now last {SHORT_HOLD} minutes")],
        ("list_customer_reservations", city.user), depot_id=depot)]
    web, rebook = city.taken(cars[0], depot, shift(pickup, hours=-2), shift(ret, hours=3))
    if where:
        triggers.append(city.trigger(
            "vehicle_rebooked", f"{cars[0]} is booked online by another customer as soon as the user's hold lapses",
            author.pred.hold_lapsed(customer=city.user, vehicle_id=cars[0]), [rebook],
            ("get_vehicle_status", cars[0])))
    fetch = [req.depots(), req.search(spare_depot), req.move(spare)]
    fixes = {  # hard: confirm each new hold at once, since holding both first would lose one again
        "easy": lambda: req.book(cars[0], "again"),
        "medium": lambda: [req.search(), *fetch, *req.book(spare, "again")],
        "hard": lambda: [req.search(), *req.book(cars[1], "again1"), *fetch,
                         *req.book(spare, "again2")],
        "impossible": lambda: [req.status(cars[0]), req.depots(), req.search(spare_depot), req.route(spare_depot),
                               *req.refuse(
            f"I can't book this: your hold on {cars[0]} was released in a demand peak and another customer took the "
            f"car online ({web}); the only other {city.focus}, {spare} at {spare_depot}, is "
            f"{city.minutes(spare_depot, depot)} minutes away and cannot reach {depot} by {pickup[11:]}.",
            ["vehicle_rebooked"], [web, "booked online", "took the car online", "hold released", "hold was released"],
            [spare, spare_depot, f"{city.minutes(spare_depot, depot)} minutes", "too far", "minutes away",
             "cannot reach"])]}
    oracle = plan.upto("check") + [req.bookings()] + fixes[level]()
    req.asked = f"{car(city.focus, count)} at {city.name(depot)} ({depot}) from {pickup} to {ret}, returned there"
    query = (f"I'm {req.who}. I need {req.asked}. Please hold {'them' if count > 1 else 'one'} for me, check my "
             f"licence and the price against my card limit, then confirm{' both' if count > 1 else ''}.")
    answers = {("car", "vehicle", "specific", "another", "other"): f"Any {city.focus} at {depot} is fine by me.",
               ("price", "budget", "limit", "card"): "My card limit per booking is on my customer profile."}
    return make_task(req, query, triggers, plan, oracle, "a customer booking by phone", answers,
                     insist=f"{req.constraints()}, within my card limit; any car of the class will do, but a "
                     "later time or another depot won't work.")
