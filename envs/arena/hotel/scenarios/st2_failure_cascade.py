"""ST2 Failure Cascade: a power failure at the hotel spreads to its shuttle, its guests and its district.

The user wants a room and a seat on the hotel's morning shuttle to the venue. Once the seat is
booked, the power fails where the guest's shuttle leaves from, whichever hotel and departure were
chosen. Easy: only the shuttle depot loses power: the guest's shuttle is cancelled (visible in
``list_shuttles``) and the hotel's other shuttle still makes it. Medium: the hotel itself goes
dark (visible in ``get_hotel``): it takes no guests and its shuttles are cancelled, so the stay and
the shuttle move to another hotel within reach. Hard: the outage spreads to the other hotels of the
district, the obvious alternative among them, so the stay moves to another district. Impossible:
no other hotel within reach has the room and a shuttle in time. The other shuttle (easy) or
another hotel with a room and a shuttle in time, taken first, is a solution too
(``Task.alternatives``).
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
    extra = f"a seat on its shuttle to the {city.name(city.venue)} ({city.venue}) so I'm there by {keynote}"
    req = Request(city, hotel, check_in, nights, cut, shuttle_by=keynote, kept=hotel, progress="seat", extra=extra)

    def trip(h: str, rt: str, seat: str, step: str = "hold0") -> list:  # the stay at ``h`` and a seat on ``seat``
        return [req.search(h), *req.book(rt, step), req.shuttles(h), req.ride(seat)]

    def leave(seat: str) -> list:
        return [req.cancel("hold0"), author.call.cancel_shuttle_seat(shuttle_id=seat, guest_id=city.user)]

    plan = Plan(look=[req.search()], book=req.book(room, "hold0"), ride=[req.shuttles(), req.ride(shuttle)])
    # The power fails under whichever shuttle the guest rides (hard: and the outage spreads through its district).
    cut_power = author.op.cut_power(guest=city.user, notice=f"Power failure {incident}: no check-ins, shuttle "
                                    "cancelled", hotel_wide=level != "easy")
    triggers = [city.on_write("book_shuttle", "power_failure", "the power fails where the guest's shuttle leaves "
                              "from" + (": the shuttle is cancelled" if level == "easy" else ", and that hotel takes "
                                        "no guests"), [cut_power],
                              ("list_shuttles" if level == "easy" else "get_hotel", hotel),
                              when=author.pred.riding(guest=city.user))]
    if level == "hard":
        dark = author.pred.any_of(preds=[author.pred.field_equals(path=["hotels", h, "status"], value="outage")
                                         for h in sorted(s["hotels"])])
        triggers.append(city.trigger("outage_spreads", "the outage spreads through the dark hotel's district", dark,
                                     [author.op.spread_outage(notice=f"Power failure {incident}: no check-ins")],
                                     ("get_hotel", neighbour)))

    def move(h: str, seat: str = shuttle) -> list:
        return [req.travel(h), req.search(h), req.shuttles(h), *leave(seat), *req.book(alt[h][0], "new0"),
                req.ride(alt[h][1])]

    def back(seat: str) -> list:  # from a dark hotel taken first, to the hotel named
        return [req.hotels(), req.search(), req.shuttles(), *leave(seat), *req.book(room, "new0"), req.ride(shuttle)]

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
                     ["power_failure"], [incident, "outage", "power failure"])}
    oracle = plan.calls + fixes[level]()
    first = {  # another shuttle or hotel taken first, and the recovery its power failure asks for
        "easy": lambda: [trip(hotel, room, diesel) + [
            req.shuttles(), author.call.cancel_shuttle_seat(shuttle_id=diesel, guest_id=city.user), req.ride(shuttle)]],
        "medium": lambda: [trip(neighbour, *alt[neighbour]) + [req.hotel_info(neighbour), *back(alt[neighbour][1])]],
        "hard": lambda: [trip(neighbour, *alt[neighbour]) + [req.hotel_info(neighbour), req.hotel_info(),
                                                             *move(away, alt[neighbour][1])],
                         trip(away, *alt[away]) + [req.hotel_info(away), *back(alt[away][1])]],
        "impossible": list}[level]()
    query = (f"Hello, {req.who}. Please book {req.stay_text()} at {city.name(hotel)} ({hotel}) and {extra}. "
             f"Any hotel {req.where} with a shuttle in time would do.")
    return make_task(req, query, triggers, plan, oracle, "a delegate relying on the hotel shuttle", {
        ("shuttle", "time", "keynote", "earlier"): f"Any shuttle that gets me to the venue by {keynote} is fine."},
        insist=f"I need the room I asked for {req.reach} and a shuttle there by {hhmm(keynote)}.",
        alternatives=first)
