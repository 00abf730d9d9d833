"""T2 Priority Reorder: the customer's flight is rescheduled earlier, so the pickup must move up.

The user wants a car at an airport desk when their flight lands. The agent reads the tracked
arrival and books for it; once the car is held the airline moves the flight earlier (visible
only by reading the arrival again). A booking for the old time leaves the customer waiting
at the desk. Easy: move the booking earlier. Medium: the booked car is still out on rent at
the earlier time, so another car must take over. Hard: no other car is at the desk, one must
be brought from the next depot, and the rescheduled flight bank sets off an airport price
surge that breaks the card limit unless a promotion is used. Impossible: every car of the
class is out, in the workshop or booked at the earlier time.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.authoring import Author, Plan
from sttgym.envs.arena.carrental.generator import CITIES, Request, car, iso, make_task, new_city, one, rid
from sttgym.task import Task


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s, call, pred, op = city.state, author.call, author.pred, author.op
    depot = one(author, city.depots_in("airport"))
    lands, ret = city.trip()
    landing = datetime.fromisoformat(lands)
    # The earlier arrival still falls within the desk's hours (trips start at 09:00, desks open by 07:00).
    opens = landing.replace(hour=int(s["depots"][depot]["opens"][:2]), minute=0)
    early = iso(max(landing - timedelta(minutes=30 * author.integer(3, 6)), opens))
    flight = city.flight_number()
    s["flights"][flight] = {"depot": depot, "origin": author.pick(CITIES), "arrives": lands, "status": "on time"}
    booked = city.add_vehicle(depot, city.focus, available_from=None if level == "easy" else lands)
    fair = max(city.price(depot, city.focus, t, ret) for t in (lands, early))
    s["customers"][city.user]["payment_limit"] = round(fair * (1.1 + 0.05 * author.integer(0, 3)))
    req = Request(city, depot, lands, ret, flight=flight)
    read = call.get_flight_arrival(flight_number=flight)
    plan = Plan(look=[read, req.search()], hold=[req.hold(booked)], check=[req.quote()], confirm=[req.confirm()])
    triggers = [city.trigger(
        "flight_rescheduled", f"the airline moves {flight} earlier once a booking for its old arrival exists",
        pred.has_live_booking(customer=city.user, depot_id=depot),
        [op.set_field(path=["flights", flight, "arrives"], value=early),
         op.set_field(path=["flights", flight, "status"], value="rescheduled earlier")],
        "get_flight_arrival", {"flight_number": flight}, activation=["hold_vehicle"], timing="after")]

    head = plan.upto("check") + [read]
    cancel = call.cancel_reservation(reservation_id=rid("hold"))
    impossible = None
    if level == "easy":
        oracle = head + [call.reschedule_reservation(reservation_id=rid("hold"),
                                                     pickup_time=early, return_time=ret), req.confirm()]
    elif level == "medium":
        spare = city.add_vehicle(depot, city.focus)
        oracle = head + [req.search(pickup=early), cancel, req.hold(spare, "early", early), req.confirm("early")]
    elif level == "hard":
        spare_depot = city.nearest(depot, sorted(s["depots"]))[0]
        spare = city.add_vehicle(spare_depot, city.focus)
        zone = city.zone(depot)
        code = f"{author.pick(['FLYDRIVE', 'ARRIVALS', 'JETSET', 'SKYLINE'])}{author.serial(10, 99)}"
        s["promotions"][code] = {"zone": zone, "vehicle_class": None, "energy": None, "discount_pct": 40,
                                 "quota": 25, "used": author.integer(3, 20), "note": "fly-and-drive fares"}
        window = {"start": iso(datetime.fromisoformat(early) - timedelta(hours=1)),
                  "end": iso(datetime.fromisoformat(early) + timedelta(hours=1)), "multiplier": 1.5}
        triggers.append(city.trigger(
            "airport_surge", f"the rescheduled arrival bank sets off a price surge in {zone}",
            pred.field_equals(path=["flights", flight, "status"], value="rescheduled earlier"),
            [op.set_field(path=["zones", zone, "surge"], value=[window]),
             op.set_field(path=["zones", zone, "demand"], value="peak")],
            "get_rental_quote", {"depot_id": depot}))
        oracle = head + [req.search(pickup=early), req.depots(), req.search(spare_depot, early), req.move(spare),
                         cancel, req.hold(spare, "early", early), req.quote(pickup=early),
                         call.list_promotions(zone_id=zone), req.confirm("early", promo=code)]
    else:
        city.add_vehicle(depot, city.focus, status="maintenance")
        elsewhere = one(author, sorted(d for d in s["depots"] if d != depot))
        taken = city.add_vehicle(elsewhere, city.focus)
        ident = f"RSV-{author.serial(1000, 3999)}"
        s["reservations"][ident] = city.reservation(city.other_customer(), taken, elsewhere,
                                                    iso(datetime.fromisoformat(early) - timedelta(hours=3)),
                                                    iso(datetime.fromisoformat(ret) + timedelta(days=1)))
        oracle = head + [req.search(pickup=early), req.status(booked), req.tell(
            f"I'm sorry, I can't get you a car in time: {flight} now lands earlier, at {early[11:]}, and no "
            f"{city.focus} is free then; {booked} at {depot} is only back at {lands[11:]}.")]
        impossible = req.refusal(["flight_rescheduled"], [early[11:]])

    name = s["customers"][city.user]["name"]
    query = (f"Hi, {name} here (customer {city.user}). I'm flying in on {flight}, landing at {city.name(depot)}; "
             f"please book me {car(city.focus)} at that desk ({depot}) for pickup when the flight lands (it is due "
             f"at {lands}), returning it there at {ret}. Check the price against my card limit and confirm.")
    answers = {("land", "landing", "arrival", "flight", "time"):
               "Go by the airline's tracked arrival time; I'll be at the desk as soon as I land.",
               ("car", "vehicle", "another", "other"): f"Any {city.focus} is fine."}
    return make_task(req, query, triggers, plan.calls, oracle, "a business traveller", answers, impossible,
                     insist=f"I need a car at {depot} when I land, there is no other way to get to my meeting.")
