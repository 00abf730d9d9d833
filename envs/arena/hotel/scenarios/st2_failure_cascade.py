"""ST2 Failure Cascade: a power failure at the hotel spreads to its shuttle, its guests and its district.

The user wants a room and a seat on the hotel's morning shuttle to the venue. Once the seat is
booked, the power fails. Easy: only the shuttle depot loses power: the electric shuttle is
cancelled (visible in ``list_shuttles``) and the hotel's earlier diesel shuttle still makes it.
Medium: the hotel itself goes dark (visible in ``get_hotel``): it takes no guests and its shuttle is
cancelled, so the stay and the shuttle move to another hotel within reach. Hard: the outage spreads
to the neighbouring hotel of the same district, the obvious alternative, so the stay moves to
another district. Impossible: no other hotel within reach has the room and a shuttle in time.
"""

from __future__ import annotations

from sttgym.clock import hhmm, shift
from sttgym.envs.arena.hotel.generator import Author, Plan, Request, Task, make_task, new_city, one
from sttgym.envs.arena.hotel.world import nights_of


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s = city.state
    district = one(author, sorted(city.districts))
    block = city.districts[district]
    hotel, neighbour = (block[int(i)] for i in author.rng.permutation(len(block))[:2])
    away = min((h for h in s["hotels"] if s["hotels"][h]["district"] != district and city.minutes(h, city.venue)
                is not None), key=lambda h: (city.minutes(h, city.venue), h))
    cut = max(city.minutes(h, city.venue) for h in (hotel, neighbour, away))
    check_in, nights = city.stay()
    stay = nights_of(check_in, nights)
    day = (city.start.date().fromisoformat(check_in) - city.start.date()).days
    keynote = city.at(day + 1, author.integer(8, 9), 15 * author.integer(0, 2))
    incident = f"INC-{author.serial(1000, 9999)}"

    def offer(h: str, early: int = 0) -> tuple[str, str]:
        return city.add_room(h, free=1, nights=stay), city.add_shuttle(
            h, shift(keynote, -(city.minutes(h, city.venue) + early + author.integer(2, 8))))

    room, shuttle = offer(hotel)
    diesel = offer(hotel, author.integer(5, 20))[1] if level == "easy" else ""
    alt = {h: offer(h) for h in ((neighbour,) if level == "medium" else (neighbour, away) if level == "hard" else ())}
    if level == "impossible":  # the neighbour has the rooms, but its shuttle leaves too late
        city.add_room(neighbour, free=1, nights=stay)
        city.add_shuttle(neighbour, shift(keynote, -author.integer(1, 4)))
    city.afford_all(nights)
    req = Request(city, hotel, check_in, nights, cut, shuttle_by=keynote, kept=hotel, progress="seat")
    plan = Plan(look=[req.search()], book=req.book(room, "hold0"), ride=[req.shuttles(), req.ride(shuttle)])
    dark = city.sets("hotels", hotel, status="outage", notice=f"Power failure {incident}: no check-ins, shuttle "
                     "cancelled")
    grounded = city.set("shuttles", shuttle, "status", value="cancelled")
    if level == "easy":
        triggers = [city.on_write("book_shuttle", "power_failure", f"the power fails at {hotel}'s shuttle depot: "
                                  f"{shuttle} is cancelled", [grounded], ("list_shuttles", hotel),
                                  when=author.pred.riding(guest=city.user, hotel=hotel))]
    else:
        triggers = [city.on_write("book_shuttle", "power_failure", f"the power fails at {hotel}: it takes no "
                                  f"guests and {shuttle} is cancelled", dark + [grounded], ("get_hotel", hotel),
                                  when=author.pred.riding(guest=city.user, hotel=hotel))]
    if level == "hard":
        triggers.append(city.cascade(
            "outage_spreads", f"the outage spreads to {neighbour}", ["hotels", hotel, "status"], "outage",
            city.sets("hotels", neighbour, status="outage", notice=f"Power failure {incident}: no check-ins") +
            [city.set("shuttles", alt[neighbour][1], "status", value="cancelled")], ("get_hotel", neighbour)))
    unwind = [req.cancel("hold0"), author.call.cancel_shuttle_seat(shuttle_id=shuttle, guest_id=city.user)]

    def move(h: str) -> list:
        return [req.travel(h), req.search(h), req.shuttles(h), *unwind, *req.book(alt[h][0], "new0"),
                req.ride(alt[h][1])]

    fixes = {
        "easy": lambda: [req.shuttles(), author.call.cancel_shuttle_seat(shuttle_id=shuttle, guest_id=city.user),
                         req.ride(diesel)],
        "medium": lambda: [req.hotel_info(), req.hotels(), *move(neighbour)],
        "hard": lambda: [req.hotel_info(), req.hotels(), req.travel(neighbour), req.hotel_info(neighbour),
                         req.search(neighbour), req.shuttles(neighbour), *move(away)],
        "impossible": lambda: [req.hotel_info(), req.hotels(), req.search(neighbour), req.shuttles(neighbour)]
        + req.refuse(f"I can't get you {city.a_room} with a shuttle to the venue by {hhmm(keynote)}: a power "
                     f"failure ({incident}) put {hotel} in outage and cancelled its shuttle, and no other hotel "
                     f"within {cut} minutes of the venue has {city.a_room} with a shuttle in time.",
                     ["power_failure"], [incident, "outage"])}
    oracle = plan.calls + fixes[level]()
    query = (f"Hello, {req.who}. Please book {req.stay_text()} at {city.name(hotel)} ({hotel}) and a seat on its "
             f"shuttle to the {city.name(city.venue)} ({city.venue}) so I'm there by {keynote}. Any hotel {req.where} "
             "with a shuttle in time would do.")
    return make_task(req, query, triggers, plan, oracle, "a delegate relying on the hotel shuttle", {
        ("shuttle", "time", "keynote", "earlier"): f"Any shuttle that gets me to the venue by {keynote} is fine."},
        insist=f"I need {city.a_room} {req.where} and a shuttle there by {hhmm(keynote)}.")
