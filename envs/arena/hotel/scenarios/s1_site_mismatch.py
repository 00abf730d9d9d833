"""S1 Site Mismatch: the overbooked hotel walks the guest to a sister property across town.

The user books a room at a hotel a short walk from the venue. Right after the confirmation the
hotel finds it is overbooked and walks the guest: the reservation now sits at a sister property
across town, far beyond the reach the user asked for (visible in
``list_guest_reservations``), and the hotel has no room of the kind left. Easy: cancel the walked
stay and book a hotel within reach. Medium: the hotel's other walked guests fill the nearest
alternative too, so the agent must look further (by transit) for a hotel still within reach.
Hard: a party of two is walked; the nearest alternative is full, the next has a single room and
the group must stay together. Impossible: every other room of the kind within reach is gone.
"""

from __future__ import annotations

from sttgym.envs.arena.hotel.generator import Author, Plan, Request, Task, make_task, new_city
from sttgym.envs.arena.hotel.world import nights_of


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    op = author.op
    count = 2 if level == "hard" else 1
    near, far, cut = city.split(4 if level == "hard" else 3)
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
    first, second, third = others[0], others[1], others[-1]
    alt = {}
    if level != "impossible":
        alt[first] = city.add_room(first, free=count, nights=stay, rate=rate)
    if level in ("medium", "hard"):
        alt[second] = city.add_room(second, free=1, nights=stay, rate=rate)
    if level == "hard":
        alt[third] = city.add_room(third, free=2, nights=stay, rate=rate)
    city.afford_all(nights)
    req = Request(city, hotel, check_in, nights, cut, count, kept=sister)  # (impossible: the walked stay may stay)
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
    fixes = {
        "easy": lambda: unwind + req.book(alt[first], "new0"),
        "medium": lambda: unwind + [req.travel(second), req.search(second), *req.book(alt[second], "new0")],
        "hard": lambda: unwind + [req.travel(second), req.search(second), req.travel(third), req.search(third),
                                  *req.book(alt[third], "new0"), *req.book(alt[third], "new1")],
        "impossible": lambda: [req.search(), req.hotels()] + [req.search(h) for h in others] + req.refuse(
            f"I can't give you {city.a_room} within {cut} minutes of the venue: {hotel} was overbooked and "
            f"walked your stay to {sister} ({city.name(sister)}), which is too far, and no other hotel within reach "
            f"has {city.a_room} for those nights.", ["guest_walked"], [sister])}
    oracle = plan.calls + [req.bookings()] + fixes[level]()
    party = " for my colleague and me (two rooms, same hotel)" if count > 1 else ""
    query = (f"Hello, {req.who}. Please book {req.stay_text()}{party} at {city.name(hotel)} ({hotel}), right by the "
             f"{city.name(city.venue)}. What matters is being {req.where}.")
    return make_task(req, query, triggers, plan, oracle, "a conference speaker", {
        ("walk", "walked", "sister", "relocated", "moved"): f"I can't stay out there; I need to be {req.where}."},
        insist=f"I need {city.a_room} {req.where}, nowhere else.")
