"""T3 Quota Reset: a late-night promotional fare expires at the midnight quota reset.

Just before midnight the user asks for a booking on tonight's flash fare, which their card
limit needs. The agent checks the customer and the promotions, holds a car and prices it; at
midnight the promotions roll over (visible in ``list_promotions``): the flash fare expires,
while a daily fare whose quota was used up tonight starts afresh. Easy: confirm with the
reset daily fare. Medium: the reset fare is for electric cars only, so the hold moves to the
electric car, which must be charged before handover. Hard: two cars are booked, the reset
fare covers only one, and the other moves to an electric car on the green fare. Impossible:
no fare left after midnight brings the price within the limit.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.authoring import Author, Plan
from sttgym.envs.arena.carrental.generator import Request, car, iso, make_task, new_city, one, rid
from sttgym.task import Task

_LEVEL = {  # cars booked, the daily fare's discount and quota, whether it is for electric cars only
    "easy": (1, 20, None, None), "medium": (1, 20, None, "electric"), "hard": (2, 20, 1, None),
    "impossible": (1, 10, None, None)}


def _promo(zone: str, discount: int, quota: int, used: int, note: str, energy: str | None = None) -> dict:
    return {"zone": zone, "vehicle_class": None, "energy": energy, "discount_pct": discount, "quota": quota,
            "used": used, "resets": "daily at 00:00", "status": "active", "note": note}


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s, call, pred, op = city.state, author.call, author.pred, author.op
    count, discount, daily_quota, energy = _LEVEL[level]
    depot = one(author, city.depots_in("residential"))
    zone = city.zone(depot)
    pickup, ret = city.trip()
    cars = [city.add_vehicle(depot, city.focus) for _ in range(count)]
    flash, daily, green = (f"{author.pick(words)}{author.serial(10, 99)}" for words in (
        ["MOONLIGHT", "NIGHTOWL", "LATEDEAL", "STARLIGHT"], ["DAYBREAK", "SUNRISE", "DAILY", "MORNING"],
        ["GREENRIDE", "EVDRIVE", "VOLT", "ECOWAY"]))
    flash_quota, daily_quota = author.integer(20, 40), daily_quota or author.integer(10, 30)
    s["promotions"][flash] = _promo(zone, 30, flash_quota, flash_quota - count, "late-night flash fare")
    s["promotions"][daily] = _promo(zone, discount, daily_quota, daily_quota, "daily early-bird fare", energy)
    full = city.price(depot, city.focus, pickup, ret)
    s["customers"][city.user]["payment_limit"] = round(full * (0.84 + 0.02 * author.integer(0, 2)))
    req = Request(city, depot, pickup, ret, count=count)
    promotions = call.list_promotions()
    plan = Plan(look=[req.profile(), promotions], book=[req.search(), *[req.hold(v, f"hold{i}") for i, v in
                                                                       enumerate(cars)]],
                quote=[req.quote(flash)], confirm=[req.confirm(f"hold{i}", flash) for i in range(count)])
    # Midnight falls right after the agent has seen tonight's fares: by the first confirmation, even
    # without a single read before it.
    looked = datetime.fromisoformat(author.dry_run(s, iso(city.start), plan["look"]).end) - city.start
    midnight = city.at(1, 0)
    city.start = midnight - looked - timedelta(minutes=author.integer(0, 1))
    reset = city.trigger(
        "midnight_quota_reset", f"at {iso(midnight)} promotional quotas reset: {flash} ends, {daily} starts afresh",
        pred.time_reached(moment=iso(midnight)),
        [op.set_field(path=["promotions", flash, "quota"], value=0),
         op.set_field(path=["promotions", flash, "used"], value=0),
         op.set_field(path=["promotions", flash, "status"], value="expired"),
         op.set_field(path=["promotions", daily, "used"], value=0)], "list_promotions", {})

    head = plan.upto("quote") + [promotions]
    impossible = None
    if level == "easy":
        oracle = head + [req.confirm("hold0", daily)]
    elif level in ("medium", "hard"):
        # The alternative is an electric car of the class, nearly flat, at a depot with a charger.
        s["depots"][depot]["charger"] = True
        ev = city.add_vehicle(depot, city.focus, energy="electric", fuel=author.integer(8, 20))
        last = f"hold{count - 1}"
        # Charging takes half an hour, longer than a hold may last: charge first, then hold the car afresh.
        fix = [req.search(), call.refuel_vehicle(vehicle_id=ev), call.cancel_reservation(reservation_id=rid(last)),
               req.hold(ev, "ev")]
        if level == "medium":
            oracle = head + fix + [req.confirm("ev", daily)]
        else:
            s["promotions"][green] = _promo(zone, 25, 50, author.integer(5, 40), "green fare for electric cars",
                                            energy="electric")
            oracle = head + [req.confirm("hold0", daily), *fix, req.confirm("ev", green)]
    else:
        city.add_vehicle(depot, city.focus, energy="electric", status="maintenance")
        over = city.price(depot, city.focus, pickup, ret, discount)
        oracle = head + [req.quote(daily), req.tell(
            f"I'm sorry, I can't book this within your card limit of {s['customers'][city.user]['payment_limit']}: "
            f"the flash fare {flash} has expired at the midnight reset, and the only fare left, {daily}, still "
            f"brings the price to {over}.")]
        impossible = req.refusal(["midnight_quota_reset"], [flash])  # "expired" alone is guessed by wrong reasons

    name = s["customers"][city.user]["name"]
    query = (f"Hello, {name}, customer {city.user}. Before the night is over I'd like to book {car(city.focus, count)} "
             f"at {city.name(depot)} ({depot}) from {pickup} to {ret}, returned there, on the flash fare {flash}. "
             f"My card limit per booking is tight, so please check the price before you confirm.")
    answers = {("promotion", "promo", "code", "fare", "discount"):
               "Any valid promotion is fine, as long as each booking stays within my card limit.",
               ("car", "vehicle", "electric", "ev", "another"): f"Any {city.focus}, electric or not, is fine."}
    return make_task(req, query, [reset], plan.calls, oracle, "a customer booking late at night", answers,
                     impossible, insist=f"My card limit is fixed; I need it at {depot} at {pickup} within it.")
