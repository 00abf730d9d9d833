"""S2 Dependency Block: maintenance closes part of the hotel, and what was booked there depends on it.

The user organises a workshop: rooms for the party and a meeting room for one slot, all at one
hotel near the venue. Once the meeting room is booked, maintenance closes part of the hotel
(visible in ``get_hotel``). Easy: a floor is closed after a leak; the booked room type is on it,
so the stay moves to the hotel's other room type of the kind. Medium: a whole wing closes: the
booked rooms and the meeting room are both in it, so both move to the hotel's other wing. Hard: a
party of two: the other wing has a single room of the kind, so the rooms and the meeting move to
another hotel within reach that has both. Impossible: within reach, no other hotel has both the
rooms and a free meeting room for the slot.
"""

from __future__ import annotations

from sttgym.envs.arena.hotel.generator import Author, Plan, Request, Task, make_task, new_city, one
from sttgym.envs.arena.hotel.world import nights_of

_WINGS = ["east", "west", "north", "garden", "tower"]


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s = city.state
    count = 2 if level == "hard" else 1
    near, far, cut = city.split(3)
    hotel = one(author, near)
    others = [h for h in near if h != hotel]
    check_in, nights = city.stay()
    stay = nights_of(check_in, nights)
    day = (city.start.date().fromisoformat(check_in) - city.start.date()).days
    slots = [city.at(day + d, h) for d in (0, 1) for h in (9, 11, 14)]
    slot = one(author, slots)
    people = author.integer(6, 20)
    wing, other_wing = (_WINGS[int(i)] for i in author.rng.permutation(len(_WINGS))[:2])
    floor = author.integer(2, 6)
    room = city.add_room(hotel, free=count, nights=stay, floor=floor, wing=wing)
    hall = city.add_meeting_room(hotel, slots, people + author.integer(0, 10), wing=wing)
    inside = city.add_room(hotel, free=1, nights=stay, floor=floor + author.integer(1, 3), wing=other_wing)
    side_hall = city.add_meeting_room(hotel, slots, people + author.integer(0, 10), wing=other_wing)
    spare, trap = others[0], others[-1]
    if level == "hard":
        spare_room = city.add_room(spare, free=2, nights=stay)
        spare_hall = city.add_meeting_room(spare, slots, people + author.integer(2, 10))
    if level in ("hard", "impossible"):  # rooms, but the slot is taken
        city.add_room(trap, free=2, nights=stay)
        city.add_meeting_room(trap, slots, people + 4, taken=(slot,))
    if level == "impossible":  # a hall, but no room of the kind
        city.add_meeting_room(spare, slots, people + 4)
    if far:
        decoy = one(author, far)
        city.add_room(decoy, free=2, nights=stay)
        city.add_meeting_room(decoy, slots, people + 4)
    city.afford_all(nights)
    req = Request(city, hotel, check_in, nights, cut, count, meeting=slot, capacity=people, kept=hotel)
    steps = [f"hold{i}" for i in range(count)]
    plan = Plan(look=[req.search(), req.meetings()], book=[c for h in steps for c in req.book(room, h)],
                meet=[req.meet(hall)])
    work = f"WO-{author.serial(1000, 9999)}"
    if level == "easy":
        effect = city.sets("hotels", hotel, closed_floors=[floor], notice=f"Maintenance {work}: floor {floor} "
                           "closed after a leak")
        fact = f"floor {floor}"
    else:
        effect = city.sets("hotels", hotel, closed_wings=[wing], notice=f"Maintenance {work}: {wing} wing closed")
        fact = f"{wing} wing"
    triggers = [city.on_write("book_meeting_room", "maintenance_closure", f"maintenance closes the {fact} of "
                              f"{hotel}", effect, ("get_hotel", hotel),
                              when=author.pred.has_confirmed(guest=city.user, hotel=hotel))]
    unwind = [req.cancel(h) for h in steps]
    fixes = {
        "easy": lambda: [req.search(), *unwind, *req.book(inside, "new0")],
        "medium": lambda: [req.search(), req.meetings(), *unwind, *req.book(inside, "new0"), req.meet(side_hall),
                           author.call.release_meeting_room(meeting_room_id=hall, start=slot, guest_id=city.user)],
        "hard": lambda: [req.search(), req.hotels(), req.travel(trap), req.search(trap), req.meetings(trap),
                         req.travel(spare), req.search(spare), req.meetings(spare), *unwind,
                         *req.book(spare_room, "new0"), *req.book(spare_room, "new1"), req.meet(spare_hall)],
        "impossible": lambda: [req.search(), req.hotels()] + [c for h in others for c in (req.search(h),
                                                                                           req.meetings(h))]
        + req.refuse(f"I can't keep the workshop together: maintenance ({work}) closed the {fact} of {hotel}, "
                     f"where your {city.focus} room and the meeting room are, the hotel has no other {city.focus} "
                     f"room, and no other hotel within {cut} minutes of the venue has both {city.a_room} and "
                     f"a free meeting room at {slot[11:]} on {slot[:10]}.", ["maintenance_closure"], [fact, work])}
    if level == "impossible":
        s["room_types"][inside]["inventory"].update({n: 0 for n in stay})
    oracle = plan.calls + [req.hotel_info()] + fixes[level]()
    party = " and a colleague (two rooms, same hotel)" if count > 1 else ""
    query = (f"Hello, {req.who}. I'm running a workshop for {people} people: please book {req.stay_text()} for "
             f"me{party} at {city.name(hotel)} ({hotel}) and a meeting room there for the slot starting {slot}. "
             f"Rooms and meeting room must be at the same hotel, {req.where}.")
    return make_task(req, query, triggers, plan, oracle, "a workshop organiser", {
        ("meeting", "slot", "room", "capacity"): f"The meeting room must seat {people} at {slot}, in the hotel "
        "where we sleep."}, insist=f"Everything at one hotel {req.where}, meeting room at {slot}.")
