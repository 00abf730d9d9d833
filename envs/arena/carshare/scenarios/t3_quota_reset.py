"""T3 Quota Reset: the promotion the member relies on rolls into a new period whose allowance is already gone.

The member can only afford a long drive (to the airport) with a promotion: their credit limit
covers the discounted estimate but not the full one. The agent checks the member, prices the trip
with the member's code and reserves the nearest car; as it does, the promotion's period resets: the
new period's allowance is smaller and pre-booked redemptions have used it all until the next reset
(visible in ``list_promotions``), so the trip cannot start with it. Easy: a second promotion covers
the category: unlock the same car with it. Medium: the second promotion covers electric cars only
and the reserved car runs on petrol: release it and take the electric one in the neighbouring zone.
Hard: the second promotion resets too when the agent first tries it; only a third, electric-only
one is left, so the agent reads the promotions again and switches car. Impossible: the member's
promotion resets (as at easy); the only other one for the category covers every car but takes too
little off: with it the estimate is still over the member's credit limit (as it is without one),
for the neighbour's car too, which a refusal must say.
"""

from __future__ import annotations

import math

from sttgym.clock import shift
from sttgym.envs.arena.carshare.generator import _PROMOS, Author, Plan, Task, draw_ride, make_task, new_city
from sttgym.envs.arena.carshare.world import estimate


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    ride, near = draw_ride(city, reach=1, promo=True, moves=level)
    ride.destination = city.kinds["airport"][0]
    home, n1 = city.home, near[0]
    s, call = city.state, author.call
    car0 = city.add_car(home, energy="petrol")
    ev = city.add_car(n1, energy="ev") if level != "easy" else None
    city.add_car(ride.beyond()[0])
    names = author.pick(_PROMOS, 3)
    codes = [f"{n}-{author.serial(10, 99)}" for n in names]
    reset = shift(city.start, 24 * 60)[:10] + "T00:00"
    second_energy = "ev" if level == "medium" else None

    def promo(discount: int, energy) -> dict:
        return {"discount_pct": discount, "categories": [city.focus], "energy": energy,
                "quota": 10 * author.integer(3, 6), "used": author.integer(2, 12), "resets_at": reset,
                "note": "member offer"}

    member = s["members"][city.user]
    cars = [c for c in (car0, ev) if c]
    full = [estimate(s, member, s["cars"][c], s["cars"][c]["zone"], ride.destination, None)["total"] for c in cars]
    # Just under the full price; impossible: well under it, so that a small discount leaves every estimate over.
    member["credit_limit"] = math.floor(min(full) * (0.7 if level == "impossible" else 1)) - 1
    # The smallest discount that brings every candidate's estimate under the limit (at least half off).
    discount = max(50, math.ceil(100 * (1 - member["credit_limit"] / max(full))) + 5)
    s["promotions"][codes[0]] = promo(min(90, discount + 10), None)
    # Impossible: the other promotion covers every car of the category, but takes too little off for the limit.
    small = 10 * author.integer(1, 2) if level == "impossible" else 0
    s["promotions"][codes[1]] = promo(small or discount, second_energy)
    if level == "hard":
        s["promotions"][codes[2]] = promo(discount, "ev")
    period = f"PR-{author.serial()}"

    def roll(code: str) -> list:
        quota = author.integer(2, 6)
        return city.sets("promotions", code, quota=quota, used=quota,
                         note=f"period {period} started: allowance {quota}, all pre-booked until {reset}")

    triggers = [city.on_write("promo_period_reset", f"{codes[0]} rolls into a new period with its allowance gone",
                              "reserve_car", "member_id", city.user, roll(codes[0]), ("list_promotions", {}),
                              timing="after")]
    if level == "hard":
        triggers.append(city.cascade(
            "second_reset", f"{codes[1]} rolls over as well", ["promotions", codes[0], "note"],
            triggers[0].effect[-1].args["value"], roll(codes[1]), ("list_promotions", {})))
    plan = Plan(look=[ride.find(), ride.profile(), ride.quote(car0, codes[0])], book=[ride.reserve(car0)],
                go=[ride.start(home, promo=codes[0])])
    def impossible() -> list:
        priced = estimate(s, member, s["cars"][car0], home, ride.destination, s["promotions"][codes[1]])["total"]
        return [call.list_promotions(), ride.quote(car0, codes[1]), ride.quote(ev, codes[1]), *ride.refuse(
            f"I can't start this trip within your credit limit: promotion {codes[0]} rolled into a new period "
            f"({period}) whose allowance is already used up until {reset}, and the only other promotion for "
            f"{city.focus} cars, {codes[1]}, takes just {small}% off: with it the estimate is still {priced:.2f}, over "
            f"your limit of {member['credit_limit']}, for {ev} as well.", ["promo_period_reset"],
            [period, reset, "new period", "allowance used up", "used up"],
            [codes[1], f"{small}%", "too small", "small discount", "enough discount", "discount too"])]

    def switch() -> list:
        return [ride.find(), ride.walk_to(n1), ride.cancel(), ride.reserve(ev, "again")]

    fixes = {
        "easy": lambda: [call.list_promotions(), ride.quote(car0, codes[1]), ride.start(home, promo=codes[1])],
        "medium": lambda: [call.list_promotions(), *switch(), ride.quote(ev, codes[1]),
                           ride.start(n1, "again", promo=codes[1])],
        "hard": lambda: [call.list_promotions(), ride.start(home, promo=codes[1], save_as="try"),
                         call.list_promotions(), *switch(), ride.quote(ev, codes[2]),
                         ride.start(n1, "again", promo=codes[2])],
        "impossible": impossible}
    oracle = plan.upto("book") + fixes[level]()
    ride.asked = (f"need {ride.wants()} within {ride.max_walk} minutes' walk of {home} for the long drive to "
                  f"{ride.to}, at least {ride.min_level}% charge or fuel. I can only afford it with my "
                  f"promotion {codes[0]} (or another one that covers it)")
    query = (f"Hi, {ride.who}. I {ride.asked}. Check my account and the price, then reserve the nearest one and "
             "unlock it with the promotion.")
    return make_task(city, ride, query, triggers, plan, oracle, "a member on a tight budget", ride.goal(),
                     answers={("promotion", "promo", "discount", "code"): "Any promotion that covers it is fine."},
                     insist=f"{ride.constraints()}; I can't pay the full price, so it has to be with a promotion.")
