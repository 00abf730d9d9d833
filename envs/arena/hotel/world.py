"""Hotel: a hotel group's reservations desk in one city, for a guest or a small event party.

State containers (JSON-like dicts keyed by id):

- ``hotels``: ``{name, district, status: open|closed|outage, notice, check_in_from, late_cutoff (HH:MM),
  night_desk, key_lockers, hold_minutes, closed_floors: [int], closed_wings: [str], rush_cleans}``. A guest
  arriving after ``late_cutoff`` gets a key only from a night desk or a reserved key locker; ``rush_cleans``
  is how many rooms housekeeping can still turn round early on any day. Some stories add ``amenities``
  (``[parking|gym|pool|pets|spa]``), which ``get_hotel`` shows.
- ``places``: ``{name, kind: venue|station, district}``: where guests go besides hotels.
- ``links``: ``{a, b, minutes, mode: walk|tram|metro|road, name, open}`` between hotels and places;
  travel takes the fastest open way.
- ``room_types``: ``{hotel, kind: standard|deluxe|family|suite|accessible, name, floor, wing, rate,
  accessible, ready_from (HH:MM), inventory: {night: rooms}}``. A night is the ISO date it starts.
- ``promotions``: ``{hotel, kind, discount_pct, nightly_quota, used: {night: n}, note}``.
- ``guests``: ``{name, tier, needs_accessible, payment_limit, arrival (ISO or None), arrival_note}``.
- ``reservations``: ``{guest, hotel, room_type, kind, check_in, nights, status:
  held|confirmed|cancelled, held_at, expires_at, price, promo, arrival, ready_at, key_locker, note}``.
  A hold past ``expires_at`` reads as ``expired`` and blocks nothing.
- ``shuttles``: ``{hotel, destination, departs, seats, riders: [guest], status: scheduled|cancelled}``;
  it arrives after the fastest open way from the hotel.
- ``meeting_rooms``: ``{hotel, name, wing, capacity, slots: {start: guest or None}}``; slots last two hours.
- ``counters``: the last reservation number.

Times are ISO strings at minute precision; hotel hours are ``HH:MM`` on any day.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from sttgym.clock import format_time, local_time
from sttgym.geo import shortest_route
from sttgym.tools import fail, ok, tool
from sttgym.world import World, operation, predicate

__all__ = ["HotelWorld", "KINDS", "TIER_DISCOUNT", "RUSH_LEAD", "nights_of", "live_status", "travel",
           "stay_price"]

KINDS = ("standard", "deluxe", "family", "suite", "accessible")
TIER_DISCOUNT = {"member": 0, "silver": 5, "gold": 10, "platinum": 15}  # percent off every stay
RUSH_LEAD = timedelta(minutes=60)  # housekeeping needs an hour's notice to turn a room round early
LIVE = ("held", "confirmed")



def _day(text: Any) -> date | None:
    if not isinstance(text, str) or len(text) != 10:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def nights_of(check_in: str, nights: int) -> list[str]:
    """The ISO dates of the nights of a stay."""
    first = date.fromisoformat(check_in)
    return [(first + timedelta(days=i)).isoformat() for i in range(nights)]


def live_status(res: dict, now: datetime) -> str:
    """A reservation's status as of ``now``: a hold past its expiry reads ``expired``."""
    if res.get("status") == "held":
        expires = local_time(res.get("expires_at"))
        if expires is not None and now > expires:
            return "expired"
    return res.get("status", "")


def travel(state: dict, a: str, b: str) -> int | None:
    """Minutes by the fastest open way from ``a`` to ``b``, or None when cut off."""
    route = shortest_route(state["links"], a, b)
    return None if route is None else route[0]


def stay_price(state: dict, room_type_id: str, nights: int, tier: str, promo_pct: int = 0) -> int:
    rate = state["room_types"][room_type_id]["rate"]
    return round(nights * rate * (100 - TIER_DISCOUNT.get(tier, 0)) / 100 * (100 - promo_pct) / 100)


class HotelWorld(World):
    """Tools of a hotel group's reservations and front-desk system; see the module docstring for the state."""

    domain = "Hotel"
    description = ("A hotel group's reservations desk in one city: hotels in districts joined by walking and "
                   "transit links, room types with nightly inventory, expiring rate holds, promotions with nightly "
                   "quotas, guests, arrivals and key handover, housekeeping, shuttles and meeting rooms.")
    inert = {"reservations": {"status": ["cancelled"]}}  # a cancelled stay commits nothing
    tallies = {"promotions": {"used"}}  # a valid promotion the agent pays with is no collateral

    # ----------------------------------------------------------------- helpers

    def _used(self, room_type_id: str, night: str, ignore: str = "") -> int:
        return sum(1 for rid, r in self.reservations.items() if rid != ignore and r["room_type"] == room_type_id
                   and live_status(r, self.clock.now) in LIVE and night in nights_of(r["check_in"], r["nights"]))

    def _free(self, room_type_id: str, night: str, ignore: str = "") -> int:
        inventory = self.room_types[room_type_id]["inventory"].get(night, 0)
        return max(0, inventory - self._used(room_type_id, night, ignore))

    def _stay(self, check_in: str, nights: int) -> list[str] | str:
        first = _day(check_in)
        if first is None:
            return "check_in must be an ISO date like 2024-08-15"
        if not 1 <= nights <= 14:
            return "nights must be between 1 and 14"
        if first < self.clock.now.date():
            return f"check-in {check_in} is in the past (today is {self.now[:10]})"
        return nights_of(check_in, nights)

    def _room_problem(self, room_type_id: str, guest: dict, nights: list[str], ignore: str = "") -> str | None:
        rt = self.room_types[room_type_id]
        hotel = self.hotels[rt["hotel"]]
        if hotel["status"] != "open":
            return f"hotel {rt['hotel']} is {hotel['status']}: {hotel.get('notice') or 'not taking guests'}"
        if rt["floor"] in hotel["closed_floors"]:
            return f"room type {room_type_id} is on floor {rt['floor']}, which is closed: {hotel.get('notice', '')}"
        if rt["wing"] in hotel["closed_wings"]:
            return f"room type {room_type_id} is in the {rt['wing']} wing, which is closed"
        if rt["accessible"] and not guest["needs_accessible"]:
            return "accessible rooms are kept for guests who need them"
        full = [n for n in nights if self._free(room_type_id, n, ignore) < 1]
        if full:
            return f"room type {room_type_id} has no room left on the night(s) of {', '.join(full)}"
        return None

    def _promo_problem(self, code: str, rt: dict, nights: list[str]) -> str | None:
        promo = self.promotions.get(code)
        if promo is None:
            return f"no promotion {code!r}"
        if promo["hotel"] != rt["hotel"] or promo["kind"] != rt["kind"]:
            return f"promotion {code} is for {promo['kind']} rooms at {promo['hotel']} only"
        out = [n for n in nights if promo["used"].get(n, 0) >= promo["nightly_quota"]]
        if out:
            return f"promotion {code} is sold out on the night(s) of {', '.join(out)}"
        return None

    def _res_view(self, rid: str) -> dict:
        r = self.reservations[rid]
        return {"reservation_id": rid, **r, "status": live_status(r, self.clock.now),
                "hotel_name": self.hotels.get(r["hotel"], {}).get("name")}

    def _confirmed_stay(self, ident: str) -> dict | str:
        """The confirmed reservation ``ident``, or why it is not one."""
        res = self.reservations.get(ident)
        if res is None:
            return f"no reservation {ident!r}"
        status = live_status(res, self.clock.now)
        return res if status == "confirmed" else f"reservation {ident} is {status}, not confirmed"

    def _record(self, container: str, ident: str, label: str, what: str) -> dict:
        record = self.state[container].get(ident)
        if record is None:
            return fail(f"no {what} {ident!r}")
        return ok({label: ident, **record})

    def _arrives(self, shuttle: dict) -> str | None:
        minutes = travel(self.state, shuttle["hotel"], shuttle["destination"])
        departs = local_time(shuttle["departs"])
        return None if minutes is None or departs is None else format_time(departs + timedelta(minutes=minutes))

    def _ready_at(self, res: dict) -> datetime | None:
        if res.get("ready_at"):
            return local_time(res["ready_at"])
        rt = self.room_types.get(res["room_type"], {})
        return local_time(f"{res['check_in']}T{rt.get('ready_from', '15:00')}")

    # ------------------------------------------------------------------- reads

    @tool
    def list_hotels(self, district: str = "") -> dict:
        """List the group's hotels with their district and status, optionally only those of one district.

        Args:
            district: A district name to filter by; empty for every hotel.
        """
        rows = [{"hotel_id": h, "name": x["name"], "district": x["district"], "status": x["status"]}
                for h, x in sorted(self.hotels.items()) if not district or x["district"] == district]
        if district and not rows:
            return fail(f"no hotel in district {district!r}; districts: "
                        f"{', '.join(sorted({x['district'] for x in self.hotels.values()}))}")
        return ok({"hotels": rows})

    @tool
    def list_places(self) -> dict:
        """List the venues and stations guests travel to, with their district."""
        return ok({"places": [{"place_id": p, **x} for p, x in sorted(self.places.items())]})

    @tool
    def get_hotel(self, hotel_id: str) -> dict:
        """Read a hotel: status and notices, check-in times, late check-in cut-off, night desk and key lockers,
        hold policy, closed floors and wings, housekeeping rush capacity, and its room types.

        Args:
            hotel_id: The hotel's id.
        """
        hotel = self.hotels.get(hotel_id)
        if hotel is None:
            return fail(f"no hotel {hotel_id!r}")
        types = [{"room_type_id": t, "kind": x["kind"], "name": x["name"], "floor": x["floor"], "wing": x["wing"]}
                 for t, x in sorted(self.room_types.items()) if x["hotel"] == hotel_id]
        return ok({"hotel_id": hotel_id, **hotel, "room_types": types})

    @tool
    def get_room_type(self, room_type_id: str) -> dict:
        """Read a room type: kind, floor and wing, nightly rate, accessibility, when its rooms are ready on the
        arrival day, and the rooms still free per night.

        Args:
            room_type_id: The room type's id.
        """
        rt = self.room_types.get(room_type_id)
        if rt is None:
            return fail(f"no room type {room_type_id!r}")
        free = {n: self._free(room_type_id, n) for n in sorted(rt["inventory"])}
        return ok({"room_type_id": room_type_id, **{k: v for k, v in rt.items() if k != "inventory"}, "free": free})

    @tool(cost=2)
    def search_availability(self, hotel_id: str, check_in: str, nights: int, kind: str = "") -> dict:
        """Room types at a hotel with a room free on every night of a stay, with the nightly rate.

        Args:
            hotel_id: The hotel.
            check_in: The arrival date, ISO (2024-08-15).
            nights: How many nights.
            kind: Only this kind (standard, deluxe, family, suite, accessible); empty for all.
        """
        hotel = self.hotels.get(hotel_id)
        if hotel is None:
            return fail(f"no hotel {hotel_id!r}")
        stay = self._stay(check_in, nights)
        if isinstance(stay, str):
            return fail(stay)
        if hotel["status"] != "open":
            return ok({"hotel_id": hotel_id, "room_types": [], "notice": f"hotel is {hotel['status']}: "
                       f"{hotel.get('notice', '')}"})
        rows = []
        for t, rt in sorted(self.room_types.items()):
            if rt["hotel"] != hotel_id or (kind and rt["kind"] != kind):
                continue
            if rt["floor"] in hotel["closed_floors"] or rt["wing"] in hotel["closed_wings"]:
                continue
            free = min(self._free(t, n) for n in stay)
            if free > 0:
                rows.append({"room_type_id": t, "kind": rt["kind"], "name": rt["name"], "rate": rt["rate"],
                             "rooms_free": free, "accessible": rt["accessible"], "ready_from": rt["ready_from"]})
        return ok({"hotel_id": hotel_id, "room_types": rows, "notice": hotel.get("notice", "")})

    @tool
    def get_travel_time(self, origin_id: str, destination_id: str) -> dict:
        """The fastest open way between two hotels or places and its minutes (reachable: false when cut off).

        Args:
            origin_id: A hotel or place id.
            destination_id: A hotel or place id.
        """
        for site in (origin_id, destination_id):
            if site not in self.hotels and site not in self.places:
                return fail(f"no hotel or place {site!r}")
        route = shortest_route(self.links, origin_id, destination_id)
        closed = sorted(k for k, x in self.links.items() if not x.get("open", True))
        if route is None:
            return ok({"reachable": False, "minutes": None, "path": [], "closed_links": closed})
        return ok({"reachable": True, "minutes": route[0], "path": route[1], "closed_links": closed})

    @tool
    def get_guest(self, guest_id: str) -> dict:
        """Read a guest's profile: loyalty tier, accessibility needs, card limit per booking and expected arrival.

        Args:
            guest_id: The guest's id.
        """
        return self._record("guests", guest_id, "guest_id", "guest")

    @tool
    def list_guest_reservations(self, guest_id: str) -> dict:
        """Every reservation of a guest with its live status (an expired hold shows as expired).

        Args:
            guest_id: The guest's id.
        """
        if guest_id not in self.guests:
            return fail(f"no guest {guest_id!r}")
        return ok({"reservations": [self._res_view(r) for r in sorted(self.reservations)
                                    if self.reservations[r]["guest"] == guest_id]})

    @tool
    def get_reservation(self, reservation_id: str) -> dict:
        """Read one reservation with its live status.

        Args:
            reservation_id: The reservation's id.
        """
        if reservation_id not in self.reservations:
            return fail(f"no reservation {reservation_id!r}")
        return ok(self._res_view(reservation_id))

    @tool
    def list_promotions(self, hotel_id: str) -> dict:
        """A hotel's promotional rates with what is left of each night's quota.

        Args:
            hotel_id: The hotel.
        """
        if hotel_id not in self.hotels:
            return fail(f"no hotel {hotel_id!r}")
        rows = [{"promo_code": c, **{k: p[k] for k in ("hotel", "kind", "discount_pct", "nightly_quota", "note")},
                 "left": {n: p["nightly_quota"] - u for n, u in sorted(p["used"].items())}}
                for c, p in sorted(self.promotions.items()) if p["hotel"] == hotel_id]
        return ok({"promotions": rows})

    @tool
    def get_quote(self, guest_id: str, room_type_id: str, check_in: str, nights: int, promo_code: str = "") -> dict:
        """The price of a stay for a guest (loyalty discount included, and a promotion if given and valid).

        Args:
            guest_id: The guest.
            room_type_id: The room type.
            check_in: The arrival date, ISO.
            nights: How many nights.
            promo_code: A promotion to apply; empty for none.
        """
        guest, rt = self.guests.get(guest_id), self.room_types.get(room_type_id)
        if guest is None or rt is None:
            return fail(f"no guest {guest_id!r}" if guest is None else f"no room type {room_type_id!r}")
        stay = self._stay(check_in, nights)
        if isinstance(stay, str):
            return fail(stay)
        pct = 0
        if promo_code:
            problem = self._promo_problem(promo_code, rt, stay)
            if problem:
                return fail(problem)
            pct = self.promotions[promo_code]["discount_pct"]
        total = stay_price(self.state, room_type_id, nights, guest["tier"], pct)
        return ok({"total": total, "nightly_rate": rt["rate"], "loyalty_discount_pct": TIER_DISCOUNT.get(
            guest["tier"], 0), "promo_discount_pct": pct, "card_limit": guest["payment_limit"]})

    @tool
    def list_shuttles(self, hotel_id: str) -> dict:
        """A hotel's shuttle departures with seats left and when each arrives by today's fastest open way.

        Args:
            hotel_id: The hotel.
        """
        if hotel_id not in self.hotels:
            return fail(f"no hotel {hotel_id!r}")
        rows = [{"shuttle_id": s, "destination": x["destination"], "departs": x["departs"],
                 "arrives": self._arrives(x), "seats_left": x["seats"] - len(x["riders"]), "status": x["status"]}
                for s, x in sorted(self.shuttles.items()) if x["hotel"] == hotel_id]
        return ok({"shuttles": rows})

    @tool
    def list_meeting_rooms(self, hotel_id: str) -> dict:
        """A hotel's meeting rooms with wing, capacity and their two-hour slots (free or taken).

        Args:
            hotel_id: The hotel.
        """
        hotel = self.hotels.get(hotel_id)
        if hotel is None:
            return fail(f"no hotel {hotel_id!r}")
        rows = [{"meeting_room_id": m, "name": x["name"], "wing": x["wing"], "capacity": x["capacity"],
                 "wing_closed": x["wing"] in hotel["closed_wings"],
                 "slots": {t: ("free" if g is None else "taken") for t, g in sorted(x["slots"].items())}}
                for m, x in sorted(self.meeting_rooms.items()) if x["hotel"] == hotel_id]
        return ok({"meeting_rooms": rows})

    # ------------------------------------------------------------------ writes

    @tool(mutates=True, cost=3)
    def hold_room(self, guest_id: str, room_type_id: str, check_in: str, nights: int) -> dict:
        """Hold a room of a type for a guest's stay at the current rate; the hold lapses after the hotel's hold
        time unless confirmed.

        Args:
            guest_id: The guest.
            room_type_id: The room type.
            check_in: The arrival date, ISO.
            nights: How many nights, in a row at this hotel.
        """
        guest, rt = self.guests.get(guest_id), self.room_types.get(room_type_id)
        if guest is None or rt is None:
            return fail(f"no guest {guest_id!r}" if guest is None else f"no room type {room_type_id!r}")
        stay = self._stay(check_in, nights)
        if isinstance(stay, str):
            return fail(stay)
        problem = self._room_problem(room_type_id, guest, stay)
        if problem:
            return fail(problem)
        self.counters["reservation"] += 1
        rid = f"RSV-{self.counters['reservation']}"
        expires = self.clock.now + timedelta(minutes=self.hotels[rt["hotel"]]["hold_minutes"])
        self.reservations[rid] = {
            "guest": guest_id, "hotel": rt["hotel"], "room_type": room_type_id, "kind": rt["kind"],
            "check_in": check_in, "nights": nights, "status": "held", "held_at": self.now,
            "expires_at": format_time(expires), "price": stay_price(self.state, room_type_id, nights, guest["tier"]),
            "promo": None, "arrival": None, "ready_at": None, "key_locker": False, "note": ""}
        return ok({"reservation_id": rid, "expires_at": format_time(expires)},
                  message=f"{rid} held until {format_time(expires)}")

    @tool(mutates=True, cost=3)
    def confirm_reservation(self, reservation_id: str, promo_code: str = "") -> dict:
        """Confirm a live hold, charging the guest's card (within its limit), with a promotion if given.

        Args:
            reservation_id: The held reservation.
            promo_code: A promotion to apply; empty for none.
        """
        res = self.reservations.get(reservation_id)
        if res is None:
            return fail(f"no reservation {reservation_id!r}")
        status = live_status(res, self.clock.now)
        if status != "held":
            return fail(f"reservation {reservation_id} is {status}; only a live hold can be confirmed")
        guest, stay = self.guests[res["guest"]], nights_of(res["check_in"], res["nights"])
        problem = self._room_problem(res["room_type"], guest, stay, ignore=reservation_id)
        if problem:
            return fail(problem)
        pct = 0
        if promo_code:
            problem = self._promo_problem(promo_code, self.room_types[res["room_type"]], stay)
            if problem:
                return fail(problem)
            pct = self.promotions[promo_code]["discount_pct"]
        price = stay_price(self.state, res["room_type"], res["nights"], guest["tier"], pct)
        if price > guest["payment_limit"]:
            return fail(f"the price {price} exceeds the guest's card limit {guest['payment_limit']}")
        if promo_code:
            used = self.promotions[promo_code]["used"]
            for n in stay:
                used[n] = used.get(n, 0) + 1
        res.update(status="confirmed", price=price, promo=promo_code or None)
        return ok({"reservation_id": reservation_id, "price": price}, message=f"{reservation_id} confirmed")

    @tool(mutates=True, cost=2)
    def cancel_reservation(self, reservation_id: str) -> dict:
        """Cancel a hold or a confirmed reservation (its shuttle seats and meeting slots stay booked).

        Args:
            reservation_id: The reservation.
        """
        res = self.reservations.get(reservation_id)
        if res is None:
            return fail(f"no reservation {reservation_id!r}")
        status = live_status(res, self.clock.now)
        if status not in LIVE:
            return fail(f"reservation {reservation_id} is {status} and cannot be cancelled")
        if res["status"] == "confirmed" and res.get("promo") in self.promotions:
            used = self.promotions[res["promo"]]["used"]
            for n in nights_of(res["check_in"], res["nights"]):
                used[n] = max(0, used.get(n, 0) - 1)
        res["status"] = "cancelled"
        return ok(message=f"{reservation_id} cancelled")

    @tool(mutates=True, cost=2)
    def set_arrival(self, reservation_id: str, arrival: str) -> dict:
        """Record when the guest arrives on the check-in day; after the late check-in cut-off only a hotel with a
        night desk takes it (or arrange a key locker first).

        Args:
            reservation_id: A confirmed reservation.
            arrival: Arrival time, ISO timestamp on the check-in day.
        """
        res = self._confirmed_stay(reservation_id)
        if isinstance(res, str):
            return fail(res)
        moment = local_time(arrival)
        if moment is None or format_time(moment)[:10] != res["check_in"]:
            return fail(f"the arrival must be an ISO timestamp on the check-in day {res['check_in']}")
        hotel = self.hotels[res["hotel"]]
        if format_time(moment)[11:] > hotel["late_cutoff"] and not hotel["night_desk"] and not res["key_locker"]:
            return fail(f"{res['hotel']} hands out keys until {hotel['late_cutoff']} and has no night desk; "
                        "arrange a key locker first")
        res["arrival"] = format_time(moment)
        return ok(message=f"arrival at {format_time(moment)} recorded on {reservation_id}")

    @tool(mutates=True, cost=3)
    def rush_housekeeping(self, reservation_id: str, ready_by: str) -> dict:
        """Have housekeeping turn a confirmed reservation's room round early, ready by a time on the check-in day
        (uses one of the hotel's rush cleans; an hour's notice at least).

        Args:
            reservation_id: A confirmed reservation.
            ready_by: When the room must be ready, ISO timestamp on the check-in day.
        """
        res = self._confirmed_stay(reservation_id)
        if isinstance(res, str):
            return fail(res)
        moment = local_time(ready_by)
        if moment is None or format_time(moment)[:10] != res["check_in"]:
            return fail(f"ready_by must be an ISO timestamp on the check-in day {res['check_in']}")
        if moment < self.clock.now + RUSH_LEAD:
            return fail("housekeeping needs at least an hour's notice")
        hotel = self.hotels[res["hotel"]]
        if hotel["rush_cleans"] < 1:
            return fail(f"housekeeping at {res['hotel']} has no rush clean left")
        hotel["rush_cleans"] -= 1
        res["ready_at"] = format_time(moment)
        return ok(message=f"room of {reservation_id} ready by {format_time(moment)}")

    @tool(mutates=True, cost=2)
    def reserve_key_locker(self, reservation_id: str) -> dict:
        """Reserve an after-hours key locker at the hotel of a confirmed reservation, for an arrival after the
        late check-in cut-off.

        Args:
            reservation_id: A confirmed reservation.
        """
        res = self._confirmed_stay(reservation_id)
        if isinstance(res, str):
            return fail(res)
        hotel = self.hotels[res["hotel"]]
        if res["key_locker"]:
            return fail(f"{reservation_id} already has a key locker")
        if hotel["key_lockers"] < 1:
            return fail(f"{res['hotel']} has no key locker free")
        hotel["key_lockers"] -= 1
        res["key_locker"] = True
        return ok(message=f"key locker reserved for {reservation_id}")

    @tool(mutates=True, cost=2)
    def book_shuttle(self, shuttle_id: str, guest_id: str) -> dict:
        """Seat a guest on a hotel shuttle; the guest needs a confirmed stay at that hotel.

        Args:
            shuttle_id: The departure.
            guest_id: The guest.
        """
        shuttle = self.shuttles.get(shuttle_id)
        if shuttle is None:
            return fail(f"no shuttle {shuttle_id!r}")
        if guest_id not in self.guests:
            return fail(f"no guest {guest_id!r}")
        if shuttle["status"] != "scheduled":
            return fail(f"shuttle {shuttle_id} is {shuttle['status']}")
        if guest_id in shuttle["riders"]:
            return fail(f"{guest_id} is already on {shuttle_id}")
        if len(shuttle["riders"]) >= shuttle["seats"]:
            return fail(f"shuttle {shuttle_id} is full")
        if local_time(shuttle["departs"]) < self.clock.now:
            return fail(f"shuttle {shuttle_id} has left")
        if not any(r["guest"] == guest_id and r["hotel"] == shuttle["hotel"] and live_status(r, self.clock.now) ==
                   "confirmed" for r in self.reservations.values()):
            return fail(f"{guest_id} has no confirmed stay at {shuttle['hotel']}")
        shuttle["riders"].append(guest_id)
        return ok(message=f"{guest_id} booked on {shuttle_id}, departing {shuttle['departs']}")

    @tool(mutates=True, cost=1)
    def cancel_shuttle_seat(self, shuttle_id: str, guest_id: str) -> dict:
        """Take a guest off a shuttle.

        Args:
            shuttle_id: The departure.
            guest_id: The guest.
        """
        shuttle = self.shuttles.get(shuttle_id)
        if shuttle is None:
            return fail(f"no shuttle {shuttle_id!r}")
        if guest_id not in shuttle["riders"]:
            return fail(f"{guest_id} is not on {shuttle_id}")
        shuttle["riders"].remove(guest_id)
        return ok(message=f"{guest_id} taken off {shuttle_id}")

    @tool(mutates=True, cost=3)
    def book_meeting_room(self, meeting_room_id: str, start: str, guest_id: str) -> dict:
        """Book a meeting room's two-hour slot for a guest's party (the hotel open, the wing not closed).

        Args:
            meeting_room_id: The meeting room.
            start: The slot's start, ISO timestamp, as listed.
            guest_id: The guest booking it.
        """
        room = self.meeting_rooms.get(meeting_room_id)
        if room is None:
            return fail(f"no meeting room {meeting_room_id!r}")
        if guest_id not in self.guests:
            return fail(f"no guest {guest_id!r}")
        hotel = self.hotels[room["hotel"]]
        if hotel["status"] != "open":
            return fail(f"hotel {room['hotel']} is {hotel['status']}")
        if room["wing"] in hotel["closed_wings"]:
            return fail(f"the {room['wing']} wing of {room['hotel']} is closed: {hotel.get('notice', '')}")
        if start not in room["slots"]:
            return fail(f"{meeting_room_id} has no slot starting {start}")
        if room["slots"][start] is not None:
            return fail(f"the {start} slot of {meeting_room_id} is taken")
        room["slots"][start] = guest_id
        return ok(message=f"{meeting_room_id} booked at {start} for {guest_id}")

    @tool(mutates=True, cost=1)
    def release_meeting_room(self, meeting_room_id: str, start: str, guest_id: str) -> dict:
        """Give back a meeting-room slot a guest booked.

        Args:
            meeting_room_id: The meeting room.
            start: The slot's start.
            guest_id: The guest who booked it.
        """
        room = self.meeting_rooms.get(meeting_room_id)
        if room is None:
            return fail(f"no meeting room {meeting_room_id!r}")
        if room["slots"].get(start, "") != guest_id:
            return fail(f"{guest_id} has no booking of {meeting_room_id} at {start}")
        room["slots"][start] = None
        return ok(message=f"{meeting_room_id} at {start} released")

    # ------------------------------------------------- predicates and operations
    # A request, as checks name it: {"guest", "kind", "check_in", "nights", "count", "venue", "max_minutes",
    # "hotel" (only this hotel, or ""), "arrival" (the guest's arrival must be recorded, the room ready and the
    # key handed over), "shuttle_by" (on a shuttle reaching the venue by then, or ""), "meeting" (a slot start,
    # or ""), "capacity"}.

    def _serves(self, res: dict, req: dict) -> bool:
        if (res["guest"], res["kind"], res["check_in"], res["nights"]) != \
                (req["guest"], req["kind"], req["check_in"], req["nights"]):
            return False
        hotel, rt = self.hotels[res["hotel"]], self.room_types[res["room_type"]]
        if hotel["status"] != "open" or rt["floor"] in hotel["closed_floors"] or rt["wing"] in hotel["closed_wings"]:
            return False
        if req.get("hotel") and res["hotel"] != req["hotel"]:
            return False
        if rt["accessible"] != self.guests[res["guest"]]["needs_accessible"]:
            return False
        if req.get("venue"):
            minutes = travel(self.state, res["hotel"], req["venue"])
            if minutes is None or minutes > req["max_minutes"]:
                return False
        return True

    def _confirmed(self, guest: str) -> list[dict]:
        return [r for _, r in sorted(self.reservations.items()) if r["guest"] == guest
                and live_status(r, self.clock.now) == "confirmed"]

    def _served(self, req: dict) -> list[dict]:
        return [r for r in self._confirmed(req["guest"]) if self._serves(r, req)]

    def _handover(self, res: dict) -> bool:
        guest = self.guests[res["guest"]]
        hotel = self.hotels[res["hotel"]]
        arrival, ready = local_time(guest.get("arrival")), self._ready_at(res)
        if arrival is None or res.get("arrival") != guest["arrival"] or ready is None or ready > arrival:
            return False
        return format_time(arrival)[11:] <= hotel["late_cutoff"] or hotel["night_desk"] or res["key_locker"]

    def _on_shuttle(self, req: dict, hotel: str) -> bool:
        by = local_time(req.get("shuttle_by"))
        for s in self.shuttles.values():
            arrives = local_time(self._arrives(s))
            if (s["hotel"] == hotel and s["destination"] == req["venue"] and req["guest"] in s["riders"]
                    and s["status"] == "scheduled" and arrives is not None and arrives <= by):
                return True
        return False

    def _meeting_ok(self, req: dict, hotel: str) -> bool:
        for room in self.meeting_rooms.values():
            h = self.hotels[room["hotel"]]
            if (room["hotel"] == hotel and room["slots"].get(req["meeting"]) == req["guest"] and h["status"] == "open"
                    and room["wing"] not in h["closed_wings"] and room["capacity"] >= req.get("capacity", 1)):
                return True
        return False

    @predicate
    def booked(self, request: dict) -> bool:
        """The guest holds as many confirmed rooms serving the request as asked, all at one hotel."""
        served = self._served(request)
        return len(served) >= request.get("count", 1) and len({r["hotel"] for r in served}) == 1

    @predicate
    def secured(self, request: dict) -> bool:
        """As many live holds or confirmed stays serving the request as asked, all at one hotel, each at a price the
        card covers: the alternative secured, maybe not yet confirmed."""
        limit = self.guests[request["guest"]]["payment_limit"]
        live = [r for _, r in sorted(self.reservations.items()) if r["guest"] == request["guest"]
                and live_status(r, self.clock.now) in LIVE and r["price"] <= limit and self._serves(r, request)]
        return len(live) >= request.get("count", 1) and len({r["hotel"] for r in live}) == 1

    @predicate
    def arranged(self, request: dict) -> bool:
        """Booked, and every extra the request names holds: arrival recorded with the room ready and a key to be
        had, a shuttle seat reaching the venue in time, the meeting room slot."""
        served = self._served(request)
        if len(served) < request.get("count", 1) or len({r["hotel"] for r in served}) != 1:
            return False
        hotel = served[0]["hotel"]
        return ((not request.get("arrival") or all(self._handover(r) for r in served))
                and (not request.get("shuttle_by") or self._on_shuttle(request, hotel))
                and (not request.get("meeting") or self._meeting_ok(request, hotel)))

    @predicate
    def arrival_current(self, request: dict) -> bool:
        """A stay serving the request records the guest's arrival as it is now (the room or key may still lag)."""
        arrival = self.guests[request["guest"]].get("arrival")
        return arrival is not None and any(r.get("arrival") == arrival for r in self._served(request))

    @predicate
    def seat_in_time(self, request: dict) -> bool:
        """The guest has a seat on a scheduled shuttle that reaches the venue by ``shuttle_by`` (from any hotel)."""
        return any(self._on_shuttle(request, hotel) for hotel in self.hotels)

    @predicate
    def only_as_asked(self, request: dict) -> bool:
        """Every confirmed reservation of the guest serves the request within the card limit, no more than asked,
        all at one hotel, and records no arrival unless the request asks for one; and the guest holds no more
        meeting-room slots or seats on scheduled shuttles than asked (one each when asked, none otherwise; an open
        hold lapses by itself)."""
        guest = request["guest"]
        confirmed = self._confirmed(guest)
        limit = self.guests[guest]["payment_limit"]
        slots = sum(list(room["slots"].values()).count(guest) for room in self.meeting_rooms.values())
        seats = sum(guest in s["riders"] and s["status"] == "scheduled" for s in self.shuttles.values())
        return (len(confirmed) <= request.get("count", 1) and len({r["hotel"] for r in confirmed}) <= 1
                and all(self._serves(r, request) and r["price"] <= limit
                        and (request.get("arrival") or r.get("arrival") is None) for r in confirmed)
                and slots <= bool(request.get("meeting")) and seats <= bool(request.get("shuttle_by")))

    @predicate
    def no_new_booking(self, guest: str, existing: list, hotel: str = "", kept: int = 0) -> bool:
        """The guest got no confirmed reservation besides ``existing`` (but up to ``kept`` at ``hotel``)."""
        new = [x for r, x in self.reservations.items() if x["guest"] == guest and r not in existing
               and x["status"] == "confirmed"]
        return len(new) <= kept and all(x["hotel"] == hotel for x in new)

    @predicate
    def has_live(self, guest: str, hotel: str = "", room_type: str = "") -> bool:
        """The guest has a live hold or reservation (at ``hotel``, of ``room_type``, when given)."""
        return any(hotel in ("", r["hotel"]) and room_type in ("", r["room_type"])
                   and live_status(r, self.clock.now) in LIVE for r in self.reservations.values() if r["guest"] == guest)

    @predicate
    def has_confirmed(self, guest: str, hotel: str = "") -> bool:
        """The guest has a confirmed reservation (at ``hotel`` when given)."""
        return any(hotel in ("", r["hotel"]) for r in self._confirmed(guest))

    @predicate
    def hold_lapsed(self, guest: str) -> bool:
        """A hold of the guest has lapsed."""
        return any(r["guest"] == guest and live_status(r, self.clock.now) == "expired"
                   for r in self.reservations.values())

    @predicate
    def has_meeting(self, guest: str, hotel: str) -> bool:
        """The guest holds a meeting-room slot at ``hotel``."""
        return any(room["hotel"] == hotel and guest in room["slots"].values() for room in self.meeting_rooms.values())

    @predicate
    def riding(self, guest: str, hotel: str = "") -> bool:
        """The guest has a seat on a shuttle (of ``hotel``, when given)."""
        return any(hotel in ("", s["hotel"]) and guest in s["riders"] for s in self.shuttles.values())

    @predicate
    def call_argument(self, name: str, value: Any, ctx) -> bool:
        """The call being made passes ``value`` as ``name``."""
        return ctx is not None and ctx.arguments.get(name) == value

    # The operations act on what the guest committed (their hold, stay or seat), not on ids fixed in advance: every
    # way of carrying out a request meets the change, whichever equivalent hotel, room type or shuttle it chose.

    def _live_of(self, guest: str, status: tuple = LIVE) -> list[dict]:
        """The guest's reservations whose live status is one of ``status``, in id order."""
        return [r for _, r in sorted(self.reservations.items()) if r["guest"] == guest
                and live_status(r, self.clock.now) in status]

    @operation
    def release_holds(self, guest: str, minutes: int, notice: str) -> None:
        """The rate desk of each hotel where the guest has an open hold releases the open holds there (they lapse as
        of when they were placed), and new ones there last ``minutes``."""
        for hotel in {r["hotel"] for r in self._live_of(guest, ("held",))}:
            self.hotels[hotel].update(hold_minutes=minutes, notice=notice)
            for r in self.reservations.values():
                if r["hotel"] == hotel and live_status(r, self.clock.now) == "held":
                    r["expires_at"] = r["held_at"]

    @operation
    def take_lapsed(self, guest: str, keep: int = 0) -> None:
        """Another party takes every free room but ``keep`` of each room type the guest's lapsed holds were on, for
        those holds' nights."""
        for r in self._live_of(guest, ("expired",)):
            self.take_rooms(room_type=r["room_type"], nights=nights_of(r["check_in"], r["nights"]), keep=keep)

    @operation
    def walk_guest(self, guest: str, hotel: str, to_room_type: str, note: str) -> None:
        """The overbooked ``hotel`` walks the guest: each of their live reservations there moves to
        ``to_room_type`` (at a sister property)."""
        rt = self.room_types[to_room_type]
        for r in self.reservations.values():
            if r["guest"] == guest and r["hotel"] == hotel and live_status(r, self.clock.now) in LIVE:
                r.update(hotel=rt["hotel"], room_type=to_room_type, kind=rt["kind"], note=note)

    @operation
    def take_rooms(self, room_type: str, nights: list, keep: int = 0) -> None:
        """Another party takes every free room of ``room_type`` on ``nights`` but ``keep``."""
        for n in nights:
            used = self._used(room_type, n)
            self.room_types[room_type]["inventory"][n] = used + min(keep, self._free(room_type, n))

    @operation
    def close_booked(self, guest: str, hotel: str, part: str, notice: str) -> None:
        """Maintenance closes the floor (``part="floor"``) or the wing (``"wing"``) of the rooms the guest booked at
        ``hotel``."""
        rooms = [self.room_types[r["room_type"]] for r in self._live_of(guest) if r["hotel"] == hotel]
        key = "closed_floors" if part == "floor" else "closed_wings"
        self.hotels[hotel].update({key: sorted({rt[part] for rt in rooms}), "notice": notice})

    @operation
    def cut_power(self, guest: str, notice: str, hotel_wide: bool) -> None:
        """The power fails under the shuttles the guest rides: they are cancelled, and with ``hotel_wide`` their
        hotel goes into outage (``notice``) and every shuttle of it is cancelled."""
        for s in self.shuttles.values():
            if guest in s["riders"] and s["status"] == "scheduled":
                s["status"] = "cancelled"
                if hotel_wide:
                    self.hotels[s["hotel"]].update(status="outage", notice=notice)
        self._dark_shuttles()

    @operation
    def spread_outage(self, notice: str) -> None:
        """The outage spreads to every hotel that shares a district with a hotel in outage."""
        dark = {h["district"] for h in self.hotels.values() if h["status"] == "outage"}
        for h in self.hotels.values():
            if h["district"] in dark and h["status"] == "open":
                h.update(status="outage", notice=notice)
        self._dark_shuttles()

    def _dark_shuttles(self) -> None:
        for s in self.shuttles.values():
            if self.hotels[s["hotel"]]["status"] == "outage":
                s["status"] = "cancelled"

    @operation
    def reset_quota(self, guest: str, codes: list, night: str) -> None:
        """Revenue management resets the quota of each of ``codes`` at the hotels where the guest has a live hold
        down to what is sold: the night of ``night`` sells out."""
        held = {r["hotel"] for r in self._live_of(guest, ("held",))}
        for code in codes:
            promo = self.promotions[code]
            if promo["hotel"] in held:
                promo["used"][night] = promo["nightly_quota"]
