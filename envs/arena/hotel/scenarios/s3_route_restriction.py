"""S3 Route Restriction: the ring road to the venue closes, and the shuttle's detour is too long.

The user wants a room at a hotel the ring road makes a few minutes from the venue, and a seat on
its morning shuttle so they are at the venue by the opening keynote. Once the seat is booked, the
ring road section from the hotel closes (visible in ``list_shuttles``: the shuttle now arrives
late, and in ``get_travel_time``). Easy: the hotel puts on an earlier run that still makes it over
the detour (listed from the closure on, so no plan books it without meeting the change), and the
hotel is still within reach. Medium: over the detour the hotel is no longer
within reach of the venue, so the stay and the shuttle move to a hotel that still is. Hard: the
closure is extended to the next ring-road section, which served the obvious alternative, so a
third hotel is needed. Impossible: without the ring road, no other hotel within reach has the
room and a shuttle in time.
"""

from __future__ import annotations

from sttgym.clock import hhmm, shift
from sttgym.envs.arena.hotel.generator import Author, Plan, Request, Task, make_task, new_city
from sttgym.envs.arena.hotel.world import nights_of


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s = city.state
    ranked = city.by_distance()
    base = {h: city.minutes(h, city.venue) for h in ranked}
    hotel, second, nearest = ranked[-1], ranked[-2], ranked[0]
    check_in, nights = city.stay()
    stay = nights_of(check_in, nights)
    day = (city.start.date().fromisoformat(check_in) - city.start.date()).days
    keynote = city.at(day + 1, author.integer(8, 9), 15 * author.integer(0, 2))
    short = author.integer(3, 6)
    ring = city.link(hotel, city.venue, short, "road", "Ring Road (west section)")
    room = city.add_room(hotel, free=1, nights=stay)
    slack = author.integer(2, max(2, min(10, base[hotel] - short - 3)))
    late = city.add_shuttle(hotel, shift(keynote, -(short + slack)), riders=author.integer(0, 3))
    early = city.add_shuttle(hotel, shift(keynote, -(base[hotel] + author.integer(2, 10))),
                             riders=author.integer(0, 3)) if level == "easy" else ""
    cut = base[hotel] if level == "easy" else base[nearest]
    alt = {}

    def offer(h: str, minutes: int) -> None:
        alt[h] = (city.add_room(h, free=1, nights=stay),
                  city.add_shuttle(h, shift(keynote, -(minutes + author.integer(2, 10))), riders=author.integer(0, 3)))

    second_ring = ""
    if level == "medium":
        offer(nearest, base[nearest])
    if level == "hard":
        second_ring = city.link(second, city.venue, author.integer(3, 6), "road", "Ring Road (north section)")
        offer(second, s["links"][second_ring]["minutes"])
        offer(nearest, base[nearest])
    if level == "impossible":  # the second hotel's shuttle leaves too late to make it without the ring road
        city.add_room(second, free=1, nights=stay)
        city.add_shuttle(second, shift(keynote, -author.integer(3, 8)))
    if level != "easy":  # within reach: the nearest hotel, and the ring-road hotels while the ring road is open
        cut = max(base[nearest], short, s["links"][second_ring]["minutes"] if second_ring else 0)
        if cut >= base[second]:
            raise RuntimeError(f"{city.venue}: no reach separates the ring-road hotels")  # a layout bug, not a seed
    city.afford_all(nights)
    extra = f"a seat on its shuttle leaving {s['shuttles'][late]['departs']} so I'm there for the keynote at {keynote}"
    req = Request(city, hotel, check_in, nights, cut, shuttle_by=keynote, kept=hotel, progress="seat", extra=extra)
    plan = Plan(look=[req.search()], book=req.book(room, "hold0"), ride=[req.shuttles(), req.ride(late)])
    closed = city.set("links", ring, "open", value=False)
    added = [city.set("shuttles", early, value=s["shuttles"].pop(early))] if early else []  # easy's earlier run
    triggers = [city.on_write("book_shuttle", "ring_road_closed", f"the ring road section {ring} from {hotel} to "
                              "the venue closes", [closed, *added], ("list_shuttles", hotel),
                              when=author.pred.riding(guest=city.user, hotel=hotel))]
    if second_ring:
        triggers.append(city.cascade("closure_extended", f"the closure is extended to {second_ring}",
                                     ["links", ring, "open"], False,
                                     [city.set("links", second_ring, "open", value=False)],
                                     ("get_travel_time", {"origin_id": second, "destination_id": city.venue})))

    def move(h: str) -> list:
        rt, shuttle = alt[h]
        return [req.search(h), req.shuttles(h), req.cancel("hold0"),
                author.call.cancel_shuttle_seat(shuttle_id=late, guest_id=city.user), *req.book(rt, "new0"),
                req.ride(shuttle)]

    seen = [req.shuttles(), req.travel(hotel)]
    fixes = {
        "easy": lambda: [req.shuttles(), author.call.cancel_shuttle_seat(shuttle_id=late, guest_id=city.user),
                         req.ride(early)],
        "medium": lambda: seen + [req.hotels(), req.travel(nearest), *move(nearest)],
        "hard": lambda: seen + [req.hotels(), req.travel(second), req.search(second), req.shuttles(second),
                                req.travel(nearest), *move(nearest)],
        "impossible": lambda: seen + [req.hotels(), req.travel(second), req.shuttles(second)] + req.refuse(
            f"I can't get you to the venue by {hhmm(keynote)} from a hotel within {cut} minutes of it: the ring road "
            f"section {ring} is closed, {hotel} is {base[hotel]} minutes away by the detour and its shuttle arrives "
            f"late, and no other hotel within reach has {city.a_room} with a shuttle in time.",
            ["ring_road_closed"], [ring, "ring road closed", f"{base[hotel]} minutes"])}
    oracle = plan.calls + fixes[level]()
    query = (f"Hi, {req.who}. Please book {req.stay_text()} at {city.name(hotel)} ({hotel}), which the ring road "
             f"puts a few minutes from the {city.name(city.venue)} ({city.venue}), and {extra}. I need to stay "
             f"{req.where}.")
    return make_task(req, query, triggers, plan, oracle, "a keynote attendee", {
        ("shuttle", "keynote", "time", "earlier"): f"I must be at the venue by {keynote}; any shuttle that gets me "
        "there in time is fine."}, insist=f"I must be at the venue by {hhmm(keynote)} from a hotel {req.reach}.")
