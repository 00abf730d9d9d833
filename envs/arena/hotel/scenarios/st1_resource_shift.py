"""ST1 Resource Shift: congress demand pulls the hotel's free rooms over to the congress headquarters.

The user asks for a room at a hotel near the venue. As the agent goes to hold it, the group's
revenue desk answers the congress peak by moving the hotel's unsold rooms of that kind, for
those nights, to the congress headquarters hotel (visible in ``search_availability``: none left,
and a notice naming where they went), so the hold fails. Easy: the headquarters is within reach;
book there. Medium: the headquarters is across town, out of reach, and the nearest alternative is
sold out of the kind, so a further hotel within reach is needed. Hard: a party of two; a second
wave moves rooms out of the obvious alternative too, which keeps one, and the group must stay
together, so a third hotel is needed. At medium and hard two or three hotels further on have the
rooms, and the user, who asked to be consulted before a move, needs an amenity (parking, a gym,
...) that only one of them has and that they name only when asked. Impossible: the rooms went
out of reach and no other hotel within reach has one.
"""

from __future__ import annotations

from sttgym.envs.arena.hotel.generator import CONSULT, Author, Plan, Request, Task, make_task, new_city, one
from sttgym.envs.arena.hotel.world import nights_of


def build(author: Author, level: str) -> Task:
    choice = level in ("medium", "hard")  # two or three hotels further on, told apart by the user's need
    city = new_city(author, 4 if choice else None)
    op = author.op
    count = 2 if level == "hard" else 1
    near, far, cut = city.split(5 if choice else 3)
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
    trap, spares = others[0], others[1:4]
    if choice:
        spare_rooms = {h: city.add_room(h, free=2, nights=stay) for h in spares}
    if level == "medium":  # the nearest alternative is sold out of the kind already
        city.add_room(trap, free=0, nights=stay)
    if level == "hard":
        trap_room = city.add_room(trap, free=2 + author.integer(0, 2), nights=stay)
    city.afford_all(nights)
    req = Request(city, hotel, check_in, nights, cut, count, moves=level)
    spare = req.amenity_choice(spares) if choice else ""
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

    def rebook() -> list:  # past the trap, every spare hotel read, the user asked, the one with their need booked
        return look + [req.travel(hq), req.travel(trap), req.search(trap)] + [
            c for h in spares for c in (req.travel(h), req.search(h))] + [req.ask_amenity(
                f"The congress peak moved {city.name(hotel)}'s free rooms to {city.name(hq)}, which is too far."),
            req.hotel_info(spare)] + [c for i in range(count) for c in req.book(spare_rooms[spare], f"new{i}")]

    fixes = {
        "easy": lambda: [req.search(), req.travel(hq), req.search(hq), *req.book(hq_room, "new0")],
        "medium": rebook,
        "hard": rebook,
        "impossible": lambda: look + [req.travel(hq)] + [req.search(h) for h in others] + req.refuse(
            f"I can't book {city.a_room} within {cut} minutes of the venue: the congress peak moved "
            f"{hotel}'s unsold {city.focus} rooms to {hq}, which is {city.minutes(hq, city.venue)} minutes away, "
            "and no other hotel within reach has one for those nights.", ["rooms_shifted"],
            [hq, "congress peak", "rooms moved"])}
    oracle = plan.upto("hold") + fixes[level]()
    party = " for two of us (two rooms, same hotel)" if count > 1 else ""
    query = (f"Good morning, {req.who}. I'd like {req.stay_text()}{party} at {city.name(hotel)} ({hotel}); any "
             f"hotel {req.where} works for me. Please check my profile, then hold and confirm."
             + (CONSULT if choice else ""))
    return make_task(req, query, triggers, plan, oracle, "a delegate arriving for the congress",
                     insist=f"I need the room I asked for {req.reach}.")
