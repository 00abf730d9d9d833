"""The ColdChain world: temperature-sensitive goods moving from hubs to clinics in refrigerated vehicles.

State containers (all keyed by id):

- ``distribution_hubs``, ``depots``, ``clinics``: sites with receiving ``hours`` ("HH:MM" open/close),
  a ``status`` (``operational``, or e.g. ``outage``/``closed``) and a ``notice``. Hubs may carry a
  ``cold_dispatch`` quota (slots left before ``shift_ends`` and in the next shift); clinics carry an
  ``immunization_schedule`` whose sessions each name their ``registration_list``.
- ``registration_lists``: who is registered for a session (one dose each): its ``session_id``, clinic,
  product, ``registered`` count and a note.
- ``vehicles``: where a vehicle is (``site_id``), its ``status`` (``idle``, ``in_transit``, ``reserved``),
  its ``cooling_unit_id``, ``capacity`` in doses, ``available_from`` and the shipments on board.
- ``cooling_units``: the temperature band a unit can hold, its ``status`` and ``reset_due_by``
  (a unit running past it can no longer hold temperature); ``cooling_unit_resets`` are the
  defrost/maintenance windows that depots offer.
- ``goods_inventory``: lots (one batch of one product at one site) with quantity, temperature band,
  ``use_by`` and ``status`` (``available``, ``on_hold``, ``quarantined``).
- ``shipments``: a quantity of a lot going from an origin to a destination; ``route_stops``: the
  planned and actual times of each vehicle's stops; ``roads``: the travel-time graph.

Listings (``list_sites``, ``list_lots``, ``list_vehicles_at_site``, ``list_roads``) show every id an agent
needs, so nothing has to be guessed. Predicates answer what triggers and checks ask about the world
(and the call being made); ``set_time_from_now`` is the one operation beyond the engine's ``set_field``.

Rules the tools enforce: stock is reserved by every shipment not yet dispatched, and a shipment
carrying a ``hold_expires`` time (a provisional allocation) lapses when the clock passes it;
routes follow the fastest open roads and every stop takes ``DWELL_MINUTES``; a vehicle leaves at
the later of the dispatch call and its ``available_from``, only on open roads, from operating
origins that still store the lot, with a free cold-dispatch slot for the shift it loads in; goods
can be received only if the roads to the stop are still open and the destination is open at the
vehicle's arrival time.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from sttgym.clock import format_time, parse_time
from sttgym.geo import shortest_route
from sttgym.tools import fail, ok, tool
from sttgym.world import World, operation, predicate

__all__ = ["ColdChainWorld", "DWELL_MINUTES", "RESET_INTERVAL_HOURS", "cooling_covers", "open_at", "lapsed", "PENDING"]

DWELL_MINUTES = 15  # loading or unloading at every stop
RESET_INTERVAL_HOURS = 12  # how long a freshly reset cooling unit runs before its next reset
MAX_STOPS = 8
ACTIVE = ("created", "assigned")  # shipments that reserve stock and wait for a vehicle to leave
PENDING = ACTIVE + ("in_transit",)  # shipments still promised: an episode must not end with a stale one
SITE_CONTAINERS = ("distribution_hubs", "depots", "clinics")
KINDS = {"hub": "distribution_hubs", "depot": "depots", "clinic": "clinics"}


def cooling_covers(unit: dict | None, lot: dict) -> bool:
    """Whether ``unit``'s temperature band overlaps the band ``lot`` must be kept in."""
    if not unit:
        return False
    return max(unit["min_temp_c"], lot["temp_min_c"]) <= min(unit["max_temp_c"], lot["temp_max_c"])


def open_at(site: dict, moment: str) -> bool:
    """Whether ``site`` is operating and inside its hours at ISO time ``moment``."""
    if site.get("status") != "operational":
        return False
    hhmm = moment[11:16]
    return site["hours"]["open"] <= hhmm <= site["hours"]["close"]


def lapsed(shipment: dict, now: str) -> bool:
    """A provisional allocation that was not dispatched before its hold expired."""
    expires = shipment.get("hold_expires")
    return bool(expires) and shipment["status"] in ACTIVE + ("held",) and now >= expires


def _within(total: int, at_least: int, at_most: int | None) -> bool:
    """``total`` doses are at least ``at_least`` and, where ``at_most`` is given, no more than it."""
    return at_least <= total and (at_most is None or total <= at_most)


def _plus(moment: str, minutes: int) -> str:
    return format_time(parse_time(moment) + timedelta(minutes=minutes))


def _latest(*moments: str | None) -> str:
    return max(t for t in moments if t)


class ColdChainWorld(World):
    """Hubs, depots, clinics, refrigerated vehicles and the goods they carry."""

    domain = "ColdChain"
    # The rules every check of the domain enforces, told to every agent (checks quote them in ``stated``).
    description = ("Cold-chain logistics: ship temperature-sensitive goods from distribution hubs to clinics "
                   "in refrigerated vehicles, on time and inside their temperature limits. A delivery counts when "
                   "exactly the doses requested are received where they are needed, before the session they are "
                   "for, while the receiving site is open. Every load must ride a working cooling unit that holds "
                   "its lot's temperature band and is not overdue for its reset, from a lot that is available and "
                   "within its use-by time (a unit holds a band its range reaches into: a 0 to 10 degrees C unit "
                   "holds a 2 to 8 degrees C lot, a freezer unit does not). Leave no shipment reserved, assigned "
                   "or on the road that the plan does not use. If a request cannot be met, tell the user why "
                   "instead of sending doses that break these rules.")
    inert = {"shipments": {"status": ["cancelled"]}}  # a cancelled shipment commits nothing

    def commits(self, container: str, entity: dict) -> bool:
        """A route stop never commits anything by itself: the van it belongs to is the commitment, and the van's own
        fields (its status, its ``route_stop_ids``) are what the collateral gate compares."""
        return container != "route_stops" and super().commits(container, entity)

    # ------------------------------------------------------------------ helpers

    def _site(self, site_id: str) -> tuple[str, dict] | None:
        for container in SITE_CONTAINERS:
            site = self.state.get(container, {}).get(site_id)
            if site is not None:
                return container, site
        return None

    def _shipment_view(self, shipment_id: str, shipment: dict) -> dict:
        status = "lapsed" if lapsed(shipment, self.now) else shipment["status"]
        return {"shipment_id": shipment_id, **shipment, "status": status}

    def _reserved(self, lot_id: str) -> int:
        """Doses of ``lot_id`` promised to shipments that have not left yet."""
        return sum(s["quantity"] for s in self.shipments.values()
                   if s["goods_id"] == lot_id and s["status"] in ACTIVE + ("held",) and not lapsed(s, self.now))

    def _road_between(self, a: str, b: str) -> str:
        candidates = sorted((r["minutes"], rid) for rid, r in self.roads.items()
                            if r.get("open", True) and {r["a"], r["b"]} == {a, b})
        return candidates[0][1]

    def _legs(self, start: str, stops: list[str]) -> list[dict] | str:
        """Each stop with its travel minutes and roads from the previous one, or why none exists."""
        legs, here = [], start
        for site_id in stops:
            found = shortest_route(self.roads, here, site_id)
            if found is None:
                return f"no open road connects {here} to {site_id}"
            minutes, path = found
            roads = [self._road_between(x, y) for x, y in zip(path, path[1:])]
            legs.append({"site_id": site_id, "travel_minutes": minutes, "via": path, "road_ids": roads})
            here = site_id
        return legs

    def _stops_of(self, vehicle_id: str) -> list[dict]:
        vehicle = self.vehicles[vehicle_id]
        return [{"route_stop_id": sid, **self.route_stops[sid]} for sid in vehicle["route_stop_ids"]]

    def _timeline(self, vehicle_id: str, departure: str) -> list[tuple[str, str, str]]:
        """``(stop id, arrival, departure)`` of each of ``vehicle_id``'s stops if it leaves at ``departure``."""
        times, clock = [], departure
        for sid in self.vehicles[vehicle_id]["route_stop_ids"]:
            arrival = _plus(clock, self.route_stops[sid]["travel_minutes"])
            clock = _plus(arrival, DWELL_MINUTES)
            times.append((sid, arrival, clock))
        return times

    def _schedule(self, vehicle_id: str, departure: str) -> None:
        """Set the planned times of ``vehicle_id``'s stops for a departure at ``departure``."""
        for sid, arrival, leaving in self._timeline(vehicle_id, departure):
            self.route_stops[sid].update(planned_arrival=arrival, planned_departure=leaving)

    def _departure(self, vehicle: dict) -> str:
        return _latest(self.now, vehicle.get("available_from"), vehicle.get("scheduled_departure"))

    def _next_id(self, prefix: str, container: dict, base: int) -> str:
        number = base + len(container) + 1
        while f"{prefix}-{number}" in container:
            number += 1
        return f"{prefix}-{number}"

    # -------------------------------------------------------------------- reads

    @tool(cost=2)
    def get_vehicle_status(self, vehicle_id: str) -> dict:
        """Read a vehicle: its site, status, cooling unit, capacity, shipments on board and when it is free.

        Args:
            vehicle_id: The vehicle's id, e.g. "VH-104".
        """
        vehicle = self.vehicles.get(vehicle_id)
        if vehicle is None:
            return fail(f"no vehicle {vehicle_id!r}")
        return ok({"vehicle_id": vehicle_id, **vehicle})

    @tool(cost=2)
    def list_vehicles_at_site(self, site_id: str) -> dict:
        """List the vehicles currently at a site, with their status, cooling unit, capacity and when they are free.

        Args:
            site_id: A hub, depot or clinic id.
        """
        if self._site(site_id) is None:
            return fail(f"no site {site_id!r}")
        found = []
        for vid, v in sorted(self.vehicles.items()):
            if v["site_id"] == site_id:
                unit = self.cooling_units.get(v["cooling_unit_id"], {})
                found.append({"vehicle_id": vid, "kind": v["kind"], "status": v["status"], "note": v.get("note"),
                              "cooling_unit_id": v["cooling_unit_id"],
                              "holds_c": [unit.get("min_temp_c"), unit.get("max_temp_c")],
                              "capacity": v["capacity"], "available_from": v["available_from"]})
        return ok({"site_id": site_id, "vehicles": found})

    @tool(cost=2)
    def get_cooling_unit_status(self, cooling_unit_id: str) -> dict:
        """Read a cooling unit: the temperature band it holds, its status and when its next reset is due.

        Args:
            cooling_unit_id: The unit's id, e.g. "CU-2210".
        """
        unit = self.cooling_units.get(cooling_unit_id)
        if unit is None:
            return fail(f"no cooling unit {cooling_unit_id!r}")
        return ok({"cooling_unit_id": cooling_unit_id, **unit})

    @tool(cost=2)
    def list_depot_maintenance_schedule(self, depot_id: str) -> dict:
        """List a depot's cooling-unit reset windows (open or booked), earliest first.

        Args:
            depot_id: The depot's id.
        """
        if depot_id not in self.depots:
            return fail(f"no depot {depot_id!r}")
        windows = sorted(({"reset_window_id": wid, **w} for wid, w in self.cooling_unit_resets.items()
                          if w["depot_id"] == depot_id), key=lambda w: (w["start"], w["reset_window_id"]))
        return ok({"depot_id": depot_id, "windows": windows})

    @tool(cost=2)
    def get_shipment_journey_status(self, shipment_id: str) -> dict:
        """Read a shipment: goods (and the lot's current status), quantity, route ends, status, vehicle and its stops.

        Args:
            shipment_id: The shipment's id, e.g. "SHP-4821".
        """
        shipment = self.shipments.get(shipment_id)
        if shipment is None:
            return fail(f"no shipment {shipment_id!r}")
        view = self._shipment_view(shipment_id, shipment)
        lot = self.goods_inventory.get(shipment["goods_id"], {})
        view["lot_status"], view["lot_note"] = lot.get("status"), lot.get("note")
        vehicle_id = shipment.get("vehicle_id")
        view["stops"] = self._stops_of(vehicle_id) if vehicle_id in self.vehicles else []
        return ok(view)

    @tool(cost=2)
    def get_route_stop_details(self, vehicle_id: str) -> dict:
        """Read a vehicle's planned route: each stop with planned and actual times and the roads it uses.

        Args:
            vehicle_id: The vehicle's id.
        """
        if vehicle_id not in self.vehicles:
            return fail(f"no vehicle {vehicle_id!r}")
        stops = self._stops_of(vehicle_id)
        for stop in stops:
            stop["closed_roads"] = [r for r in stop["road_ids"] if not self.roads.get(r, {}).get("open", True)]
        return ok({"vehicle_id": vehicle_id, "status": self.vehicles[vehicle_id]["status"], "stops": stops})

    @tool(cost=2)
    def get_goods_inventory_at_site(self, site_id: str) -> dict:
        """List the lots stored at a site: quantity, free (unreserved) doses, status, temperature band, use-by time.

        Args:
            site_id: A hub, depot or clinic id.
        """
        if self._site(site_id) is None:
            return fail(f"no site {site_id!r}")
        lots = [{"goods_id": gid, **lot, "free": max(0, lot["quantity"] - self._reserved(gid))}
                for gid, lot in sorted(self.goods_inventory.items()) if lot["site_id"] == site_id]
        return ok({"site_id": site_id, "lots": lots})

    @tool(cost=2)
    def list_clinic_immunization_schedule(self, site_id: str) -> dict:
        """List a clinic's immunization sessions: product, registration list, start time and where the session is held.

        Args:
            site_id: The clinic's id.
        """
        clinic = self.clinics.get(site_id)
        if clinic is None:
            return fail(f"no clinic {site_id!r}")
        sessions = sorted(({"session_id": sid, **s} for sid, s in clinic["immunization_schedule"].items()),
                          key=lambda s: (s["start"], s["session_id"]))
        return ok({"site_id": site_id, "sessions": sessions})

    @tool(cost=2)
    def get_registration_list(self, registration_list_id: str) -> dict:
        """Read a session's registration list: its session, clinic and product, and how many people are registered
        (each gets one dose).

        Args:
            registration_list_id: The list's id, as the clinic's immunization schedule names it, e.g. "REG-3310".
        """
        registrations = self.registration_lists.get(registration_list_id)
        if registrations is None:
            return fail(f"no registration list {registration_list_id!r}")
        return ok({"registration_list_id": registration_list_id, **registrations})

    @tool(cost=2)
    def list_operational_hours(self, site_id: str) -> dict:
        """Read a site's receiving hours, operating status and notices (and, for hubs, the cold-dispatch quota of the shift).

        Args:
            site_id: A hub, depot or clinic id.
        """
        found = self._site(site_id)
        if found is None:
            return fail(f"no site {site_id!r}")
        container, site = found
        data = {"site_id": site_id, "kind": container[:-1].replace("distribution_", ""), "name": site["name"],
                "hours": site["hours"], "status": site["status"], "notice": site.get("notice")}
        quota = site.get("cold_dispatch")
        if quota is not None:
            data["cold_dispatch"] = dict(quota)
            if self.now >= quota["shift_ends"]:  # a playtester read the ended shift's count as still open
                data["cold_dispatch"]["note"] = (f"the shift that ended at {quota['shift_ends'][11:]} is over: "
                                                 "loading from now on uses next_shift_remaining")
        return ok(data)

    @tool(cost=2)
    def list_sites(self, kind: Literal["hub", "depot", "clinic"] | None = None) -> dict:
        """List the region's sites (distribution hubs, depots with cold rooms, clinics), optionally of one kind.

        Args:
            kind: Optional: "hub", "depot" or "clinic".
        """
        kinds = [kind] if kind else list(KINDS)
        sites = [{"site_id": sid, "kind": k, "name": site["name"], "district": site.get("district"),
                  "status": site["status"]}
                 for k in kinds for sid, site in sorted(self.state.get(KINDS[k], {}).items())]
        return ok({"sites": sites})

    @tool(cost=2)
    def list_lots(self, product: str | None = None) -> dict:
        """List the goods lots stored anywhere in the region (optionally of one product): site, free doses, status, use-by.

        Args:
            product: Optional product name, e.g. "insulin".
        """
        lots = [{"goods_id": gid, "product": lot["product"], "batch": lot["batch"], "site_id": lot["site_id"],
                 "quantity": lot["quantity"], "free": max(0, lot["quantity"] - self._reserved(gid)),
                 "status": lot["status"], "use_by": lot["use_by"], "note": lot.get("note")}
                for gid, lot in sorted(self.goods_inventory.items()) if product in (None, lot["product"])]
        return ok({"lots": lots})

    @tool(cost=1)
    def list_roads(self, site_id: str) -> dict:
        """List the roads that touch a site: the site at the other end, minutes of driving, open or closed.

        Args:
            site_id: A hub, depot or clinic id.
        """
        if self._site(site_id) is None:
            return fail(f"no site {site_id!r}")
        roads = [{"road_id": rid, "to": r["b"] if r["a"] == site_id else r["a"], "minutes": r["minutes"],
                  "open": r.get("open", True), "note": r.get("note")}
                 for rid, r in sorted(self.roads.items()) if site_id in (r["a"], r["b"])]
        return ok({"site_id": site_id, "roads": roads})

    @tool(cost=1)
    def get_travel_time(self, origin_site_id: str, destination_site_id: str) -> dict:
        """The fastest open road route between two sites: minutes of driving and the sites passed.

        Args:
            origin_site_id: Where the trip starts.
            destination_site_id: Where it ends.
        """
        for site_id in (origin_site_id, destination_site_id):
            if self._site(site_id) is None:
                return fail(f"no site {site_id!r}")
        legs = self._legs(origin_site_id, [destination_site_id])
        if isinstance(legs, str):
            return fail(legs)
        leg = legs[0]
        return ok({"origin": origin_site_id, "destination": destination_site_id, "minutes": leg["travel_minutes"],
                   "via": leg["via"], "road_ids": leg["road_ids"]})

    # ---------------------------------------------------------------- mutations

    @tool(mutates=True, cost=5)
    def create_new_shipment(self, goods_id: str, origin_site_id: str, destination_site_id: str, quantity: int) -> dict:
        """Create a shipment of doses from a goods lot, reserving them at the origin until the vehicle leaves.

        Args:
            goods_id: The lot to ship from (it must be stored at the origin).
            origin_site_id: The site the lot is stored at.
            destination_site_id: The clinic, hub or depot receiving the goods.
            quantity: Number of doses, at least 1.
        """
        lot = self.goods_inventory.get(goods_id)
        if lot is None:
            return fail(f"no goods lot {goods_id!r}")
        if lot["site_id"] != origin_site_id:
            return fail(f"lot {goods_id} is stored at {lot['site_id']}, not at {origin_site_id!r}")
        if self._site(destination_site_id) is None or destination_site_id == origin_site_id:
            return fail(f"invalid destination {destination_site_id!r}")
        if lot["status"] != "available":
            return fail(f"lot {goods_id} is {lot['status']} and cannot be shipped")
        if lot["use_by"] <= self.now:
            return fail(f"lot {goods_id} passed its use-by time {lot['use_by']}")
        free = lot["quantity"] - self._reserved(goods_id)
        if not 0 < quantity <= free:
            return fail(f"quantity must be between 1 and the {max(0, free)} free doses of {goods_id}")
        shipment_id = self._next_id("SHP", self.shipments, 5000)
        self.shipments[shipment_id] = {
            "goods_id": goods_id, "product": lot["product"], "quantity": quantity, "origin_site_id": origin_site_id,
            "destination_site_id": destination_site_id, "status": "created", "vehicle_id": None, "hold_expires": None,
            "created_at": self.now, "dispatched_at": None, "received_at": None}
        return ok({"shipment_id": shipment_id}, message=f"{shipment_id}: {quantity} doses of {goods_id} reserved")

    @tool(mutates=True, cost=3)
    def cancel_shipment(self, shipment_id: str) -> dict:
        """Cancel a shipment that has not left yet, releasing its reserved doses and its vehicle assignment.

        Args:
            shipment_id: The shipment to cancel.
        """
        shipment = self.shipments.get(shipment_id)
        if shipment is None:
            return fail(f"no shipment {shipment_id!r}")
        if shipment["status"] not in ACTIVE + ("held",):
            return fail(f"shipment {shipment_id} is {shipment['status']}; only undispatched shipments can be cancelled")
        vehicle = self.vehicles.get(shipment["vehicle_id"])
        if vehicle is not None:
            vehicle["shipment_ids"].remove(shipment_id)
        shipment.update(status="cancelled", vehicle_id=None)
        return ok(message=f"{shipment_id} cancelled")

    @tool(mutates=True, cost=3)
    def assign_shipment_to_vehicle(self, shipment_id: str, vehicle_id: str) -> dict:
        """Load a shipment onto an idle vehicle (moving it off any other vehicle it was assigned to).

        Args:
            shipment_id: The shipment to load.
            vehicle_id: The vehicle that will carry it.
        """
        shipment, vehicle = self.shipments.get(shipment_id), self.vehicles.get(vehicle_id)
        if shipment is None:
            return fail(f"no shipment {shipment_id!r}")
        if vehicle is None:
            return fail(f"no vehicle {vehicle_id!r}")
        if lapsed(shipment, self.now):
            return fail(f"shipment {shipment_id} lapsed: its allocation hold expired at {shipment['hold_expires']}")
        if shipment["status"] not in ACTIVE + ("held",):
            return fail(f"shipment {shipment_id} is {shipment['status']} and cannot be assigned")
        if vehicle["status"] != "idle":
            return fail(f"vehicle {vehicle_id} is {vehicle['status']}")
        load = sum(self.shipments[s]["quantity"] for s in vehicle["shipment_ids"] if s != shipment_id)
        if load + shipment["quantity"] > vehicle["capacity"]:
            return fail(f"vehicle {vehicle_id} holds {vehicle['capacity']} doses; {load} already on board")
        previous = self.vehicles.get(shipment["vehicle_id"])
        if previous is not None and previous is not vehicle:
            previous["shipment_ids"].remove(shipment_id)
        if shipment_id not in vehicle["shipment_ids"]:
            vehicle["shipment_ids"].append(shipment_id)
        shipment.update(status="assigned", vehicle_id=vehicle_id)
        unit = self.cooling_units.get(vehicle["cooling_unit_id"])
        covers = cooling_covers(unit, self.goods_inventory[shipment["goods_id"]])
        note = "" if covers else " WARNING: the vehicle's cooling cannot hold this lot's temperature band"
        return ok({"cooling_compatible": covers}, message=f"{shipment_id} assigned to {vehicle_id}{note}")

    @tool(mutates=True, cost=4)
    def add_or_update_route_plan(self, vehicle_id: str, route_plan: list[str], departure_time: str | None = None) -> dict:
        """Plan (or replace) an idle vehicle's route as an ordered list of stops, driven on the fastest open roads.

        The vehicle starts from the site where it is parked and stops 15 minutes at every stop. It leaves when
        dispatched, but not before it is free nor before ``departure_time``. Each shipment on board must have
        its origin before its destination.

        Args:
            vehicle_id: The vehicle to route.
            route_plan: Site ids in visiting order, e.g. ["HUB-NORTH", "CLINIC-DOWNTOWN"].
            departure_time: Optional earliest departure, ISO time such as "2024-08-15T10:30", not in the past.
        """
        vehicle = self.vehicles.get(vehicle_id)
        if vehicle is None:
            return fail(f"no vehicle {vehicle_id!r}")
        if departure_time is not None:
            moment = parse_time(departure_time)
            if moment is None or not self.now <= format_time(moment) <= _plus(self.now, 24 * 60):
                return fail("departure_time must be an ISO time between now and 24 hours from now")
            departure_time = format_time(moment)
        if vehicle["status"] != "idle":
            return fail(f"vehicle {vehicle_id} is {vehicle['status']}; only idle vehicles can be routed")
        if not 0 < len(route_plan) <= MAX_STOPS:
            return fail(f"a route has 1 to {MAX_STOPS} stops")
        unknown = [s for s in route_plan if self._site(s) is None]
        if unknown:
            return fail(f"unknown site(s): {', '.join(map(repr, unknown[:3]))}")
        if any(a == b for a, b in zip(route_plan, route_plan[1:])):
            return fail("the same site appears twice in a row")
        for sid in vehicle["shipment_ids"]:
            shipment = self.shipments[sid]
            sites = [vehicle["site_id"]] + route_plan
            origin, dest = shipment["origin_site_id"], shipment["destination_site_id"]
            if origin not in sites or dest not in route_plan[sites.index(origin):]:
                return fail(f"the route must visit {origin} and then {dest} for shipment {sid}")
        legs = self._legs(vehicle["site_id"], route_plan)
        if isinstance(legs, str):
            return fail(legs)
        for sid in vehicle["route_stop_ids"]:
            del self.route_stops[sid]
        vehicle.update(route_stop_ids=[], scheduled_departure=departure_time)
        for seq, leg in enumerate(legs, 1):
            stop_id = self._next_id("RS", self.route_stops, 7000)
            self.route_stops[stop_id] = {"vehicle_id": vehicle_id, "seq": seq, **leg, "planned_arrival": None,
                                         "planned_departure": None, "actual_arrival": None, "actual_departure": None}
            vehicle["route_stop_ids"].append(stop_id)
        self._schedule(vehicle_id, self._departure(vehicle))
        return ok({"vehicle_id": vehicle_id, "stops": self._stops_of(vehicle_id)},
                  message=f"route of {vehicle_id} planned with {len(legs)} stop(s); set its status to in_transit "
                          "to dispatch it")

    @tool(mutates=True, cost=5)
    def update_vehicle_status(self, vehicle_id: str, status: Literal["in_transit", "idle"]) -> dict:
        """Dispatch a loaded, routed vehicle ("in_transit") or stand a dispatched one down ("idle").

        Dispatch checks the cooling unit, the roads and the origin hubs, then re-times the route from the
        moment the vehicle leaves. Standing down recalls the vehicle: its shipments return to the origin
        still reserved, and its route is cleared.

        Args:
            vehicle_id: The vehicle.
            status: "in_transit" to dispatch, "idle" to recall.
        """
        vehicle = self.vehicles.get(vehicle_id)
        if vehicle is None:
            return fail(f"no vehicle {vehicle_id!r}")
        if status == "idle":
            return self._recall(vehicle_id, vehicle)
        return self._dispatch(vehicle_id, vehicle)

    def _cannot_leave(self, vehicle_id: str, vehicle: dict) -> str | list[tuple[dict, str]]:
        """Why ``vehicle_id`` cannot be dispatched now, or the cold-dispatch slots (quota, counter) its loading
        would use: the one judgement the dispatch tool and the checks of a loaded van share."""
        if vehicle["status"] != "idle":
            return f"vehicle {vehicle_id} is {vehicle['status']}"
        if not vehicle["shipment_ids"]:
            return f"vehicle {vehicle_id} carries no shipment"
        if not vehicle["route_stop_ids"]:
            return f"vehicle {vehicle_id} has no route plan"
        unit = self.cooling_units.get(vehicle["cooling_unit_id"])
        if unit is not None and unit["status"] == "fault":
            return f"cooling unit {vehicle['cooling_unit_id']} is in fault; the vehicle may not leave"
        stops = self._stops_of(vehicle_id)
        closed = sorted({r for s in stops for r in s["road_ids"] if not self.roads.get(r, {}).get("open", True)})
        if closed:
            return f"the planned route uses closed road(s) {', '.join(closed)}; re-plan the route"
        route_sites = [vehicle["site_id"]] + [s["site_id"] for s in stops]
        shipments = [(sid, self.shipments[sid]) for sid in vehicle["shipment_ids"]]
        for sid, shipment in shipments:
            origin, dest = shipment["origin_site_id"], shipment["destination_site_id"]
            if origin not in route_sites or dest not in route_sites[route_sites.index(origin) + 1:]:
                return f"the route no longer visits {origin} and then {dest} for {sid}; re-plan it"
            if lapsed(shipment, self.now):
                return f"shipment {sid} lapsed: its allocation hold expired at {shipment['hold_expires']}"
            if self.goods_inventory[shipment["goods_id"]]["site_id"] != origin:
                return f"lot {shipment['goods_id']} of {sid} is no longer stored at {origin}"
            if self.goods_inventory[shipment["goods_id"]]["status"] != "available":
                return f"lot {shipment['goods_id']} of {sid} is {self.goods_inventory[shipment['goods_id']]['status']}"
        departure = self._departure(vehicle)
        timeline = self._timeline(vehicle_id, departure)
        slots = []  # (quota, counter) each origin hub's loading uses up
        for origin in sorted({s["origin_site_id"] for _, s in shipments}):
            site = self._site(origin)[1]
            if site["status"] != "operational":
                return f"{origin} is in {site['status']}; nothing can be dispatched from it"
            quota = site.get("cold_dispatch")
            if quota is None:
                continue
            loading = next((a for sid, a, _ in timeline if self.route_stops[sid]["site_id"] == origin), departure)
            counter = "remaining" if loading < quota["shift_ends"] else "next_shift_remaining"
            if quota[counter] < 1:
                shift = "this shift" if counter == "remaining" else f"the shift starting {quota['shift_ends'][11:]}"
                return f"{origin} has no cold-dispatch slot left for loading at {loading[11:]} ({shift})"
            slots.append((quota, counter))
        return slots

    def _dispatch(self, vehicle_id: str, vehicle: dict) -> dict:
        slots = self._cannot_leave(vehicle_id, vehicle)
        if isinstance(slots, str):
            return fail(slots)
        for quota, counter in slots:
            quota[counter] -= 1
        departure = self._departure(vehicle)
        self._schedule(vehicle_id, departure)
        for sid in vehicle["shipment_ids"]:
            shipment = self.shipments[sid]
            shipment.update(status="in_transit", dispatched_at=departure)
            self.goods_inventory[shipment["goods_id"]]["quantity"] -= shipment["quantity"]
        vehicle.update(status="in_transit", departed_at=departure)
        arrival = self.route_stops[vehicle["route_stop_ids"][-1]]["planned_arrival"]
        return ok({"vehicle_id": vehicle_id, "departs": departure, "last_arrival": arrival},
                  message=f"{vehicle_id} dispatched at {departure}")

    def _recall(self, vehicle_id: str, vehicle: dict) -> dict:
        if vehicle["status"] != "in_transit":
            return fail(f"vehicle {vehicle_id} is {vehicle['status']}, not in transit")
        if any(self.shipments[s]["status"] == "delivered" for s in vehicle["shipment_ids"]):
            return fail(f"vehicle {vehicle_id} already delivered part of its load and must finish its route")
        for sid in vehicle["shipment_ids"]:
            shipment = self.shipments[sid]
            shipment.update(status="assigned", dispatched_at=None)
            self.goods_inventory[shipment["goods_id"]]["quantity"] += shipment["quantity"]
        for sid in vehicle["route_stop_ids"]:
            del self.route_stops[sid]
        vehicle.update(status="idle", route_stop_ids=[], departed_at=None, scheduled_departure=None)
        return ok(message=f"{vehicle_id} recalled to {vehicle['site_id']}; its shipments wait there, still assigned")

    @tool(mutates=True, cost=3)
    def register_goods_receipt(self, shipment_id: str, site_id: str) -> dict:
        """Register that a dispatched shipment was received at its destination, at the vehicle's arrival time.

        Args:
            shipment_id: The shipment being received.
            site_id: The receiving site (the shipment's destination).
        """
        shipment = self.shipments.get(shipment_id)
        if shipment is None:
            return fail(f"no shipment {shipment_id!r}")
        if shipment["status"] != "in_transit":
            return fail(f"shipment {shipment_id} is {shipment['status']}, not in transit")
        if site_id != shipment["destination_site_id"]:
            return fail(f"shipment {shipment_id} is addressed to {shipment['destination_site_id']}, not {site_id!r}")
        vehicle = self.vehicles[shipment["vehicle_id"]]
        stops = [s for s in self._stops_of(shipment["vehicle_id"]) if s["site_id"] == site_id]
        if not stops:
            return fail(f"vehicle {shipment['vehicle_id']} does not stop at {site_id}")
        route = self._stops_of(shipment["vehicle_id"])
        upto = route[:route.index(stops[-1]) + 1]
        blocked = sorted({r for stop in upto for r in stop["road_ids"] if not self.roads.get(r, {}).get("open", True)})
        if blocked:
            return fail(f"vehicle {shipment['vehicle_id']} cannot reach {site_id}: road(s) {', '.join(blocked)} closed")
        arrival = stops[-1]["planned_arrival"]
        site = self._site(site_id)[1]
        if not open_at(site, arrival):
            return fail(f"{site_id} cannot receive at {arrival}: status {site['status']}, "
                        f"hours {site['hours']['open']}-{site['hours']['close']}")
        shipment.update(status="delivered", received_at=arrival)
        self.route_stops[stops[-1]["route_stop_id"]].update(actual_arrival=arrival)
        if all(self.shipments[s]["status"] == "delivered" for s in vehicle["shipment_ids"]):
            last = self.route_stops[vehicle["route_stop_ids"][-1]]
            vehicle.update(status="idle", site_id=last["site_id"], available_from=last["planned_departure"],
                           shipment_ids=[], route_stop_ids=[], departed_at=None, scheduled_departure=None)
        return ok({"shipment_id": shipment_id, "received_at": arrival}, message=f"{shipment_id} received at {site_id}")

    @tool(mutates=True, cost=3)
    def update_goods_inventory_status(self, goods_id: str, status: Literal["on_hold", "quarantined"]) -> dict:
        """Put a goods lot on hold or in quarantine, e.g. after a temperature excursion. Only the quality team
        releases a held or quarantined lot again: a coordinator cannot make it available.

        Args:
            goods_id: The lot.
            status: "on_hold" or "quarantined".
        """
        lot = self.goods_inventory.get(goods_id)
        if lot is None:
            return fail(f"no goods lot {goods_id!r}")
        if lot["status"] == status:
            return fail(f"lot {goods_id} is already {status}")
        lot["status"] = status
        return ok(message=f"lot {goods_id} is now {status}")

    @tool(mutates=True, cost=3)
    def schedule_cooling_unit_reset(self, cooling_unit_id: str, reset_window_id: str) -> dict:
        """Book an open reset window at the depot where the unit's vehicle is parked.

        Args:
            cooling_unit_id: The unit to reset.
            reset_window_id: An open window from list_depot_maintenance_schedule.
        """
        unit, window = self.cooling_units.get(cooling_unit_id), self.cooling_unit_resets.get(reset_window_id)
        if unit is None:
            return fail(f"no cooling unit {cooling_unit_id!r}")
        if window is None:
            return fail(f"no reset window {reset_window_id!r}")
        if window["status"] != "open":
            return fail(f"window {reset_window_id} is {window['status']}")
        if window["end"] <= self.now:
            return fail(f"window {reset_window_id} ended at {window['end']}")
        vehicle = self.vehicles.get(unit["vehicle_id"])
        if vehicle is None or vehicle["site_id"] != window["depot_id"] or vehicle["status"] != "idle":
            return fail(f"the unit's vehicle must be idle at {window['depot_id']} to use this window")
        window.update(status="booked", cooling_unit_id=cooling_unit_id)
        return ok(message=f"{reset_window_id} booked for {cooling_unit_id} ({window['start']}-{window['end']}); "
                          "record it as completed once the unit is serviced")

    @tool(mutates=True, cost=3)
    def record_cooling_unit_reset(self, reset_window_id: str, action: Literal["completed", "cancelled"]) -> dict:
        """Record a booked reset as completed (unit serviced, vehicle free at the window's end) or cancel it.

        Args:
            reset_window_id: The booked window.
            action: "completed" or "cancelled".
        """
        window = self.cooling_unit_resets.get(reset_window_id)
        if window is None:
            return fail(f"no reset window {reset_window_id!r}")
        if window["status"] != "booked":
            return fail(f"window {reset_window_id} is {window['status']}, not booked")
        if action == "cancelled":
            window.update(status="open", cooling_unit_id=None)
            return ok(message=f"{reset_window_id} released")
        unit = self.cooling_units.get(window["cooling_unit_id"]) or {}
        vehicle = self.vehicles.get(unit.get("vehicle_id"))
        if vehicle is None or vehicle["site_id"] != window["depot_id"] or vehicle["status"] != "idle":
            return fail(f"the vehicle of {window['cooling_unit_id']} is not idle at {window['depot_id']}")
        window["status"] = "completed"
        due = parse_time(window["end"]) + timedelta(hours=RESET_INTERVAL_HOURS)
        unit.update(status="operational", reset_due_by=format_time(due))
        vehicle["available_from"] = _latest(vehicle.get("available_from"), window["end"])
        if vehicle["route_stop_ids"]:
            self._schedule(unit["vehicle_id"], self._departure(vehicle))
        return ok(message=f"{window['cooling_unit_id']} reset; {unit['vehicle_id']} free from {vehicle['available_from']}")


    # --------------------------------------------------------------- predicates
    # What triggers ask about the call being made and checks ask about the final world.

    def _delivered(self, product: str, sites: list) -> list[dict]:
        return [s for s in self.shipments.values()
                if s["product"] == product and s["status"] == "delivered" and s["destination_site_id"] in sites]

    def _bounds(self, at_least: int | None, at_most: int | None, clinic: str | None,
                session: str | None) -> tuple[int, int | None]:
        """The bounds a dose count must keep: a bound left out, where a session is named, is the doses it needs as
        the registration list its clinic's schedule names has them now (the count may have gone up since the
        request)."""
        if session is None:
            return at_least or 0, at_most
        entry = self.clinics[clinic]["immunization_schedule"][session]
        # a task stored before sessions named registration lists carries the count on the session itself
        needed = self.registration_lists[entry["registration_list"]]["registered"] if "registration_list" in entry \
            else entry["doses"]
        return (needed if at_least is None else at_least), (needed if at_most is None else at_most)

    @predicate
    def doses_received(self, product: str, sites: list, at_least: int | None = None, at_most: int | None = None,
                       clinic: str | None = None, session: str | None = None) -> bool:
        """At least ``at_least`` doses of ``product`` were received at ``sites`` (and no more than ``at_most``); with
        a ``session`` of ``clinic``, a bound left out is the doses its registration list has now."""
        total = sum(s["quantity"] for s in self._delivered(product, sites))
        return _within(total, *self._bounds(at_least, at_most, clinic, session))

    @predicate
    def received_before_session(self, product: str, sites: list, clinic: str, session: str) -> bool:
        """Every delivery of ``product`` to ``sites`` was received by the session's start as it stands now."""
        start = self.clinics[clinic]["immunization_schedule"][session]["start"]
        return all(s["received_at"] <= start for s in self._delivered(product, sites))

    @predicate
    def received_with_team(self, product: str, sites: list, clinic: str, session: str) -> bool:
        """Every delivery was received where, and while, the session's team was there (its timetable as it stands now)."""
        team = self.clinics[clinic]["immunization_schedule"][session]["handoff"]
        return all(any(w["site_id"] == s["destination_site_id"] and w["from"] <= s["received_at"] <= w["until"]
                       for w in team) for s in self._delivered(product, sites))

    @predicate
    def received_in_hours(self, product: str, sites: list) -> bool:
        """Every delivery arrived while the receiving site was open (its hours as they stand now)."""
        return all(open_at(self._site(s["destination_site_id"])[1], s["received_at"])
                   for s in self._delivered(product, sites))

    def _unit_of(self, shipment: dict) -> dict | None:
        """The cooling unit of the vehicle ``shipment`` is (or was last) on."""
        vehicle = self.vehicles.get(shipment.get("vehicle_id"), {})
        return self.cooling_units.get(vehicle.get("cooling_unit_id"))

    def _arrival(self, shipment: dict) -> str | None:
        """When ``shipment`` reaches its destination: its receipt, or the planned arrival of the vehicle carrying it
        (on the road, or loaded on a van that could be dispatched now) if its route still gets there over open
        roads; None when it cannot."""
        if shipment["status"] == "delivered":
            return shipment["received_at"]
        if shipment["status"] not in ("assigned", "in_transit") or shipment.get("vehicle_id") not in self.vehicles:
            return None
        vehicle = self.vehicles[shipment["vehicle_id"]]
        if shipment["status"] == "assigned" and isinstance(self._cannot_leave(shipment["vehicle_id"], vehicle), str):
            return None  # a load that cannot leave (a pooled van, no slot, a lapsed hold) is going nowhere
        route = self._stops_of(shipment["vehicle_id"])
        sites = [vehicle["site_id"]] + [s["site_id"] for s in route]
        origin = shipment["origin_site_id"]
        if origin not in sites or shipment["destination_site_id"] not in sites[sites.index(origin) + 1:]:
            return None
        last = max(i for i, s in enumerate(route) if s["site_id"] == shipment["destination_site_id"])
        if any(not self.roads.get(r, {}).get("open", True) for stop in route[:last + 1] for r in stop["road_ids"]):
            return None
        return route[last]["planned_arrival"]

    def _cold(self, shipment: dict, arrival: str | None) -> bool:
        """The load rides a working unit holding the lot's band, not overdue for reset by ``arrival``, and the lot
        is usable (available, not past its use-by) when it gets there."""
        unit, lot = self._unit_of(shipment), self.goods_inventory[shipment["goods_id"]]
        arrival = arrival or self.now
        return bool(cooling_covers(unit, lot) and unit["status"] == "operational"
                    and arrival <= (unit["reset_due_by"] or arrival)
                    and lot["status"] == "available" and arrival <= lot["use_by"])

    def _in_time(self, shipment: dict, arrival: str, clinic: str, session: str, team: bool) -> bool:
        """``arrival`` meets the session as it stands now (its start, or where and while its team is there) and
        the destination is open to receive then."""
        booked = self.clinics[clinic]["immunization_schedule"][session]
        site = shipment["destination_site_id"]
        if team:
            timely = any(w["site_id"] == site and w["from"] <= arrival <= w["until"] for w in booked["handoff"])
        else:
            timely = arrival <= booked["start"]
        return timely and open_at(self._site(site)[1], arrival)

    @predicate
    def cold_chain_kept(self, product: str, sites: list) -> bool:
        """Every delivered or dispatched load of ``product`` to ``sites`` rode a working unit holding the lot's band,
        not overdue for reset, and its lot was (and still is) usable."""
        return all(self._cold(s, self._arrival(s) if s["status"] == "in_transit" else s["received_at"])
                   for s in self.shipments.values() if s["product"] == product
                   and s["destination_site_id"] in sites and s["status"] in ("in_transit", "delivered"))

    @predicate
    def reaches_in_time(self, product: str, sites: list, clinic: str, session: str, statuses: list,
                        at_least: int | None = None, team: bool = False, goods_id: str | None = None,
                        origin_site_id: str | None = None, vehicle_id: str | None = None,
                        at_most: int | None = None) -> bool:
        """At least ``at_least`` (and no more than ``at_most``; a bound left out is the doses the session's
        registration list has now) doses of ``product`` in ``statuses`` (matching the given fields) are on a run,
        planned or driven, that gets them to ``sites`` over open roads, in time for the session, while the site is
        open and with the cold chain intact (or were received so)."""
        want = {k: v for k, v in (("goods_id", goods_id), ("origin_site_id", origin_site_id),
                                  ("vehicle_id", vehicle_id)) if v}
        total = 0
        for s in self.shipments.values():
            if s["product"] != product or s["destination_site_id"] not in sites or s["status"] not in statuses \
                    or any(s.get(k) != v for k, v in want.items()):
                continue
            arrival = self._arrival(s)
            if arrival and self._in_time(s, arrival, clinic, session, team) and self._cold(s, arrival):
                total += s["quantity"]
        return _within(total, *self._bounds(at_least, at_most, clinic, session))

    @predicate
    def settled(self, product: str, sites: list, at_least: int, log) -> bool:
        """The doses were received, or the user was told in a sentence (not a list of keywords) why not."""
        from sttgym.judge import is_refusal, looks_like_a_list  # the judge loads with the first episode

        return self.doses_received(product, sites, at_least) or any(
            is_refusal(m) and not looks_like_a_list(m) for m in log.said)

    @predicate
    def nothing_pending(self, ignore: list = ()) -> bool:
        """No shipment (besides ``ignore``) is left reserved, assigned or on the road without a receipt."""
        return not [i for i, s in self.shipments.items() if i not in ignore and s["status"] in PENDING]

    @predicate
    def shipment_exists(self, statuses: list, goods_id: str | None = None, origin_site_id: str | None = None,
                        destination_site_id: str | None = None, vehicle_id: str | None = None, at_least: int = 1,
                        cold: bool = False, at_most: int | None = None) -> bool:
        """Shipments in one of ``statuses`` matching every given field carry at least ``at_least`` (and no more than
        ``at_most``) doses in all (``cold``: counting only those whose vehicle's cooling unit holds the lot's band).
        A lapsed allocation counts as nothing but lapsed."""
        want = {k: v for k, v in (("goods_id", goods_id), ("origin_site_id", origin_site_id),
                                  ("destination_site_id", destination_site_id), ("vehicle_id", vehicle_id)) if v}
        total = sum(s["quantity"] for s in self.shipments.values()
                    if ("lapsed" if lapsed(s, self.now) else s["status"]) in statuses
                    and all(s.get(k) == v for k, v in want.items())
                    and (not cold or cooling_covers(self._unit_of(s), self.goods_inventory[s["goods_id"]])))
        return _within(total, at_least, at_most)

    @predicate
    def none_sent(self, product: str, sites: list) -> bool:
        """No dose of ``product`` left for (or reached) any of ``sites``."""
        return not [s for s in self.shipments.values() if s["product"] == product
                    and s["destination_site_id"] in sites and s["status"] in ("in_transit", "delivered")]

    @predicate
    def lots_unshipped(self, lots: list) -> bool:
        """No dose of ``lots`` was dispatched."""
        return not [s for s in self.shipments.values() if s["goods_id"] in lots and s["status"] in ("in_transit", "delivered")]

    @predicate
    def hold_lapsed(self, shipment_id: str) -> bool:
        """The allocation hold ``shipment_id`` passed its expiry before it left."""
        return lapsed(self.shipments[shipment_id], self.now)

    @predicate
    def on_road_to(self, site_id: str, product: str) -> bool:
        """Doses of ``product`` are on the road to ``site_id``."""
        return any(s["status"] == "in_transit" and s["product"] == product and s["destination_site_id"] == site_id
                   for s in self.shipments.values())

    @predicate
    def planned_to_arrive_by(self, site_id: str, product: str, deadline: str) -> bool:
        """A vehicle loaded with ``product`` for ``site_id`` is planned to get there by ``deadline``."""
        loaded = {s["vehicle_id"] for s in self.shipments.values() if s["product"] == product
                  and s["destination_site_id"] == site_id and s["status"] in ("assigned", "in_transit")}
        return any(stop["vehicle_id"] in loaded and stop["site_id"] == site_id and stop["planned_arrival"] <= deadline
                   for stop in self.route_stops.values())

    @predicate
    def vehicle_route_uses(self, vehicle_id: str, road_id: str, status: str) -> bool:
        """``vehicle_id`` is ``status`` with a planned route over ``road_id``."""
        return self.vehicles[vehicle_id]["status"] == status and any(
            stop["vehicle_id"] == vehicle_id and road_id in stop["road_ids"] for stop in self.route_stops.values())

    @predicate
    def calling(self, tool: str, ctx, arguments: dict | None = None) -> bool:
        """The call being made is ``tool`` with (at least) ``arguments``: only ever a write, never a read."""
        return ctx.tool == tool and all(ctx.arguments.get(k) == v for k, v in (arguments or {}).items())

    @predicate
    def committing(self, product: str, ctx) -> bool:
        """The write just made (asked after it ran) committed doses of ``product``, whichever lot, site or van: it
        booked a shipment of them or loaded one onto a van. Read from the state the write left, so a refused write
        commits nothing."""
        args = ctx.arguments
        if ctx.tool == "create_new_shipment":
            booked = next(reversed(self.shipments.values()), None)  # a new shipment is the last one
            return booked is not None and booked["status"] == "created" and booked["product"] == product and all(
                booked[k] == args.get(k) for k in ("goods_id", "origin_site_id", "destination_site_id", "quantity"))
        if ctx.tool == "assign_shipment_to_vehicle":
            loaded = self.shipments.get(args.get("shipment_id"), {})
            return loaded.get("product") == product and loaded.get("status") == "assigned" and \
                loaded.get("vehicle_id") == args.get("vehicle_id")
        return False

    # --------------------------------------------------------------- operations

    @operation
    def set_time_from_now(self, path: list, minutes: int) -> None:
        """Set the ISO time field at ``path`` to ``minutes`` after now (a deadline announced relative to the moment)."""
        self.set_field(path, _plus(self.now, minutes))
