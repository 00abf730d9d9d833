"""T3 Quota Reset: the congress rate's nightly quota is reset mid-booking and one night sells out.

The user's card only covers the stay at the congress promotional rate, which has a quota per
night. As soon as the agent holds a room, revenue management resets the congress rate's quota at
that hotel for the second night down to what is already sold (visible in ``list_promotions``; the
confirmation's error names it too), so the confirmation at the promotional rate fails and the full
rate breaks the card limit. Easy: the rooms go to a members' promotion instead, which the reset
opens with quota left; confirm the hold with it. Medium: there is no other promotion at the hotel,
but a hotel within reach runs the congress rate with quota left. Hard: a party of two: that hotel
has one promotional room left on a night, the group must stay together, so both rooms move to a
third hotel. Impossible: every promotion within reach is sold out for that night. At medium and
hard the user would take the other congress hotel as well: held there first, the reset hits its
rate and the stay ends at the hotel named (``Task.alternatives``).
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

    def promo(at: str, left: int, discount: int = pct, note: str = "congress rate") -> tuple[str, dict]:
        quota = author.integer(4, 8)
        return city.code(), {"hotel": at, "kind": city.focus, "discount_pct": discount, "nightly_quota": quota,
                             "used": {n: quota - left for n in stay}, "note": note}

    def offer(*args) -> str:
        code, data = promo(*args)
        s["promotions"][code] = data
        return code

    main = offer(hotel, count)
    members = promo(hotel, 3, 5 * author.integer(3, 4), "members' rate") if level == "easy" else None
    spare, trap = others[0], others[-1]
    if level in ("medium", "hard"):
        spare_room = city.add_room(spare, free=2, nights=stay, rate=rate)
        spare_code = offer(spare, count)
    if level == "hard":
        city.add_room(trap, free=2, nights=stay, rate=rate)
        trap_code = offer(trap, 2)
        s["promotions"][trap_code]["used"][night] = s["promotions"][trap_code]["nightly_quota"] - 1
    if level == "impossible" and others:  # a hotel in reach whose congress rate is already gone that night
        offer(trap, 0)
        city.add_room(trap, free=2, nights=stay, rate=rate)
    if far:
        decoy = one(author, far)
        city.add_room(decoy, free=2, nights=stay, rate=rate)
        offer(decoy, 3)
    cheapest = members[1]["discount_pct"] if members else pct
    s["guests"][city.user]["payment_limit"] = city.price(room, nights, cheapest) + 5 * author.integer(1, 2)
    req = Request(city, hotel, check_in, nights, cut, count, moves=level)
    steps = [f"hold{i}" for i in range(count)]
    plan = Plan(look=[req.promos(), req.search()], hold=[req.hold(room, h) for h in steps],
                confirm=[req.confirm(h, main) for h in steps])
    congress = sorted(c for c, x in s["promotions"].items() if x["note"] == "congress rate")
    # The reset hits the congress rate of whichever hotel the guest holds at (easy: and opens the members' rate).
    effect = [author.op.reset_quota(guest=city.user, codes=congress, night=night)]
    if members:
        effect.append(city.set("promotions", members[0], value=members[1]))
    triggers = [city.on_write(
        "hold_room", "quota_reset", f"revenue management resets the congress rate's quota where the guest holds: "
        f"the night of {night} is sold out", effect, ("list_promotions", hotel))]

    def move(rt: str, code: str) -> list:  # the stale holds let go, the stay booked with ``code``
        return [req.cancel(f"hold{i}") for i in range(count)] + [
            c for i in range(count) for c in req.book(rt, f"new{i}", code)]

    look = [req.hotels(), req.travel(spare), req.promos(spare), req.search(spare)]
    fixes = {
        "easy": lambda: [req.confirm("hold0", members[0])],
        "medium": lambda: look + move(spare_room, spare_code),
        "hard": lambda: [req.hotels(), req.travel(trap), req.promos(trap), *look[1:],
                         *move(spare_room, spare_code)],
        "impossible": lambda: [req.hotels()] + [req.promos(h) for h in others] + req.refuse(
            f"I can't book this within your card limit: the {main} congress rate was reset and is now sold out for "
            f"the night of {night}, the full rate is over your limit, and no other hotel within {cut} minutes of the "
            f"venue has a {city.focus} promotion left that night.", ["quota_reset"],
            [night, "sold out", "quota reset"])}
    oracle = plan.upto("hold") + [req.promos()] + fixes[level]()
    # Held first at the other congress hotel, the reset sells its rate out instead: the stay goes to the one named.
    other_first = [[req.promos(spare), req.search(spare), *[req.hold(spare_room, h) for h in steps],
                    req.promos(spare), req.promos(), req.search(), *move(room, main)]] \
        if level in ("medium", "hard") else []
    party = " for two colleagues and me (two rooms, same hotel)" if count > 1 else ""
    query = (f"Hi, {req.who}. I'd like {req.stay_text()}{party} at {city.name(hotel)} ({hotel}) with the congress "
             f"rate {main}; any other hotel {req.where} at a promotional rate is fine too. My card only covers a "
             f"promotional rate, so please hold the room and confirm it with the promotion.")
    return make_task(req, query, triggers, plan, oracle, "a delegate on a tight budget", {
        ("price", "budget", "limit", "card", "rate", "full"): "My card limit is on my profile; I can't pay the full "
        "rate."}, insist=f"It has to be the room I asked for {req.reach} at a price my card covers.",
        alternatives=other_first)
