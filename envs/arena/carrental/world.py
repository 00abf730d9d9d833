"""CarRental: a rental operator's fleet, depots, reservations, pricing and transfers.

State containers (JSON-like dicts keyed by id):

- ``zones``: ``{name, kind, demand, surge: [{start, end, multiplier}]}``; a surge window
  multiplies the price of pickups that fall inside it.
- ``depots``: ``{name, zone, opens, closes, status: open|locked_down, hold_minutes, charger, notice}``.
- ``roads``: ``{a, b, minutes, open}`` between depots; travel uses the fastest open route.
- ``vehicles``: ``{class, energy: petrol|electric, fuel_pct, mileage_km, status:
  available|maintenance|rented, depot, available_from}``. ``depot`` is where the vehicle is
  or is heading; ``available_from`` (or None) is when it is physically there and free
  (back from a rental, at the end of a transfer).
- ``customers``: ``{name, licence: [categories], licence_expires, tier, payment_limit}``, and for one who
  flies in, ``flight`` (the flight they are booked on) and ``flight_note``.
- ``reservations``: ``{customer, vehicle, class, pickup_depot, return_depot, pickup_time,
  return_time, status: held|confirmed|cancelled|picked_up|returned, held_at, price, promo,
  promo_discount}``. A hold lapses ``hold_minutes`` (the pickup depot's current policy) after
  ``held_at`` (or at ``released_at``, when a demand peak released it early); a lapsed hold reads
  as ``expired`` and blocks nothing.
- ``promotions``: ``{zone, vehicle_class, energy, discount_pct, quota, used, note}``
  (``None`` in zone/class/energy means any).
- ``transfers``: ``{vehicle, origin, destination, departs, arrives, path}``, and ``status: recalled`` with
  ``recalled_at`` once the car was called back from the road.
- ``flights``: ``{depot, origin, arrives, status}``: arrivals the airport desks track.
- ``rates``: daily rate per vehicle class; ``counters``: the last reservation/transfer number.

Times are ISO strings at minute precision; depot hours are ``HH:MM`` on any day.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from sttgym.clock import format_time, local_time
from sttgym.geo import shortest_route
from sttgym.tools import fail, ok, tool
from sttgym.world import World, operation, predicate

__all__ = ["CarRentalWorld", "LICENCE_FOR", "TIER_DISCOUNT", "HANDOVER_MIN_FUEL", "HANDOVER_RULE", "FLIGHT_SLACK",
           "hold_expires", "live_status", "overlaps", "price_of"]

LICENCE_FOR = {"economy": "B", "compact": "B", "suv": "B", "premium": "B", "van": "C1"}
TIER_DISCOUNT = {"standard": 0, "silver": 5, "gold": 10}  # percent off every rental
HANDOVER_MIN_FUEL = 25  # percent of fuel or charge below which a vehicle is not handed over
HANDOVER_RULE = f"A booked car is handed over only with at least {HANDOVER_MIN_FUEL}% fuel or charge."
CHECKOUT_SLACK = timedelta(minutes=60)  # how far from the booked pickup time a check-out may happen
BLOCKING = ("held", "confirmed", "picked_up")
FLIGHT_SLACK = timedelta(minutes=60)  # a desk pickup later than this after landing leaves the traveller waiting



def hold_expires(state: dict, res: dict) -> datetime | None:
    """When a hold lapses: ``held_at`` plus the pickup depot's current hold policy."""
    held_at, released = local_time(res.get("held_at")), local_time(res.get("released_at"))
    minutes = state["depots"].get(res.get("pickup_depot"), {}).get("hold_minutes")
    if held_at is None or not isinstance(minutes, int):
        return None
    expires = held_at + timedelta(minutes=minutes)
    # A released hold is gone from the minute of its release, not one minute later.
    return min(expires, released - timedelta(minutes=1)) if released else expires


def live_status(state: dict, res: dict, now: datetime) -> str:
    """A reservation's status as of ``now``: a held reservation past its hold reads ``expired``."""
    if res.get("status") == "held":
        expires = hold_expires(state, res)
        if expires is not None and now > expires:
            return "expired"
    return res.get("status", "")


def overlaps(start: datetime, end: datetime, other_start: datetime, other_end: datetime) -> bool:
    return start < other_end and other_start < end


def _in_hours(depot: dict, moment: datetime) -> bool:
    return depot.get("opens", "00:00") <= moment.strftime("%H:%M") <= depot.get("closes", "23:59")


def _covers(window: dict, moment: datetime) -> bool:
    start, end = local_time(window.get("start")), local_time(window.get("end"))
    return start is not None and end is not None and start <= moment < end


def price_of(state: dict, depot_id: str, vehicle_class: str, pickup: datetime, ret: datetime,
             tier: str = "standard", promo_discount: int = 0) -> dict:
    """The price breakdown of a rental: whole days at the class rate, the zone's surge at the
    pickup time, then the loyalty and promotional discounts, rounded to whole currency units."""
    days = max(1, math.ceil((ret - pickup).total_seconds() / 86400))
    zone = state["zones"].get(state["depots"][depot_id]["zone"], {})
    surge = max([w["multiplier"] for w in zone.get("surge", []) if _covers(w, pickup)] or [1.0])
    base = days * state["rates"][vehicle_class]
    tier_pct = TIER_DISCOUNT.get(tier, 0)
    total = round(base * surge * (100 - tier_pct) / 100 * (100 - promo_discount) / 100)
    return {"days": days, "daily_rate": state["rates"][vehicle_class], "surge_multiplier": surge,
            "loyalty_discount_pct": tier_pct, "promo_discount_pct": promo_discount, "total": total}


class CarRentalWorld(World):
    """Tools of a car-rental operator's back office; see the module docstring for the state."""

    domain = "CarRental"
    description = ("A car-rental operator: vehicles at depots across city zones, reservations with expiring holds, "
                   f"zone pricing with surges and promotions, customers, flights and depot transfers. {HANDOVER_RULE}")
    inert = {"reservations": {"status": ["cancelled"]},  # a cancelled booking holds no car
             "transfers": {"status": ["recalled"]}}  # nor does a transfer called back: the car never got there
    tallies = {"promotions": {"used"}}  # a valid promotion the agent pays with is no collateral

    def commits(self, container: str, entity: Any) -> bool:
        """A transfer that a later transfer of the same vehicle brings back to the same depot is part of one
        move: driven to a charger and back, the car has made one trip there, not two."""
        if container == "transfers" and isinstance(entity, dict):
            return super().commits(container, entity) and not any(t["vehicle"] == entity["vehicle"] and t["departs"] > entity["departs"]
                           and t["destination"] == entity["destination"] for t in self.transfers.values())
        return super().commits(container, entity)

    # ----------------------------------------------------------------- helpers

    def _res(self, reservation_id: str) -> dict | None:
        return self.reservations.get(reservation_id)

    def _view(self, rid: str) -> dict:
        res = self.reservations[rid]
        vehicle = self.vehicles.get(res["vehicle"], {})
        expires = hold_expires(self.state, res)
        return {"reservation_id": rid, **res, "status": live_status(self.state, res, self.clock.now),
                "hold_expires": format_time(expires) if res["status"] == "held" and expires else None,
                "vehicle_depot": vehicle.get("depot"), "vehicle_available_from": vehicle.get("available_from")}

    def _blocking(self, vehicle_id: str, start: datetime, end: datetime, ignore: str | None = None) -> list[str]:
        """Reservations that keep ``vehicle_id`` busy during ``[start, end)``."""
        # Only this vehicle's reservations are sorted, and a status (a hold's expiry) is worked out only for those
        # that overlap: a hold late in a busy episode no longer pays for every reservation before it.
        out, reservations = [], self.reservations
        for rid in sorted(r for r, res in reservations.items() if r != ignore and res.get("vehicle") == vehicle_id):
            res = reservations[rid]
            p, r = local_time(res.get("pickup_time")), local_time(res.get("return_time"))
            if p and r and overlaps(start, end, p, r) and live_status(self.state, res, self.clock.now) in BLOCKING:
                out.append(rid)
        return out

    def _window(self, pickup_time: str, return_time: str) -> tuple[datetime, datetime] | str:
        pickup, ret = local_time(pickup_time), local_time(return_time)
        if pickup is None or ret is None:
            return "times must be ISO timestamps like 2024-08-15T09:30"
        if ret <= pickup:
            return "the return time must be after the pickup time"
        if pickup < self.clock.now:
            return f"the pickup time {format_time(pickup)} is in the past (now {self.now})"
        return pickup, ret

    def _site_problem(self, depot_id: str, moment: datetime, what: str) -> str | None:
        depot = self.depots.get(depot_id)
        if depot is None:
            return f"no depot {depot_id!r}"
        if depot["status"] != "open":
            return f"depot {depot_id} is {depot['status']}: {depot.get('notice') or 'no operations'}"
        if not _in_hours(depot, moment):
            hours = f"{depot['opens']}-{depot['closes']}"
            return f"depot {depot_id} is closed at {format_time(moment)} for {what} (hours {hours})"
        return None

    def _vehicle_problem(self, vehicle_id: str, depot_id: str, pickup: datetime, ret: datetime,
                         ignore: str | None = None) -> str | None:
        """Why ``vehicle_id`` cannot be handed out at ``depot_id`` for ``[pickup, ret)``, or None."""
        vehicle = self.vehicles.get(vehicle_id)
        if vehicle is None:
            return f"no vehicle {vehicle_id!r}"
        if vehicle["status"] != "available":
            return f"vehicle {vehicle_id} is in {vehicle['status']}"
        if vehicle["depot"] != depot_id:
            return f"vehicle {vehicle_id} is stationed at {vehicle['depot']}, not {depot_id}"
        ready = local_time(vehicle.get("available_from"))
        if ready is not None and ready > pickup:
            return f"vehicle {vehicle_id} is only available at {depot_id} from {vehicle['available_from']}"
        busy = self._blocking(vehicle_id, pickup, ret, ignore)
        if busy:
            return f"vehicle {vehicle_id} is already booked then ({', '.join(busy)})"
        return None

    def _licence_problem(self, customer: dict, vehicle_class: str, ret: datetime) -> str | None:
        category = LICENCE_FOR.get(vehicle_class)
        if category not in customer.get("licence", []):
            return f"the customer's licence does not cover class {vehicle_class} (needs category {category})"
        expires = local_time(customer.get("licence_expires"))
        if expires is None or expires < ret:
            return f"the customer's licence expires {customer.get('licence_expires')}, before the return"
        return None

    def _promo_problem(self, code: str, depot_id: str, vehicle: dict) -> str | None:
        promo = self.promotions.get(code)
        if promo is None:
            return f"no promotion {code!r}"
        zone = self.depots[depot_id]["zone"]
        if promo.get("zone") not in (None, zone):
            return f"promotion {code} is valid in zone {promo['zone']} only"
        if promo.get("vehicle_class") not in (None, vehicle.get("class")):
            return f"promotion {code} applies to class {promo['vehicle_class']} only"
        if promo.get("energy") not in (None, vehicle.get("energy")):
            return f"promotion {code} applies to {promo['energy']} vehicles only"
        if promo["used"] >= promo["quota"]:
            return f"promotion {code} has no quota left ({promo['used']}/{promo['quota']} used)"
        return None

    def _record(self, container: str, ident: str, label: str, what: str) -> dict:
        """A plain read: the record ``ident`` of ``container`` with its id under ``label``."""
        record = self.state[container].get(ident)
        if record is None:
            return fail(f"no {what} {ident!r}")
        return ok({label: ident, **record})

    # ------------------------------------------------------------------- reads

    @tool
    def list_depots(self, zone_id: str = "") -> dict:
        """List the depots with their zone, status and opening hours, optionally only those of one city zone.

        Args:
            zone_id: A zone id to filter by; empty for every depot.
        """
        if zone_id and zone_id not in self.zones:
            return fail(f"no zone {zone_id!r}; zones: {', '.join(sorted(self.zones))}")
        rows = [{"depot_id": d, **{k: x[k] for k in ("name", "zone", "status", "opens", "closes")}}
                for d, x in sorted(self.depots.items()) if not zone_id or x["zone"] == zone_id]
        return ok({"depots": rows})

    @tool
    def get_depot_info(self, depot_id: str) -> dict:
        """Read a depot: zone, opening hours, status and notices, hold policy and charger.

        Args:
            depot_id: The depot's id.
        """
        return self._record("depots", depot_id, "depot_id", "depot")

    @tool
    def get_zone_demand(self, zone_id: str) -> dict:
        """Read a city zone's current demand level and its price surge windows.

        Args:
            zone_id: The zone's id.
        """
        return self._record("zones", zone_id, "zone_id", "zone")

    @tool(cost=2)
    def plan_route(self, origin_id: str, destination_id: str) -> dict:
        """The fastest open road route between two depots and its driving time (reachable: false when cut off).

        Args:
            origin_id: The depot to leave from.
            destination_id: The depot to arrive at.
        """
        for site in (origin_id, destination_id):
            if site not in self.depots:
                return fail(f"no depot {site!r}")
        route = shortest_route(self.roads, origin_id, destination_id)
        closed = sorted(r for r, road in self.roads.items() if not road.get("open", True))
        if route is None:  # an answer, not an error: the closures that cut the way off are the news
            return ok({"reachable": False, "minutes": None, "path": [], "closed_roads": closed})
        return ok({"reachable": True, "minutes": route[0], "path": route[1], "closed_roads": closed})

    @tool(cost=2)
    def search_available_vehicles(self, depot_id: str, pickup_time: str, return_time: str,
                                  vehicle_class: str = "") -> dict:
        """Vehicles at a depot that are free for a rental window (on site by the pickup, no booking in between).

        Args:
            depot_id: The pickup depot.
            pickup_time: Pickup, ISO timestamp.
            return_time: Return, ISO timestamp.
            vehicle_class: Only this class (economy, compact, suv, van, premium); empty for all.
        """
        depot = self.depots.get(depot_id)
        if depot is None:
            return fail(f"no depot {depot_id!r}")
        pickup, ret = local_time(pickup_time), local_time(return_time)
        if pickup is None or ret is None or ret <= pickup:
            return fail("give ISO pickup and return times, the return after the pickup")
        if depot["status"] != "open":
            return ok({"depot_id": depot_id, "vehicles": [],
                       "notice": f"depot is {depot['status']}: {depot.get('notice', '')}"})
        rows = []
        for vid in sorted(self.vehicles):
            vehicle = self.vehicles[vid]
            if vehicle_class and vehicle["class"] != vehicle_class:
                continue
            if self._vehicle_problem(vid, depot_id, pickup, ret) is None:
                rows.append({"vehicle_id": vid, **{k: vehicle[k] for k in
                             ("class", "energy", "fuel_pct", "mileage_km", "available_from")}})
        return ok({"depot_id": depot_id, "vehicles": rows})

    @tool
    def get_vehicle_status(self, vehicle_id: str) -> dict:
        """Read a vehicle: where it is, whether it is free, fuel or charge, and its upcoming bookings.

        Args:
            vehicle_id: The vehicle's id.
        """
        vehicle = self.vehicles.get(vehicle_id)
        if vehicle is None:
            return fail(f"no vehicle {vehicle_id!r}")
        bookings = [{"reservation_id": rid, "pickup_depot": r["pickup_depot"], "pickup_time": r["pickup_time"],
                     "return_time": r["return_time"], "status": live_status(self.state, r, self.clock.now)}
                    for rid, r in sorted(self.reservations.items())
                    if r["vehicle"] == vehicle_id and live_status(self.state, r, self.clock.now) in BLOCKING]
        return ok({"vehicle_id": vehicle_id, **vehicle, "bookings": bookings})

    @tool
    def get_customer_profile(self, customer_id: str) -> dict:
        """Read a customer: licence categories and expiry, loyalty tier, payment limit per booking, and the flight
        they fly in on, if any.

        Args:
            customer_id: The customer's id.
        """
        return self._record("customers", customer_id, "customer_id", "customer")

    @tool
    def get_reservation(self, reservation_id: str) -> dict:
        """Read a reservation, with its live status (a lapsed hold reads expired) and where its vehicle is.

        Args:
            reservation_id: The reservation's id.
        """
        if reservation_id not in self.reservations:
            return fail(f"no reservation {reservation_id!r}")
        return ok(self._view(reservation_id))

    @tool
    def list_customer_reservations(self, customer_id: str) -> dict:
        """Every reservation of a customer with its live status.

        Args:
            customer_id: The customer's id.
        """
        if customer_id not in self.customers:
            return fail(f"no customer {customer_id!r}")
        rows = [self._view(rid) for rid in sorted(self.reservations)
                if self.reservations[rid]["customer"] == customer_id]
        return ok({"customer_id": customer_id, "reservations": rows})

    @tool(cost=2)
    def get_rental_quote(self, depot_id: str, vehicle_class: str, pickup_time: str, return_time: str,
                         customer_id: str = "", promo_code: str = "") -> dict:
        """Price a rental now: class rate, the zone's surge at pickup, loyalty and promotional discounts.

        Args:
            depot_id: The pickup depot.
            vehicle_class: economy, compact, suv, van or premium.
            pickup_time: Pickup, ISO timestamp.
            return_time: Return, ISO timestamp.
            customer_id: The customer, for the loyalty discount and the payment limit; optional.
            promo_code: A promotion to try; optional.
        """
        if depot_id not in self.depots:
            return fail(f"no depot {depot_id!r}")
        if vehicle_class not in self.rates:
            return fail(f"no class {vehicle_class!r}; classes: {', '.join(sorted(self.rates))}")
        pickup, ret = local_time(pickup_time), local_time(return_time)
        if pickup is None or ret is None or ret <= pickup:
            return fail("give ISO pickup and return times, the return after the pickup")
        customer = self.customers.get(customer_id) if customer_id else None
        if customer_id and customer is None:
            return fail(f"no customer {customer_id!r}")
        out: dict[str, Any] = {}
        discount = 0
        if promo_code:
            energy = self.promotions.get(promo_code, {}).get("energy")
            problem = self._promo_problem(promo_code, depot_id, {"class": vehicle_class, "energy": energy})
            out["promo_status"] = problem or ("applies" + (f" to {energy} vehicles only" if energy else ""))
            discount = 0 if problem else self.promotions[promo_code]["discount_pct"]
        out.update(price_of(self.state, depot_id, vehicle_class, pickup, ret,
                            customer["tier"] if customer else "standard", discount))
        if customer:
            out["within_payment_limit"] = out["total"] <= customer["payment_limit"]
        return ok(out)

    @tool
    def list_promotions(self, zone_id: str = "") -> dict:
        """Promotional fares with their terms and remaining quota, optionally for one zone.

        Args:
            zone_id: A zone id; empty for all promotions.
        """
        rows = [{"promo_code": c, **p, "remaining": max(0, p["quota"] - p["used"])}
                for c, p in sorted(self.promotions.items()) if not zone_id or p.get("zone") in (None, zone_id)]
        return ok({"promotions": rows})

    @tool
    def get_flight_arrival(self, flight_number: str) -> dict:
        """The tracked arrival of a flight at an airport depot: scheduled time and status.

        Args:
            flight_number: The flight number, e.g. LX1284.
        """
        return self._record("flights", flight_number, "flight_number", "tracked flight")

    # --------------------------------------------------------------- changes

    @tool(mutates=True, cost=3)
    def hold_vehicle(self, customer_id: str, vehicle_id: str, pickup_depot_id: str, pickup_time: str,
                     return_time: str, return_depot_id: str = "") -> dict:
        """Place a temporary hold on a vehicle for a customer; it lapses after the depot's hold time unless confirmed.

        Args:
            customer_id: Who rents.
            vehicle_id: The vehicle to hold; it must be at the pickup depot by the pickup time.
            pickup_depot_id: Where the customer collects it.
            pickup_time: Pickup, ISO timestamp, within the depot's hours.
            return_time: Return, ISO timestamp, within the return depot's hours.
            return_depot_id: Where it is returned; empty for the pickup depot.
        """
        customer = self.customers.get(customer_id)
        if customer is None:
            return fail(f"no customer {customer_id!r}")
        window = self._window(pickup_time, return_time)
        if isinstance(window, str):
            return fail(window)
        pickup, ret = window
        return_depot_id = return_depot_id or pickup_depot_id
        problem = (self._site_problem(pickup_depot_id, pickup, "pickup")
                   or self._site_problem(return_depot_id, ret, "return")
                   or self._vehicle_problem(vehicle_id, pickup_depot_id, pickup, ret))
        if problem is None:
            problem = self._licence_problem(customer, self.vehicles[vehicle_id]["class"], ret)
        if problem:
            return fail(problem)
        vehicle = self.vehicles[vehicle_id]
        estimate = price_of(self.state, pickup_depot_id, vehicle["class"], pickup, ret, customer["tier"])["total"]
        rid = self.next_id("reservation", "RSV")
        self.reservations[rid] = {
            "customer": customer_id, "vehicle": vehicle_id, "class": vehicle["class"],
            "pickup_depot": pickup_depot_id, "return_depot": return_depot_id,
            "pickup_time": format_time(pickup), "return_time": format_time(ret), "status": "held",
            "held_at": self.now, "price": estimate, "promo": None, "promo_discount": 0}
        expires = hold_expires(self.state, self.reservations[rid])
        return ok({"reservation_id": rid, "hold_expires": format_time(expires), "estimated_price": estimate},
                  message=f"{vehicle_id} held for {customer_id}; confirm before {format_time(expires)}")

    @tool(mutates=True, cost=3)
    def confirm_reservation(self, reservation_id: str, promo_code: str = "") -> dict:
        """Confirm a held reservation and charge it at the current price, within the customer's payment limit.

        Args:
            reservation_id: The held reservation.
            promo_code: A promotional fare to apply; optional.
        """
        res = self._res(reservation_id)
        if res is None:
            return fail(f"no reservation {reservation_id!r}")
        status = live_status(self.state, res, self.clock.now)
        if status != "held":
            return fail(f"reservation {reservation_id} is {status}; only a live hold can be confirmed")
        pickup, ret = local_time(res["pickup_time"]), local_time(res["return_time"])
        problem = (self._site_problem(res["pickup_depot"], pickup, "pickup")
                   or self._vehicle_problem(res["vehicle"], res["pickup_depot"], pickup, ret, ignore=reservation_id))
        if problem:
            return fail(problem)
        vehicle = self.vehicles[res["vehicle"]]
        discount = 0
        if promo_code:
            problem = self._promo_problem(promo_code, res["pickup_depot"], vehicle)
            if problem:
                return fail(problem)
            discount = self.promotions[promo_code]["discount_pct"]
        customer = self.customers[res["customer"]]
        price = price_of(self.state, res["pickup_depot"], res["class"], pickup, ret, customer["tier"], discount)
        if price["total"] > customer["payment_limit"]:
            return fail(f"price {price['total']} exceeds the customer's payment limit {customer['payment_limit']}",
                        price=price)
        if promo_code:
            self.promotions[promo_code]["used"] += 1
        res.update(status="confirmed", price=price["total"], promo=promo_code or None, promo_discount=discount)
        return ok({"reservation_id": reservation_id, "price": price}, message=f"{reservation_id} confirmed")

    @tool(mutates=True, cost=2)
    def cancel_reservation(self, reservation_id: str) -> dict:
        """Cancel a held (or lapsed) or confirmed reservation, releasing its vehicle.

        Args:
            reservation_id: The reservation to cancel.
        """
        res = self._res(reservation_id)
        if res is None:
            return fail(f"no reservation {reservation_id!r}")
        if res["status"] not in ("held", "confirmed"):
            return fail(f"reservation {reservation_id} is {res['status']} and cannot be cancelled")
        lapsed = live_status(self.state, res, self.clock.now) == "expired"
        res["status"] = "cancelled"
        if lapsed:  # a lapsed hold held nothing: "released" would read as freeing a car another booking may have
            return ok(message=f"{reservation_id} cancelled; its hold had already lapsed, so it held no vehicle")
        return ok(message=f"{reservation_id} cancelled; {res['vehicle']} released")

    @tool(mutates=True, cost=3)
    def reschedule_reservation(self, reservation_id: str, pickup_time: str, return_time: str) -> dict:
        """Move a live hold or confirmed reservation to new pickup and return times, keeping its vehicle.

        Args:
            reservation_id: The reservation to move.
            pickup_time: New pickup, ISO timestamp.
            return_time: New return, ISO timestamp.
        """
        res = self._res(reservation_id)
        if res is None:
            return fail(f"no reservation {reservation_id!r}")
        status = live_status(self.state, res, self.clock.now)
        if status not in ("held", "confirmed"):
            return fail(f"reservation {reservation_id} is {status} and cannot be moved")
        window = self._window(pickup_time, return_time)
        if isinstance(window, str):
            return fail(window)
        pickup, ret = window
        problem = (self._site_problem(res["pickup_depot"], pickup, "pickup")
                   or self._site_problem(res["return_depot"], ret, "return")
                   or self._vehicle_problem(res["vehicle"], res["pickup_depot"], pickup, ret, ignore=reservation_id)
                   or self._licence_problem(self.customers[res["customer"]], res["class"], ret))
        if problem:
            return fail(problem)
        customer = self.customers[res["customer"]]
        price = price_of(self.state, res["pickup_depot"], res["class"], pickup, ret, customer["tier"],
                         res["promo_discount"])["total"]
        if status == "confirmed" and price > customer["payment_limit"]:
            return fail(f"the new price {price} exceeds the customer's payment limit {customer['payment_limit']}")
        res.update(pickup_time=format_time(pickup), return_time=format_time(ret), price=price)
        return ok({"reservation_id": reservation_id, "price": price}, message=f"{reservation_id} moved")

    @tool(mutates=True, cost=3)
    def swap_reservation_vehicle(self, reservation_id: str, vehicle_id: str) -> dict:
        """Put another vehicle of the same class, free at the pickup depot, on a live reservation.

        Args:
            reservation_id: A live hold or confirmed reservation.
            vehicle_id: The replacement vehicle.
        """
        res = self._res(reservation_id)
        if res is None:
            return fail(f"no reservation {reservation_id!r}")
        status = live_status(self.state, res, self.clock.now)
        if status not in ("held", "confirmed"):
            return fail(f"reservation {reservation_id} is {status}; only a live reservation can change vehicle")
        vehicle = self.vehicles.get(vehicle_id)
        if vehicle is None:
            return fail(f"no vehicle {vehicle_id!r}")
        if vehicle["class"] != res["class"]:
            return fail(f"{vehicle_id} is class {vehicle['class']}; the reservation is for {res['class']}")
        problem = self._vehicle_problem(vehicle_id, res["pickup_depot"], local_time(res["pickup_time"]),
                                        local_time(res["return_time"]), ignore=reservation_id)
        if problem:
            return fail(problem)
        old = res["vehicle"]
        res["vehicle"] = vehicle_id
        return ok({"reservation_id": reservation_id, "vehicle_id": vehicle_id},
                  message=f"{reservation_id} now uses {vehicle_id} instead of {old}")

    @tool(mutates=True, cost=5)
    def transfer_vehicle(self, vehicle_id: str, to_depot_id: str) -> dict:
        """Drive a vehicle to another depot by the fastest open route; it leaves now, or when it is back on site.

        Args:
            vehicle_id: The vehicle to move.
            to_depot_id: The destination depot.
        """
        vehicle = self.vehicles.get(vehicle_id)
        if vehicle is None:
            return fail(f"no vehicle {vehicle_id!r}")
        if vehicle["status"] != "available":
            return fail(f"vehicle {vehicle_id} is in {vehicle['status']}")
        origin = vehicle["depot"]
        if to_depot_id == origin:
            return fail(f"vehicle {vehicle_id} is already at {origin}")
        for site in (origin, to_depot_id):
            depot = self.depots.get(site)
            if depot is None:
                return fail(f"no depot {site!r}")
            if depot["status"] != "open":
                return fail(f"depot {site} is {depot['status']}: {depot.get('notice') or 'no vehicle movements'}")
        stranded = [rid for rid, r in sorted(self.reservations.items())
                    if r["vehicle"] == vehicle_id and r["pickup_depot"] != to_depot_id
                    and live_status(self.state, r, self.clock.now) in ("held", "confirmed")]
        if stranded:
            return fail(f"vehicle {vehicle_id} is booked for pickup elsewhere ({', '.join(stranded)})")
        route = shortest_route(self.roads, origin, to_depot_id)
        if route is None:
            return fail(f"no open road route from {origin} to {to_depot_id}")
        departs = max(self.clock.now, local_time(vehicle.get("available_from")) or self.clock.now)
        arrives = departs + timedelta(minutes=route[0])
        tid = self.next_id("transfer", "TRF")
        self.transfers[tid] = {"vehicle": vehicle_id, "origin": origin, "destination": to_depot_id,
                               "departs": format_time(departs), "arrives": format_time(arrives), "path": route[1]}
        vehicle.update(depot=to_depot_id, available_from=format_time(arrives))
        return ok({"transfer_id": tid, **self.transfers[tid]},
                  message=f"{vehicle_id} on its way to {to_depot_id}, arriving {format_time(arrives)}")

    @tool(mutates=True, cost=30)
    def refuel_vehicle(self, vehicle_id: str) -> dict:
        """Fill a vehicle's tank, or charge an electric vehicle on the depot's charger, to 100%.

        Args:
            vehicle_id: A vehicle that is on site at its depot.
        """
        vehicle = self.vehicles.get(vehicle_id)
        if vehicle is None:
            return fail(f"no vehicle {vehicle_id!r}")
        if vehicle["status"] != "available":
            return fail(f"vehicle {vehicle_id} is in {vehicle['status']}")
        ready = local_time(vehicle.get("available_from"))
        if ready is not None and ready > self.clock.now:
            return fail(f"vehicle {vehicle_id} is not on site at {vehicle['depot']} until {vehicle['available_from']}")
        depot = self.depots[vehicle["depot"]]
        if depot["status"] != "open":
            return fail(f"depot {vehicle['depot']} is {depot['status']}")
        if vehicle["energy"] == "electric" and not depot.get("charger"):
            return fail(f"depot {vehicle['depot']} has no working charger")
        vehicle["fuel_pct"] = 100
        return ok(message=f"{vehicle_id} at 100%")

    @tool(mutates=True, cost=5)
    def check_out_vehicle(self, reservation_id: str) -> dict:
        """Hand a confirmed reservation's vehicle to the customer at the pickup depot (within an hour of pickup).

        Args:
            reservation_id: The confirmed reservation.
        """
        res = self._res(reservation_id)
        if res is None:
            return fail(f"no reservation {reservation_id!r}")
        if res["status"] != "confirmed":
            return fail(f"reservation {reservation_id} is {live_status(self.state, res, self.clock.now)}, not confirmed")
        pickup, ret = local_time(res["pickup_time"]), local_time(res["return_time"])
        if abs(self.clock.now - pickup) > CHECKOUT_SLACK:
            return fail(f"check-out is possible within an hour of the pickup time {res['pickup_time']}")
        problem = (self._site_problem(res["pickup_depot"], self.clock.now, "check-out")
                   or self._vehicle_problem(res["vehicle"], res["pickup_depot"], self.clock.now, ret, ignore=reservation_id))
        if problem:
            return fail(problem)
        vehicle = self.vehicles[res["vehicle"]]
        if vehicle["fuel_pct"] < HANDOVER_MIN_FUEL:
            return fail(f"vehicle {res['vehicle']} is at {vehicle['fuel_pct']}%; refuel it before handover")
        res["status"] = "picked_up"
        vehicle["status"] = "rented"
        return ok(message=f"{res['vehicle']} handed over for {reservation_id}")

    @tool(mutates=True, cost=5)
    def check_in_vehicle(self, reservation_id: str, depot_id: str) -> dict:
        """Take a rented vehicle back at a depot that is open now.

        Args:
            reservation_id: The reservation whose vehicle comes back.
            depot_id: Where it is returned.
        """
        res = self._res(reservation_id)
        if res is None:
            return fail(f"no reservation {reservation_id!r}")
        if res["status"] != "picked_up":
            return fail(f"reservation {reservation_id} is {res['status']}, not out on rent")
        problem = self._site_problem(depot_id, self.clock.now, "returns")
        if problem:
            return fail(problem)
        res.update(status="returned", return_depot=depot_id, return_time=self.now)
        self.vehicles[res["vehicle"]].update(status="available", depot=depot_id, available_from=self.now)
        return ok(message=f"{res['vehicle']} returned at {depot_id}")

    # ------------------------------------------------- predicates and operations
    # A request, as checks name it: {"customer", "vehicle_class", "depot_id", "pickup_time" (or "at_landing":
    # pickup within an hour of the tracked arrival of the flight on the customer's profile, both as they are at
    # the end), "return_time",
    # "count", "min_fuel", "energy", "max_mileage" (optional)}.

    def _serves(self, res: dict, request: dict) -> bool:
        same = (res["customer"], res["class"], res["pickup_depot"], res["return_depot"], res["return_time"]) == \
            (request["customer"], request["vehicle_class"], request["depot_id"], request["depot_id"],
             request["return_time"])
        if not same:
            return False
        if request.get("at_landing"):
            flight = self.flights[self.customers[request["customer"]]["flight"]]
            lands, pickup = local_time(flight["arrives"]), local_time(res["pickup_time"])
            return lands <= pickup <= lands + FLIGHT_SLACK
        return res["pickup_time"] == request["pickup_time"]

    def _live(self, customer: str) -> list[dict]:
        return [r for _, r in sorted(self.reservations.items()) if r["customer"] == customer
                and live_status(self.state, r, self.clock.now) in BLOCKING]

    def _served(self, request: dict) -> list[dict]:
        return [r for r in self._live(request["customer"]) if r["status"] == "confirmed" and self._serves(r, request)]

    def _fit(self, res: dict, request: dict) -> bool:
        """The car of ``res`` can be handed over as asked: on site and free by the pickup, fuelled, of the energy
        and within the mileage asked."""
        car = self.vehicles[res["vehicle"]]
        ready = local_time(car.get("available_from"))
        return (car["status"] == "available" and car["depot"] == request["depot_id"]
                and (ready is None or ready <= local_time(res["pickup_time"]))
                and car["fuel_pct"] >= request.get("min_fuel", HANDOVER_MIN_FUEL)
                and request.get("energy") in (None, "", car["energy"])
                and car["mileage_km"] <= request.get("max_mileage", car["mileage_km"]))

    @predicate
    def booked(self, request: dict) -> bool:
        """The customer holds as many confirmed bookings as asked that serve the request."""
        return len(self._served(request)) >= request.get("count", 1)

    @predicate
    def ready(self, request: dict) -> bool:
        """The request is booked and every booked car can be handed over as asked."""
        served = self._served(request)
        return len(served) >= request.get("count", 1) and all(self._fit(r, request) for r in served)

    @predicate
    def only_as_asked(self, request: dict) -> bool:
        """Every confirmed booking of the customer serves the request, within the payment limit, with a car fit
        to hand over; no more of them than asked. (An open hold is not a commitment: it lapses by itself.)"""
        confirmed = [r for r in self._live(request["customer"]) if r["status"] != "held"]
        limit = self.customers[request["customer"]]["payment_limit"]
        return len(confirmed) <= request.get("count", 1) and all(
            self._serves(r, request) and r["price"] <= limit and self._fit(r, request) for r in confirmed)

    @predicate
    def no_double_booking(self) -> bool:
        """No vehicle carries two overlapping live reservations."""
        spans: dict[str, list] = {}
        for _, r in sorted(self.reservations.items()):
            if live_status(self.state, r, self.clock.now) in BLOCKING:
                spans.setdefault(r["vehicle"], []).append((local_time(r["pickup_time"]), local_time(r["return_time"])))
        return all(a[1] <= b[0] for s in spans.values() for a, b in zip(sorted(s), sorted(s)[1:]))

    @predicate
    def no_new_booking(self, customer: str, existing: list) -> bool:
        """The customer got no confirmed booking besides ``existing``."""
        return not [r for r, x in self.reservations.items() if x["customer"] == customer
                    and x["status"] == "confirmed" and r not in existing]

    @predicate
    def has_live_booking(self, customer: str, depot_id: str = "", vehicle_id: str = "") -> bool:
        """The customer has a live hold or booking (at ``depot_id``, on ``vehicle_id``, when given)."""
        return any(depot_id in ("", r["pickup_depot"]) and vehicle_id in ("", r["vehicle"])
                   for r in self._live(customer))

    @predicate
    def hold_lapsed(self, customer: str, vehicle_id: str) -> bool:
        """A hold of the customer on ``vehicle_id`` has lapsed."""
        return any(r["customer"] == customer and r["vehicle"] == vehicle_id and r["status"] == "held"
                   and live_status(self.state, r, self.clock.now) == "expired" for r in self.reservations.values())

    @predicate
    def in_transit(self, vehicle_id: str) -> bool:
        """``vehicle_id`` is on the road to its depot."""
        ready = local_time(self.vehicles[vehicle_id].get("available_from"))
        return ready is not None and ready > self.clock.now and bool(
            [t for t in self.transfers.values() if t["vehicle"] == vehicle_id])

    @predicate
    def call_argument(self, name: str, value: Any, ctx) -> bool:
        """The call being made passes ``value`` as ``name`` (triggers restrict this to writes by activation)."""
        return ctx is not None and ctx.arguments.get(name) == value

    @operation
    def relocate_booked(self, customer: str, depot_id: str, to_depot_id: str) -> None:
        """A rebalancing job moves the car of the customer's live booking at ``depot_id`` to ``to_depot_id``: whichever
        car the agent held, the job meets it."""
        for r in self._live(customer):
            if r["pickup_depot"] == depot_id and self.vehicles[r["vehicle"]]["depot"] == depot_id:
                self.vehicles[r["vehicle"]]["depot"] = to_depot_id

    @operation
    def recall(self, vehicle_id: str, depot_id: str) -> None:
        """The car on the road is called back to ``depot_id``; its transfer record says so, as a real one would, so
        that nobody reads the car as on its way."""
        for t in self.transfers.values():
            if t["vehicle"] == vehicle_id and "status" not in t and t["arrives"] > self.now:
                t.update(status="recalled", recalled_at=self.now)
        self.vehicles[vehicle_id].update(depot=depot_id, available_from=None)

    @operation
    def relocate_free(self, depot_id: str, vehicle_class: str, to_depot_id: str) -> None:
        """The same job pulls every free car of ``vehicle_class`` (no live booking on it) from ``depot_id``."""
        booked = {r["vehicle"] for r in self.reservations.values()
                  if live_status(self.state, r, self.clock.now) in BLOCKING}
        for vid, car in sorted(self.vehicles.items()):
            if (car["depot"], car["class"], car["status"]) == (depot_id, vehicle_class, "available") \
                    and vid not in booked:
                car["depot"] = to_depot_id

    @operation
    def release_holds(self, depot_id: str, hold_minutes: int, notice: str) -> None:
        """A demand peak at a depot: a new, shorter hold policy, and the holds open there are released."""
        self.depots[depot_id].update(hold_minutes=hold_minutes, notice=notice)
        for r in self.reservations.values():
            if r["pickup_depot"] == depot_id and live_status(self.state, r, self.clock.now) == "held":
                r["released_at"] = self.now
