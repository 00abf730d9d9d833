"""T2 Priority Reorder: the customer's flight is rescheduled earlier, so the pickup must move up.

The user wants a car at an airport desk when their flight lands. The agent reads the tracked
arrival and books for it; once the car is held the airline moves the flight earlier (visible
only by reading the arrival again). A booking for the old time leaves the customer waiting
at the desk. Easy: move the booking earlier. Medium: the booked car is still out on rent at
the earlier time, so another car must take over. Hard: no other car is at the desk, one must
be brought from the next depot, and the rescheduled flight bank sets off an airport price
surge that breaks the card limit unless a promotion is used. Impossible: the desk's car is
only back at the old arrival, and the only other car of the class, at the nearest depot, is free
then but reserved for another customer's pickup there, so it may not be driven over (what rules
it out shows only on that car: ``get_vehicle_status``, or the refused transfer).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.clock import format_time, shift
from sttgym.envs.arena.carrental.generator import (Author, Plan, Request, Task, car, make_task, new_city, one,
                                                   rid)

SPARE = {"medium": "desk", "hard": "nearest depot"}  # where the class's other free car waits (easy, impossible: none)


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s, call = city.state, author.call
    depot = city.depot("airport")
    lands, ret = city.trip()
    landing = datetime.fromisoformat(lands)
    # The earlier arrival still falls within the desk's hours (trips start at 09:00, desks open by 07:00).
    opens = landing.replace(hour=int(s["depots"][depot]["opens"][:2]), minute=0)
    early = format_time(max(landing - timedelta(minutes=30 * author.integer(3, 6)), opens))
    flight = city.inbound(depot, lands)
    booked = city.add_vehicle(depot, city.focus, available_from=None if level == "easy" else lands)
    fair = max(city.price(depot, city.focus, t, ret) for t in (lands, early))
    s["customers"][city.user]["payment_limit"] = round(fair * (1.1 + 0.05 * author.integer(0, 3)))
    req = Request(city, depot, lands, ret, flight=flight)
    read = call.get_flight_arrival(flight_number=flight)
    plan = Plan(look=[read, req.search()], hold=[req.hold(booked)], check=[req.quote()], confirm=[req.confirm()])
    triggers = [city.on_hold(
        "flight_rescheduled", f"the airline moves {flight} earlier once a booking for its old arrival exists",
        city.sets("flights", flight, arrives=early, status="rescheduled earlier"),
        ("get_flight_arrival", flight), depot_id=depot)]
    where = {"desk": depot, "nearest depot": city.nearest(depot, sorted(s["depots"]))[0]}
    spare_depot = where.get(SPARE.get(level, ""))
    spare = city.add_vehicle(spare_depot, city.focus) if spare_depot else ""
    rebook = [req.search(pickup=early), call.cancel_reservation(reservation_id=rid("hold")),
              req.hold(spare, "early", early)]

    def hard() -> list:  # the rescheduled arrival bank sets off a surge that only a fly-and-drive fare offsets
        zone, code = city.zone(depot), city.code(["FLYDRIVE", "ARRIVALS", "JETSET", "SKYLINE"])
        s["promotions"][code] = {"zone": zone, "vehicle_class": None, "energy": None, "discount_pct": 40,
                                 "quota": 25, "used": author.integer(3, 20), "note": "fly-and-drive fares"}
        window = {"start": shift(early, hours=-1), "end": shift(early, hours=1), "multiplier": 1.5}
        triggers.append(city.cascade(
            "airport_surge", f"the rescheduled arrival bank sets off a price surge in {zone}",
            ["flights", flight, "status"], "rescheduled earlier",
            city.sets("zones", zone, surge=[window], demand="peak"), ("get_rental_quote", {"depot_id": depot})))
        return [rebook[0], req.depots(), req.search(spare_depot, early), req.move(spare), *rebook[1:],
                req.quote(pickup=early), call.list_promotions(zone_id=zone), req.confirm("early", promo=code)]

    def impossible() -> list:  # the desk's car is back too late; the one at the nearest depot is committed there
        city.add_vehicle(depot, city.focus, status="maintenance")
        elsewhere = city.nearest(depot, sorted(s["depots"]))[0]
        other = city.add_vehicle(elsewhere, city.focus)
        theirs = city.committed(other, ret)
        return [req.search(pickup=early), req.status(booked), req.depots(), req.search(elsewhere, early),
                req.status(other), *req.refuse(
            f"I can't get you a car in time: {flight} now lands earlier, at {early[11:]}, and {booked} at {depot} is "
            f"only back from its rental at {lands[11:]}; the only other {city.focus}, {other} at {elsewhere}, is "
            f"reserved for another customer's pickup there ({theirs}), so it can't be driven over.",
            ["flight_rescheduled"], [early[11:], "rescheduled earlier", "lands earlier", "flight earlier"],
            [other, theirs, "another customer", "reserved for another", "booked for pickup"])]

    fixes = {"easy": lambda: [call.reschedule_reservation(reservation_id=rid("hold"), pickup_time=early,
                                                          return_time=ret), req.confirm()],
             "medium": lambda: [*rebook, req.confirm("early")], "hard": hard, "impossible": impossible}
    oracle = plan.upto("check") + [read] + fixes[level]()
    # Medium: the desk's free car may be the first one held; moved to the new arrival, it serves as well.
    free_first = [[read, req.search(), req.hold(spare), req.quote(), read,
                   call.reschedule_reservation(reservation_id=rid("hold"), pickup_time=early, return_time=ret),
                   req.confirm()]] if level == "medium" else []
    req.asked = f"book me {car(city.focus)} at that desk ({depot}) for pickup when the flight lands"
    query = (f"Hi, {req.who} here. I'm flying in on {flight}, landing at {city.name(depot)}; please {req.asked} (it "
             f"is due at {lands}), returning it there at {ret}. Check the price against my card limit and confirm.")
    return make_task(req, query, triggers, plan, oracle, "a business traveller", {
        ("land", "landing", "arrival", "flight", "time"): "Go by the airline's tracked arrival time; I'll be at the "
        "desk as soon as I land."}, alternatives=free_first,
        insist=f"{req.constraints()}, within my card limit; any car of the class will do, there is no "
        "other way to get to my meeting.")
