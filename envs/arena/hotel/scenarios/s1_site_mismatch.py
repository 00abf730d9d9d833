"""S1 Site Mismatch: the overbooked hotel walks the guest to a sister property across town.

The user books a room at a hotel a short walk from the venue. Right after the confirmation the
hotel finds it is overbooked and walks the guest: the reservation now sits at a sister property
across town, far beyond the reach the user asked for (visible in
``list_guest_reservations``), and the hotel has no room of the kind left. Easy: cancel the walked
stay and book a hotel within reach. Medium: the hotel's other walked guests fill the nearest
alternative too, so the agent must look further (by transit) for a hotel still within reach.
Hard: a party of two is walked; the nearest alternative is full, the next has a single room and
the group must stay together. At medium and hard two or three hotels further on have the rooms,
and the user, who asked to be consulted before a move, needs an amenity (parking, a gym, ...)
that only one of them has and that they name only when asked. Impossible: every other room of
the kind within reach is gone; the user has an amenity to name there too, so that as many
impossible instances as feasible ones have a fact to withhold (what the user says never tells
them apart).
"""

from __future__ import annotations

from sttgym.envs.arena.hotel.generator import CONSULT, Author, Plan, Request, Task, make_task, new_city
from sttgym.envs.arena.hotel.world import nights_of


def build(author: Author, level: str) -> Task:
    choice = level in ("medium", "hard")  # two or three hotels further on, told apart by the user's need
    city = new_city(author, 4 if choice else None)
    op = author.op
    count = 2 if level == "hard" else 1
    near, far, cut = city.split({"medium": 4, "hard": 5}.get(level, 3))  # the hotel, the traps, the choice
    if not far:  # the sister property lies beyond reach: a city whose every hotel is near gets a far annex
        near, far, cut = city.split(len(near) - 1)
    hotel = near[0]
    others = near[1:]
    check_in, nights = city.stay()
    stay = nights_of(check_in, nights)
    room = city.add_room(hotel, free=count, nights=stay)
    sister = far[-1]
    annex = city.add_room(sister, free=count, nights=stay)
    rate = city.state["room_types"][room]["rate"]
    first, second = others[0], others[1]
    further = others[2 if level == "hard" else 1:][:3]  # the hotels the user's need chooses from
    alt = {}
    if level != "impossible":
        alt[first] = city.add_room(first, free=count, nights=stay, rate=rate)
    if level == "hard":
        alt[second] = city.add_room(second, free=1, nights=stay, rate=rate)
    if choice:
        alt.update({h: city.add_room(h, free=count, nights=stay, rate=rate) for h in further})
    city.afford_all(nights)
    # (impossible: the walked stay may stay)
    req = Request(city, hotel, check_in, nights, cut, count, kept=sister, moves=level)
    consult = level != "easy"  # the impossible twin too: see the docstring
    wanted = req.amenity_choice(further) if consult else ""
    steps = [f"hold{i}" for i in range(count)]
    plan = Plan(look=[req.search()], book=[c for h in steps for c in req.book(room, h)])
    effect = [op.walk_guest(guest=city.user, hotel=hotel, to_room_type=annex,
                            note=f"walked: {hotel} overbooked, stay moved to {sister}"),
              op.take_rooms(room_type=room, nights=stay)]
    if level != "easy":  # the hotel's other walked guests fill the nearest alternative
        effect.append(op.take_rooms(room_type=alt.get(first, room), nights=stay))
    triggers = [city.on_write("confirm_reservation", "guest_walked",
                              f"{hotel} is overbooked and walks the guest to {sister}", effect,
                              ("list_guest_reservations", city.user),
                              when=author.pred.has_confirmed(guest=city.user, hotel=hotel))]
    unwind = [req.cancel(h) for h in steps] + [req.hotels(), req.travel(first), req.search(first)]

    def rebook() -> list:  # every hotel further on read, the user asked, the one with their need booked
        return [c for h in further for c in (req.travel(h), req.search(h))] + [req.ask_amenity(
            f"{city.name(hotel)} was overbooked and moved your stay to {city.name(sister)}, which is too far."),
            req.hotel_info(wanted)] + [c for h in steps for c in req.book(alt[wanted], h.replace("hold", "new"))]

    fixes = {
        "easy": lambda: unwind + req.book(alt[first], "new0"),
        "medium": lambda: unwind + rebook(),
        "hard": lambda: unwind + [req.travel(second), req.search(second)] + rebook(),
        "impossible": lambda: [req.search(), req.hotels()] + [req.search(h) for h in others] + req.refuse(
            f"I can't give you {city.a_room} within {cut} minutes of the venue: {hotel} was overbooked and "
            f"walked your stay to {sister} ({city.name(sister)}), which is too far, and no other hotel within reach "
            f"has {city.a_room} for those nights.", ["guest_walked"], [sister, "walked", "overbooked"])}
    oracle = plan.calls + [req.bookings()] + fixes[level]()
    party = " for my colleague and me (two rooms, same hotel)" if count > 1 else ""
    query = (f"Hello, {req.who}. Please book {req.stay_text()}{party} at {city.name(hotel)} ({hotel}), right by the "
             f"{city.name(city.venue)}. What matters is being {req.where}.{CONSULT if consult else ''}")
    return make_task(req, query, triggers, plan, oracle, "a conference speaker", {
        ("walk", "walked", "sister", "relocated", "moved"): f"I can't stay out there; I need to be {req.where}."},
        insist=f"I need the room I asked for {req.reach}, nowhere else.")
