"""The seeded distribution network every Warehouse scenario specialises, and the pieces scenarios share.

:func:`new_network` draws a network from the author's generator: a hub and three or four
warehouses in two regions, three to five stores, roads whose links (not only their minutes) are
drawn, loading-dock slots every 45 minutes at every warehouse (all free to begin with: a booking is
an entity of its own), background SKUs in stock everywhere, background orders and a few trucks whose
drivers are off shift. The scenario's *focus SKU* is nowhere in stock and no truck is in service
until the scenario places them, so a scenario decides which alternatives exist (and, when
impossible, that none does).

:class:`Order` is the customer order a story revolves around: it writes the plan steps
(:meth:`Order.nominal`, the plain reserve-book-dispatch plan; :meth:`Order.ship`, the same from
any warehouse) and the checklist every scenario shares. :class:`Network` writes the shapes the
stories share: triggers set off by the agent's writes (:meth:`Network.on_write`) or by an earlier
change (:meth:`Network.cascade`), field updates (:meth:`Network.set`, :meth:`Network.sets`),
dry-run timings (:meth:`Network.time_after`, :meth:`Network.arrivals`) and the due time
(:func:`settle_due`). :meth:`Order.refuse` writes the oracle's apology and marks the order
impossible; :meth:`Order.require` gives the user a requirement they tell only when asked, and
:meth:`Order.ask` writes the oracle's question about it where it decides between workable
alternatives (the goal then reached the way that meets it); :meth:`Order.truck_swaps` finds the
other valid recoveries (another truck for one of the oracle's); :func:`make_task` assembles the task, and
:func:`goods_in` gives every request the door of the store's goods-in bay to record and, at medium and hard, switches
the bay: at medium in the same call as the story's change, at hard once the recovery has dispatched and the door is
recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sttgym.authoring import Author, DryRun, Plan
from sttgym.checklist import Check, evaluate
from sttgym.clock import format_time
from sttgym.envs.arena.warehouse.world import (BACKORDER, FULL_ON_TIME, NO_STRANDED, NOT_OVER, NOTHING_SENT,
                                                SECURED, truck_roads)
from sttgym.geo import shortest_route
from sttgym.judge import Impossibility
from sttgym.task import Call, Ref, Task
from sttgym.triggers import Observable, Trigger
from sttgym.user import Answer, UserProfile

__all__ = ["DOOR", "Author", "Plan", "Task", "Network", "Order", "new_network", "new_order", "base", "rid", "did",
           "draw", "make_task", "settle_due"]

_REGIONS = ["North", "South", "East", "West", "Coast", "Valley", "Lakes", "Plains", "Uplands", "Delta"]
_WAREHOUSES = ["Ashford", "Brookvale", "Carlow", "Dunmore", "Eastgate", "Fairbank", "Glenrock", "Hollins",
               "Ironbridge", "Juniper", "Kingsmoor", "Larchfield", "Millbrook", "Northcote", "Oakhurst", "Pinewood"]
_HUBS = ["Central", "Crossroads", "Meridian", "Keystone", "Summit", "Gateway"]
_STORES = ["Market Street", "Riverside Mall", "Station Road", "Harbour View", "High Street", "Parkside",
           "Old Mill", "Bay Plaza", "Castle Hill", "Green Lane", "Westfield", "Church Square"]
_CUSTOMERS = ["FreshMart", "MediCare Pharmacies", "CityGrocer", "HomeBase Supplies", "NorthStar Retail",
              "Vita Health", "QuickShop", "Greenleaf Foods", "Apex Hardware", "Sunrise Clinics"]
_PRODUCTS = ["insulin pens", "flu vaccine doses", "bottled water cases", "infant formula tins", "printer paper reams",
             "surgical masks boxes", "canned soup cases", "battery packs", "coffee bean bags", "detergent drums",
             "bandage rolls", "olive oil crates"]
_PEOPLE = ["Dana Whitfield", "Omar Haddad", "Lena Fischer", "Kenji Watanabe", "Priya Raman", "Mateo Silva",
           "Grace Okafor", "Tomasz Nowak", "Sofia Romano", "Liam O'Brien", "Aisha Bello", "Jonas Berg"]
SLOT_EVERY = 45  # minutes between dock slot starts
SLOT_LENGTH = 30
# The medium and hard levels' second change, on the store's side: every request asks for the door of the goods-in bay
# that the store's receiving record names to be recorded on the order (at every level alike, so the query never tells
# the levels apart). The words name the record once, as where the bay comes from: words that bid a re-read of it
# ("current", "always") had players re-read it before finishing and catch the switch.
DOOR = ("Please also record on the order the door of our goods-in bay, which our store's receiving record names, so "
        "every truck unloads at the right door.")
DOOR_ANSWER = {("door", "doors", "bay", "bays", "goods-in", "receiving", "unload", "unloads"):
               "Our goods-in bay is on the store's receiving record; trucks unload at that bay's door."}
# The writes the hard level's switch waits for, the later of the two: the recovery's dispatch and the agent's record
# of the door (medium's comes with the story's change instead).
MOVES_AT = ("dispatch_truck", "record_delivery_door")
# Why goods-in leaves its bay; the bay itself stays as it was (its door takes trucks still), so re-reading it shows
# nothing.
_FREED = ["is kept for returns this afternoon", "is taken by a shopfitting delivery", "is kept for a chiller install",
          "is lent to the click-and-collect vans today"]


def rid(step: str) -> Ref:
    """The reservation id a saved ``reserve_stock`` (or ``split_reservation``) step created."""
    return Ref(step=step, path=("data", "reservation_id"))


def did(step: str) -> Ref:
    """The dispatch id a saved ``dispatch_truck`` step created."""
    return Ref(step=step, path=("data", "dispatch_id"))


def draw(author: Author, items: list):
    """One of ``items`` (not names: no split to respect)."""
    return items[author.integer(0, len(items) - 1)]


def code(name: str) -> str:
    return "".join(w[0] for w in name.replace("'", "").split()).upper()


@dataclass
class Network:
    """A drawn network: the state plus the handles scenarios specialise it with."""

    author: Author
    state: dict
    start: datetime
    sku: str  # the focus SKU: no stock anywhere until the scenario places it
    hub: str = ""
    warehouses: list[str] = field(default_factory=list)  # the non-hub warehouses, in drawn order
    stores: list[str] = field(default_factory=list)

    # places and space
    def minutes(self, a: str, b: str, tonnes: float | None = None) -> int | None:
        route = shortest_route(truck_roads(self.state["roads"], tonnes), a, b)
        return None if route is None else route[0]

    def nearest(self, site: str, among: list[str]) -> list[str]:
        reach = [w for w in among if w != site and self.minutes(w, site) is not None]
        return sorted(reach, key=lambda w: (self.minutes(w, site), w))

    def name(self, site: str) -> str:
        return (self.state["warehouses"].get(site) or self.state["stores"][site])["name"]

    def roads_of(self, site: str) -> list[str]:
        return [r for r, x in sorted(self.state["roads"].items()) if site in (x["a"], x["b"])]

    # stock and fleet
    def drivers(self, n: int) -> list[str]:
        """``n`` distinct drivers' names, for trucks a user may tell apart by their driver."""
        return self.author.pick(_PEOPLE, n)

    def stock(self, warehouse: str, on_hand: int, quarantined: int = 0, sku: str = "") -> None:
        self.state["inventory"][warehouse][sku or self.sku] = {"on_hand": on_hand, "quarantined": quarantined,
                                                               "note": ""}

    def add_truck(self, site: str, capacity: int, tonnes: float = 18, shift_end: str = "",
                  status: str = "available", available_from: str | None = None, driver: str = "") -> str:
        a = self.author
        tid = f"TRK-{a.serial(100, 999)}"
        self.state["trucks"][tid] = {
            "name": f"{driver or a.pick(_PEOPLE)}'s {'rigid' if tonnes < 12 else 'articulated'} truck",
            "capacity": capacity, "tonnes": tonnes, "location": site, "available_from": available_from,
            "shift_end": shift_end or format_time(self.start + timedelta(hours=a.integer(9, 11))),
            "status": status, "note": ""}
        return tid

    def slot(self, warehouse: str, after: datetime | str) -> str:
        """The first dock slot at ``warehouse`` starting at or after ``after`` (every slot is free to begin with)."""
        after = datetime.fromisoformat(after) if isinstance(after, str) else after
        free = sorted((x["start"], s) for s, x in self.state["dock_slots"].items()
                      if x["warehouse"] == warehouse and x["start"] >= format_time(after))
        if not free:
            raise ValueError(f"no free dock slot at {warehouse} after {after}")
        return free[0][1]

    def slot_start(self, slot: str) -> str:
        return self.state["dock_slots"][slot]["start"]

    # triggers and operations
    def set(self, *path: str, value) -> object:
        return self.author.op.set_field(path=list(path), value=value)

    def sets(self, *path: str, **fields) -> list:
        """Operations setting several fields of the entry at ``path``."""
        return [self.set(*path, k, value=v) for k, v in fields.items()]

    def trigger(self, name: str, description: str, when, effect: list, shown: tuple, activation: tuple = (),
                timing: str = "after") -> Trigger:
        """A trigger; ``shown``: ``(tool, args)`` of the read that reveals it."""
        return self.author.check_trigger(Trigger(
            name=name, description=description, when=when, effect=effect, activation=list(activation),
            timing=timing, observable=Observable(tool=shown[0], args=shown[1])))

    def on_write(self, name: str, description: str, tool: str, effect: list, shown: tuple, when=None,
                 timing: str = "after") -> Trigger:
        """A change set off by the agent's ``tool`` write (once ``when`` holds, by default at once)."""
        when = when or self.author.pred.all_of(preds=[])
        return self.trigger(name, description, when, effect, shown, activation=(tool,), timing=timing)

    def cascade(self, name: str, description: str, path: list, value, effect: list, shown: tuple) -> Trigger:
        """A change that follows once an earlier one left ``path`` at ``value``."""
        return self.trigger(name, description, self.author.pred.field_equals(path=path, value=value), effect, shown,
                            timing="after")

    # timings, measured with the real tools
    def run(self, calls: list[Call], triggers: list[Trigger] = ()):
        return self.author.dry_run(self.state, format_time(self.start), calls, list(triggers))

    def time_after(self, calls: list[Call], triggers: list[Trigger] = ()) -> datetime:
        return datetime.fromisoformat(self.run(calls, triggers).end)

    def arrivals(self, calls: list[Call], triggers: list[Trigger] = (), strict: bool = True) -> list[datetime]:
        """Arrivals of the successful dispatches among ``calls`` run on a copy of the world; ``strict``: every
        write must succeed (a scenario that builds a failing oracle is a bug, said at once)."""
        out, run = [], self.run(calls, triggers)
        for c, r in zip(calls, run.results):
            if strict and c.name in self.author.tools and self.author.tools[c.name].mutates and not r.get("success"):
                raise ValueError(f"{c.name}{c.arguments} fails in the dry run: {r.get('error')}")
            if c.name == "dispatch_truck" and r.get("success"):
                out.append(datetime.fromisoformat(r["data"]["arrives"]))
        return out


def new_network(author: Author, start: datetime | None = None) -> Network:
    """A seeded network on a morning between 07:00 and 10:00 (or at ``start``)."""
    a = author
    if start is None:
        start = datetime(a.integer(2024, 2025), 1, 1) + timedelta(days=a.integer(10, 330), hours=a.integer(7, 9),
                                                                  minutes=5 * a.integer(0, 11))
    state: dict = {k: {} for k in ("warehouses", "stores", "receiving_bays", "roads", "skus", "inventory", "inbound",
                                   "orders", "reservations", "dock_slots", "dock_bookings", "trucks", "dispatches")}
    state["counters"] = {"reservation": a.integer(1000, 8999), "dispatch": a.integer(100, 899)}
    state["counters"]["booking"] = 10 * state["counters"]["dispatch"]  # BK- ids, with no draw of their own
    products = a.pick(_PRODUCTS, 4)
    skus = [f"SKU-{a.serial(1000, 9999)}" for _ in products]
    for sku, product in zip(skus, products):
        state["skus"][sku] = {"name": product, "unit": "unit"}
    net = Network(a, state, start, skus[0])
    regions = a.pick(_REGIONS, 2)

    def warehouse(wid: str, name: str, kind: str, region: str) -> None:
        state["warehouses"][wid] = {"name": name, "kind": kind, "region": region, "status": "open", "notice": "",
                                    "hold_minutes": 15 * a.integer(4, 8),
                                    "quota": {"limit": a.integer(6, 12), "used": {format_time(start)[:10]:
                                                                                  a.integer(0, 3)}},
                                    "quota_note": "carrier contract: dispatches per day, reset at 00:00"}
        state["inventory"][wid] = {s: {"on_hand": 10 * a.integer(5, 60), "quarantined": 0, "note": ""}
                                   for s in skus[1:] if a.chance(0.8)}

    hub_name = a.pick(_HUBS)
    net.hub = f"HUB-{hub_name[:4].upper()}{a.serial(10, 99)}"
    warehouse(net.hub, f"{hub_name} Hub", "hub", regions[0])
    for i, name in enumerate(a.pick(_WAREHOUSES, a.integer(3, 4))):
        wid = f"WH-{name[:3].upper()}{a.serial(10, 99)}"
        warehouse(wid, f"{name} Warehouse", "warehouse", regions[i % 2])
        net.warehouses.append(wid)
    for name in a.pick(_STORES, a.integer(3, 5)):
        sid = f"ST-{code(name)}{a.serial(10, 99)}"
        state["stores"][sid] = {"name": f"{name} store", "region": draw(a, regions)}
        net.stores.append(sid)

    def road(x: str, y: str, lo: int, hi: int) -> None:
        state["roads"][f"RD-{a.serial(100, 999)}"] = {"a": x, "b": y, "minutes": a.integer(lo, hi), "open": True,
                                                      "max_tonnes": None}

    sites = [net.hub] + net.warehouses
    order = [sites[int(i)] for i in a.rng.permutation(len(sites))]
    for x, y in zip(order, order[1:]):
        road(x, y, 20, 45)
    for _ in range(a.integer(1, 2)):
        x, y = (sites[int(i)] for i in a.rng.choice(len(sites), 2, replace=False))
        road(x, y, 35, 60)
    for store in net.stores:
        for w in [sites[int(i)] for i in a.rng.choice(len(sites), a.integer(1, 2), replace=False)]:
            road(w, store, 15, 50)
    first = datetime.fromisoformat(format_time(start)).replace(minute=0) + timedelta(minutes=30)
    for wid in sites:
        for k in range(int(20 * 60 / SLOT_EVERY)):
            begin = first + timedelta(minutes=SLOT_EVERY * k)
            state["dock_slots"][f"DS-{a.serial(1000, 9999)}"] = {
                "warehouse": wid, "start": format_time(begin),
                "end": format_time(begin + timedelta(minutes=SLOT_LENGTH))}
    for wid in sites:  # drivers whose shift has ended: part of the yard, never an alternative
        for _ in range(a.integer(0, 1)):
            net.add_truck(wid, 10 * a.integer(20, 60), status="off_shift",
                          shift_end=format_time(start - timedelta(hours=a.integer(1, 4))))
    for _ in range(a.integer(2, 3)):
        oid = f"ORD-{a.serial(10000, 99999)}"
        state["orders"][oid] = {"customer": a.pick(_CUSTOMERS), "store": draw(a, net.stores), "sku": draw(a, skus[1:]),
                                "quantity": 10 * a.integer(3, 30), "priority": "standard", "status": "open", "note": "",
                                "due_by": format_time(start + timedelta(hours=a.integer(6, 30))), "delivery_door": None}
    return net


@dataclass
class Order:
    """The customer order a story revolves around: the calls and checks that serve it."""

    net: Network
    oid: str
    store: str
    quantity: int
    impossible: Impossibility | None = None  # set by :meth:`refuse`
    withheld: Answer | None = None  # set by :meth:`require`: the user's requirement, told only when asked
    choice: object = None  # set by :meth:`ask`: the predicate that holds once the order ships their way
    choice_label: str = ""

    @property
    def sku(self) -> str:
        return self.net.sku

    @property
    def record(self) -> dict:
        return self.net.state["orders"][self.oid]

    @property
    def product(self) -> str:
        return self.net.state["skus"][self.sku]["name"]

    # reads
    def read(self) -> Call:
        return self.net.author.call.get_order(order_id=self.oid)

    def inventory(self, warehouse: str) -> Call:
        return self.net.author.call.get_inventory(warehouse_id=warehouse)

    def warehouse(self, warehouse: str) -> Call:
        return self.net.author.call.get_warehouse(warehouse_id=warehouse)

    def find(self) -> Call:
        return self.net.author.call.find_stock(sku=self.sku)

    def slots(self, warehouse: str) -> Call:
        return self.net.author.call.list_dock_slots(warehouse_id=warehouse)

    def route(self, warehouse: str, truck: str = "") -> Call:
        extra = {"truck_id": truck} if truck else {}
        return self.net.author.call.get_route(origin_id=warehouse, destination_id=self.store, **extra)

    def trucks(self, location: str = "") -> Call:
        return self.net.author.call.list_trucks(**({"location": location} if location else {}))

    def truck(self, truck: str) -> Call:
        return self.net.author.call.get_truck(truck_id=truck)

    def receiving(self) -> Call:
        return self.net.author.call.get_store(store_id=self.store)

    def bay(self, bay: str) -> Call:
        return self.net.author.call.get_receiving_bay(bay_id=bay)

    def call_for(self, shown: tuple) -> Call:
        """The read ``(tool, args)`` as a plan step."""
        return getattr(self.net.author.call, shown[0])(**shown[1])

    def tell(self, message: str) -> Call:
        return self.net.author.call.chat_with_user(message=message)

    # writes
    def reserve(self, warehouse: str, quantity: int = 0, step: str = "r0", inbound: str = "") -> Call:
        extra = {"inbound_id": inbound} if inbound else {}
        return self.net.author.call.reserve_stock(save_as=step, order_id=self.oid, warehouse_id=warehouse,
                                                  quantity=quantity or self.quantity, **extra)

    def release(self, step: str = "r0") -> Call:
        return self.net.author.call.release_stock(reservation_id=rid(step))

    def split(self, quantity: int, step: str = "r0", into: str = "r1") -> Call:
        return self.net.author.call.split_reservation(save_as=into, reservation_id=rid(step), quantity=quantity)

    def book(self, slot: str, truck: str) -> Call:
        return self.net.author.call.book_dock_slot(slot_id=slot, truck_id=truck)

    def unbook(self, slot: str) -> Call:
        return self.net.author.call.cancel_dock_slot(slot_id=slot)

    def dispatch(self, truck: str, slot: str, step: str = "r0", save_as: str | None = None) -> Call:
        return self.net.author.call.dispatch_truck(save_as=save_as, truck_id=truck, slot_id=slot,
                                                   reservation_id=rid(step))

    def cancel(self, step: str) -> Call:
        return self.net.author.call.cancel_dispatch(dispatch_id=did(step))

    def door(self, door: str) -> Call:
        return self.net.author.call.record_delivery_door(order_id=self.oid, door=door)

    # plans
    def nominal(self, warehouse: str, truck: str, slot: str, inbound: str = "") -> Plan:
        """The plain plan: read the order, the stock, the docks and the truck's route; reserve (against
        ``inbound``, if given), book, dispatch."""
        return Plan(look=[self.read(), self.inventory(warehouse), self.trucks(warehouse), self.slots(warehouse),
                          self.route(warehouse, truck)],
                    reserve=[self.reserve(warehouse, inbound=inbound)], book=[self.book(slot, truck)],
                    go=[self.dispatch(truck, slot, save_as="d0")])

    def ship(self, warehouse: str, truck: str, slot: str, quantity: int = 0, step: str = "r1") -> list[Call]:
        """Reserve at ``warehouse``, book ``slot`` for ``truck`` and dispatch it."""
        return [self.reserve(warehouse, quantity, step), self.book(slot, truck), self.dispatch(truck, slot, step)]

    def require(self, answer: Answer) -> None:
        """The user has a requirement (``answer``, which they tell when asked about its topic), on every level of the
        story alike, so what the user says never tells whether the order can be met."""
        self.withheld = answer

    def ask(self, question: str, answer: Answer, choice, label: str) -> Call:
        """The oracle's question about the user's requirement (``answer``), which decides between workable
        alternatives; ``choice`` holds once the order ships the way that meets it, ``label`` says which way in the
        checklist."""
        self.require(answer)
        self.choice, self.choice_label = choice, label
        return self.tell(question)

    def refuse(self, message: str, changed_by: list[str], facts: list[str]) -> list[Call]:
        """The oracle's refusal: the order put on back-order (the reason: the first of ``facts``, a value the change
        showed), then the apology (``I'm sorry, `` + ``message``); marks the order impossible."""
        pred = self.net.author.pred
        self.impossible = Impossibility(changed_by=changed_by, blocking_facts=facts, forbidden=[
            Check(name="no_dispatch", gate=True, description=f"nothing was dispatched for {self.oid} anyway",
                  holds=pred.no_dispatch(order_id=self.oid), stated=NOTHING_SENT),
            Check(name="backordered", gate=True, description=f"{self.oid} was put on back-order for customer service",
                  holds=pred.backordered(order_id=self.oid), stated=BACKORDER)])
        return [self.net.author.call.backorder_order(order_id=self.oid, reason=facts[0]),
                self.tell(f"I'm sorry, {message}")]

    @property
    def what(self) -> str:
        """How the user names the order: ``order ORD-12345 (300 x flu vaccine doses, SKU-1234) for ...``."""
        return (f"order {self.oid} ({self.quantity} x {self.product}, {self.sku}) for our "
                f"{self.net.name(self.store)} ({self.store}), due by {self.record['due_by']}")

    # checks
    def goal(self) -> list[Check]:
        pred = self.net.author.pred
        return [
            Check(name="stock_secured", description=f"live reservations at open warehouses and on-time dispatches "
                  f"cover all {self.quantity} units of {self.oid}", holds=pred.secured(order_id=self.oid),
                  stated=SECURED),
            Check(name="delivered_in_full", description=f"dispatches reaching {self.store} by the due time carry all "
                  f"{self.quantity} units", holds=pred.fulfilled(order_id=self.oid), stated=FULL_ON_TIME),
            Check(name="door_recorded", description=f"{self.oid} is delivered in full and records the door of the "
                  f"goods-in bay {self.store}'s receiving record names at the end", holds=pred.all_of(preds=[
                      pred.fulfilled(order_id=self.oid), pred.door_current(order_id=self.oid)]), stated=DOOR),
            Check(name="no_partial_fill", gate=True, description="a part dispatched on time has the rest of the "
                  "order secured with it: no stranded partial delivery", holds=pred.no_partial_fill(order_id=self.oid),
                  stated=NO_STRANDED),
            Check(name="not_overshipped", gate=True, description=f"no more than {self.quantity} units are dispatched",
                  holds=pred.not_overshipped(order_id=self.oid), stated=NOT_OVER),
        ]

    def checklist(self, trigger: str, consult: str = "") -> list[Check]:
        """The goal, its milestones counted once the change was met (by any route: a read, a listing, the error of
        a write it made fail: every path that follows the request meets it, as its truck and warehouse are named);
        the stock counts as secured only through reservations made after the change (a stale reservation that
        merely survived is no recovery). After :meth:`ask`, the user was asked, as the query's ``consult`` words
        bid, before the last dispatch, and the goal counts only the way that meets their requirement (which the
        milestones but the door's then quote)."""
        pred = self.net.author.pred
        saw = pred.noticed(trigger=trigger)
        fresh = {"stock_secured": pred.secured_since(order_id=self.oid, trigger=trigger)}
        chose, asked = [], []
        if self.choice is not None:
            chose = [self.choice]
            asked = [Check(name="asked_user", description=f"after meeting {trigger}, the agent asked the user about "
                           f"their requirement ({', '.join(self.withheld.keywords[:3])}) before dispatching",
                           holds=pred.all_of(preds=[saw, pred.asked_user(about=self.withheld.keywords,
                                                                         before="dispatch_truck")]), stated=consult)]
        return [*asked,
                *[c if c.gate else c.model_copy(update={
                    "description": f"{c.description}, after meeting {trigger}"
                    + (" (reservations made since)" if c.name in fresh else "")
                    + (f", {self.choice_label}" if chose else ""),
                    "holds": pred.all_of(preds=[saw, fresh.get(c.name, c.holds), *chose]),
                    "stated": self.withheld.text if chose and c.stated != DOOR else c.stated}) for c in self.goal()]]

    def truck_swaps(self, oracle: list[Call], nominal: list[Call], triggers: list[Trigger],
                    checks: list[Check]) -> list[list[Call]]:
        """The oracle's recovery with one of its trucks replaced by another truck in service (the one the user named
        driving over, a spare at another warehouse), on the first slot at that warehouse it can make, wherever that
        still passes ``checks`` (:meth:`passes`): equally valid recoveries."""
        net, state = self.net, self.net.state
        start = next((k for k, (a, b) in enumerate(zip(oracle, nominal)) if a != b), min(len(oracle), len(nominal)))
        trucks = sorted(t for t, x in state["trucks"].items() if x["status"] in ("available", "en_route"))
        out = []
        for k, booking in enumerate(oracle):
            if k < start or booking.name != "book_dock_slot":
                continue
            slot, old = booking.arguments["slot_id"], booking.arguments["truck_id"]
            before = net.run(oracle[:k], triggers)
            world, site = before.world, state["dock_slots"][slot]["warehouse"]
            for truck in trucks:
                ready = world._ready_at(world.trucks[truck], site)
                free = sorted((x["start"], s) for s, x in world.dock_slots.items() if x["warehouse"] == site
                              and x["start"] >= state["dock_slots"][slot]["start"] and world._booking(s) is None
                              and ready is not None and datetime.fromisoformat(x["end"]) >= ready)
                if truck == old or not free:
                    continue
                swap = {slot: free[0][1], old: truck}
                rest = [c.model_copy(update={"arguments": {a: swap.get(v, v) if isinstance(v, str) else v
                                                           for a, v in c.arguments.items()}})
                        if c.arguments.get("slot_id") == slot else c for c in oracle[k:]]
                if self.passes(before.then(rest), checks):
                    out.append(oracle[:k] + rest)
        return out

    @staticmethod
    def passes(run: DryRun, checks: list[Check]) -> bool:
        """Whether the dry ``run`` of a plan went through and meets every one of ``checks`` (but for a question to
        the user: a dry run has no user to ask, and a question stays where the oracle asks it)."""
        judged = [c for c in checks if c.name != "asked_user"]
        return run.ok() and evaluate(judged, run.world, run.firing.log)[0] == 1.0


def base(author: Author, start: datetime | None = None, quantity: int = 0, warehouse: str = "",
         shift_end: str = "") -> tuple[Network, Order, str, str, str]:
    """A network, the order (``quantity`` or a drawn one) to a drawn store, the warehouse that holds the
    stock (one of the two nearest the store, or ``warehouse``: ``"hub"`` for the hub), its truck and its first
    dock slot after 20 minutes:
    ``(net, order, warehouse, truck, slot)``."""
    net = new_network(author, start)
    order = new_order(net, quantity or 10 * author.integer(20, 60))
    if warehouse == "hub":
        warehouse = net.hub
    elif not warehouse:
        warehouse = draw(author, net.nearest(order.store, net.warehouses)[:2])
    net.stock(warehouse, order.quantity + 10 * author.integer(0, 8))
    truck = net.add_truck(warehouse, order.quantity + 10 * author.integer(0, 10), shift_end=shift_end)
    return net, order, warehouse, truck, net.slot(warehouse, net.start + timedelta(minutes=20))


def new_order(net: Network, quantity: int, store: str = "") -> Order:
    a = net.author
    oid = f"ORD-{a.serial(10000, 99999)}"
    store = store or draw(a, net.stores)
    net.state["orders"][oid] = {"customer": a.pick(_CUSTOMERS), "store": store, "sku": net.sku, "quantity": quantity,
                                "priority": "standard", "status": "open", "note": "",
                                "due_by": format_time(net.start + timedelta(days=3)), "delivery_door": None}
    return Order(net, oid, store, quantity)


def settle_due(order: Order, calls: list[Call], triggers: list[Trigger], nominal: list[Call] = (),
               margin: tuple[int, int] = (20, 60), alternatives: list[list[Call]] = ()) -> str:
    """Set the order's due time a drawn margin after the latest arrival of ``calls`` and of each of
    ``alternatives`` (the recoveries the user did not choose, which must stay workable), run with ``triggers``,
    and of ``nominal`` (run without), rounded to 5 minutes; the due time, ISO."""
    net = order.net
    latest = max([t for c in [calls, *alternatives] for t in net.arrivals(c, triggers)]
                 + (net.arrivals(list(nominal)) if nominal else []))
    due = latest + timedelta(minutes=net.author.integer(*margin))
    due -= timedelta(minutes=due.minute % 5)
    order.record["due_by"] = format_time(due)
    return format_time(due)


def make_task(order: Order, query: str, triggers: list[Trigger], nominal: Plan | list[Call], oracle: list[Call],
              persona: str, answers: dict[tuple, str] | None = None, insist: str = "", consult: str = "", *,
              level: str, recoveries: list[list[Call]] = ()) -> Task:
    """Assemble the task; it is impossible when the oracle ends in :meth:`Order.refuse`. Before signing off (or
    refusing) the oracle re-reads one to three drawn records, as operators do, so its call sequence differs
    between seeds while every timing the story measured stays put. The other valid recoveries (another truck in
    service for one of the oracle's: :meth:`Order.truck_swaps`) and each of the story's other ``recoveries`` that
    passes the checklist once it records the door as the oracle does are the task's alternatives. Every request also
    asks for the door of the store's goods-in bay, which at the ``level`` medium switches in the same call as the
    story's change and at hard once the recovery has dispatched and the door is recorded (:func:`goods_in`).

    The user answers alike on every level, solvable or not: ``insist`` (their hard constraints) to any proposed
    change of plan, their requirement (if the story gives them one) and ``answers`` to questions on their topics;
    ``consult``: the words of the query that ask to be asked first, which the question's check quotes."""
    net, impossible = order.net, order.impossible
    nominal = nominal.calls if isinstance(nominal, Plan) else nominal
    checks = [order.read(), order.find(), order.trucks(), net.author.call.list_orders(store_id=order.store),
              net.author.call.list_warehouses()]
    extra = [checks[int(i)] for i in net.author.rng.permutation(len(checks))[:net.author.integer(1, 3)]]
    moved = level if level in ("medium", "hard") and not impossible else ""
    recovered = len(oracle)
    query, triggers, nominal, oracle, answers = goods_in(order, query, triggers, nominal, oracle, answers, moved)
    checklist = [] if impossible else order.checklist(triggers[0].name, consult)
    alternatives = [] if impossible else order.truck_swaps(oracle, nominal, triggers, checklist)
    alternatives += [plan for plan in (r + oracle[recovered:] for r in recoveries)
                     if order.passes(net.run(plan, triggers), checklist)]
    end = len(oracle)
    while end and oracle[end - 1].name == "chat_with_user":  # a closing message stays last; a question stays put
        end -= 1
    oracle = oracle[:end] + extra + oracle[end:]
    answers.setdefault(("warehouse", "another", "other", "source", "split", "truck"),
                       "Split over several trucks if need be, as long as the full quantity reaches the store on time "
                       "and my requirement is met." if order.withheld else "Any warehouse and any truck are fine, "
                       "split over several trucks if need be, as long as the full quantity reaches the store on time.")
    profile = UserProfile(
        persona=f"{net.state['orders'][order.oid]['customer']} account manager, {persona}",
        known_facts=[f"order {order.oid}", f"{order.quantity} x {order.sku}", f"store {order.store}",
                     f"due {order.record['due_by']}"],
        clarifications=[Answer(keywords=list(k), text=t) for k, t in answers.items()],
        withheld=[order.withheld] if order.withheld else [],
        insist=insist or None,
        fallback="Everything I know is in my request; please get the order out as asked.")
    start = format_time(net.start)
    return Task(query=query, profile=profile, start_time=start, initial_state=net.state, triggers=triggers,
                checklist=checklist, static_checklist=order.goal(), nominal_plan=nominal, oracle=oracle,
                alternatives=alternatives, solvable=impossible is None, impossibility=impossible)


def goods_in(order: Order, query: str, triggers: list[Trigger], nominal: list[Call], oracle: list[Call],
             answers: dict | None, moved: str) -> tuple:
    """The medium and hard levels' second change, on the store's side rather than the network's, one hop behind what
    the agent re-checks. Every store gets a receiving record (its doors, and the receiving bay goods-in uses) and a
    bay at each door (``get_receiving_bay``: the door), drawn after everything else so that the stories' instances
    and timings stay as they were; at every level alike the query asks for the door of the goods-in bay to be
    recorded on the order and names the record once, and the user says the same. With ``moved`` (the level:
    ``"medium"`` or ``"hard"``; empty, the bay stays) the store's receiving team switches goods-in to another of its
    bays. At medium that comes in the same call as the story's change, so an agent that re-reads the receiving
    record once it has seen the change finds it; at hard, once the story's change has fired, it waits for the later
    of the recovery's dispatch (any that goes through, whichever warehouse, truck and slot it takes) and the agent's
    record of a door: the door the agent just wrote goes stale whatever order it worked in. Only ``get_store`` shows
    it: the old bay still reads as it did, no write fails, and what the agent reserved, booked, dispatched and
    recorded reads as it left it. Every door takes any truck at any time, so recording the new bay's door is the
    whole fix; the difficulty is knowing that the door depends on a record the recovery never touched. A refusal
    records no door (nothing is delivered). Returns the query, triggers, nominal plan, oracle and the user's
    answers, extended."""
    net, author = order.net, order.net.author
    for store in net.stores:
        doors = [f"D{i}" for i in range(1, author.integer(2, 5) + 1)]
        bays = {f"BAY-{author.serial(100, 999)}": door for door in doors}
        net.state["receiving_bays"].update({b: {"store": store, "door": door} for b, door in bays.items()})
        net.state["stores"][store].update(doors=doors, goods_in_bay=draw(author, sorted(bays)), goods_in_note="")
    bays = net.state["receiving_bays"]
    planned = net.state["stores"][order.store]["goods_in_bay"]
    query, answers = f"{query} {DOOR}", {**(answers or {}), **DOOR_ANSWER}

    def recorded(bay: str) -> list[Call]:
        return [order.receiving(), order.bay(bay), order.door(bays[bay]["door"])]

    nominal = [*nominal, *recorded(planned)]
    if order.impossible:
        return query, triggers, nominal, oracle, answers
    if not moved:
        return query, triggers, nominal, [*oracle, *recorded(planned)], answers
    pred, story = author.pred, triggers[0].name
    later = draw(author, sorted(b for b, x in bays.items() if x["store"] == order.store and b != planned))
    if moved == "medium":
        (when, activation), moment = author.alongside(triggers[:1]), f"with {story}"
    else:
        when = pred.all_of(preds=[pred.fired_before(trigger=story), pred.went_through(),
                                  pred.none_of(preds=[pred.no_dispatch(order_id=order.oid),
                                                      pred.field_equals(path=["orders", order.oid, "delivery_door"],
                                                                        value=None)])])
        activation, moment = MOVES_AT, f"once the recovery after {story} has dispatched and a door is recorded"
    switch = net.trigger(
        "goods_in_moved", f"{moment}, {order.store} switches goods-in from {planned} ({bays[planned]['door']}) to "
        f"{later} ({bays[later]['door']})", when,
        net.sets("stores", order.store, goods_in_bay=later,
                 goods_in_note=f"goods-in moved to {later}: {planned} {draw(author, _FREED)}"),
        ("get_store", {"store_id": order.store}), activation=tuple(activation))
    if moved == "medium":  # the bay switched with the story's change: the oracle reads it after its recovery
        return query, [*triggers, switch], nominal, [*oracle, *recorded(later)], answers
    # The oracle records the door it read, then re-reads the receiving record before finishing, as careful agents do.
    return query, [*triggers, switch], nominal, [*oracle, *recorded(planned), *recorded(later)], answers
