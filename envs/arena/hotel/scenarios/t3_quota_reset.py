"""T3 Quota Reset: the congress rate's nightly quota is reset mid-booking and one night sells out.

The user's card only covers the stay at the congress promotional rate, which has a quota per
night. As soon as the agent holds the room, revenue management resets the promotion's quota for
the second night down to what is already sold (visible in ``list_promotions``), so the
confirmation at the promotional rate fails and the full rate breaks the card limit. Easy: the
hotel has a members' promotion for the same rooms with quota left; confirm the hold with it.
Medium: there is no other promotion at the hotel, but a hotel within reach runs the congress rate
with quota left. Hard: a party of two: that hotel has one promotional room left on a night, the
group must stay together, so both rooms move to a third hotel. Impossible: every promotion within
reach is sold out for that night.
"""

from __future__ import annotations

from sttgym.envs.arena.hotel.generator import Author, Plan, Request, Task, make_task, new_city, one
from sttgym.envs.arena.hotel.world import nights_of


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s = city.state
    count = 2 if level == "hard" else 1
    near, far, cut = city.split(3)
    hotel = one(author, near)
    others = [h for h in near if h != hotel]
    check_in, nights = city.stay()
    stay = nights_of(check_in, nights)
    night = stay[1]  # the night that sells out: never the check-in date the user names
    room = city.add_room(hotel, free=count + author.integer(0, 2), nights=stay)
    rate, pct = s["room_types"][room]["rate"], 5 * author.integer(5, 6)

    def promo(at: str, left: int, discount: int = pct, note: str = "congress rate") -> str:
        quota = author.integer(4, 8)
        code = city.code()
        s["promotions"][code] = {"hotel": at, "kind": city.focus, "discount_pct": discount, "nightly_quota": quota,
                                 "used": {n: quota - left for n in stay}, "note": note}
        return code

    main = promo(hotel, count)
    members = promo(hotel, 3, 5 * author.integer(3, 4), "members' rate") if level == "easy" else ""
    spare, trap = others[0], others[-1]
    if level in ("medium", "hard"):
        spare_room = city.add_room(spare, free=2, nights=stay, rate=rate)
        spare_code = promo(spare, count)
    if level == "hard":
        city.add_room(trap, free=2, nights=stay, rate=rate)
        trap_code = promo(trap, 2)
        s["promotions"][trap_code]["used"][night] = s["promotions"][trap_code]["nightly_quota"] - 1
    if level == "impossible" and others:  # a hotel in reach whose congress rate is already gone that night
        trap_code = promo(trap, 0)
        city.add_room(trap, free=2, nights=stay, rate=rate)
    if far:
        decoy = one(author, far)
        city.add_room(decoy, free=2, nights=stay, rate=rate)
        promo(decoy, 3)
    cheapest = s["promotions"][members]["discount_pct"] if members else pct
    s["guests"][city.user]["payment_limit"] = city.price(room, nights, cheapest) + 5 * author.integer(1, 2)
    req = Request(city, hotel, check_in, nights, cut, count)
    steps = [f"hold{i}" for i in range(count)]
    plan = Plan(look=[req.promos(), req.search()], hold=[req.hold(room, h) for h in steps],
                confirm=[req.confirm(h, main) for h in steps])
    quota = s["promotions"][main]["nightly_quota"]
    triggers = [city.on_write(
        "hold_room", "quota_reset", f"revenue management resets {main}'s quota: the night of {night} is sold out",
        [city.set("promotions", main, "used", night, value=quota)], ("list_promotions", hotel),
        when=author.pred.has_live(guest=city.user, hotel=hotel))]
    move = [req.hotels(), req.travel(spare), req.promos(spare), req.search(spare)]
    fixes = {
        "easy": lambda: [req.confirm("hold0", members)],
        "medium": lambda: move + [*req.book(spare_room, "new0", spare_code)],
        "hard": lambda: [req.hotels(), req.travel(trap), req.promos(trap), *move[1:],
                         *req.book(spare_room, "new0", spare_code), *req.book(spare_room, "new1", spare_code)],
        "impossible": lambda: [req.hotels()] + [req.promos(h) for h in others] + req.refuse(
            f"I can't book this within your card limit: the {main} congress rate was reset and is now sold out for "
            f"the night of {night}, the full rate is over your limit, and no other hotel within {cut} minutes of the "
            f"venue has a {city.focus} promotion left that night.", ["quota_reset"], [night])}
    oracle = plan.upto("hold") + [req.promos()] + fixes[level]()
    party = " for two colleagues and me (two rooms, same hotel)" if count > 1 else ""
    query = (f"Hi, {req.who}. I'd like {req.stay_text()}{party} at {city.name(hotel)} ({hotel}) with the congress "
             f"rate {main}; any other hotel {req.where} at a promotional rate is fine too. My card only covers a "
             f"promotional rate, so please hold the room and confirm it with the promotion.")
    return make_task(req, query, triggers, plan, oracle, "a delegate on a tight budget", {
        ("price", "budget", "limit", "card", "rate", "full"): "My card limit is on my profile; I can't pay the full "
        "rate."}, insist=f"It has to be {city.a_room} {req.where} at a price my card covers.")
