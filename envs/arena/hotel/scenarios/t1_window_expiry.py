"""T1 Window Expiry: the rate hold times out while the agent is still checking the stay.

The user wants a room near the venue during a congress and asks the agent to hold it, check their
profile and the price against their card, then confirm: the usual due diligence. As soon as a hold
is open, the congress allotment opens at that hotel: the rate desk releases every open hold there
and new holds last only five minutes (visible in ``list_guest_reservations``: the hold reads
expired; a confirmation names it too). Easy: hold again and confirm at once. Medium: the released
room is snapped up by the congress waiting list, so another hotel within reach of the venue is
needed. Hard: a party of two: one of the two rooms is snapped up, the group must stay together,
the nearest alternative has a single room, and the short holds punish holding both before
confirming either. Impossible: no other hotel within reach has the kind of room at all. At medium
and hard the user would take the other hotel as well: held there first, the allotment opens there
and the stay ends at the hotel named (``Task.alternatives``).
"""

from __future__ import annotations

from sttgym.envs.arena.hotel.generator import Author, Plan, Request, Task, make_task, new_city, one
from sttgym.envs.arena.hotel.world import nights_of

SHORT_HOLD = 5  # minutes: longer than one hold call, shorter than a hold plus the checks or two holds


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    pred, op = author.pred, author.op
    count = 2 if level == "hard" else 1
    near, far, cut = city.split(3)
    hotel = one(author, near)
    others = [h for h in near if h != hotel]
    check_in, nights = city.stay()
    stay = nights_of(check_in, nights)
    room = city.add_room(hotel, free=count, nights=stay)
    spare, trap = others[0], others[-1]
    if level in ("medium", "hard"):
        spare_room = city.add_room(spare, free=count, nights=stay)
    if level == "hard":
        city.add_room(trap, free=1, nights=stay)
    decoy = one(author, far) if far else ""
    if decoy:  # out of reach, tempting all the same
        city.add_room(decoy, free=2, nights=stay)
    city.afford_all(nights)
    req = Request(city, hotel, check_in, nights, cut, count, moves=level)
    holds = [f"hold{i}" for i in range(count)]

    def plan_at(rt: str) -> Plan:  # the careful way: hold, check the profile and the price, then confirm
        return Plan(look=[req.search(city.state["room_types"][rt]["hotel"])], hold=[req.hold(rt, h) for h in holds],
                    check=[req.profile(), req.quote(rt)], confirm=[req.confirm(h) for h in holds])

    plan = plan_at(room)
    notice = f"Congress allotment open: open holds released; holds now last {SHORT_HOLD} minutes"
    # Wherever the guest's first hold is, the allotment opens there, and the waiting list takes the rooms it let go.
    triggers = [city.on_write(
        "hold_room", "holds_released", f"the congress allotment opens at the hotel of the first hold: open holds are "
        f"released and new ones last {SHORT_HOLD} minutes", [op.release_holds(guest=city.user, minutes=SHORT_HOLD,
                                                                             notice=notice)],
        ("list_guest_reservations", city.user))]
    if level != "easy":
        triggers.append(city.trigger(
            "rooms_taken", f"the congress waiting list takes the {city.focus} rooms the user's hold let go",
            pred.hold_lapsed(guest=city.user), [op.take_lapsed(guest=city.user, keep=1 if level == "hard" else 0)],
            ("search_availability", hotel), timing="before"))
    look = [req.search(), req.hotels()]

    def rebook(rt: str) -> list:
        return [c for i in range(count) for c in req.book(rt, f"again{i}")]

    fixes = {
        "easy": lambda: req.book(room, "again"),
        "medium": lambda: look + [req.travel(spare), req.search(spare), *rebook(spare_room)],
        "hard": lambda: look + [req.travel(trap), req.search(trap), req.travel(spare), req.search(spare),
                                *rebook(spare_room)],
        "impossible": lambda: look + [req.travel(decoy)] * bool(decoy) + req.refuse(
            f"I can't book this: your hold at {hotel} was released when the congress allotment opened and the "
            f"waiting list took the room; no other hotel within {cut} minutes of the venue has {city.a_room} for "
            f"those nights.", ["holds_released"],
            ["congress allotment", "hold released", "waiting list", "expired", f"{SHORT_HOLD} minutes"])}
    oracle = plan.upto("check") + [req.bookings()] + fixes[level]()
    # Held first at the other hotel, the allotment opens there instead and the stay comes back to the hotel named.
    other_first = [plan_at(spare_room).upto("check") + [req.bookings(), req.search(), *rebook(room)]] \
        if level in ("medium", "hard") else []
    party = " for my party of two (we must stay at the same hotel)" if count > 1 else ""
    query = (f"Hello, I'm {req.who}, here for the {city.name(city.venue)}. Please hold {req.stay_text()}{party} at "
             f"{city.name(hotel)} ({hotel}); any other hotel {req.where} would also do. Check my profile and the "
             f"price against my card limit first, then confirm.")
    return make_task(req, query, triggers, plan, oracle, "a congress delegate booking by phone", {
        ("price", "budget", "limit", "card"): "My card limit per booking is on my guest profile."},
        insist=f"It has to be the room I asked for {req.reach} for exactly those nights.",
        alternatives=other_first)
