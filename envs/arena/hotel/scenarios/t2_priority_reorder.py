"""T2 Priority Reorder: a VIP's arrival is brought forward, so the room must be ready hours sooner.

A platinum guest's office books a room near the venue and asks the agent to record the arrival
and make sure the room is ready when the guest walks in. Once the stay is confirmed, the guest's
flight is moved earlier (visible in ``get_guest``): the room type is only ready in the afternoon,
so the recorded arrival and the room are now wrong. Easy: record the new arrival and have
housekeeping rush the room. Medium: the rescheduled flight bank brings a VIP group that takes the
hotel's last rush cleans, so the stay moves to a hotel within reach whose rooms are ready earlier.
Hard: a party of two: the early-ready hotel has a single room left, so both rooms move to a third
hotel whose housekeeping can still rush two. Impossible: the rush crew is gone and no other hotel
within reach has the kind of room. The flight moves for whichever hotel was booked: at medium the
guest may be booked at the early-ready hotel from the start, at hard both rooms at the hotel that can
rush two (``Task.alternatives``), and the new arrival still has to be recorded there.
"""

from __future__ import annotations

from sttgym.clock import hhmm
from sttgym.envs.arena.hotel.generator import Author, Plan, Request, Task, make_task, new_city, one
from sttgym.envs.arena.hotel.world import nights_of


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s = city.state
    count = 2 if level == "hard" else 1
    near, far, cut = city.split(3)
    hotel = one(author, near)
    others = [h for h in near if h != hotel]
    check_in, nights = city.stay()
    stay = nights_of(check_in, nights)
    day = int((city.start.date().fromisoformat(check_in) - city.start.date()).days)
    late, early = city.at(day, author.integer(16, 19), 15 * author.integer(0, 3)), city.at(day, author.integer(9, 11),
                                                                                           15 * author.integer(0, 3))
    s["guests"][city.user].update(tier="platinum", arrival=late, arrival_note="flight lands mid-afternoon")
    s["hotels"][hotel]["rush_cleans"] = author.integer(1, 3)
    room = city.add_room(hotel, free=count, nights=stay, ready_from=f"{author.integer(14, 15)}:00")
    ready, spare = others[0], others[-1]
    if level in ("medium", "hard"):  # rooms vacant since the morning
        ready_room = city.add_room(ready, free=1, nights=stay, ready_from="08:00")
    if level == "hard":
        s["hotels"][spare]["rush_cleans"] = 2
        spare_room = city.add_room(spare, free=2, nights=stay, ready_from="15:00")
    if far:
        city.add_room(one(author, far), free=2, nights=stay, ready_from="08:00")
    city.afford_all(nights)
    # The arrival lives on the profile, where the story moves it: the request says so, and each room of a party.
    rooms = "each room" if count > 1 else "the room"
    extra = f"record the arrival from the guest profile on {rooms} and make sure {rooms} is ready by then"
    req = Request(city, hotel, check_in, nights, cut, count, arrival=True, kept=hotel, progress="arrival",
                  extra=extra)
    steps = [f"hold{i}" for i in range(count)]

    def stay_at(rt: str) -> Plan:
        return Plan(look=[req.search(s["room_types"][rt]["hotel"])], book=[c for h in steps for c in req.book(rt, h)],
                    arrive=[req.arrive(late, h) for h in steps])

    plan = stay_at(room)
    effect = city.sets("guests", city.user, arrival=early, arrival_note="flight moved earlier")
    if level != "easy":
        effect += city.sets("hotels", hotel, rush_cleans=0, notice="VIP group arriving early: no rush cleans left")
    triggers = [city.on_write("confirm_reservation", "arrival_brought_forward",
                              f"the guest's flight is moved earlier: arrival {hhmm(early)} instead of {hhmm(late)}",
                              effect, ("get_guest", city.user), when=author.pred.has_confirmed(guest=city.user))]
    moved = [req.hotel_info(), req.hotels()]

    def settle(rt: str, rush: bool, step: str = "new") -> list:
        return [c for i in range(count) for c in [*req.book(rt, f"{step}{i}"), req.arrive(early, f"{step}{i}")]
                + [req.rush(early, f"{step}{i}")] * rush]

    def recorded(rush: bool) -> list:  # the stay booked where it can stay: the new arrival, and the room ready
        return [c for h in steps for c in [req.arrive(early, h)] + [req.rush(early, h)] * rush]

    fixes = {
        "easy": lambda: recorded(True),
        "medium": lambda: moved + [req.travel(ready), req.search(ready), req.cancel("hold0"),
                                   *settle(ready_room, False)],
        "hard": lambda: moved + [req.search(ready), req.travel(spare), req.search(spare), req.hotel_info(spare),
                                 req.cancel("hold0"), req.cancel("hold1"), *settle(spare_room, True)],
        "impossible": lambda: moved + [req.travel(h) for h in others] + req.refuse(
            f"I can't have {city.a_room} ready for the guest's new arrival at {hhmm(early)}: {hotel}'s rooms "
            f"are only ready from {s['room_types'][room]['ready_from']}, its housekeeping has no rush clean left, "
            f"and no other hotel within {cut} minutes of the venue has {city.a_room}.",
            ["arrival_brought_forward"], [hhmm(early), "flight moved earlier", "no rush clean"])}
    oracle = plan.upto("book") + [req.profile()] + fixes[level]()
    # Booked from the start where the rooms can be ready in time, the new arrival only has to be recorded there.
    there = {"medium": lambda: stay_at(ready_room).upto("book") + [req.profile(), *recorded(False)],
             "hard": lambda: stay_at(spare_room).upto("book") + [req.profile(), *recorded(True)]}
    alternatives = [there[level]()] if level in there else []
    party = " and a colleague (two rooms, same hotel)" if count > 1 else ""
    query = (f"I'm booking for our VIP, {req.who}{party}: {req.stay_text()} at {city.name(hotel)} ({hotel}), or "
             f"another hotel {req.where}. The guest lands and arrives at {late}, as the guest profile shows; "
             f"{extra}.")
    return make_task(req, query, triggers, plan, oracle, "a VIP's personal assistant", {
        ("arrival", "arrive", "flight", "time"): "The guest's current arrival time is always on the guest profile."},
        insist=f"The room must be ready when the guest arrives, at a hotel {req.reach}.",
        alternatives=alternatives)
