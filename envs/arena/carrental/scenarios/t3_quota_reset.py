"""T3 Quota Reset: a late-night promotional fare expires at the midnight quota reset.

Just before midnight the user asks for a booking on tonight's flash fare, which their card
limit needs. The agent checks the customer and the promotions, holds a car and prices it; at
midnight the promotions roll over (visible in ``list_promotions`` or the quote): the flash
fare's new-day quota is zero, while a daily fare whose quota was used up tonight starts
afresh. Easy: confirm with the reset daily fare. Medium: the reset fare is for electric cars
only, so the hold moves to the electric car, which must be charged before handover. Hard: two
cars are booked, the reset fare covers only one, and the other moves to an electric car on
the green fare. Impossible: no fare left after midnight brings the price within the limit.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np

from sttgym.envs.arena.carrental.generator import (Booking, cannot, car, elapsed, iso, make_task, new_world, rid, tell,
                                                   user_profile)
from sttgym.task import Call, Task
from sttgym.triggers import Mutation, Trigger


def _promo(zone: str, discount: int, quota: int, used: int, note: str, energy: str | None = None) -> dict:
    return {"zone": zone, "vehicle_class": None, "energy": energy, "discount_pct": discount, "quota": quota,
            "used": used, "resets": "daily at 00:00", "note": note}


def build(rng: np.random.Generator, level: str) -> Task:
    base = new_world(rng)
    cls, s = base.focus, base.state
    depot = base.pick(base.depots_in("residential"))
    zone = base.zone(depot)
    pickup, ret = base.trip()
    b = Booking(base.user, cls, depot, pickup, ret)
    count = 2 if level == "hard" else 1
    cars = [base.add_vehicle(depot, cls) for _ in range(count)]

    flash = base.promo_code(("MOONLIGHT", "NIGHTOWL", "LATEDEAL"))
    daily = base.promo_code(("DAYBREAK", "SUNRISE", "DAILY"))
    green = base.promo_code(("GREENRIDE", "EVDRIVE", "VOLT"))
    flash_quota = int(rng.integers(20, 40))
    daily_quota = 1 if level == "hard" else int(rng.integers(10, 30))
    daily_discount = 10 if level == "impossible" else 20
    s["promotions"][flash] = _promo(zone, 30, flash_quota, flash_quota - count, "late-night flash fare")
    s["promotions"][daily] = _promo(zone, daily_discount, daily_quota, daily_quota, "daily early-bird fare",
                                    energy="electric" if level == "medium" else None)
    full = base.price(depot, cls, pickup, ret)
    s["customers"][base.user]["payment_limit"] = round(full * (0.84 + 0.02 * int(rng.integers(0, 3))))

    head = [b.profile(), Call(name="list_promotions", arguments={"zone_id": zone}), b.search(),
            *[b.hold(v, f"hold{i}") for i, v in enumerate(cars)]]
    # Midnight falls just before the quote: the agent has already seen tonight's promotions.
    before_quote = elapsed(head)
    base.start = base.at(1, 0) - timedelta(minutes=before_quote - int(rng.integers(0, 2)))
    midnight = base.at(1, 0)
    reset = Trigger(
        name="midnight_quota_reset",
        description=f"at {iso(midnight)} promotional quotas reset: {flash} ends, {daily} starts afresh",
        condition=lambda st, ctx: ctx.now >= iso(midnight),
        mutations=[Mutation(("promotions", flash, "quota"), flash_quota, 0),
                   Mutation(("promotions", flash, "used"), flash_quota - count, 0),
                   Mutation(("promotions", daily, "used"), daily_quota, 0)],
        observable_via="list_promotions",
    )
    head.append(b.quote(flash))
    nominal = head + [b.confirm(f"hold{i}", flash) for i in range(count)]
    promotions = Call(name="list_promotions", arguments={"zone_id": zone})
    impossible = None
    if level == "easy":
        oracle = head + [promotions, b.confirm("hold0", daily)]
    elif level in ("medium", "hard"):
        # The alternative is an electric car of the class, nearly flat, at a depot with a charger.
        s["depots"][depot]["charger"] = True
        ev = base.add_vehicle(depot, cls, energy="electric", fuel=int(rng.integers(8, 20)))
        last = f"hold{count - 1}"
        swap = Call(name="swap_reservation_vehicle", arguments={"reservation_id": rid(last), "vehicle_id": ev})
        # Charging takes half an hour, longer than a hold lasts: confirm first, then charge for handover.
        charge = Call(name="refuel_vehicle", arguments={"vehicle_id": ev})
        if level == "medium":
            oracle = head + [promotions, b.search(), swap, b.confirm(last, daily), charge]
        else:
            s["promotions"][green] = _promo(zone, 25, 50, int(rng.integers(5, 40)), "green fare for electric cars",
                                            energy="electric")
            oracle = head + [promotions, b.confirm("hold0", daily), b.search(), swap, b.confirm(last, green),
                             charge, b.verify()]
    else:
        base.add_vehicle(depot, cls, energy="electric", status="maintenance")
        over = base.price(depot, cls, pickup, ret, daily_discount)
        oracle = head + [promotions, b.quote(daily), tell(
            f"I'm sorry, I cannot book this within your card limit of {s['customers'][base.user]['payment_limit']}. "
            f"The flash fare {flash} expired at the midnight quota reset, and the only fare left, {daily}, brings "
            f"the price to {over}, which is still over your limit.")]
        impossible = cannot(base, [flash, "expired", "limit"], "a booking over the card limit or of another class")

    customer = s["customers"][base.user]
    what = car(cls, count)
    query = (f"Hello, {customer['name']}, customer {base.user}. Before the night is over I'd like to book {what} at "
             f"{base.name(depot)} ({depot}) from {iso(pickup)} to {iso(ret)}, returned there, on the flash fare "
             f"{flash}. My card limit per booking is tight, so please check the price before you confirm.")
    answers = {("promotion", "promo", "code", "fare", "discount"):
               "Any valid promotion is fine, as long as each booking stays within my card limit.",
               ("car", "vehicle", "electric", "ev", "another"):
               f"Any {car(cls, article=False)} is fine, electric or not."}
    insist = (f"My card limit is fixed; I need {car(cls)} at {depot} at {iso(pickup)} within it, nothing else."
              if impossible else None)
    profile = user_profile(base, "a customer booking late at night", [f"customer id {base.user}",
                           f"flash fare {flash}", f"pickup depot {depot}"], answers, insist=insist)
    checks = b.checks(count=count)
    return make_task(base, query, profile, [reset], checks, nominal, oracle, impossible)
