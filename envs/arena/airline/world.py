"""Airline: an airline's reservation and operations desk, working one traveller's itinerary.

State containers (JSON-like dicts keyed by id):

- ``airports``: ``{name, city, country, hub, mct, interline_mct, status: open|closed, notice,
  transit_visa_for: [nationality], transit_rule}``. ``mct`` is the minimum connecting time
  between two flights of one carrier (or of partner carriers); ``interline_mct`` applies when
  the bags change hands between carriers that are not partners. A traveller whose nationality
  is in ``transit_visa_for`` may connect there only holding a visa for the airport's country.
- ``ground_links``: ``{a, b, minutes, open}`` between airports of one city; a connection that
  changes airports needs the fastest open transfer plus the departure airport's connecting time.
- ``carriers``: ``{name, hold_minutes, change_fee, partners: [carrier], notice}``.
- ``flights``: ``{carrier, origin, destination, departs, arrives, status: scheduled|delayed|
  rescheduled|cancelled, aircraft, inbound, seats: {cabin: n}, fares: {cabin: price}, notice}``;
  ``inbound`` is the flight whose aircraft operates this one. ``seats`` are the seats still for
  sale; every live booking held or ticketed here takes one more.
- ``passengers``: ``{name, nationality, visas: [country], tier: standard|silver|gold, budget,
  travel_document, document_note}``; ``travel_document`` names the passport the passenger flies on.
- ``documents``: ``{passenger, kind, number, nationality, expires}``: the passengers' passports.
- ``bookings``: ``{passenger, segments: [flight], cabin, status: held|ticketed|cancelled,
  held_at, ticket_by, price, fees, promo, promo_pct, offloaded: [flight], document_number}``. A hold
  lapses at ``ticket_by`` (then reads ``expired``, takes no seat and commits nothing); ``offloaded``
  lists the flights whose seat the airline took back; ``document_number`` is the passport recorded
  for advance passenger information.
- ``promotions``: ``{carriers: [carrier], discount_pct, quota, used, status: active|exhausted, note}``;
  ``used`` counts the uses before this desk's tickets, each live ticket with the code is one more.
- ``counters``: the last booking number.

Times are ISO strings at minute precision, all on one local clock.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

from sttgym.clock import format_time, local_time, minutes_between
from sttgym.geo import shortest_route
from sttgym.tools import fail, ok, tool
from sttgym.world import World, operation, predicate

__all__ = ["AirlineWorld", "CABINS", "GOLD_WAIVES", "hold_lapses", "booking_status"]

CABINS = ("economy", "business")
GOLD_WAIVES = "gold"  # the loyalty tier whose change fees are waived
LIVE = ("held", "ticketed")
Cabin = Literal["economy", "business"]



def hold_lapses(booking: dict) -> datetime | None:
    return local_time(booking.get("ticket_by"))


def booking_status(booking: dict, now: datetime) -> str:
    """A booking's status as of ``now``: a hold past its ticketing deadline reads ``expired``."""
    if booking.get("status") == "held":
        lapses = hold_lapses(booking)
        if lapses is None or now >= lapses:
            return "expired"
    return booking.get("status", "")


class AirlineWorld(World):
    """Tools of an airline reservation desk; see the module docstring for the state."""

    domain = "Airline"
    description = ("An airline reservation and operations desk: airports with connecting times and transit-visa "
                   "rules, a timetable of flights with seats and fares, carriers' hold and change rules, "
                   "promotions, passengers with their passports, and their bookings.")

    # ----------------------------------------------------------------- helpers

    def _status(self, bid: str) -> str:
        return booking_status(self.bookings[bid], self.clock.now)

    def commits(self, container: str, entity: Any) -> bool:
        """A booking commits something while it is a live hold or a ticket: a cancelled one or a hold past its
        ticketing deadline does not (the record still reads held; the hold lapsed with time)."""
        if container == "bookings":
            return booking_status(entity, self.clock.now) in LIVE
        return super().commits(container, entity)

    def _taken(self, fid: str, cabin: str, ignore: str | None = None) -> int:
        """Seats of ``fid`` in ``cabin`` that live bookings of this desk hold (``ignore`` aside)."""
        return sum(1 for bid, b in self.bookings.items() if bid != ignore and fid in b["segments"]
                   and b["cabin"] == cabin and self._status(bid) in LIVE and fid not in b.get("offloaded", []))

    def seats_left(self, fid: str, cabin: str, ignore: str | None = None) -> int:
        return max(0, self.flights[fid]["seats"].get(cabin, 0) - self._taken(fid, cabin, ignore))

    def _transfer(self, a: str, b: str) -> int | None:
        """Minutes from airport ``a`` to ``b`` on the ground (0 when they are one airport)."""
        if a == b:
            return 0
        if self.airports[a]["city"] != self.airports[b]["city"]:
            return None
        route = shortest_route(self.ground_links, a, b)
        return None if route is None else route[0]

    def _partners(self, x: str, y: str) -> bool:
        return x == y or y in self.carriers.get(x, {}).get("partners", []) or \
            x in self.carriers.get(y, {}).get("partners", [])

    def _connection(self, first: dict, second: dict) -> dict:
        """What a connection between two flights needs and has."""
        ground = self._transfer(first["destination"], second["origin"])
        hub = self.airports[second["origin"]]
        interline = not self._partners(first["carrier"], second["carrier"])
        need = None if ground is None else ground + (hub["interline_mct"] if interline else hub["mct"])
        return {"at": first["destination"], "to": second["origin"], "ground_minutes": ground,
                "interline": interline, "required_minutes": need,
                "available_minutes": minutes_between(first["arrives"], second["departs"])}

    def _visa_problem(self, passenger: dict, airport_id: str) -> str | None:
        airport = self.airports[airport_id]
        if passenger["nationality"] in airport.get("transit_visa_for", []) and \
                airport["country"] not in passenger.get("visas", []):
            rule = f" (rule {airport['transit_rule']})" if airport.get("transit_rule") else ""
            return (f"a {passenger['nationality']} national needs a transit visa for {airport['country']} to "
                    f"connect at {airport_id}{rule}")
        return None

    def problems(self, passenger_id: str, fids: list[str], cabin: str, ignore: str | None = None,
                 seats: bool = True, offloaded: list | None = None) -> list[str]:
        """Every reason the itinerary ``fids`` cannot be flown by the passenger now (empty: it can)."""
        passenger = self.passengers.get(passenger_id)
        if passenger is None:
            return [f"no passenger {passenger_id!r}"]
        if not fids:
            return ["an itinerary needs at least one flight"]
        if len(set(fids)) != len(fids):
            return ["a flight appears twice in the itinerary"]
        missing = [f for f in fids if f not in self.flights]
        if missing:
            return [f"no flight {missing[0]!r}"]
        if cabin not in CABINS:
            return [f"no cabin {cabin!r}"]
        out = []
        for fid in fids:
            flight = self.flights[fid]
            if flight["status"] == "cancelled":
                out.append(f"{fid} is cancelled{': ' + flight['notice'] if flight.get('notice') else ''}")
            elif local_time(flight["departs"]) <= self.clock.now:
                out.append(f"{fid} has already departed")
            if fid in (offloaded or []):
                out.append(f"the passenger was offloaded from {fid}")
            elif seats and self.seats_left(fid, cabin, ignore) < 1:
                out.append(f"{fid} has no {cabin} seat left")
        for a, b in zip(fids, fids[1:]):
            first, second = self.flights[a], self.flights[b]
            conn = self._connection(first, second)
            if conn["ground_minutes"] is None:
                out.append(f"{a} lands at {first['destination']} but {b} leaves from {second['origin']}: "
                           "no connection")
                continue
            if conn["available_minutes"] < conn["required_minutes"]:
                kind = "interline " if conn["interline"] else ""
                ground = f", {conn['ground_minutes']} of them on the ground" if conn["ground_minutes"] else ""
                out.append(f"{a} -> {b}: {conn['available_minutes']} minutes to connect, the {kind}minimum is "
                           f"{conn['required_minutes']}{ground}")
            for airport in dict.fromkeys((first["destination"], second["origin"])):
                problem = self._visa_problem(passenger, airport)
                if problem:
                    out.append(problem)
        return out

    def price(self, fids: list[str], cabin: str, promo_pct: int = 0, promo_carriers: list | None = None) -> int:
        total = 0.0
        for fid in fids:
            flight = self.flights[fid]
            fare = flight["fares"].get(cabin, 0)
            if promo_pct and (not promo_carriers or flight["carrier"] in promo_carriers):
                fare = fare * (100 - promo_pct) / 100
            total += fare
        return round(total)

    def best_fare(self, fids: list[str], cabin: str) -> tuple[int, str]:
        """The lowest fare ``fids`` can be ticketed at now, and the promotion that gives it ("" for the plain fare)."""
        usable = [c for c in sorted(self.promotions) if self._promo_problem(c, fids) is None]
        fares = [(self.price(fids, cabin), "")] + [(self.price(fids, cabin, self.promotions[c]["discount_pct"],
                                                              self.promotions[c]["carriers"]), c) for c in usable]
        return min(fares, key=lambda fare: fare[0])

    def best_price(self, fids: list[str], cabin: str) -> int:
        """The lowest fare ``fids`` can be ticketed at now, with any promotion that still applies."""
        return self.best_fare(fids, cabin)[0]

    def _promo_used(self, code: str) -> int:
        """Uses of a promotion: those before this desk's tickets, and each live ticket issued with it (so a
        promotion used for the traveller's ticket changes no record of the promotion itself)."""
        return self.promotions[code]["used"] + sum(1 for bid, b in self.bookings.items() if b.get("promo") == code
                                                   and self._status(bid) == "ticketed")

    def _promo_problem(self, code: str, fids: list[str]) -> str | None:
        """Why promotion ``code`` cannot price ``fids`` now, or None."""
        promo = self.promotions.get(code)
        if promo is None:
            return f"no promotion {code!r}"
        if promo["status"] != "active":
            return f"promotion {code} is {promo['status']}"
        used = self._promo_used(code)
        if used >= promo["quota"]:
            return f"promotion {code} has no quota left ({used}/{promo['quota']} used)"
        if promo["carriers"] and not any(self.flights[f]["carrier"] in promo["carriers"] for f in fids):
            return f"promotion {code} applies to flights of {', '.join(promo['carriers'])} only"
        return None

    def _legs(self, fids: list[str]) -> list[dict]:
        """The flights of a booking as they stand now."""
        return [{"flight_id": f, **{k: self.flights[f][k] for k in ("carrier", "origin", "destination", "departs",
                                                                     "arrives", "status")}} for f in fids]

    def _view(self, bid: str) -> dict:
        b = self.bookings[bid]
        status = self._status(bid)
        view = {"booking_id": bid, **b, "status": status, "itinerary": self._legs(b["segments"])}
        if status in LIVE:
            view["problems"] = self.problems(b["passenger"], b["segments"], b["cabin"], ignore=bid,
                                             seats=status == "held", offloaded=b.get("offloaded"))
        if status != "held":
            view["ticket_by"] = None
        return view

    def _flight_row(self, fid: str, cabin: str | None = None) -> dict:
        f = self.flights[fid]
        row = {"flight_id": fid, **{k: f[k] for k in ("carrier", "origin", "destination", "departs", "arrives",
                                                      "status")}}
        cabins = [cabin] if cabin else list(CABINS)
        row["seats_left"] = {c: self.seats_left(fid, c) for c in cabins if c in f["seats"]}
        row["fares"] = {c: f["fares"][c] for c in cabins if c in f["fares"]}
        return row

    # ------------------------------------------------------------------- reads

    @tool
    def list_airports(self) -> dict:
        """List every airport the airline serves: city, country, hub or not, status."""
        rows = [{"airport_id": a, **{k: x[k] for k in ("name", "city", "country", "hub", "status")}}
                for a, x in sorted(self.airports.items())]
        return ok({"airports": rows})

    @tool
    def get_airport_info(self, airport_id: str) -> dict:
        """Read an airport: minimum connecting times, transit-visa rules, status and notices, ground transfers.

        Args:
            airport_id: The airport's code, e.g. LHR.
        """
        airport = self.airports.get(airport_id)
        if airport is None:
            return fail(f"no airport {airport_id!r}")
        links = [{"to": x["b"] if x["a"] == airport_id else x["a"], "minutes": x["minutes"], "open": x["open"]}
                 for _, x in sorted(self.ground_links.items()) if airport_id in (x["a"], x["b"])]
        return ok({"airport_id": airport_id, **airport, "ground_transfers": links})

    @tool
    def list_carriers(self) -> dict:
        """The carriers with their fare-hold time, change fee and partners (same-ticket connections at plain MCT)."""
        return ok({"carriers": [{"carrier": c, **x} for c, x in sorted(self.carriers.items())]})

    @tool(cost=2)
    def search_flights(self, origin: str, destination: str, date: str, cabin: Cabin = "economy") -> dict:
        """Flights from one airport to another departing on a date, with status, seats left and fares.

        Args:
            origin: Departure airport code.
            destination: Arrival airport code.
            date: The departure date, YYYY-MM-DD.
            cabin: economy or business.
        """
        for code in (origin, destination):
            if code not in self.airports:
                return fail(f"no airport {code!r}")
        if local_time(f"{date}T00:00") is None or len(date) != 10:
            return fail("give the date as YYYY-MM-DD")
        rows = [self._flight_row(fid, cabin) for fid, f in sorted(self.flights.items(), key=lambda x: (
            x[1]["departs"], x[0])) if f["origin"] == origin and f["destination"] == destination
            and f["departs"][:10] == date]
        return ok({"origin": origin, "destination": destination, "date": date, "flights": rows})

    @tool
    def get_flight_status(self, flight_id: str) -> dict:
        """Read a flight: times, status and notices, aircraft and the inbound flight that brings it, seats, fares.

        Args:
            flight_id: The flight, e.g. NX412.
        """
        flight = self.flights.get(flight_id)
        if flight is None:
            return fail(f"no flight {flight_id!r}")
        return ok({**self._flight_row(flight_id), "aircraft": flight["aircraft"], "inbound": flight["inbound"],
                   "notice": flight.get("notice", "")})

    @tool
    def get_passenger_profile(self, passenger_id: str) -> dict:
        """Read a passenger: nationality, visas held, loyalty tier, budget per booking and the passport they fly on.

        Args:
            passenger_id: The passenger's id.
        """
        passenger = self.passengers.get(passenger_id)
        if passenger is None:
            return fail(f"no passenger {passenger_id!r}")
        return ok({"passenger_id": passenger_id, **passenger})

    @tool
    def get_travel_document(self, document_id: str) -> dict:
        """Read a travel document: whose it is, its kind, number, nationality and expiry.

        Args:
            document_id: The document's id, e.g. TD-12345.
        """
        document = self.state.get("documents", {}).get(document_id)
        if document is None:
            return fail(f"no document {document_id!r}")
        return ok({"document_id": document_id, **document})

    @tool
    def get_booking(self, booking_id: str) -> dict:
        """Read a booking: status (a lapsed hold reads expired), segments, price, and what is wrong with it now.

        Args:
            booking_id: The booking's id.
        """
        if booking_id not in self.bookings:
            return fail(f"no booking {booking_id!r}")
        return ok(self._view(booking_id))

    @tool
    def list_passenger_bookings(self, passenger_id: str) -> dict:
        """Every booking of a passenger, with live status and current problems.

        Args:
            passenger_id: The passenger's id.
        """
        if passenger_id not in self.passengers:
            return fail(f"no passenger {passenger_id!r}")
        return ok({"passenger_id": passenger_id, "bookings": [
            self._view(b) for b in sorted(self.bookings) if self.bookings[b]["passenger"] == passenger_id]})

    @tool(cost=2)
    def check_itinerary(self, passenger_id: str, flight_ids: list[str], cabin: Cabin = "economy") -> dict:
        """Check a routing for a passenger: each connection's time against the minimum, ground transfers, transit
        visas, flight status and seats. valid is true when it can be sold as it stands.

        Args:
            passenger_id: Who flies.
            flight_ids: The flights in order.
            cabin: economy or business.
        """
        if passenger_id not in self.passengers:
            return fail(f"no passenger {passenger_id!r}")
        missing = [f for f in flight_ids if f not in self.flights]
        if not flight_ids or missing:
            return fail(f"no flight {missing[0]!r}" if missing else "give at least one flight")
        connections = [self._connection(self.flights[a], self.flights[b]) for a, b in zip(flight_ids,
                                                                                           flight_ids[1:])]
        problems = self.problems(passenger_id, flight_ids, cabin)
        return ok({"flight_ids": flight_ids, "valid": not problems, "problems": problems,
                   "connections": connections, "departs": self.flights[flight_ids[0]]["departs"],
                   "arrives": self.flights[flight_ids[-1]]["arrives"]})

    @tool(cost=2)
    def get_fare_quote(self, flight_ids: list[str], cabin: Cabin = "economy", passenger_id: str = "",
                       promo_code: str = "") -> dict:
        """Price an itinerary now, optionally with a promotion and against a passenger's budget.

        Args:
            flight_ids: The flights in order.
            cabin: economy or business.
            passenger_id: The passenger, for the budget check; optional.
            promo_code: A promotion to try; optional.
        """
        missing = [f for f in flight_ids if f not in self.flights]
        if not flight_ids or missing:
            return fail(f"no flight {missing[0]!r}" if missing else "give at least one flight")
        passenger = self.passengers.get(passenger_id) if passenger_id else None
        if passenger_id and passenger is None:
            return fail(f"no passenger {passenger_id!r}")
        out: dict[str, Any] = {"fares": {f: self.flights[f]["fares"].get(cabin) for f in flight_ids}}
        pct, carriers = 0, None
        if promo_code:
            problem = self._promo_problem(promo_code, flight_ids)
            out["promo_status"] = problem or "applies"
            if not problem:
                pct, carriers = self.promotions[promo_code]["discount_pct"], self.promotions[promo_code]["carriers"]
        out["total"] = self.price(flight_ids, cabin, pct, carriers)
        if passenger:
            out["within_budget"] = out["total"] <= passenger["budget"]
        return ok(out)

    @tool
    def list_promotions(self) -> dict:
        """Promotional fares with their carriers, discount, status and remaining quota."""
        rows = [{"promo_code": c, **p, "used": self._promo_used(c)} for c, p in sorted(self.promotions.items())]
        return ok({"promotions": [{**p, "remaining": max(0, p["quota"] - p["used"])} for p in rows]})

    # --------------------------------------------------------------- changes

    @tool(mutates=True, cost=3)
    def hold_itinerary(self, passenger_id: str, flight_ids: list[str], cabin: Cabin = "economy") -> dict:
        """Hold seats on an itinerary for a passenger; the hold lapses after the carriers' hold time unless ticketed.

        Args:
            passenger_id: Who flies.
            flight_ids: The flights in order; every connection must be legal.
            cabin: economy or business.
        """
        problems = self.problems(passenger_id, list(flight_ids), cabin)
        if problems:
            return fail("; ".join(problems))
        minutes = min(self.carriers[self.flights[f]["carrier"]]["hold_minutes"] for f in flight_ids)
        bid = self.next_id("booking", "BK")
        self.bookings[bid] = {
            "passenger": passenger_id, "segments": list(flight_ids), "cabin": cabin, "status": "held",
            "held_at": self.now, "ticket_by": format_time(self.clock.now + timedelta(minutes=minutes)),
            "price": self.price(flight_ids, cabin), "fees": 0, "promo": None, "promo_pct": 0, "offloaded": []}
        return ok({"booking_id": bid, "ticket_by": self.bookings[bid]["ticket_by"],
                   "estimated_price": self.bookings[bid]["price"]},
                  message=f"held {', '.join(flight_ids)}; ticket before {self.bookings[bid]['ticket_by']}")

    @tool(mutates=True, cost=3)
    def confirm_booking(self, booking_id: str, promo_code: str = "") -> dict:
        """Ticket a held booking at the current fares, within the passenger's budget.

        Args:
            booking_id: The held booking.
            promo_code: A promotion to apply; optional.
        """
        b = self.bookings.get(booking_id)
        if b is None:
            return fail(f"no booking {booking_id!r}")
        status = self._status(booking_id)
        if status != "held":
            return fail(f"booking {booking_id} is {status}; only a live hold can be ticketed")
        problems = self.problems(b["passenger"], b["segments"], b["cabin"], ignore=booking_id)
        if problems:
            return fail("; ".join(problems))
        pct, carriers = 0, None
        if promo_code:
            problem = self._promo_problem(promo_code, b["segments"])
            if problem:
                return fail(problem)
            pct, carriers = self.promotions[promo_code]["discount_pct"], self.promotions[promo_code]["carriers"]
        price = self.price(b["segments"], b["cabin"], pct, carriers)
        budget = self.passengers[b["passenger"]]["budget"]
        if price > budget:
            return fail(f"the fare {price} exceeds the passenger's budget {budget}")
        b.update(status="ticketed", price=price, promo=promo_code or None, promo_pct=pct, ticket_by=None)
        return ok({"booking_id": booking_id, "price": price, "itinerary": self._legs(b["segments"])},
                  message=f"{booking_id} ticketed")

    @tool(mutates=True, cost=4)
    def change_segment(self, booking_id: str, old_flight_id: str, new_flight_id: str) -> dict:
        """Replace one flight of a held or ticketed booking with another; a ticket pays the carrier's change fee
        (waived for gold members) and any fare difference, within the budget.

        Args:
            booking_id: The booking to change.
            old_flight_id: The flight to take out.
            new_flight_id: The flight to put in its place.
        """
        b = self.bookings.get(booking_id)
        if b is None:
            return fail(f"no booking {booking_id!r}")
        status = self._status(booking_id)
        if status not in LIVE:
            return fail(f"booking {booking_id} is {status} and cannot be changed")
        if old_flight_id not in b["segments"]:
            return fail(f"{old_flight_id} is not a flight of {booking_id}")
        segments = [new_flight_id if f == old_flight_id else f for f in b["segments"]]
        offloaded = [f for f in b.get("offloaded", []) if f != old_flight_id]
        problems = self.problems(b["passenger"], segments, b["cabin"], ignore=booking_id, offloaded=offloaded)
        if problems:
            return fail("; ".join(problems))
        passenger = self.passengers[b["passenger"]]
        fee = 0
        promo = self.promotions.get(b["promo"]) if b.get("promo") else None
        price = self.price(segments, b["cabin"], b.get("promo_pct", 0), promo["carriers"] if promo else None)
        if status == "ticketed":
            carrier = self.flights[old_flight_id]["carrier"]
            fee = 0 if passenger["tier"] == GOLD_WAIVES else self.carriers[carrier]["change_fee"]
            price = max(price, b["price"])  # a cheaper flight refunds nothing on a changed ticket
            if price + b["fees"] + fee > passenger["budget"]:
                return fail(f"the changed ticket would cost {price + b['fees'] + fee} with fees, over the budget "
                            f"{passenger['budget']}")
        b.update(segments=segments, price=price, fees=b["fees"] + fee, offloaded=offloaded)
        return ok({"booking_id": booking_id, "segments": segments, "price": price, "change_fee": fee},
                  message=f"{booking_id}: {old_flight_id} replaced by {new_flight_id}")

    @tool(mutates=True, cost=2)
    def record_travel_document(self, booking_id: str, document_number: str) -> dict:
        """Record on a held or ticketed booking the number of the passport its passenger flies on (advance passenger
        information): either of the passenger's passports is accepted here, and at departure the airline checks it
        against the passport the passenger's profile names then.

        Args:
            booking_id: The booking.
            document_number: The passport's number, as its document reads.
        """
        b = self.bookings.get(booking_id)
        if b is None:
            return fail(f"no booking {booking_id!r}")
        status = self._status(booking_id)
        if status not in LIVE:
            return fail(f"booking {booking_id} is {status}; record the passport on a live hold or ticket")
        if document_number not in self._passports(b["passenger"]):
            return fail(f"{document_number!r} is not the number of a passport of {b['passenger']}")
        b["document_number"] = document_number
        return ok({"booking_id": booking_id, "document_number": document_number},
                  message=f"passport {document_number} recorded on {booking_id}")

    @tool(mutates=True, cost=2)
    def cancel_booking(self, booking_id: str) -> dict:
        """Cancel a held (or lapsed) or ticketed booking, releasing its seats; a ticket is refunded as a voucher.

        Args:
            booking_id: The booking to cancel.
        """
        b = self.bookings.get(booking_id)
        if b is None:
            return fail(f"no booking {booking_id!r}")
        if b["status"] not in LIVE:
            return fail(f"booking {booking_id} is {b['status']} and cannot be cancelled")
        voucher = b["price"] if b["status"] == "ticketed" else 0
        b.update(status="cancelled", voucher=voucher)
        return ok({"booking_id": booking_id, "voucher": voucher}, message=f"{booking_id} cancelled")

    # ------------------------------------------------- predicates and operations
    # A request, as checks name it: {"passenger", "origin", "destination", "arrive_by", "cabin"}, and "carrier"
    # when only that airline's flights will do.

    def _serves(self, bid: str, request: dict) -> bool:
        """Booking ``bid`` flies the request as asked and can be flown as it stands."""
        b = self.bookings[bid]
        status = self._status(bid)
        if b["passenger"] != request["passenger"] or status not in LIVE or b["cabin"] != request["cabin"]:
            return False
        first, last = self.flights[b["segments"][0]], self.flights[b["segments"][-1]]
        if first["origin"] != request["origin"] or last["destination"] != request["destination"]:
            return False
        if request.get("carrier") and any(self.flights[f]["carrier"] != request["carrier"] for f in b["segments"]):
            return False
        if local_time(last["arrives"]) > local_time(request["arrive_by"]):
            return False
        budget = self.passengers[b["passenger"]]["budget"]
        if status == "ticketed" and b["price"] + b["fees"] > budget:
            return False
        if status == "held" and self.best_price(b["segments"], b["cabin"]) > budget:
            return False  # a hold counts only if it can still be ticketed within the budget
        return not self.problems(b["passenger"], b["segments"], b["cabin"], ignore=bid, seats=status == "held",
                                 offloaded=b.get("offloaded"))

    def _passports(self, passenger: str) -> dict[str, str]:
        """The passenger's passports: number -> document id."""
        documents = self.state.get("documents", {})
        return {d["number"]: i for i, d in sorted(documents.items()) if d["passenger"] == passenger}

    def _mine(self, passenger: str, statuses=LIVE) -> list[str]:
        return [bid for bid in sorted(self.bookings) if self.bookings[bid]["passenger"] == passenger
                and self._status(bid) in statuses]

    @predicate
    def trip_ticketed(self, request: dict) -> bool:
        """The passenger holds a ticket that flies the request and can be flown as it stands."""
        return any(self._serves(b, request) for b in self._mine(request["passenger"], ("ticketed",)))

    @predicate
    def trip_secured(self, request: dict) -> bool:
        """A live hold or ticket of the passenger flies the request and can be flown as it stands."""
        return any(self._serves(b, request) for b in self._mine(request["passenger"]))

    @predicate
    def secured_since(self, request: dict, trigger: str, log) -> bool:
        """A ticket of the passenger flies the request as it stands, or a hold does that the agent made or changed
        after ``trigger`` happened (a hold the change left as it was is still the stale plan, not a recovery)."""
        fired = [e["call_index"] for e in log.events if e["trigger"] == trigger]
        if not fired:
            return False
        touched = {c["result"]["data"]["booking_id"] if c["name"] == "hold_itinerary" else c["arguments"]["booking_id"]
                   for c in log.calls[fired[0]:] if c["name"] in ("hold_itinerary", "change_segment")
                   and c["result"].get("success")}
        return any(self._serves(b, request) and (b in touched or self._status(b) == "ticketed")
                   for b in self._mine(request["passenger"]))

    @predicate
    def documented(self, request: dict) -> bool:
        """A ticket that flies the request carries the number of the passport the passenger's profile names."""
        named = self.state.get("documents", {}).get(self.passengers[request["passenger"]].get("travel_document"))
        return named is not None and any(self._serves(b, request) and self.bookings[b].get("document_number") ==
                                         named["number"] for b in self._mine(request["passenger"], ("ticketed",)))

    @predicate
    def ticket_documented(self, request: dict) -> bool:
        """A ticket that flies the request as it stands carries a passport number, whichever."""
        return any(self._serves(b, request) and self.bookings[b].get("document_number")
                   for b in self._mine(request["passenger"], ("ticketed",)))

    @predicate
    def bookings_sound(self, request: dict) -> bool:
        """Every live hold or ticket of the passenger flies the request and can be flown (none left stale)."""
        return all(self._serves(b, request) for b in self._mine(request["passenger"]))

    @predicate
    def one_ticket(self, request: dict) -> bool:
        """The passenger holds at most one live ticket, each within the budget with its fees."""
        tickets = self._mine(request["passenger"], ("ticketed",))
        budget = self.passengers[request["passenger"]]["budget"]
        return len(tickets) <= 1 and all(self.bookings[b]["price"] + self.bookings[b]["fees"] <= budget
                                         for b in tickets)

    @predicate
    def no_new_ticket(self, passenger: str, existing: list) -> bool:
        """The passenger got no ticket besides ``existing``."""
        return not [b for b in self._mine(passenger, ("ticketed",)) if b not in existing]

    @predicate
    def nothing_held(self, passenger: str) -> bool:
        """The passenger keeps no live hold: seats that cannot be used are released for other travellers."""
        return not self._mine(passenger, ("held",))

    @predicate
    def happened(self, trigger: str, log) -> bool:
        """The change ``trigger`` has happened, whether or not the agent has seen it: a milestone that waits for it
        counts only in the world the change left, never for a booking the change is about to break."""
        return any(e["trigger"] == trigger for e in log.events)

    @predicate
    def has_booking(self, passenger: str, status: str = "held") -> bool:
        """The passenger has a booking with live status ``status``."""
        return bool(self._mine(passenger, (status,)))

    @operation
    def release_holds(self, carrier: str, hold_minutes: int, notice: str) -> None:
        """Revenue management closes the fare: the carrier's holds lapse now and new ones last ``hold_minutes``."""
        self.carriers[carrier].update(hold_minutes=hold_minutes, notice=notice)
        for bid, b in self.bookings.items():
            if self._status(bid) == "held" and any(self.flights[f]["carrier"] == carrier for f in b["segments"]):
                b["ticket_by"] = self.now

    @operation
    def reallocate_seats(self, from_flight: str, to_flight: str, cabin: str, seats: int, notice: str) -> None:
        """Seats move to a higher-demand flight; bookings beyond the smaller cabin are offloaded, newest first."""
        source, target = self.flights[from_flight], self.flights[to_flight]
        moved = min(seats, source["seats"].get(cabin, 0) + self._taken(from_flight, cabin))
        total = source["seats"].get(cabin, 0) + self._taken(from_flight, cabin) - moved
        target["seats"][cabin] = target["seats"].get(cabin, 0) + moved
        source["notice"] = notice
        holders = [bid for bid in sorted(self.bookings, reverse=True) if from_flight in self.bookings[bid]["segments"]
                   and self.bookings[bid]["cabin"] == cabin and self._status(bid) in LIVE
                   and from_flight not in self.bookings[bid].get("offloaded", [])]
        for bid in holders[:max(0, len(holders) - total)]:
            self.bookings[bid]["offloaded"] = [*self.bookings[bid].get("offloaded", []), from_flight]
        source["seats"][cabin] = max(0, total - self._taken(from_flight, cabin))

    @operation
    def close_airport(self, airport_id: str, start: str, end: str, notice: str) -> None:
        """Weather closes an airport: flights leaving or landing there between ``start`` and ``end`` are cancelled."""
        self.airports[airport_id].update(status="closed", notice=notice)
        lo, hi = local_time(start), local_time(end)
        for f in self.flights.values():
            if f["status"] == "cancelled":
                continue
            if (f["origin"] == airport_id and lo <= local_time(f["departs"]) < hi) or \
                    (f["destination"] == airport_id and lo <= local_time(f["arrives"]) < hi):
                f.update(status="cancelled", notice=notice)
