"""CarShare: a car-sharing operator's console for one city of zones, cars, members and trips.

State containers (JSON-like dicts keyed by id):

- ``zones``: ``{name, kind: residential|business|nightlife|airport, demand: low|normal|peak,
  hold_minutes, parking: open|no_parking, petrol_allowed, surcharge, notice}``. A reservation
  made on a car in a zone is held for that zone's ``hold_minutes``; a trip may only end where
  parking is open, and a petrol car only where ``petrol_allowed`` (a low-emission zone bans them).
- ``links``: ``{a, b, minutes, walk, open}`` between zones: driving minutes (``minutes``, what
  :func:`sttgym.geo.shortest_route` reads) and walking minutes (``walk``).
- ``spots``: ``{zone, name, kind: street|station|hub}``: where cars park; a hub has chargers.
- ``cars``: ``{model, category, seats, energy: ev|petrol, level_pct, zone, spot, status:
  available|in_use|charging|maintenance, notice}``. A car is *reserved* while a live reservation
  holds it (a derived status, never stored).
- ``members``: ``{name, plan: basic|plus|business, age, licence_valid, credit_limit, home_zone}``, and for a member
  driving to an appointment their calendar syncs, ``appointment_zone`` and ``appointment_note``.
- ``reservations``: ``{member, car, status: active|cancelled|started|preempted|handoff|handoff_failed,
  created_at, expires_at, extended, note, after_trip}``. An active reservation past
  ``expires_at`` reads ``expired`` and holds nothing. A ``handoff`` reservation waits for the
  open trip ``after_trip``: once that trip's planned end has passed, starting hands the car over
  where the trip ends; a late driver turns it ``handoff_failed``.
- ``trips``: ``{member, car, reservation, start_zone, destination, started_at, level_at_start,
  status: open|ended, end_zone, ended_at, planned_end_at, promo, estimate, price}``.
- ``chargers``: ``{zone, spot, status: working|fault, slots, notice}``; ``charge_sessions``:
  ``{charger, car, started_at}``.
- ``promotions``: ``{discount_pct, categories, energy, quota, used, resets_at, note}`` (``energy``: None or
  the only energy it covers); a promotion with ``used`` at ``quota`` applies to nothing until it resets.
- ``rates``: per-minute and per-km prices per plan, ``km_per_minute``; ``counters``: id counters.
"""

from __future__ import annotations

from typing import Any, Literal

from sttgym.clock import shift
from sttgym.geo import shortest_route
from sttgym.tools import fail, ok, tool
from sttgym.world import World, operation, predicate

__all__ = ["CarShareWorld", "MIN_START_LEVEL", "EXTENSION_MINUTES", "walk_minutes", "drive_minutes", "live_status",
           "estimate"]

MIN_START_LEVEL = 15  # percent of charge or fuel below which a car is not unlocked
EXTENSION_MINUTES = 20  # one extension of a reservation adds this much


def _walkways(links: dict) -> dict:
    return {k: {"a": x["a"], "b": x["b"], "minutes": x["walk"], "open": x.get("open", True)}
            for k, x in links.items()}


def walk_minutes(state: dict, a: str, b: str) -> int | None:
    """Walking minutes between two zones (0 inside one zone), or None when no way is open."""
    route = shortest_route(_walkways(state["links"]), a, b)
    return None if route is None else route[0]


def drive_minutes(state: dict, a: str, b: str) -> int | None:
    route = shortest_route(state["links"], a, b)
    return None if route is None else route[0]


def live_status(res: dict, now: str) -> str:
    """A reservation's status at ``now``: an active one past its expiry reads ``expired``."""
    if res.get("status") == "active" and isinstance(res.get("expires_at"), str) and now > res["expires_at"]:
        return "expired"
    return res.get("status", "")


def estimate(state: dict, member: dict, car: dict, origin: str, destination: str, promo: dict | None) -> dict | None:
    """The price estimate of a drive: minutes and km by the fastest open route, the plan's rates, the
    destination's surcharge, a promotion's discount; None when the destination cannot be reached."""
    minutes = drive_minutes(state, origin, destination)
    if minutes is None:
        return None
    rates = state["rates"][member["plan"]]
    km = round(minutes * state["rates"]["km_per_minute"])
    base = minutes * rates["per_minute"] + km * rates["per_km"] + state["zones"][destination]["surcharge"]
    discount = promo["discount_pct"] if promo else 0
    total = round(base * (100 - discount) / 100, 2)
    return {"drive_minutes": minutes, "km": km, "per_minute": rates["per_minute"], "per_km": rates["per_km"],
            "surcharge": state["zones"][destination]["surcharge"], "discount_pct": discount, "total": total}


class CarShareWorld(World):
    """Tools of a car-sharing operator's console; see the module docstring for the state."""

    domain = "CarShare"
    description = ("A car-sharing operator's console: cars parked in city zones, members, expiring reservations, "
                   "trips priced per minute and km, zone parking and emission rules, chargers and promotions.")
    # Reservations that hold nothing any more (an expired one reads so only at a time, so it is not listed).
    inert = {"reservations": {"status": ["cancelled", "preempted", "handoff_failed"]}}
    tallies = {"promotions": {"used"}}  # a valid promotion the agent pays with is no collateral

    # ----------------------------------------------------------------- helpers

    def _holder(self, car_id: str) -> str | None:
        """The live reservation holding ``car_id`` (active and unexpired, or a handoff), if any."""
        for rid in sorted(self.reservations):
            res = self.reservations[rid]
            if res["car"] == car_id and live_status(res, self.now) in ("active", "handoff"):
                return rid
        return None

    def _car_status(self, car_id: str) -> str:
        car = self.cars[car_id]
        if car["status"] == "available" and self._holder(car_id):
            return "reserved"
        return car["status"]

    def _car_view(self, car_id: str) -> dict:
        car = self.cars[car_id]
        return {"car_id": car_id, **car, "status": self._car_status(car_id), "reservation_id": self._holder(car_id)}

    def _member_problem(self, member_id: str) -> str | None:
        member = self.members.get(member_id)
        if member is None:
            return f"no member {member_id!r}"
        if not member.get("licence_valid", False):
            return f"member {member_id} has no valid driving licence on file"
        return None

    def _live_of(self, member_id: str) -> list[str]:
        return [r for r in sorted(self.reservations) if self.reservations[r]["member"] == member_id
                and live_status(self.reservations[r], self.now) in ("active", "handoff")]

    def _zone_check(self, zone_id: str) -> str | None:
        return None if zone_id in self.zones else f"no zone {zone_id!r}; zones: {', '.join(sorted(self.zones))}"

    def _promo_problem(self, code: str, car: dict) -> str | None:
        promo = self.promotions.get(code)
        if promo is None:
            return f"no promotion {code!r}"
        if promo["categories"] and car["category"] not in promo["categories"]:
            return f"promotion {code} covers {', '.join(promo['categories'])} cars only"
        if promo.get("energy") and car["energy"] != promo["energy"]:
            return f"promotion {code} covers {promo['energy']} cars only"
        if promo["used"] >= promo["quota"]:
            return f"promotion {code} is used up ({promo['used']}/{promo['quota']}) until {promo['resets_at']}"
        return None

    # ------------------------------------------------------------------- reads

    @tool
    def list_zones(self) -> dict:
        """List the city's zones with their kind, demand, parking and emission rules and surcharge."""
        keys = ("name", "kind", "demand", "parking", "petrol_allowed", "surcharge", "hold_minutes")
        return ok({"zones": [{"zone_id": z, **{k: x[k] for k in keys}} for z, x in sorted(self.zones.items())]})

    @tool
    def get_zone(self, zone_id: str) -> dict:
        """Read one zone: demand, reservation hold time, parking and emission rules, surcharge and notices.

        Args:
            zone_id: The zone's id, e.g. ZN-HARBOUR.
        """
        if zone_id not in self.zones:
            return fail(f"no zone {zone_id!r}")
        spots = sorted(s for s, x in self.spots.items() if x["zone"] == zone_id)
        return ok({"zone_id": zone_id, **self.zones[zone_id], "spots": spots})

    @tool
    def get_travel_time(self, from_zone_id: str, to_zone_id: str, mode: Literal["walk", "drive"] = "walk") -> dict:
        """Walking or driving minutes between two zones by the fastest open way (reachable: false if cut off).

        Args:
            from_zone_id: Where from.
            to_zone_id: Where to.
            mode: walk or drive.
        """
        for z in (from_zone_id, to_zone_id):
            if z not in self.zones:
                return fail(f"no zone {z!r}")
        route = shortest_route(_walkways(self.links) if mode == "walk" else self.links, from_zone_id, to_zone_id)
        if route is None:
            return ok({"reachable": False, "minutes": None, "mode": mode, "path": []})
        return ok({"reachable": True, "minutes": route[0], "mode": mode, "path": route[1]})

    @tool(cost=2)
    def find_cars(self, zone_id: str, max_walk_minutes: int = 10, category: str = "") -> dict:
        """Cars free to reserve now within walking reach of a zone, nearest first.

        Args:
            zone_id: Where the member is.
            max_walk_minutes: How far the member will walk, in minutes (0: this zone only).
            category: Only this category (city, compact, estate, van); empty for all.
        """
        if zone_id not in self.zones:
            return fail(f"no zone {zone_id!r}")
        if max_walk_minutes < 0 or max_walk_minutes > 120:
            return fail("max_walk_minutes must be between 0 and 120")
        rows = []
        for cid in sorted(self.cars):
            car = self.cars[cid]
            if category and car["category"] != category:
                continue
            walk = walk_minutes(self.state, zone_id, car["zone"])
            if self._car_status(cid) != "available" or walk is None or walk > max_walk_minutes:
                continue
            rows.append({"car_id": cid, "walk_minutes": walk, **{k: car[k] for k in
                         ("model", "category", "seats", "energy", "level_pct", "zone", "spot")}})
        rows.sort(key=lambda r: (r["walk_minutes"], r["car_id"]))
        return ok({"zone_id": zone_id, "max_walk_minutes": max_walk_minutes, "cars": rows})

    @tool
    def get_car(self, car_id: str) -> dict:
        """Read a car: model, category, energy and level, where it is parked, its status and any notice.

        Args:
            car_id: The car's id, e.g. CS-2041.
        """
        if car_id not in self.cars:
            return fail(f"no car {car_id!r}")
        return ok(self._car_view(car_id))

    @tool
    def get_member(self, member_id: str) -> dict:
        """Read a member: plan, licence, credit limit per trip, home zone and any appointment their calendar syncs.

        Args:
            member_id: The member's id.
        """
        if member_id not in self.members:
            return fail(f"no member {member_id!r}")
        return ok({"member_id": member_id, **self.members[member_id]})

    @tool
    def list_member_reservations(self, member_id: str) -> dict:
        """A member's reservations with their live status (an active one past its expiry reads expired).

        Args:
            member_id: The member's id.
        """
        if member_id not in self.members:
            return fail(f"no member {member_id!r}")
        rows = [{"reservation_id": r, **x, "status": live_status(x, self.now)}
                for r, x in sorted(self.reservations.items()) if x["member"] == member_id]
        return ok({"member_id": member_id, "now": self.now, "reservations": rows})

    @tool
    def list_member_trips(self, member_id: str) -> dict:
        """A member's trips, open and ended.

        Args:
            member_id: The member's id.
        """
        if member_id not in self.members:
            return fail(f"no member {member_id!r}")
        return ok({"member_id": member_id, "trips": [{"trip_id": t, **x} for t, x in sorted(self.trips.items())
                                                     if x["member"] == member_id]})

    @tool
    def get_trip(self, trip_id: str) -> dict:
        """Read a trip: car, member, start, destination, planned end, status and price.

        Args:
            trip_id: The trip's id.
        """
        if trip_id not in self.trips:
            return fail(f"no trip {trip_id!r}")
        return ok({"trip_id": trip_id, **self.trips[trip_id]})

    @tool(cost=2)
    def quote_price(self, member_id: str, car_id: str, destination_zone_id: str, promo_code: str = "") -> dict:
        """Estimate a drive's price from the car's zone to a destination, with the member's plan and a promotion.

        Args:
            member_id: Who drives.
            car_id: The car.
            destination_zone_id: Where the trip will end.
            promo_code: A promotion to apply; empty for none.
        """
        if member_id not in self.members:
            return fail(f"no member {member_id!r}")
        if car_id not in self.cars:
            return fail(f"no car {car_id!r}")
        if destination_zone_id not in self.zones:
            return fail(f"no zone {destination_zone_id!r}")
        car = self.cars[car_id]
        problem = self._promo_problem(promo_code, car) if promo_code else None
        if problem:
            return fail(problem)
        price = estimate(self.state, self.members[member_id], car, car["zone"], destination_zone_id,
                         self.promotions.get(promo_code))
        if price is None:
            return fail(f"{destination_zone_id} cannot be reached from {car['zone']} by open roads")
        return ok({"member_id": member_id, "car_id": car_id, "destination_zone_id": destination_zone_id,
                   "credit_limit": self.members[member_id]["credit_limit"], **price})

    @tool
    def list_promotions(self) -> dict:
        """The promotions running now: discount, the car categories they cover, quota used and when it resets."""
        return ok({"promotions": [{"code": c, **x} for c, x in sorted(self.promotions.items())]})

    @tool
    def list_chargers(self, zone_id: str = "") -> dict:
        """Chargers with their zone, hub, status and free slots, optionally of one zone.

        Args:
            zone_id: Only this zone; empty for all.
        """
        if zone_id and zone_id not in self.zones:
            return fail(f"no zone {zone_id!r}")
        rows = []
        for cid, ch in sorted(self.chargers.items()):
            if zone_id and ch["zone"] != zone_id:
                continue
            used = sum(1 for s in self.charge_sessions.values() if s["charger"] == cid)
            rows.append({"charger_id": cid, **ch, "free_slots": max(0, ch["slots"] - used)})
        return ok({"chargers": rows})

    # ----------------------------------------------------------------- changes

    @tool(mutates=True, cost=2)
    def reserve_car(self, member_id: str, car_id: str) -> dict:
        """Reserve a free car for a member; it is held for the car's zone hold time. One live reservation a member.

        Args:
            member_id: The member.
            car_id: The car to hold.
        """
        problem = self._member_problem(member_id)
        if problem:
            return fail(problem)
        car = self.cars.get(car_id)
        if car is None:
            return fail(f"no car {car_id!r}")
        status = self._car_status(car_id)
        if status != "available":
            return fail(f"car {car_id} is {status}" + (f": {car['notice']}" if car.get("notice") else ""))
        if car["level_pct"] < MIN_START_LEVEL:
            return fail(f"car {car_id} is at {car['level_pct']}%, below the {MIN_START_LEVEL}% needed to rent")
        live = self._live_of(member_id)
        if live:
            return fail(f"member {member_id} already holds reservation {live[0]}; cancel it first")
        hold = self.zones[car["zone"]]["hold_minutes"]
        rid = self.next_id("reservation", "RES")
        self.reservations[rid] = {"member": member_id, "car": car_id, "status": "active", "created_at": self.now,
                                  "expires_at": shift(self.now, hold), "extended": False, "note": "",
                                  "after_trip": None}
        return ok({"reservation_id": rid, "car_id": car_id, "zone": car["zone"], "spot": car["spot"],
                   "expires_at": self.reservations[rid]["expires_at"]},
                  message=f"{car_id} reserved for {member_id} until {self.reservations[rid]['expires_at']}")

    @tool(mutates=True, cost=2)
    def reserve_handoff(self, member_id: str, trip_id: str) -> dict:
        """Queue a member for the car of an open trip that is planned to end in the member's home zone.

        Args:
            member_id: The member who takes the car over.
            trip_id: The open trip whose car they take.
        """
        problem = self._member_problem(member_id)
        if problem:
            return fail(problem)
        trip = self.trips.get(trip_id)
        if trip is None:
            return fail(f"no trip {trip_id!r}")
        if trip["status"] != "open":
            return fail(f"trip {trip_id} is {trip['status']}")
        if trip["destination"] != self.members[member_id]["home_zone"]:
            return fail(f"trip {trip_id} ends in {trip['destination']}, not in the member's home zone")
        if self._holder(trip["car"]):
            return fail(f"car {trip['car']} is already promised ({self._holder(trip['car'])})")
        live = self._live_of(member_id)
        if live:
            return fail(f"member {member_id} already holds reservation {live[0]}; cancel it first")
        rid = self.next_id("reservation", "RES")
        self.reservations[rid] = {"member": member_id, "car": trip["car"], "status": "handoff",
                                  "created_at": self.now, "expires_at": None, "extended": False,
                                  "note": f"handed over when {trip_id} ends", "after_trip": trip_id}
        return ok({"reservation_id": rid, "car_id": trip["car"], "planned_end_at": trip["planned_end_at"]},
                  message=f"{member_id} takes over {trip['car']} when {trip_id} ends")

    @tool(mutates=True, cost=1)
    def extend_reservation(self, reservation_id: str) -> dict:
        """Extend an active reservation once by twenty minutes.

        Args:
            reservation_id: The reservation.
        """
        res = self.reservations.get(reservation_id)
        if res is None:
            return fail(f"no reservation {reservation_id!r}")
        status = live_status(res, self.now)
        if status != "active":
            return fail(f"reservation {reservation_id} is {status}")
        if res["extended"]:
            return fail(f"reservation {reservation_id} was already extended once")
        res.update(extended=True, expires_at=shift(res["expires_at"], EXTENSION_MINUTES))
        return ok({"reservation_id": reservation_id, "expires_at": res["expires_at"]},
                  message=f"{reservation_id} now held until {res['expires_at']}")

    @tool(mutates=True, cost=1)
    def cancel_reservation(self, member_id: str, reservation_id: str) -> dict:
        """Cancel a member's own live reservation (active or handoff).

        Args:
            member_id: The member who holds it.
            reservation_id: The reservation.
        """
        res = self.reservations.get(reservation_id)
        if res is None:
            return fail(f"no reservation {reservation_id!r}")
        if res["member"] != member_id:
            return fail(f"reservation {reservation_id} is not held by {member_id}")
        status = live_status(res, self.now)
        if status not in ("active", "handoff"):
            ended = status in self.inert["reservations"]["status"]  # say so: players wondered whether to clean it up
            return fail(f"reservation {reservation_id} is {status} and cannot be cancelled"
                        + ("; it holds no car, so nothing is left to release" if ended else ""))
        res["status"] = "cancelled"
        return ok(message=f"{reservation_id} cancelled; {res['car']} released")

    @tool(mutates=True, cost=2)
    def start_trip(self, reservation_id: str, member_zone_id: str, destination_zone_id: str,
                   promo_code: str = "") -> dict:
        """Unlock a reserved car for its member and open the trip: the hold ends and the trip starts now. The member
        need not be at the car yet (they walk to it and drive off from its zone, the zone to give here), but a car
        asked to be held until its member gets to it stays held until then, not on a trip.

        The estimate for the planned destination (with the promotion, if any) must fit the member's credit limit.

        Args:
            reservation_id: The member's active reservation (or a handoff whose previous trip has ended).
            member_zone_id: The zone the member drives off from; the car must be parked there.
            destination_zone_id: Where the member plans to end the trip.
            promo_code: A promotion to apply; empty for none.
        """
        res = self.reservations.get(reservation_id)
        if res is None:
            return fail(f"no reservation {reservation_id!r}")
        status = live_status(res, self.now)
        car, member = self.cars[res["car"]], self.members[res["member"]]
        car_status, car_zone, car_spot, closing = car["status"], car["zone"], car["spot"], None
        if status == "handoff":
            before = self.trips.get(res["after_trip"], {})
            if before.get("status") == "open":
                if before["planned_end_at"] > self.now:
                    return fail(f"car {res['car']} is still on trip {res['after_trip']} (planned end "
                                f"{before['planned_end_at']})")
                closing = before  # the previous member parks on time: the car is handed over where they end
                spots = sorted(s for s, x in self.spots.items() if x["zone"] == before["destination"])
                car_status, car_zone, car_spot = "available", before["destination"], spots[0] if spots else None
        elif status != "active":
            return fail(f"reservation {reservation_id} is {status}")
        for z in (member_zone_id, destination_zone_id):
            problem = self._zone_check(z)
            if problem:
                return fail(problem)
        if car_status != "available":
            return fail(f"car {res['car']} is in {car_status}" + (f": {car['notice']}" if car.get("notice") else ""))
        if car_zone != member_zone_id:
            return fail(f"car {res['car']} is parked in {car_zone} ({car_spot}), not in {member_zone_id}")
        if car["level_pct"] < MIN_START_LEVEL:
            return fail(f"car {res['car']} is at {car['level_pct']}%, below {MIN_START_LEVEL}%")
        promo = None
        if promo_code:
            problem = self._promo_problem(promo_code, car)
            if problem:
                return fail(problem)
            promo = self.promotions[promo_code]
        price = estimate(self.state, member, car, car_zone, destination_zone_id, promo)
        if price is None:
            return fail(f"{destination_zone_id} cannot be reached from {car_zone}")
        if price["total"] > member["credit_limit"]:
            return fail(f"the estimate {price['total']} exceeds the member's credit limit {member['credit_limit']}")
        if closing is not None:
            closing.update(status="ended", end_zone=car_zone, ended_at=closing["planned_end_at"])
            car.update(zone=car_zone, spot=car_spot)
        if promo is not None:
            promo["used"] += 1
        tid = self.next_id("trip", "TRP")
        self.trips[tid] = {"member": res["member"], "car": res["car"], "reservation": reservation_id,
                           "start_zone": car_zone, "destination": destination_zone_id, "started_at": self.now,
                           "level_at_start": car["level_pct"], "status": "open", "end_zone": None, "ended_at": None,
                           "planned_end_at": shift(self.now, price["drive_minutes"]), "promo": promo_code or None,
                           "estimate": price["total"], "price": None}
        res["status"] = "started"
        car["status"] = "in_use"
        return ok({"trip_id": tid, "car_id": res["car"], "estimate": price["total"]},
                  message=f"{res['car']} unlocked; trip {tid} open")

    @tool(mutates=True, cost=1)
    def change_destination(self, trip_id: str, destination_zone_id: str) -> dict:
        """Change where an open trip is planned to end; the estimate is redone from where it started (with its
        promotion, if any) and must fit the member's credit limit.

        Args:
            trip_id: The open trip.
            destination_zone_id: Where the member now plans to end it.
        """
        trip = self.trips.get(trip_id)
        if trip is None:
            return fail(f"no trip {trip_id!r}")
        if trip["status"] != "open":
            return fail(f"trip {trip_id} is {trip['status']}")
        problem = self._zone_check(destination_zone_id)
        if problem:
            return fail(problem)
        member = self.members[trip["member"]]
        price = estimate(self.state, member, self.cars[trip["car"]], trip["start_zone"], destination_zone_id,
                         self.promotions.get(trip["promo"] or ""))
        if price is None:
            return fail(f"{destination_zone_id} cannot be reached from {trip['start_zone']}")
        if price["total"] > member["credit_limit"]:
            return fail(f"the estimate {price['total']} exceeds the member's credit limit {member['credit_limit']}")
        trip.update(destination=destination_zone_id, estimate=price["total"],
                    planned_end_at=shift(trip["started_at"], price["drive_minutes"]))
        return ok({"trip_id": trip_id, "destination": destination_zone_id, "estimate": price["total"],
                   "planned_end_at": trip["planned_end_at"]},
                  message=f"{trip_id} now planned to end in {destination_zone_id}")

    @tool(mutates=True, cost=3)
    def end_trip(self, trip_id: str, zone_id: str) -> dict:
        """End an open trip with the car parked in a zone where parking is open (petrol cars: not in a ban zone).

        Args:
            trip_id: The open trip.
            zone_id: Where the car is parked.
        """
        trip = self.trips.get(trip_id)
        if trip is None:
            return fail(f"no trip {trip_id!r}")
        if trip["status"] != "open":
            return fail(f"trip {trip_id} is {trip['status']}")
        zone = self.zones.get(zone_id)
        if zone is None:
            return fail(f"no zone {zone_id!r}")
        car = self.cars[trip["car"]]
        if zone["parking"] != "open":
            return fail(f"zone {zone_id} is {zone['parking']}" + (f": {zone['notice']}" if zone.get("notice") else ""))
        if car["energy"] == "petrol" and not zone["petrol_allowed"]:
            return fail(f"zone {zone_id} bans petrol cars" + (f": {zone['notice']}" if zone.get("notice") else ""))
        member = self.members[trip["member"]]
        price = estimate(self.state, member, car, trip["start_zone"], zone_id, self.promotions.get(trip["promo"] or ""))
        if price is None:
            return fail(f"{zone_id} cannot be reached from {trip['start_zone']}")
        trip.update(status="ended", end_zone=zone_id, ended_at=self.now, price=price["total"])
        spot = sorted(s for s, x in self.spots.items() if x["zone"] == zone_id)
        car.update(status="available", zone=zone_id, spot=spot[0] if spot else None,
                   level_pct=max(0, car["level_pct"] - price["drive_minutes"] // 3))
        return ok({"trip_id": trip_id, "price": price["total"]}, message=f"{trip_id} ended in {zone_id}")

    @tool(mutates=True, cost=2)
    def book_charger(self, charger_id: str, car_id: str) -> dict:
        """Plug a free electric car parked in the charger's zone into a free slot.

        Args:
            charger_id: The charger.
            car_id: The electric car.
        """
        ch = self.chargers.get(charger_id)
        if ch is None:
            return fail(f"no charger {charger_id!r}")
        car = self.cars.get(car_id)
        if car is None:
            return fail(f"no car {car_id!r}")
        if ch["status"] != "working":
            return fail(f"charger {charger_id} is {ch['status']}" + (f": {ch['notice']}" if ch.get("notice") else ""))
        if car["energy"] != "ev":
            return fail(f"car {car_id} is not electric")
        if self._car_status(car_id) != "available":
            return fail(f"car {car_id} is {self._car_status(car_id)}")
        if car["zone"] != ch["zone"]:
            return fail(f"car {car_id} is in {car['zone']}, the charger in {ch['zone']}")
        used = sum(1 for s in self.charge_sessions.values() if s["charger"] == charger_id)
        if used >= ch["slots"]:
            return fail(f"charger {charger_id} has no free slot")
        sid = self.next_id("session", "CHS")
        self.charge_sessions[sid] = {"charger": charger_id, "car": car_id, "started_at": self.now}
        car.update(status="charging", spot=ch["spot"])
        return ok({"session_id": sid}, message=f"{car_id} charging on {charger_id}")

    # ------------------------------------------------- predicates and operations
    # A ride request, as checks name it: {"member", "home", "max_walk", "category", "min_level", "destination" (empty:
    # wherever the trip goes, as for a member driving to their appointment),
    # "energy" (optional), "promo" (optional: the trip must carry some promotion), "by" (optional: started by then),
    # "pickup_zones" (optional: the only zones the member will take a car in)}.

    def _trips_of(self, member: str) -> list[dict]:
        return [t for _, t in sorted(self.trips.items()) if t["member"] == member]

    def _serves(self, trip: dict, ride: dict) -> bool:
        car = self.cars[trip["car"]]
        walk = walk_minutes(self.state, ride["home"], trip["start_zone"])
        return (car["category"] == ride["category"] and trip["level_at_start"] >= ride["min_level"]
                and walk is not None and walk <= ride["max_walk"]
                and ride["destination"] in ("", trip["destination"])
                and ride.get("energy") in (None, "", car["energy"]) and (not ride.get("promo") or bool(trip["promo"]))
                and (not ride.get("by") or trip["started_at"] <= ride["by"])
                and (not ride.get("pickup_zones") or trip["start_zone"] in ride["pickup_zones"]))

    @predicate
    def riding(self, ride: dict) -> bool:
        """The member is on an open trip that serves the ride request (one ended again serves nobody)."""
        return any(t["status"] == "open" and self._serves(t, ride) for t in self._trips_of(ride["member"]))

    @predicate
    def riding_to_appointment(self, ride: dict) -> bool:
        """The member is on an open trip that serves the ride and is planned to end in the zone of the appointment
        their profile records (as it reads now)."""
        zone = self.members[ride["member"]].get("appointment_zone")
        return any(t["status"] == "open" and t["destination"] == zone and self._serves(t, ride)
                   for t in self._trips_of(ride["member"]))

    @predicate
    def single_trip(self, member: str, existing: int = 0) -> bool:
        """The member started at most one trip besides the ``existing`` ones."""
        return len(self._trips_of(member)) <= existing + 1

    @predicate
    def no_new_trip(self, member: str, existing: int = 0) -> bool:
        """The member started no trip besides the ``existing`` ones."""
        return len(self._trips_of(member)) <= existing

    @predicate
    def parked_near(self, trip_id: str, destination: str, max_walk: int) -> bool:
        """Trip ``trip_id`` ended in a zone within ``max_walk`` walking minutes of ``destination``."""
        trip = self.trips[trip_id]
        walk = walk_minutes(self.state, destination, trip["end_zone"]) if trip["status"] == "ended" else None
        return walk is not None and walk <= max_walk

    @predicate
    def held_for(self, ride: dict, leave_at: str) -> bool:
        """The member holds a live reservation on a car that serves the ride, parked within walking reach, held
        at least until the member (leaving home at ``leave_at``) walks up to it."""
        for rid in self._live_of(ride["member"]):
            res = self.reservations[rid]
            car = self.cars[res["car"]]
            walk = walk_minutes(self.state, ride["home"], car["zone"])
            if (res["status"] == "active" and car["category"] == ride["category"] and walk is not None
                    and walk <= ride["max_walk"] and car["level_pct"] >= ride["min_level"]
                    and car["status"] == "available" and res["expires_at"] >= shift(leave_at, walk)):
                return True
        return False

    @predicate
    def trip_open(self, trip_id: str) -> bool:
        """Trip ``trip_id`` is still open."""
        return self.trips[trip_id]["status"] == "open"

    @predicate
    def charging(self, car_id: str) -> bool:
        """``car_id`` is plugged in on a working charger."""
        return any(s["car"] == car_id and self.chargers[s["charger"]]["status"] == "working"
                   for s in self.charge_sessions.values())

    @predicate
    def holds_car(self, member: str, car_id: str) -> bool:
        """The member holds a live reservation on ``car_id``."""
        return any(self.reservations[r]["car"] == car_id for r in self._live_of(member))

    @predicate
    def holds_any(self, member: str) -> bool:
        """The member holds a live reservation (on any car)."""
        return bool(self._live_of(member))

    @predicate
    def reserved_car_is(self, member: str, field: str, value: Any) -> bool:
        """The car the member's live reservation holds has ``field`` equal to ``value``."""
        return any(self.cars[self.reservations[r]["car"]].get(field) == value for r in self._live_of(member))

    @predicate
    def lapsed(self, member: str, car_id: str) -> bool:
        """A reservation of the member on ``car_id`` has expired."""
        return any(x["member"] == member and x["car"] == car_id and live_status(x, self.now) == "expired"
                   for x in self.reservations.values())

    @predicate
    def call_argument(self, name: str, value: Any, ctx) -> bool:
        """The call being made passes ``value`` as ``name`` (triggers restrict this to writes by activation)."""
        return ctx is not None and ctx.arguments.get(name) == value

    @operation
    def shorten_holds(self, zone_id: str, hold_minutes: int, notice: str) -> None:
        """A demand peak in a zone: a shorter hold time, applied to the reservations open there now."""
        self.zones[zone_id].update(hold_minutes=hold_minutes, demand="peak", notice=notice)
        for res in self.reservations.values():
            car = self.cars.get(res["car"], {})
            if car.get("zone") == zone_id and live_status(res, self.now) == "active":
                res["expires_at"] = min(res["expires_at"], shift(res["created_at"], hold_minutes))

    def _reserved_car(self, member: str) -> str | None:
        live = self._live_of(member)
        return self.reservations[live[0]]["car"] if live else None

    @operation
    def relocate_reserved(self, member: str, zone_id: str, spot_id: str, notice: str) -> None:
        """A telematics fix puts the car the member holds (whichever it is) at ``spot_id`` in ``zone_id``."""
        car = self._reserved_car(member)
        if car:
            self.cars[car].update(zone=zone_id, spot=spot_id, notice=notice)

    @operation
    def ground_reserved(self, member: str, notice: str) -> None:
        """A damage report sends the car the member holds (whichever it is) into maintenance."""
        car = self._reserved_car(member)
        if car:
            self.cars[car].update(status="maintenance", notice=notice)

    @operation
    def recall_model(self, model: str, notice: str) -> None:
        """A recall grounds every parked car of ``model``."""
        for car in self.cars.values():
            if car["model"] == model and car["status"] in ("available", "charging"):
                car.update(status="maintenance", notice=notice)

    @operation
    def preempt_reserved(self, member: str, reservation_id: str, member_id: str, note: str) -> None:
        """A priority booking takes the car the member holds (whichever it is); see :meth:`preempt`."""
        car = self._reserved_car(member)
        if car:
            self.preempt(car_id=car, reservation_id=reservation_id, member_id=member_id, note=note)

    @operation
    def preempt(self, car_id: str, reservation_id: str, member_id: str, note: str) -> None:
        """A priority booking takes ``car_id``: live reservations on it are preempted, the new one holds it."""
        for res in self.reservations.values():
            if res["car"] == car_id and live_status(res, self.now) in ("active", "handoff"):
                res.update(status="preempted", note=note)
        self.reservations[reservation_id] = {"member": member_id, "car": car_id, "status": "active",
                                             "created_at": self.now, "expires_at": shift(self.now, 24 * 60),
                                             "extended": False, "note": note, "after_trip": None}

    @operation
    def hub_outage(self, charger_id: str, notice: str) -> None:
        """A charger fails: its connectors lock the cars plugged into it and no slot can be booked."""
        self.chargers[charger_id].update(status="fault", notice=notice)
        spot = self.chargers[charger_id]["spot"]
        for car in self.cars.values():
            if car["spot"] == spot and car["energy"] == "ev" and car["status"] in ("available", "charging"):
                car.update(status="charging", notice=notice)

    @operation
    def delay_trip(self, trip_id: str, minutes: int, note: str) -> None:
        """The member on an open trip is late: the planned end moves and waiting handoffs fail."""
        trip = self.trips[trip_id]
        trip["planned_end_at"] = shift(trip["planned_end_at"], minutes)
        for res in self.reservations.values():
            if res.get("after_trip") == trip_id and res["status"] == "handoff":
                res.update(status="handoff_failed", note=note)
