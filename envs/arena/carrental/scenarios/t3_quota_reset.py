"""T3 Quota Reset: a late-night promotional fare expires at the midnight quota reset.

Just before midnight the user asks for a booking on tonight's flash fare, which their card
limit needs. The agent checks the customer and the promotions, holds a car and prices it; at
midnight the promotions roll over (visible in ``list_promotions``): the flash fare expires,
while a daily fare whose quota was used up tonight starts afresh. Easy: confirm with the
reset daily fare. Medium: the reset fare is for electric cars only, so the hold moves to the
electric car, which must be charged before handover. Hard: two cars are booked, the reset
fare covers only one, and the other moves to an electric car on the green fare. Impossible:
the daily fare that resets gives too little: priced with it (``get_rental_quote``), the booking is
still over the card limit, which the refusal must say besides the flash fare's expiry.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.clock import format_time
from sttgym.envs.arena.carrental.generator import Author, Plan, Request, Task, car, make_task, new_city, rid

LEVELS = {  # cars booked, the daily fare's discount and quota, whether it is for electric cars only
    "easy": (1, 20, None, None), "medium": (1, 20, None, "electric"), "hard": (2, 20, 1, None),
    "impossible": (1, 10, None, None)}


def _promo(zone: str, discount: int, quota: int, used: int, note: str, energy: str | None = None) -> dict:
    return {"zone": zone, "vehicle_class": None, "energy": energy, "discount_pct": discount, "quota": quota,
            "used": used, "resets": "daily at 00:00", "status": "active", "note": note}


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s, call = city.state, author.call
    count, discount, daily_quota, energy = LEVELS[level]
    zone = city.zone(depot := city.depot("residential"))
    pickup, ret = city.trip()
    cars = [city.add_vehicle(depot, city.focus) for _ in range(count)]
    flash, daily, green = (city.code(words) for words in (
        ["MOONLIGHT", "NIGHTOWL", "LATEDEAL", "STARLIGHT"], ["DAYBREAK", "SUNRISE", "DAILY", "MORNING"],
        ["GREENRIDE", "EVDRIVE", "VOLT", "ECOWAY"]))
    flash_quota, daily_quota = author.integer(20, 40), daily_quota or author.integer(10, 30)
    s["promotions"][flash] = _promo(zone, 30, flash_quota, flash_quota - count, "late-night flash fare")
    s["promotions"][daily] = _promo(zone, discount, daily_quota, daily_quota, "daily early-bird fare", energy)
    full = city.price(depot, city.focus, pickup, ret)
    s["customers"][city.user]["payment_limit"] = round(full * (0.84 + 0.02 * author.integer(0, 2)))
    req = Request(city, depot, pickup, ret, count=count, moves=level)
    promotions = call.list_promotions()
    plan = Plan(look=[req.profile(), promotions], book=[req.search()] + [req.hold(v, f"hold{i}") for i, v in
                enumerate(cars)], quote=[req.quote(flash)], confirm=[req.confirm(f"hold{i}", flash) for i, _ in
                                                                    enumerate(cars)])
    # Midnight falls right after the agent has seen tonight's fares: by the first confirmation, even
    # without a single read before it.
    looked = datetime.fromisoformat(author.dry_run(s, format_time(city.start), plan["look"]).end) - city.start
    midnight = city.at(1, 0)
    city.start = midnight - looked - timedelta(minutes=author.integer(0, 1))
    reset = city.trigger(
        "midnight_quota_reset", f"at {format_time(midnight)} promotional quotas reset: {flash} ends, {daily} starts afresh",
        author.pred.time_reached(moment=format_time(midnight)),
        city.sets("promotions", flash, quota=0, used=0, status="expired")
        + [city.set("promotions", daily, "used", value=0)], ("list_promotions", {}))

    def electric(fare: str) -> list:
        """The nearly flat electric car of the class, charged (longer than a hold lasts), then held afresh."""
        s["depots"][depot]["charger"] = True
        ev = city.add_vehicle(depot, city.focus, energy="electric", fuel=author.integer(8, 20))
        if fare == green:
            s["promotions"][green] = _promo(zone, 25, 50, author.integer(5, 40), "green fare for electric cars",
                                            energy="electric")
        return [req.search(), call.refuel_vehicle(vehicle_id=ev), call.cancel_reservation(
            reservation_id=rid(f"hold{count - 1}")), req.hold(ev, "ev"), req.confirm("ev", fare)]

    def impossible() -> list:
        city.add_vehicle(depot, city.focus, energy="electric", status="maintenance")
        over = city.price(depot, city.focus, pickup, ret, discount)
        return [req.quote(daily), *req.refuse(  # "expired" alone is guessed by wrong reasons: name the fare
            f"I can't book this within your card limit of {s['customers'][city.user]['payment_limit']}: the flash "
            f"fare {flash} has expired at the midnight reset, and the only fare left, {daily}, still brings the "
            f"price to {over}, over the limit.", ["midnight_quota_reset"],
            [flash, "fare expired", "fare has expired", "midnight reset"],
            [daily, str(over), "still over", "still exceeds", "still above", "still too expensive"])]

    fixes = {"easy": lambda: [req.confirm("hold0", daily)], "medium": lambda: electric(daily),
             "hard": lambda: [req.confirm("hold0", daily), *electric(green)], "impossible": impossible}
    oracle = plan.upto("quote") + [promotions] + fixes[level]()
    req.asked = f"book {car(city.focus, count)} at {city.name(depot)} ({depot}) from {pickup} to {ret}, returned there"
    query = (f"Hello, {req.who}. Before the night is over I'd like to {req.asked}, on the flash fare {flash}. "
             f"My card limit per booking is tight, so please check the price before you confirm.")
    return make_task(req, query, [reset], plan, oracle, "a customer booking late at night", {
        ("promotion", "promo", "code", "fare", "discount"): "Any valid promotion is fine, as long as each booking "
        "stays within my card limit.", ("car", "vehicle", "electric", "ev", "another"): f"Any {city.focus}, "
        "electric or not, is fine."},
        insist=f"{req.constraints()}, each booking within my card limit; any valid promotion and any car of the "
        "class will do.")
