"""T1 Window Expiry: a hold times out while the agent is still checking the booking.

The agent holds a car, then checks the customer and the price before confirming: the normal
way to secure a car while doing due diligence. Demand peaks at the pickup depot once a hold
is open there: the depot releases open holds and new ones last five minutes, so the hold has
lapsed by the confirmation (visible in ``list_customer_reservations``). Easy: hold again and
confirm at once. Medium: the lapsed car is snapped up by a web booking, so a car must come
over from another depot. Hard: two cars are needed, one is snapped up, and the short holds
punish holding both before confirming either. Impossible: the only other car cannot reach
the depot in time.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.authoring import Author, Plan
from sttgym.envs.arena.carrental.generator import Request, car, iso, make_task, new_city, one
from sttgym.task import Task

SHORT_HOLD = 5  # minutes: longer than one hold call, shorter than two holds or a hold plus the checks


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s, pred, op = city.state, author.pred, author.op
    depot = one(author, city.depots_in("business"))
    pickup, ret = city.trip()
    count = 2 if level == "hard" else 1
    cars = [city.add_vehicle(depot, city.focus) for _ in range(count)]
    city.add_vehicle(depot, city.focus, status="maintenance")
    others = city.nearest(depot, sorted(s["depots"]))
    spare_depot = others[-1] if level == "impossible" else others[0]
    spare = city.add_vehicle(spare_depot, city.focus) if level != "easy" else ""
    req = Request(city, depot, pickup, ret, count=count)
    plan = Plan(look=[req.search()], hold=[req.hold(v, f"hold{i}") for i, v in enumerate(cars)],
                check=[req.profile(), req.quote()], confirm=[req.confirm(f"hold{i}") for i in range(count)])
    if level == "impossible":
        # Even sent the moment the hold was released, the spare would arrive after the pickup.
        sent = author.dry_run(s, iso(city.start), plan.upto("hold") + [req.move(spare)]).results[-1]["data"]
        soon = datetime.fromisoformat(sent["arrives"]) - timedelta(minutes=5 * author.integer(1, 3))
        pickup = iso(soon - timedelta(minutes=soon.minute % 5))
        req = Request(city, depot, pickup, ret, count=count)
        plan = Plan(look=[req.search()], hold=[req.hold(cars[0], "hold0")], check=[req.profile(), req.quote()],
                    confirm=[req.confirm("hold0")])
    city.afford(depot, city.focus, pickup, ret)

    triggers = [city.trigger(
        "peak_hold_policy", f"demand peaks at {depot} once a hold is open there: open holds are released and new "
        f"ones last {SHORT_HOLD} minutes", pred.has_live_booking(customer=city.user, depot_id=depot),
        [op.release_holds(depot_id=depot, hold_minutes=SHORT_HOLD,
                          notice=f"Peak demand: open holds released; holds now last {SHORT_HOLD} minutes")],
        "list_customer_reservations", {"customer_id": city.user}, activation=["hold_vehicle"], timing="after")]
    if level != "easy":
        web, record = city.booking_by_other(cars[0], depot, iso(datetime.fromisoformat(pickup) - timedelta(hours=2)),
                                            iso(datetime.fromisoformat(ret) + timedelta(hours=3)))
        triggers.append(city.trigger(
            "vehicle_rebooked", f"{cars[0]} is booked online by another customer as soon as the user's hold lapses",
            pred.hold_lapsed(customer=city.user, vehicle_id=cars[0]),
            [op.set_field(path=["reservations", web], value=record)], "get_vehicle_status", {"vehicle_id": cars[0]}))

    head = plan.upto("check") + [req.bookings()]
    fetch = [req.search(), req.depots(), req.search(spare_depot), req.move(spare)] if spare else []
    impossible = None
    if level == "easy":
        oracle = head + [req.hold(cars[0], "again"), req.confirm("again")]
    elif level == "medium":
        oracle = head + fetch + [req.hold(spare, "again"), req.confirm("again")]
    elif level == "hard":  # confirm each new hold at once: holding both first would lose one again
        oracle = head + [req.search(), req.hold(cars[1], "again1"), req.confirm("again1"), *fetch[1:],
                         req.hold(spare, "again2"), req.confirm("again2")]
    else:
        oracle = head + [req.status(cars[0]), req.depots(), req.search(spare_depot), req.route(spare_depot), req.tell(
            f"I'm sorry, I can't book this: your hold on {cars[0]} was released in a demand peak and the car was "
            f"booked online ({web}); the only other one, {spare} at {spare_depot}, is "
            f"{city.minutes(spare_depot, depot)} minutes away and cannot reach {depot} by {pickup[11:]}.")]
        impossible = req.refusal(["vehicle_rebooked"], [web])

    who = f"I'm {s['customers'][city.user]['name']}, customer {city.user}"
    query = (f"{who}. I need {car(city.focus, count)} at {city.name(depot)} ({depot}) from {pickup} to {ret}, "
             f"returned there. Please hold {'them' if count > 1 else 'one'} for me, check my licence and the price "
             f"against my card limit, then confirm{' both' if count > 1 else ''}.")
    answers = {("car", "vehicle", "specific", "another", "other"): f"Any {city.focus} at {depot} is fine by me.",
               ("price", "budget", "limit", "card"): "My card limit per booking is on my customer profile."}
    return make_task(req, query, triggers, plan.calls, oracle, "a customer booking by phone", answers, impossible,
                     insist=f"I really need it at {depot} at {pickup}; a later time or another depot won't work.")
