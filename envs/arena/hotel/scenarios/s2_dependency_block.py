"""S2 Dependency Block: maintenance closes part of the hotel, and what was booked there depends on it.

The user organises a workshop: rooms for the party and a meeting room for one slot, all at one
hotel near the venue. The hotel has two room types of the kind and two meeting rooms, in two
wings. Once both the stay and the meeting room are booked, maintenance closes the part of the
hotel where the booked rooms are (visible in ``get_hotel``), whichever room type was chosen.
Easy: a floor is closed after a leak, so the stay moves to the hotel's other room type of the
kind. Medium: a whole wing closes: what was booked in it (with the planned choice the rooms and the
meeting room) moves to the hotel's other wing. Hard: a party of two: the other wing has a single
room of the kind, so the rooms and the meeting move to another hotel within reach that has both.
Impossible: within reach, no other hotel has both the rooms and a free meeting room for the slot.
Every other pair of room type and meeting room at the hotel is a solution too
(``Task.alternatives``).
"""

from __future__ import annotations

from sttgym.envs.arena.hotel.generator import Author, Plan, Request, Task, make_task, new_city, one
from sttgym.envs.arena.hotel.world import nights_of
from sttgym.task import Call

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
    extra = f"a meeting room there for the slot starting {slot}"
    req = Request(city, hotel, check_in, nights, cut, count, meeting=slot, capacity=people, kept=hotel, extra=extra)
    steps = [f"hold{i}" for i in range(count)]

    def booking(rt: str, meeting_room: str) -> Plan:
        return Plan(look=[req.search(), req.meetings()], book=[c for h in steps for c in req.book(rt, h)],
                    meet=[req.meet(meeting_room)])

    plan = booking(room, hall)
    work = f"WO-{author.serial(1000, 9999)}"
    part = "floor" if level == "easy" else "wing"
    notice = f"Maintenance {work}: floor closed after a leak" if part == "floor" else f"Maintenance {work}: wing closed"
    # Whichever room type was booked, maintenance closes its floor or wing: every booking meets the closure.
    both = author.pred.all_of(preds=[author.pred.has_confirmed(guest=city.user, hotel=hotel),
                                     author.pred.has_meeting(guest=city.user, hotel=hotel)])
    triggers = [city.trigger("maintenance_closure", f"maintenance closes the {part} of {hotel} where the guest's "
                             f"rooms are", both, [author.op.close_booked(guest=city.user, hotel=hotel, part=part,
                                                                          notice=notice)],
                             ("get_hotel", hotel), activation=("book_meeting_room", "confirm_reservation"))]
    fact = f"floor {floor}" if part == "floor" else f"{wing} wing"

    def release(meeting_room: str) -> Call:
        return author.call.release_meeting_room(meeting_room_id=meeting_room, start=slot, guest_id=city.user)

    def move(rt: str, meet: tuple = ()) -> list:  # the stay (and the meeting: ``(new, old)``) to the part still open
        return [req.cancel(h) for h in steps] + [c for i in range(count) for c in req.book(rt, f"new{i}")] + (
            [release(meet[1]), req.meet(meet[0])] if meet else [])  # never two meeting rooms held at once

    fixes = {
        "easy": lambda: [req.search(), *move(inside)],
        "medium": lambda: [req.search(), req.meetings(), *move(inside, (side_hall, hall))],
        "hard": lambda: [req.search(), req.hotels(), req.travel(trap), req.search(trap), req.meetings(trap),
                         req.travel(spare), req.search(spare), req.meetings(spare), *move(spare_room,
                                                                                            (spare_hall, hall))],
        "impossible": lambda: [req.search(), req.hotels()] + [c for h in others for c in (req.search(h),
                                                                                           req.meetings(h))]
        + req.refuse(f"I can't keep the workshop together: maintenance ({work}) closed the {fact} of {hotel}, "
                     f"where your {city.focus} room and the meeting room are, the hotel has no other {city.focus} "
                     f"room, and no other hotel within {cut} minutes of the venue has both {city.a_room} and "
                     f"a free meeting room at {slot[11:]} on {slot[:10]}.", ["maintenance_closure"],
                     [fact, work, "maintenance", f"{part} closed"])}
    if level == "impossible":
        s["room_types"][inside]["inventory"].update({n: 0 for n in stay})
    oracle = plan.calls + [req.hotel_info()] + fixes[level]()
    # The other pairs of room type and meeting room, each with the recovery the closure of its rooms' part asks for.
    seen = [req.hotel_info(), req.search()]
    pairs = {"easy": lambda: [(inside, hall, move(room)), (room, side_hall, move(inside)),
                              (inside, side_hall, move(room))],
             "medium": lambda: [(inside, side_hall, move(room, (hall, side_hall))), (room, side_hall, move(inside)),
                                (inside, hall, move(room))],
             "hard": lambda: [(room, side_hall, [req.hotels(), req.travel(spare), req.search(spare),
                                                 req.meetings(spare), *move(spare_room, (spare_hall, side_hall))])],
             "impossible": list}[level]()
    alternatives = [booking(rt, meeting_room).calls + seen + fix for rt, meeting_room, fix in pairs]
    party = " and a colleague (two rooms, same hotel)" if count > 1 else ""
    query = (f"Hello, {req.who}. I'm running a workshop for {people} people: please book {req.stay_text()} for "
             f"me{party} at {city.name(hotel)} ({hotel}) and {extra}. "
             f"Rooms and meeting room must be at the same hotel, {req.where}.")
    return make_task(req, query, triggers, plan, oracle, "a workshop organiser", {
        ("meeting", "slot", "room", "capacity"): f"The meeting room must seat {people} at {slot}, in the hotel "
        "where we sleep."}, insist=f"Everything at one hotel {req.reach}, meeting room at {slot}.",
        alternatives=alternatives)
