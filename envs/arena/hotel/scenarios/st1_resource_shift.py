"""ST1 Resource Shift: congress demand pulls the hotel's free rooms over to the congress headquarters.

The user asks for a room at a hotel near the venue. As the agent goes to hold it, the group's
revenue desk answers the congress peak by moving the hotel's unsold rooms of that kind, for
those nights, to the congress headquarters hotel (visible in ``search_availability``: none left,
and a notice naming where they went), so the hold fails. Easy: the headquarters is within reach;
book there. Medium: the headquarters is across town, out of reach, and the nearest alternative is
sold out of the kind, so a further hotel within reach is needed. Hard: a party of two; a second
wave moves rooms out of the obvious alternative too, which keeps one, and the group must stay
together, so a third hotel is needed. Impossible: the rooms went out of reach and no other hotel
within reach has one.
"""

from __future__ import annotations

from sttgym.envs.arena.hotel.generator import Author, Plan, Request, Task, make_task, new_city, one
from sttgym.envs.arena.hotel.world import nights_of


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    op = author.op
    count = 2 if level == "hard" else 1
    near, far, cut = city.split(3)
    if not far:
        near, far, cut = city.split(len(near) - 1)
    hotel = one(author, near)
    others = [h for h in near if h != hotel]
    check_in, nights = city.stay()
    stay = nights_of(check_in, nights)
    free = count + author.integer(1, 3)
    room = city.add_room(hotel, free=free, nights=stay)
    hq = others[0] if level == "easy" else far[0]
    hq_room = city.add_room(hq, free=0, nights=stay)
    spare, trap = others[-1], others[0]
    if level in ("medium", "hard"):
        spare_room = city.add_room(spare, free=2, nights=stay)
    if level == "medium":  # the nearest alternative is sold out of the kind already
        city.add_room(trap, free=0, nights=stay)
    if level == "hard":
        trap_room = city.add_room(trap, free=2 + author.integer(0, 2), nights=stay)
    city.afford_all(nights)
    req = Request(city, hotel, check_in, nights, cut, count)
    steps = [f"hold{i}" for i in range(count)]
    plan = Plan(look=[req.search(), req.profile()], hold=[req.hold(room, h) for h in steps],
                confirm=[req.confirm(h) for h in steps])
    notice = f"Congress peak: unsold {city.focus} rooms for {stay[0]} to {stay[-1]} moved to {hq}"
    effect = [op.take_rooms(room_type=room, nights=stay), city.set("hotels", hotel, "notice", value=notice)] + [
        city.set("room_types", hq_room, "inventory", n, value=free) for n in stay]
    triggers = [city.on_write("hold_room", "rooms_shifted", notice, effect, ("search_availability", hotel),
                              when=author.pred.call_argument(name="room_type_id", value=room), timing="before")]
    if level == "hard":
        triggers.append(city.cascade(
            "second_wave", f"a second wave moves {trap}'s unsold {city.focus} rooms to {hq} but one",
            ["hotels", hotel, "notice"], notice, [op.take_rooms(room_type=trap_room, nights=stay, keep=1)],
            ("search_availability", trap)))
    look = [req.search(), req.hotels()]
    fixes = {
        "easy": lambda: [req.search(), req.travel(hq), req.search(hq), *req.book(hq_room, "new0")],
        "medium": lambda: look + [req.travel(hq), req.travel(trap), req.search(trap), req.travel(spare),
                                  req.search(spare), *req.book(spare_room, "new0")],
        "hard": lambda: look + [req.travel(hq), req.travel(trap), req.search(trap), req.travel(spare),
                                req.search(spare), *req.book(spare_room, "new0"), *req.book(spare_room, "new1")],
        "impossible": lambda: look + [req.travel(hq)] + [req.search(h) for h in others] + req.refuse(
            f"I can't book {city.a_room} within {cut} minutes of the venue: the congress peak moved "
            f"{hotel}'s unsold {city.focus} rooms to {hq}, which is {city.minutes(hq, city.venue)} minutes away, "
            "and no other hotel within reach has one for those nights.", ["rooms_shifted"], [hq])}
    oracle = plan.upto("hold") + fixes[level]()
    party = " for two of us (two rooms, same hotel)" if count > 1 else ""
    query = (f"Good morning, {req.who}. I'd like {req.stay_text()}{party} at {city.name(hotel)} ({hotel}); any "
             f"hotel {req.where} works for me. Please check my profile, then hold and confirm.")
    return make_task(req, query, triggers, plan, oracle, "a delegate arriving for the congress",
                     insist=f"It must be {city.a_room} {req.where}.")
