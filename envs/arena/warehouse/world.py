"""Warehouse: a regional distribution network's warehouse-management and dispatch system.

State containers (JSON-like dicts keyed by id):

- ``warehouses``: ``{name, kind: hub|warehouse, region, status: open|locked_down|outage, notice,
  hold_minutes, quota: {limit, used: {date: count}}, quota_note}`` (and ``certifications`` where a story
  gives them). A warehouse that is not ``open`` releases no stock and dispatches nothing; the daily
  dispatch quota counts trucks by the date they leave and starts afresh at 00:00.
- ``stores``: ``{name, region, doors, goods_in_bay, goods_in_note}``: the customers' delivery points, with their
  receiving record: the loading doors and the receiving bay goods-in uses (which the store's receiving team may
  switch to another of its bays).
- ``receiving_bays``: ``{store, door}``: a store's receiving bays, each at one of its doors.
- ``roads``: ``{a, b, minutes, open, max_tonnes}`` between sites; a truck drives the fastest open
  route over roads whose weight limit (``max_tonnes``, None for none) it is within.
- ``skus``: ``{name, unit}``.
- ``inventory``: ``{warehouse: {sku: {on_hand, quarantined, note}}}``. Reserved units are not stored:
  they are the live reservations, so a lapsed reservation frees its stock by itself.
- ``inbound``: ``{warehouse, sku, quantity, carrier, eta, status, note}``: shipments arriving at a
  cross-dock; stock may be reserved against one and leaves no earlier than its (current) ETA.
- ``orders``: ``{customer, store, sku, quantity, due_by, priority, status: open|backordered, note, delivery_door}``:
  an order put on back-order takes no more reservations or dispatches; ``delivery_door`` is the store door its
  trucks unload at, as recorded on it (None until then).
- ``reservations``: ``{order, warehouse, sku, quantity, inbound, status: held|loaded|released,
  held_at, expires_at, note}``; a held reservation past ``expires_at`` reads ``expired`` and
  holds nothing.
- ``dock_slots``: ``{warehouse, start, end}``: the loading docks' timetable, which never changes.
- ``dock_bookings``: ``{slot, warehouse, truck, status: booked|used|cancelled, booked_at, note}``: a slot taken
  for a truck (``used`` once it loaded there). A slot is free while no booking of it is booked or used, so which
  slot a plan takes is a new booking, never a change to the timetable.
- ``trucks``: ``{name, capacity, tonnes, location, available_from, shift_end, status:
  available|en_route|reallocated|off_shift|held, note}``. ``location`` is where it is, or where
  it is heading when ``available_from`` is still ahead.
- ``dispatches``: ``{order, truck, warehouse, store, slot, quantity, reservations, departs,
  arrives, path, status: scheduled|delivered|cancelled|halted, note}``.
- ``counters``: the last reservation, dock booking and dispatch numbers.

Times are ISO strings at minute precision.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sttgym.clock import format_time, local_time
from sttgym.geo import shortest_route
from sttgym.tools import fail, ok, tool
from sttgym.world import World, operation, predicate

__all__ = ["WarehouseWorld", "LOAD_MINUTES", "live_status", "truck_roads", "FULL_ON_TIME", "SECURED", "NO_STRANDED",
           "NOT_OVER", "NOTHING_SENT", "BACKORDER"]

LOAD_MINUTES = 15  # loading at the dock before the truck leaves
LIVE_DISPATCH = ("scheduled", "delivered")
LIVE_BOOKING = ("booked", "used")
# The rules the checklists enforce, as the world description tells every agent (the checks quote them).
FULL_ON_TIME = "An order is met only when dispatches that reach its store by the due time carry its full quantity."
SECURED = ("Units count as secured only while a live reservation holds them at an open warehouse or a dispatch "
           "that arrives on time carries them.")
NO_STRANDED = "Never leave part of an order dispatched without the rest secured"
NOT_OVER = "and never dispatch more than the order's quantity"
NOTHING_SENT = "When an order cannot be met, dispatch nothing for it"
BACKORDER = "put it on back-order (backorder_order) and tell the user why"



def live_status(res: dict, now: datetime) -> str:
    """A reservation's status as of ``now``: a held reservation past its expiry reads ``expired``."""
    if res.get("status") == "held":
        expires = local_time(res.get("expires_at"))
        if expires is not None and now > expires:
            return "expired"
    return res.get("status", "")


def truck_roads(roads: dict, tonnes: float | None) -> dict:
    """The roads a truck of ``tonnes`` may use (every road when ``tonnes`` is None)."""
    return {r: x for r, x in roads.items() if tonnes is None or x.get("max_tonnes") is None
            or tonnes <= x["max_tonnes"]}


class WarehouseWorld(World):
    """Tools of a distribution network's warehouse-management and dispatch system; see the module docstring."""

    domain = "Warehouse"
    description = ("A regional distribution network: warehouses and hubs with stock per SKU, customer orders "
                   "with due times, stores with a receiving record (their doors and the goods-in bay they receive at), "
                   "receiving bays (each at one door of its store), stock reservations, loading-dock slots, trucks "
                   "with driver shifts, "
                   f"dispatches over a road graph with closures and weight limits. {FULL_ON_TIME} {SECURED} "
                   f"{NO_STRANDED}, {NOT_OVER}. {NOTHING_SENT}: {BACKORDER}.")
    # A released reservation holds no stock, a cancelled booking no dock, a cancelled dispatch no truck.
    inert = {"reservations": {"status": ["released"]}, "dock_bookings": {"status": ["cancelled"]},
             "dispatches": {"status": ["cancelled"]}}

    def commits(self, container: str, entity: Any) -> bool:
        """A reservation past its expiry holds nothing, like a released one (see :func:`live_status`)."""
        if container == "reservations" and live_status(entity, self.clock.now) == "expired":
            return False
        return super().commits(container, entity)

    # ----------------------------------------------------------------- helpers

    def _site(self, site_id: str) -> bool:
        return site_id in self.warehouses or site_id in self.stores

    def _reserved(self, warehouse_id: str, sku: str, inbound: str | None = None) -> int:
        return sum(r["quantity"] for r in self.reservations.values()
                   if r["warehouse"] == warehouse_id and r["sku"] == sku and r.get("inbound") == inbound
                   and live_status(r, self.clock.now) == "held")

    def _stock_row(self, warehouse_id: str, sku: str) -> dict:
        line = self.inventory.get(warehouse_id, {}).get(sku, {"on_hand": 0, "quarantined": 0, "note": ""})
        reserved = self._reserved(warehouse_id, sku)
        available = max(0, line["on_hand"] - line["quarantined"] - reserved)
        return {"sku": sku, "on_hand": line["on_hand"], "reserved": reserved, "quarantined": line["quarantined"],
                "available": available, "note": line.get("note", "")}

    def _route(self, origin: str, destination: str, tonnes: float | None = None) -> tuple[int, list[str]] | None:
        return shortest_route(truck_roads(self.roads, tonnes), origin, destination)

    def _ready_at(self, truck: dict, warehouse_id: str) -> datetime | None:
        """When ``truck`` can be at ``warehouse_id``: free from its current job, then driven over (None: no way)."""
        free = max(self.clock.now, local_time(truck.get("available_from")) or self.clock.now)
        route = self._route(truck["location"], warehouse_id, truck["tonnes"])
        return None if route is None else free + timedelta(minutes=route[0])

    def _res_view(self, rid: str) -> dict:
        res = self.reservations[rid]
        view = {"reservation_id": rid, **res, "status": live_status(res, self.clock.now)}
        if res.get("inbound"):
            view["ready_at"] = self.inbound.get(res["inbound"], {}).get("eta")
        return view

    def _order_view(self, oid: str) -> dict:
        order = self.orders[oid]
        res = [self._res_view(r) for r in sorted(self.reservations) if self.reservations[r]["order"] == oid]
        disp = [{"dispatch_id": d, **self.dispatches[d]} for d in sorted(self.dispatches)
                if self.dispatches[d]["order"] == oid]
        held = sum(r["quantity"] for r in res if r["status"] == "held")
        shipped = sum(d["quantity"] for d in disp if d["status"] in LIVE_DISPATCH)
        return {"order_id": oid, **order, "reserved_quantity": held, "dispatched_quantity": shipped,
                "open_quantity": max(0, order["quantity"] - held - shipped), "reservations": res, "dispatches": disp}

    def _booking(self, slot_id: str) -> tuple[str, dict] | None:
        """The live booking of a dock slot, ``(booking id, booking)``, or None while the slot is free."""
        return next(((b, x) for b, x in sorted(self.dock_bookings.items())
                     if x["slot"] == slot_id and x["status"] in LIVE_BOOKING), None)

    def _slot_view(self, slot_id: str) -> dict:
        held = self._booking(slot_id)
        return {"slot_id": slot_id, **self.dock_slots[slot_id], "status": held[1]["status"] if held else "free",
                "truck": held[1]["truck"] if held else None}

    def _closed(self, warehouse_id: str) -> str | None:
        wh = self.warehouses.get(warehouse_id)
        if wh is None:
            return f"no warehouse {warehouse_id!r}"
        if wh["status"] != "open":
            return f"warehouse {warehouse_id} is {wh['status']}: {wh.get('notice') or 'no stock movements'}"
        return None

    # ------------------------------------------------------------------- reads

    @tool
    def list_warehouses(self, region: str = "") -> dict:
        """List the warehouses and hubs with their region, status and certifications, optionally of one region.

        Args:
            region: A region name to filter by; empty for every warehouse.
        """
        rows = [{"warehouse_id": w, **{k: x[k] for k in ("name", "kind", "region", "status")},
                 "certifications": x.get("certifications", [])}
                for w, x in sorted(self.warehouses.items()) if not region or x["region"] == region]
        return ok({"warehouses": rows})

    @tool
    def get_warehouse(self, warehouse_id: str) -> dict:
        """Read a warehouse: status and notices, reservation hold time, daily dispatch quota and today's use.

        Args:
            warehouse_id: The warehouse's id.
        """
        wh = self.warehouses.get(warehouse_id)
        if wh is None:
            return fail(f"no warehouse {warehouse_id!r}")
        today = self.now[:10]
        quota = wh["quota"]
        used = quota["used"].get(today, 0)
        return ok({"warehouse_id": warehouse_id, **wh, "today": today, "dispatches_left_today":
                   max(0, quota["limit"] - used), "quota_status": "exhausted" if used >= quota["limit"] else "open"})

    @tool
    def get_inventory(self, warehouse_id: str) -> dict:
        """Stock of every SKU at a warehouse (on hand, reserved, quarantined, available) and inbound shipments.

        Args:
            warehouse_id: The warehouse's id.
        """
        if warehouse_id not in self.warehouses:
            return fail(f"no warehouse {warehouse_id!r}")
        rows = [self._stock_row(warehouse_id, s) for s in sorted(self.inventory.get(warehouse_id, {}))]
        inbound = [{"inbound_id": i, **x,
                    "unreserved": max(0, x["quantity"] - self._reserved(warehouse_id, x["sku"], i))}
                   for i, x in sorted(self.inbound.items()) if x["warehouse"] == warehouse_id]
        return ok({"warehouse_id": warehouse_id, "status": self.warehouses[warehouse_id]["status"], "stock": rows,
                   "inbound": inbound})

    @tool
    def find_stock(self, sku: str) -> dict:
        """Where an SKU is in the network: each warehouse's on-hand, reserved, quarantined and available units.

        Args:
            sku: The SKU code.
        """
        if sku not in self.skus:
            return fail(f"no SKU {sku!r}")
        rows = [{"warehouse_id": w, "warehouse_status": self.warehouses[w]["status"], **self._stock_row(w, sku)}
                for w in sorted(self.warehouses) if sku in self.inventory.get(w, {})]
        inbound = [{"inbound_id": i, **x} for i, x in sorted(self.inbound.items()) if x["sku"] == sku]
        return ok({"sku": sku, "locations": rows, "inbound": inbound})

    @tool
    def list_orders(self, store_id: str = "") -> dict:
        """Open customer orders with SKU, quantity, destination store, due time and priority.

        Args:
            store_id: Only orders for this store; empty for all.
        """
        rows = [{"order_id": o, **x} for o, x in sorted(self.orders.items()) if not store_id or x["store"] == store_id]
        return ok({"orders": rows})

    @tool
    def get_order(self, order_id: str) -> dict:
        """Read an order with its reservations (live status), dispatches and the quantity still open.

        Args:
            order_id: The order's id.
        """
        if order_id not in self.orders:
            return fail(f"no order {order_id!r}")
        return ok(self._order_view(order_id))

    @tool
    def get_store(self, store_id: str) -> dict:
        """Read a store's receiving record: its region, its doors, and the receiving bay its goods-in uses.

        Args:
            store_id: The store's id.
        """
        if store_id not in self.stores:
            return fail(f"no store {store_id!r}")
        return ok({"store_id": store_id, **self.stores[store_id]})

    @tool
    def get_receiving_bay(self, bay_id: str) -> dict:
        """Read a store's receiving bay: its store and the door trucks unload at there.

        Args:
            bay_id: The bay's id.
        """
        if bay_id not in self.receiving_bays:
            return fail(f"no receiving bay {bay_id!r}")
        return ok({"bay_id": bay_id, **self.receiving_bays[bay_id]})

    @tool
    def list_dock_slots(self, warehouse_id: str) -> dict:
        """The loading-dock slots of a warehouse from now on, with their status and booked truck.

        Args:
            warehouse_id: The warehouse's id.
        """
        if warehouse_id not in self.warehouses:
            return fail(f"no warehouse {warehouse_id!r}")
        rows = [self._slot_view(s) for s, x in sorted(self.dock_slots.items(), key=lambda i: (i[1]["start"], i[0]))
                if x["warehouse"] == warehouse_id and local_time(x["end"]) > self.clock.now]
        return ok({"warehouse_id": warehouse_id, "slots": rows})

    @tool
    def list_trucks(self, location: str = "") -> dict:
        """Trucks with capacity, weight, location, status, when free and the driver's shift end.

        Args:
            location: Only trucks at (or heading to) this site; empty for all.
        """
        rows = [{"truck_id": t, **x} for t, x in sorted(self.trucks.items())
                if not location or x["location"] == location]
        return ok({"trucks": rows})

    @tool
    def get_truck(self, truck_id: str) -> dict:
        """Read a truck: capacity in units, gross weight in tonnes, location, status, shift end and notes.

        Args:
            truck_id: The truck's id.
        """
        truck = self.trucks.get(truck_id)
        if truck is None:
            return fail(f"no truck {truck_id!r}")
        slots = sorted(x["slot"] for x in self.dock_bookings.values() if x["truck"] == truck_id
                       and x["status"] == "booked")
        return ok({"truck_id": truck_id, **truck, "booked_slots": slots})

    @tool(cost=2)
    def get_route(self, origin_id: str, destination_id: str, truck_id: str = "") -> dict:
        """The fastest open road route between two sites and its driving minutes, within a truck's weight if given.

        Args:
            origin_id: The site to leave from (warehouse or store).
            destination_id: The site to arrive at.
            truck_id: A truck whose gross weight the roads must allow; empty for any vehicle.
        """
        for site in (origin_id, destination_id):
            if not self._site(site):
                return fail(f"no site {site!r}")
        tonnes = None
        if truck_id:
            if truck_id not in self.trucks:
                return fail(f"no truck {truck_id!r}")
            tonnes = self.trucks[truck_id]["tonnes"]
        route = self._route(origin_id, destination_id, tonnes)
        closed = sorted(r for r, x in self.roads.items() if not x.get("open", True))
        limited = sorted(f"{r} (max {x['max_tonnes']} t)" for r, x in self.roads.items()
                         if x.get("max_tonnes") is not None and x.get("open", True))
        base = {"closed_roads": closed, "weight_limits": limited}
        if route is None:
            return ok({"reachable": False, "minutes": None, "path": [], **base})
        return ok({"reachable": True, "minutes": route[0], "path": route[1], **base})

    @tool
    def get_dispatch(self, dispatch_id: str) -> dict:
        """Read a dispatch: order, truck, quantity, departure, arrival, path and status.

        Args:
            dispatch_id: The dispatch's id.
        """
        if dispatch_id not in self.dispatches:
            return fail(f"no dispatch {dispatch_id!r}")
        return ok({"dispatch_id": dispatch_id, **self.dispatches[dispatch_id]})

    # --------------------------------------------------------------- changes

    @tool(mutates=True, cost=3)
    def reserve_stock(self, order_id: str, warehouse_id: str, quantity: int, inbound_id: str = "") -> dict:
        """Reserve units of an order's SKU at a warehouse (or against an inbound cross-dock shipment there).

        Args:
            order_id: The order the units are for.
            warehouse_id: Where the units are.
            quantity: How many units.
            inbound_id: An inbound shipment at that warehouse to reserve against; empty for stock on hand.
        """
        order = self.orders.get(order_id)
        if order is None:
            return fail(f"no order {order_id!r}")
        if order["status"] != "open":
            return fail(f"order {order_id} is {order['status']}: {order.get('note') or 'closed'}")
        problem = self._closed(warehouse_id)
        if problem:
            return fail(problem)
        if quantity <= 0:
            return fail("the quantity must be positive")
        sku = order["sku"]
        if inbound_id:
            inbound = self.inbound.get(inbound_id)
            if inbound is None or inbound["warehouse"] != warehouse_id:
                return fail(f"no inbound shipment {inbound_id!r} at {warehouse_id}")
            if inbound["sku"] != sku or inbound["status"] == "cancelled":
                return fail(f"inbound {inbound_id} does not bring {sku}")
            free = inbound["quantity"] - self._reserved(warehouse_id, sku, inbound_id)
        else:
            free = self._stock_row(warehouse_id, sku)["available"]
        if quantity > free:
            return fail(f"only {free} units of {sku} are available at {warehouse_id}")
        minutes = self.warehouses[warehouse_id]["hold_minutes"]
        rid = self.next_id("reservation", "RES")
        self.reservations[rid] = {"order": order_id, "warehouse": warehouse_id, "sku": sku, "quantity": quantity,
                                  "inbound": inbound_id or None, "status": "held", "held_at": self.now,
                                  "expires_at": format_time(self.clock.now + timedelta(minutes=minutes)), "note": ""}
        return ok({"reservation_id": rid, "expires_at": self.reservations[rid]["expires_at"]},
                  message=f"{quantity} x {sku} reserved at {warehouse_id} for {order_id}")

    @tool(mutates=True, cost=2)
    def release_stock(self, reservation_id: str) -> dict:
        """Release a held reservation, returning its units to available stock.

        Args:
            reservation_id: The reservation to release.
        """
        res = self.reservations.get(reservation_id)
        if res is None:
            return fail(f"no reservation {reservation_id!r}")
        status = live_status(res, self.clock.now)
        if status not in ("held", "expired"):
            return fail(f"reservation {reservation_id} is {status} and cannot be released")
        res.update(status="released", note="released by the operator")
        return ok(message=f"{reservation_id} released")

    @tool(mutates=True, cost=2)
    def split_reservation(self, reservation_id: str, quantity: int) -> dict:
        """Split units off a held reservation into a new one (same order, place and expiry), e.g. for two trucks.

        Args:
            reservation_id: The held reservation.
            quantity: How many units move to the new reservation (fewer than it holds).
        """
        res = self.reservations.get(reservation_id)
        if res is None:
            return fail(f"no reservation {reservation_id!r}")
        status = live_status(res, self.clock.now)
        if status != "held":
            return fail(f"reservation {reservation_id} is {status}")
        if not 0 < quantity < res["quantity"]:
            return fail(f"split off between 1 and {res['quantity'] - 1} units")
        rid = self.next_id("reservation", "RES")
        self.reservations[rid] = {**res, "quantity": quantity, "note": f"split from {reservation_id}"}
        res["quantity"] -= quantity
        return ok({"reservation_id": rid, "quantity": quantity, "remaining_in": {reservation_id: res["quantity"]}},
                  message=f"{quantity} units moved from {reservation_id} to {rid}")

    @tool(mutates=True, cost=3)
    def book_dock_slot(self, slot_id: str, truck_id: str) -> dict:
        """Book a free loading-dock slot for a truck, which must be able to reach the warehouse before it ends.

        Args:
            slot_id: The dock slot.
            truck_id: The truck that will load there.
        """
        slot = self.dock_slots.get(slot_id)
        if slot is None:
            return fail(f"no dock slot {slot_id!r}")
        truck = self.trucks.get(truck_id)
        if truck is None:
            return fail(f"no truck {truck_id!r}")
        problem = self._closed(slot["warehouse"])
        if problem:
            return fail(problem)
        held = self._booking(slot_id)
        if held:
            return fail(f"dock slot {slot_id} is {held[1]['status']}")
        if local_time(slot["end"]) <= self.clock.now:
            return fail(f"dock slot {slot_id} ended at {slot['end']}")
        if truck["status"] != "available" and truck["status"] != "en_route":
            return fail(f"truck {truck_id} is {truck['status']}: {truck.get('note') or 'not in service'}")
        ready = self._ready_at(truck, slot["warehouse"])
        if ready is None:
            return fail(f"truck {truck_id} has no open route from {truck['location']} to {slot['warehouse']}")
        if ready > local_time(slot["end"]):
            return fail(f"truck {truck_id} cannot reach {slot['warehouse']} before the slot ends "
                        f"(earliest {format_time(ready)})")
        bid = self.next_id("booking", "BK")
        self.dock_bookings[bid] = {"slot": slot_id, "warehouse": slot["warehouse"], "truck": truck_id,
                                   "status": "booked", "booked_at": self.now, "note": ""}
        return ok({"slot_id": slot_id, "booking_id": bid, "warehouse_id": slot["warehouse"], "start": slot["start"],
                   "truck_ready": format_time(ready)}, message=f"{slot_id} booked for {truck_id}")

    @tool(mutates=True, cost=2)
    def cancel_dock_slot(self, slot_id: str) -> dict:
        """Cancel a dock slot booking that has not been used.

        Args:
            slot_id: The booked slot.
        """
        if slot_id not in self.dock_slots:
            return fail(f"no dock slot {slot_id!r}")
        held = self._booking(slot_id)
        if held is None or held[1]["status"] != "booked":
            return fail(f"dock slot {slot_id} is {held[1]['status'] if held else 'free'}, not booked")
        held[1]["status"] = "cancelled"
        return ok(message=f"{slot_id} is free again")

    @tool(mutates=True, cost=5)
    def dispatch_truck(self, truck_id: str, slot_id: str, reservation_id: str) -> dict:
        """Load a held reservation onto a truck at its booked dock slot and send it to the order's store.

        Args:
            truck_id: The truck, booked on the slot.
            slot_id: The dock slot booked for the truck.
            reservation_id: A held reservation at the slot's warehouse (split one first to use several trucks).
        """
        truck, slot = self.trucks.get(truck_id), self.dock_slots.get(slot_id)
        if truck is None:
            return fail(f"no truck {truck_id!r}")
        if slot is None:
            return fail(f"no dock slot {slot_id!r}")
        held = self._booking(slot_id)
        if held is None or held[1]["status"] != "booked" or held[1]["truck"] != truck_id:
            return fail(f"dock slot {slot_id} is not booked for {truck_id}")
        wid = slot["warehouse"]
        problem = self._closed(wid)
        if problem:
            return fail(problem)
        if truck["status"] not in ("available", "en_route"):
            return fail(f"truck {truck_id} is {truck['status']}: {truck.get('note') or 'not in service'}")
        res = self.reservations.get(reservation_id)
        if res is None:
            return fail(f"no reservation {reservation_id!r}")
        status = live_status(res, self.clock.now)
        if status != "held":
            return fail(f"reservation {reservation_id} is {status}{': ' + res['note'] if res.get('note') else ''}")
        if res["warehouse"] != wid:
            return fail(f"reservation {reservation_id} is at {res['warehouse']}, not {wid}")
        reservation_ids = [reservation_id]
        oid = res["order"]
        order = self.orders[oid]
        quantity = sum(self.reservations[r]["quantity"] for r in reservation_ids)
        if quantity > truck["capacity"]:
            return fail(f"truck {truck_id} carries at most {truck['capacity']} units, not {quantity}")
        ready = self._ready_at(truck, wid)
        if ready is None or ready > local_time(slot["end"]):
            return fail(f"truck {truck_id} cannot be at {wid} within slot {slot_id}")
        departs = max(ready, local_time(slot["start"]), self.clock.now) + timedelta(minutes=LOAD_MINUTES)
        for rid in reservation_ids:
            inbound = self.inbound.get(self.reservations[rid].get("inbound") or "")
            if inbound is not None and local_time(inbound["eta"]) > departs - timedelta(minutes=LOAD_MINUTES):
                return fail(f"inbound {self.reservations[rid]['inbound']} reaches {wid} only at {inbound['eta']}, "
                            f"after slot {slot_id} starts loading")
        quota, day = self.warehouses[wid]["quota"], format_time(departs)[:10]
        if quota["used"].get(day, 0) >= quota["limit"]:
            return fail(f"warehouse {wid} has used its daily dispatch quota ({quota['limit']}) for {day}")
        route = self._route(wid, order["store"], truck["tonnes"])
        if route is None:
            return fail(f"no open route from {wid} to {order['store']} for a {truck['tonnes']} t truck")
        arrives = departs + timedelta(minutes=route[0])
        if arrives > local_time(truck["shift_end"]):
            return fail(f"the driver of {truck_id} would arrive at {format_time(arrives)}, past the shift end "
                        f"{truck['shift_end']}")
        for rid in reservation_ids:
            res = self.reservations[rid]
            res["status"] = "loaded"
            if not res.get("inbound"):
                self.inventory[wid][res["sku"]]["on_hand"] -= res["quantity"]
        quota["used"][day] = quota["used"].get(day, 0) + 1
        held[1]["status"] = "used"
        did = self.next_id("dispatch", "DSP")
        self.dispatches[did] = {"order": oid, "truck": truck_id, "warehouse": wid, "store": order["store"],
                                "slot": slot_id, "quantity": quantity, "reservations": list(reservation_ids),
                                "departs": format_time(departs), "arrives": format_time(arrives), "path": route[1],
                                "status": "scheduled", "note": ""}
        truck.update(status="en_route", location=order["store"], available_from=format_time(arrives))
        return ok({"dispatch_id": did, **self.dispatches[did]},
                  message=f"{truck_id} leaves {wid} at {format_time(departs)}, "
                          f"at {order['store']} {format_time(arrives)}")

    @tool(mutates=True, cost=3)
    def cancel_dispatch(self, dispatch_id: str) -> dict:
        """Cancel a dispatch that has not left yet (or was halted): its units go back to the warehouse's free stock and
        its reservations are released.

        Args:
            dispatch_id: The dispatch to cancel.
        """
        disp = self.dispatches.get(dispatch_id)
        if disp is None:
            return fail(f"no dispatch {dispatch_id!r}")
        if disp["status"] not in ("scheduled", "halted"):
            return fail(f"dispatch {dispatch_id} is {disp['status']}")
        if disp["status"] == "scheduled" and local_time(disp["departs"]) <= self.clock.now:
            return fail(f"dispatch {dispatch_id} left at {disp['departs']}; it can no longer be cancelled")
        for rid in disp["reservations"]:
            res = self.reservations[rid]
            if not res.get("inbound"):
                self.inventory[disp["warehouse"]][res["sku"]]["on_hand"] += res["quantity"]
            res.update(status="released", note=f"returned to stock from {dispatch_id}")
        disp["status"] = "cancelled"
        truck = self.trucks[disp["truck"]]
        if truck["status"] in ("en_route", "held"):
            truck.update(status="available", location=disp["warehouse"], available_from=None)
        return ok(message=f"{dispatch_id} cancelled; its stock is back at {disp['warehouse']}")

    @tool(mutates=True, cost=2)
    def backorder_order(self, order_id: str, reason: str) -> dict:
        """Put an order that cannot be met as asked on back-order, for customer service to rebook (it must have no
        live dispatch; a back-ordered order takes no more reservations).

        Args:
            order_id: The order.
            reason: Why it cannot be met, as customer service will read it.
        """
        order = self.orders.get(order_id)
        if order is None:
            return fail(f"no order {order_id!r}")
        if order["status"] != "open":
            return fail(f"order {order_id} is {order['status']}")
        if not reason.strip():
            return fail("give customer service a reason")
        if self._live_dispatches(order_id):
            return fail(f"order {order_id} has a live dispatch; cancel it first")
        order.update(status="backordered", note=reason.strip()[:200])
        return ok(message=f"{order_id} is on back-order")

    @tool(mutates=True, cost=2)
    def record_delivery_door(self, order_id: str, door: str) -> dict:
        """Record on an order the store door its trucks unload at (one of the store's doors), for their delivery notes.

        Args:
            order_id: The order.
            door: A door of the order's store.
        """
        order = self.orders.get(order_id)
        if order is None:
            return fail(f"no order {order_id!r}")
        doors = self.stores[order["store"]]["doors"]
        if door not in doors:
            return fail(f"{order['store']} has no door {door!r} (its doors: {', '.join(doors)})")
        order["delivery_door"] = door
        return ok(message=f"{order_id} unloads at {door} of {order['store']}")

    @tool(mutates=True, cost=2)
    def confirm_delivery(self, dispatch_id: str) -> dict:
        """Confirm that a dispatch reached its store (possible once its arrival time has come).

        Args:
            dispatch_id: The dispatch.
        """
        disp = self.dispatches.get(dispatch_id)
        if disp is None:
            return fail(f"no dispatch {dispatch_id!r}")
        if disp["status"] != "scheduled":
            return fail(f"dispatch {dispatch_id} is {disp['status']}")
        if local_time(disp["arrives"]) > self.clock.now:
            return fail(f"dispatch {dispatch_id} is still on the road until {disp['arrives']}")
        disp["status"] = "delivered"
        self.trucks[disp["truck"]]["status"] = "available"
        return ok(message=f"{dispatch_id} delivered to {disp['store']}")

    # ------------------------------------------------- predicates and operations

    def _live_dispatches(self, order_id: str) -> list[dict]:
        return [d for _, d in sorted(self.dispatches.items())
                if d["order"] == order_id and d["status"] in LIVE_DISPATCH]

    def _on_time(self, order_id: str) -> int:
        order = self.orders[order_id]
        return sum(d["quantity"] for d in self._live_dispatches(order_id)
                   if d["store"] == order["store"] and local_time(d["arrives"]) <= local_time(order["due_by"]))

    @predicate
    def fulfilled(self, order_id: str) -> bool:
        """Dispatches arriving at the order's store by its due time carry the full quantity."""
        return self._on_time(order_id) >= self.orders[order_id]["quantity"]

    def _held(self, order_id: str, since: str = "") -> int:
        return sum(r["quantity"] for r in self.reservations.values()
                   if r["order"] == order_id and live_status(r, self.clock.now) == "held" and r["held_at"] >= since
                   and self.warehouses[r["warehouse"]]["status"] == "open")

    @predicate
    def secured(self, order_id: str) -> bool:
        """Live reservations at open warehouses plus on-time dispatches cover the full quantity."""
        return self._held(order_id) + self._on_time(order_id) >= self.orders[order_id]["quantity"]

    @predicate
    def secured_since(self, order_id: str, trigger: str, log) -> bool:
        """Like ``secured``, counting only reservations made once ``trigger`` had fired: the recovery's own."""
        fired = next((e["at"] for e in log.events if e["trigger"] == trigger), None)
        if fired is None:
            return False
        return self._held(order_id, fired) + self._on_time(order_id) >= self.orders[order_id]["quantity"]

    @predicate
    def door_current(self, order_id: str) -> bool:
        """The order records the door of the goods-in bay its store's receiving record names now."""
        order = self.orders[order_id]
        return order["delivery_door"] == self.receiving_bays[self.stores[order["store"]]["goods_in_bay"]]["door"]

    @predicate
    def no_partial_fill(self, order_id: str) -> bool:
        """Nothing was dispatched on time, or the rest of the order is secured too: no stranded partial delivery."""
        return self._on_time(order_id) == 0 or self.secured(order_id)

    @predicate
    def not_overshipped(self, order_id: str) -> bool:
        """The live dispatches of the order carry no more than its quantity."""
        return sum(d["quantity"] for d in self._live_dispatches(order_id)) <= self.orders[order_id]["quantity"]

    @predicate
    def no_dispatch(self, order_id: str) -> bool:
        """The order has no live dispatch."""
        return not self._live_dispatches(order_id)

    @predicate
    def backordered(self, order_id: str) -> bool:
        """The order was put on back-order."""
        return self.orders[order_id]["status"] == "backordered"

    @predicate
    def has_reservation(self, order_id: str, warehouse_id: str = "") -> bool:
        """The order has a held reservation (at ``warehouse_id``, when given)."""
        return any(r["order"] == order_id and warehouse_id in ("", r["warehouse"])
                   and live_status(r, self.clock.now) == "held" for r in self.reservations.values())

    @predicate
    def reservation_lapsed(self, order_id: str, warehouse_id: str) -> bool:
        """A reservation of the order at ``warehouse_id`` has lapsed."""
        return any(r["order"] == order_id and r["warehouse"] == warehouse_id and live_status(r, self.clock.now) == "expired"
                   for r in self.reservations.values())

    @predicate
    def slot_booked_for(self, truck_id: str, warehouse_id: str) -> bool:
        """A dock slot at ``warehouse_id`` is booked for ``truck_id``."""
        return any(b["warehouse"] == warehouse_id and b["truck"] == truck_id and b["status"] == "booked"
                   for b in self.dock_bookings.values())

    @predicate
    def dispatched_from(self, order_id: str, warehouse_id: str) -> bool:
        """The order has a scheduled dispatch out of ``warehouse_id``."""
        return any(d["warehouse"] == warehouse_id for d in self._live_dispatches(order_id))

    @predicate
    def went_through(self, log) -> bool:
        """The call being made went through (asked by a trigger timed after it): a refused write commits nothing."""
        return bool(log.calls) and bool(log.calls[-1]["result"].get("success"))

    @predicate
    def ships_only(self, order_id: str, key: str, among: list) -> bool:
        """The order has a live dispatch, and every one has its ``key`` (warehouse, truck) among ``among``."""
        live = self._live_dispatches(order_id)
        return bool(live) and all(d[key] in among for d in live)

    @operation
    def cut_holds(self, warehouse_id: str, minutes: int, notice: str) -> None:
        """An early pick-wave cut-off: held reservations there lapse now; new holds last ``minutes``."""
        self.warehouses[warehouse_id].update(hold_minutes=minutes, notice=notice)
        for r in self.reservations.values():
            if r["warehouse"] == warehouse_id and live_status(r, self.clock.now) == "held":
                r.update(expires_at=format_time(self.clock.now - timedelta(minutes=1)), note=notice)

    @operation
    def void_reservations(self, warehouse_id: str, sku: str, note: str) -> None:
        """Every held reservation of ``sku`` at ``warehouse_id`` is released, with ``note`` saying why."""
        for r in self.reservations.values():
            if r["warehouse"] == warehouse_id and r["sku"] == sku and live_status(r, self.clock.now) == "held":
                r.update(status="released", note=note)

    @operation
    def drop_truck_slots(self, truck_id: str) -> None:
        """Every dock booking of ``truck_id`` not yet used is cancelled (the truck was taken off the plan)."""
        for b in self.dock_bookings.values():
            if b["truck"] == truck_id and b["status"] == "booked":
                b.update(status="cancelled", note="the truck was taken off the plan")

    @operation
    def halt_dispatches(self, warehouse_id: str, note: str) -> None:
        """Dispatches out of ``warehouse_id`` that have not arrived are halted; their trucks are held there."""
        for d in self.dispatches.values():
            if d["warehouse"] == warehouse_id and d["status"] == "scheduled" and local_time(d["arrives"]) > self.clock.now:
                d.update(status="halted", note=note)
                self.trucks[d["truck"]].update(status="held", location=warehouse_id, available_from=None, note=note)
