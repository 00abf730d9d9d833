"""ST3 Handoff Failure: the guest's train is delayed past the hotel's late check-in cut-off.

The user books a room and gives their arrival time, comfortably before the hotel's last key
handover. Once the arrival is recorded, the train is delayed (visible in ``get_guest``): the guest
now arrives after the cut-off, and the hotel has no night desk, so nobody would hand over the
key. Easy: the hotel has after-hours key lockers: reserve one and record the new arrival. Medium:
its lockers are all taken, so the stay moves to a hotel within reach with a night desk. Hard: a
party of two: the night-desk hotel has a single room left and the group must stay together, so
both rooms go to a hotel with two free key lockers. Impossible: no hotel within reach can hand
over a key at the new arrival time. The train is delayed for whichever hotel was booked: at medium
the guest may be booked at the night-desk hotel from the start, at hard both rooms at the hotel with
the lockers (``Task.alternatives``), and the new arrival still has to be recorded there.
"""

from __future__ import annotations

from sttgym.clock import hhmm
from sttgym.envs.arena.hotel.generator import Author, Plan, Request, Task, make_task, new_city, one
from sttgym.envs.arena.hotel.world import nights_of


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s, call = city.state, author.call
    count = 2 if level == "hard" else 1
    near, far, cut = city.split(3)
    hotel = one(author, near)
    others = [h for h in near if h != hotel]
    check_in, nights = city.stay()
    stay = nights_of(check_in, nights)
    day = (city.start.date().fromisoformat(check_in) - city.start.date()).days
    cutoff = f"{author.integer(21, 22)}:{one(author, ['00', '30'])}"
    for h in near:  # within reach, a key after the cut-off is only what the story gives
        s["hotels"][h].update(night_desk=False, key_lockers=0, late_cutoff=cutoff)
    planned = city.at(day, author.integer(18, 20), 15 * author.integer(0, 3))
    delayed = city.at(day, int(cutoff[:2]) + 1, 5 * author.integer(0, 11))
    s["guests"][city.user].update(arrival=planned, arrival_note="train due in the evening")
    s["hotels"][hotel]["key_lockers"] = author.integer(1, 2) if level == "easy" else 0
    room = city.add_room(hotel, free=count, nights=stay)
    desk, lockers = others[0], others[-1]
    if level in ("medium", "hard"):
        s["hotels"][desk]["night_desk"] = True
        desk_room = city.add_room(desk, free=1, nights=stay)
    if level == "hard":
        s["hotels"][lockers]["key_lockers"] = 2
        locker_room = city.add_room(lockers, free=2, nights=stay)
    if level == "impossible":  # rooms, but no way to get a key late
        city.add_room(desk, free=1, nights=stay)
    city.afford_all(nights)
    # The arrival lives on the profile, where the story moves it: the request says so, and each room of a party.
    rooms = "each room" if count > 1 else "the room"
    extra = f"record the arrival from my guest profile on {rooms} so the key is ready for me"
    req = Request(city, hotel, check_in, nights, cut, count, arrival=True, kept=hotel, progress="arrival",
                  extra=extra)
    steps = [f"hold{i}" for i in range(count)]

    def stay_at(rt: str) -> Plan:
        return Plan(look=[req.search(s["room_types"][rt]["hotel"])], book=[c for h in steps for c in req.book(rt, h)],
                    arrive=[req.arrive(planned, h) for h in steps])

    plan = stay_at(room)
    triggers = [city.on_write("set_arrival", "train_delayed", f"the guest's train is delayed: arrival "
                              f"{hhmm(delayed)}, after {hotel}'s {cutoff} cut-off",
                              city.sets("guests", city.user, arrival=delayed, arrival_note="train delayed"),
                              ("get_guest", city.user), when=author.pred.has_confirmed(guest=city.user))]

    def locker(step: str) -> object:
        return call.reserve_key_locker(reservation_id=req.cancel(step).arguments["reservation_id"])

    def settle(rt: str, keys: bool) -> list:
        return [c for i in range(count) for c in [*req.book(rt, f"new{i}")] + [locker(f"new{i}")] * keys
                + [req.arrive(delayed, f"new{i}")]]

    def recorded(keys: bool) -> list:  # the stay booked where a key can be had late: the new arrival recorded
        return [c for h in steps for c in [locker(h)] * keys + [req.arrive(delayed, h)]]

    look = [req.hotel_info(), req.hotels()]
    fixes = {
        "easy": lambda: [req.hotel_info(), *recorded(True)],
        "medium": lambda: look + [req.travel(desk), req.hotel_info(desk), req.search(desk), req.cancel("hold0"),
                                  *settle(desk_room, False)],
        "hard": lambda: look + [req.hotel_info(desk), req.search(desk), req.travel(lockers), req.hotel_info(lockers),
                                req.search(lockers), req.cancel("hold0"), req.cancel("hold1"),
                                *settle(locker_room, True)],
        "impossible": lambda: look + [req.hotel_info(h) for h in others] + req.refuse(
            f"I can't arrange a key for your new arrival at {hhmm(delayed)}: {hotel} hands out keys only until "
            f"{cutoff}, has no night desk and no key locker free, and no other hotel within {cut} minutes of the "
            f"venue with {city.a_room} can hand over a key that late.", ["train_delayed"],
            [hhmm(delayed), "train delayed", "no night desk"])}
    oracle = plan.calls + [req.profile()] + fixes[level]()
    # Booked from the start where a key can be had late, the new arrival only has to be recorded there.
    there = {"medium": lambda: stay_at(desk_room).calls + [req.profile(), *recorded(False)],
             "hard": lambda: stay_at(locker_room).calls + [req.profile(), req.hotel_info(lockers), *recorded(True)]}
    alternatives = [there[level]()] if level in there else []
    party = " for my colleague and me (two rooms, same hotel)" if count > 1 else ""
    query = (f"Hi, {req.who}. Please book {req.stay_text()}{party} at {city.name(hotel)} ({hotel}) or another hotel "
             f"{req.where}. My train gets in at {planned}, as my guest profile shows; "
             f"{extra}.")
    return make_task(req, query, triggers, plan, oracle, "a delegate travelling by train", {
        ("arrival", "arrive", "train", "time", "late"): "My current arrival time is always on my guest profile."},
        insist=f"I need the room I asked for {req.reach} where I can get my key when I arrive.",
        alternatives=alternatives)
