"""The seeded CarRental city every scenario specialises, and the pieces scenarios share.

:func:`new_city` draws a city from the author's generator: a residential, a business and an
airport zone with a drawn number of depots each, roads whose links (not only their minutes)
are drawn, a background fleet, customers, rates, a promotion and tracked flights. The
background fleet never includes the scenario's *focus class*: a scenario places every car of
that class itself, so it decides which alternatives exist (and, when impossible, what rules each
of them out: a fact on that car, found only by checking it, see :meth:`City.committed` and
:meth:`City.back_late`).

:class:`Request` is the booking most stories revolve around; it writes the plan steps and the
checklist every scenario shares. :class:`City` also writes the shapes the stories share: triggers
set off by the user's hold (:meth:`City.on_hold`), by a dispatch (:meth:`City.on_dispatch`) or by an
earlier change (:meth:`City.cascade`), field updates (:meth:`City.set`, :meth:`City.sets`), another
customer's booking (:meth:`City.taken`) and dry-run arrivals (:meth:`City.arrival`).
:meth:`Request.refuse` writes the oracle's apology and marks the request impossible, with what
names the change and why the other options fail (``Impossibility.no_alternative``);
:func:`make_task` assembles the task.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sttgym.authoring import Author, Plan
from sttgym.checklist import Check
from sttgym.clock import format_time, shift
from sttgym.envs.arena.carrental.world import LICENCE_FOR, HANDOVER_MIN_FUEL, HANDOVER_RULE, price_of
from sttgym.footprint import RULE
from sttgym.geo import shortest_route
from sttgym.judge import Impossibility
from sttgym.task import Call, Ref, Task
from sttgym.triggers import Observable, Trigger
from sttgym.user import Answer, UserProfile

# Author, Plan and Task are re-exported so that a scenario imports what it builds with from one place.
__all__ = ["Author", "Plan", "Task", "City", "Request", "new_city", "rid", "one", "car", "make_task",
           "CITIES"]

CLASSES = ("economy", "compact", "suv", "van", "premium")
_RATES = {"economy": (35, 45), "compact": (45, 60), "suv": (75, 100), "van": (85, 110), "premium": (130, 170)}
_ZONES = {  # kind: (zone names, depot names, how many depots)
    "residential": (["NORTH", "EAST", "WEST", "HILLS", "RIVER", "SOUTH", "MEADOW", "PARK"],
                    ["Maple Heights", "Riverside", "Old Town", "Greenfield", "Lakeside", "Hillcrest", "Elm Park",
                     "Birchwood", "Cedar Grove", "Willow Bank", "Oakridge", "Fern Hollow"], (3, 4)),
    "business": (["DOWNTOWN", "CENTRE", "HARBOUR", "MIDTOWN", "CITY", "DOCKS"],
                 ["Central Station", "Financial District", "Tech Park", "Harbour Front", "Market Square",
                  "Exchange Quay", "Civic Plaza", "Union Yard"], (2, 3)),
    "airport": (["AIRPORT", "AIRFIELD"], ["Airport Terminal 1", "Airport Terminal 2", "Airport Parkway",
                                          "Cargo Gate"], (1, 2)),
}
_PEOPLE = ["Dana Whitfield", "Omar Haddad", "Lena Fischer", "Kenji Watanabe", "Priya Raman", "Mateo Silva",
           "Grace Okafor", "Tomasz Nowak", "Sofia Romano", "Liam O'Brien", "Aisha Bello", "Jonas Berg",
           "Hana Kobayashi", "Felix Moreau", "Ines Duarte", "Arjun Mehta"]
CITIES = ["Lisbon", "Oslo", "Vienna", "Madrid", "Dublin", "Prague", "Athens", "Helsinki", "Riga", "Porto"]
_AIRLINES = ["LX", "OS", "AF", "KL", "IB", "SK", "TP", "AY"]
_OTHER_ENERGY = {"petrol": "electric", "electric": "petrol"}
_NEEDS_ENERGY = {"petrol": "It has to run on petrol: I'm driving up into the mountains and there are no chargers "
                           "on the way.",
                 "electric": "It has to be electric: I'm driving into the city's zero-emission zone every day."}
# What an agent asking about the user's requirement for another car would name.
_REQUIREMENT = ["requirement", "requirements", "prefer", "preference", "car", "cars", "vehicle", "vehicles", "electric",
                "petrol", "fuel", "energy", "mileage", "km"]
_LABEL = {"economy": "economy car", "compact": "compact car", "suv": "SUV", "van": "van", "premium": "premium car"}
# Where the checks' rules are told: the rule of change every agent reads, and the words a query uses to ask to be
# consulted before another car is taken.
_ONLY_NEEDED, _LEAVE_OTHERS = RULE.split(": ")[0], "leave every other booking, record and resource as it is"
ASK_FIRST = "ask me first: I have a requirement."


def rid(step: str) -> Ref:
    """The reservation id a saved ``hold_vehicle`` step created."""
    return Ref(step=step, path=("data", "reservation_id"))


def one(author: Author, items: list):
    """One of ``items`` (not names: no split to respect)."""
    return items[author.integer(0, len(items) - 1)]


def car(cls: str, count: int = 1) -> str:
    """How a user names cars of a class, with the class id a tool takes: ``an SUV (class suv)``."""
    label = _LABEL[cls]
    many = f"two {label}s" if count > 1 else ("an " if label[0] in "AEIOUaeiou" else "a ") + label
    return f"{many} (class {cls})"


@dataclass
class City:
    """A drawn city: the state plus the handles scenarios specialise it with."""

    author: Author
    state: dict
    start: datetime
    focus: str  # the class the story is about; the background fleet has none
    user: str = ""
    kinds: dict[str, list[str]] = field(default_factory=dict)  # residential/business/airport -> depot ids

    def depots_in(self, kind: str) -> list[str]:
        return list(self.kinds[kind])

    def depot(self, *kinds: str) -> str:
        """A drawn depot of one of ``kinds`` (itself drawn)."""
        return one(self.author, self.depots_in(one(self.author, list(kinds))))

    def request(self, depot: str, pickup: str, ret: str, **kw) -> Request:
        """The user's request for the focus class, their card covering it with a drawn margin."""
        self.afford(depot, self.focus, pickup, ret)
        return Request(self, depot, pickup, ret, **kw)

    def zone(self, depot: str) -> str:
        return self.state["depots"][depot]["zone"]

    def name(self, depot: str) -> str:
        return self.state["depots"][depot]["name"]

    def minutes(self, a: str, b: str, avoid: set | None = None) -> int | None:
        route = shortest_route(self.state["roads"], a, b, avoid)
        return None if route is None else route[0]

    def nearest(self, depot: str, among: list[str]) -> list[str]:
        """``among`` (reachable ones only), nearest to ``depot`` first."""
        reach = [d for d in among if d != depot and self.minutes(d, depot) is not None]
        return sorted(reach, key=lambda d: (self.minutes(d, depot), d))

    def at(self, day: int, hour: int, minute: int = 0) -> datetime:
        return self.start.replace(hour=0, minute=0) + timedelta(days=day, hours=hour, minutes=minute)

    def trip(self, day: int = 1) -> tuple[str, str]:
        a = self.author
        pickup = self.at(day, a.integer(9, 14), 30 * a.integer(0, 1))
        return format_time(pickup), format_time(self.at(day + a.integer(1, 3), a.integer(9, 17)))

    def add_vehicle(self, depot: str, cls: str, energy: str = "petrol", fuel: int | None = None,
                    available_from: str | None = None, status: str = "available", mileage: int | None = None) -> str:
        a = self.author
        vid = f"VH-{a.serial()}"
        self.state["vehicles"][vid] = {
            "class": cls, "energy": energy, "fuel_pct": a.integer(70, 100) if fuel is None else fuel,
            "mileage_km": a.integer(4000, 95000) if mileage is None else mileage, "status": status, "depot": depot,
            "available_from": available_from}
        return vid

    def requirement(self, req: Request, fit: list[str]) -> tuple[str, int]:
        """The user's requirement for the car, drawn on every level of a story alike (so how the user answers never
        tells the level): an energy, or a mileage limit. Every car of ``fit`` meets it either way (that energy, a
        low mileage). The user tells it when asked (``req.requirement``); returns the energy and the limit."""
        a, cars = self.author, self.state["vehicles"]
        limit = 5000 * a.integer(6, 12)
        energy = one(a, sorted(_OTHER_ENERGY))
        for vehicle in fit:
            cars[vehicle].update(energy=energy, mileage_km=a.integer(4000, limit - 5000))
        if a.chance(0.5):
            req.energy, why = energy, _NEEDS_ENERGY[energy]
        else:
            req.max_mileage, why = limit, f"My company only pays for rental cars with under {limit} km on the clock."
        req.requirement = Answer(keywords=_REQUIREMENT, text=why)
        return energy, limit

    def rivals(self, req: Request, booked: str, depot: str, before: str, **car) -> tuple[str, str]:
        """Two cars of the focus class at ``depot`` that would each do after the change, each like ``booked`` (the
        plan's car, meeting :meth:`requirement` both ways) in one respect only: one runs on its energy with a
        high mileage, the other on the other energy with a low one. Which respect the user needs is drawn, and is
        now a fact to ask for before the last ``before`` call, so neither likeness to the booked car nor listing
        order tells the user's car. Returns the user's car and the other one."""
        a = self.author
        energy, limit = self.requirement(req, [booked])
        same = self.add_vehicle(depot, self.focus, energy, mileage=a.integer(limit + 5000, 95000), **car)
        other = self.add_vehicle(depot, self.focus, _OTHER_ENERGY[energy], mileage=a.integer(4000, limit - 5000),
                                 **car)
        self.state["depots"][depot]["charger"] = True  # either car can be fuelled or charged where it stands
        req.ask_before = before
        return (same, other) if req.energy else (other, same)

    def add_customer(self, **fields) -> str:
        a = self.author
        cid = f"CUS-{a.serial(10000, 99999)}"
        self.state["customers"][cid] = {
            "name": a.pick(_PEOPLE), "licence": ["B"], "licence_expires": format_time(self.at(a.integer(400, 2500), 0))[:10],
            "tier": one(a, ["standard", "silver", "gold"]),
            "payment_limit": 50 * a.integer(8, 30), **fields}
        return cid

    def other_customer(self) -> str:
        return one(self.author, sorted(c for c in self.state["customers"] if c != self.user))

    def reservation(self, customer: str, vehicle: str, depot: str, pickup: str, ret: str) -> dict:
        """A confirmed reservation record (for the initial state, or as a trigger's new value)."""
        cls, tier = self.state["vehicles"][vehicle]["class"], self.state["customers"][customer]["tier"]
        return {"customer": customer, "vehicle": vehicle, "class": cls, "pickup_depot": depot, "return_depot": depot,
                "pickup_time": pickup, "return_time": ret, "status": "confirmed",
                "held_at": format_time(self.start - timedelta(days=2)), "promo": None, "promo_discount": 0,
                "price": price_of(self.state, depot, cls, datetime.fromisoformat(pickup),
                                  datetime.fromisoformat(ret), tier)["total"]}

    def booking_by_other(self, vehicle: str, depot: str, pickup: str, ret: str,
                         prefix: str = "WEB") -> tuple[str, dict]:
        """A booking by another customer, as a trigger adds it: its id and record."""
        return f"{prefix}-{self.author.serial(100000, 999999)}", self.reservation(self.other_customer(), vehicle,
                                                                                 depot, pickup, ret)

    def price(self, depot: str, cls: str, pickup: str, ret: str, promo: int = 0) -> int:
        tier = self.state["customers"][self.user]["tier"]
        return price_of(self.state, depot, cls, datetime.fromisoformat(pickup), datetime.fromisoformat(ret), tier,
                        promo)["total"]

    def afford(self, depot: str, cls: str, pickup: str, ret: str) -> None:
        """The user's card covers the booking with a drawn margin."""
        self.state["customers"][self.user]["payment_limit"] = self.price(depot, cls, pickup, ret) + 50 * \
            self.author.integer(1, 4)

    def code(self, words: list[str]) -> str:
        """A promotion code: one of ``words`` (a name pool) and two digits."""
        return f"{self.author.pick(words)}{self.author.serial(10, 99)}"

    def flight_number(self) -> str:
        return f"{self.author.pick(_AIRLINES)}{self.author.serial(100, 9999)}"

    def add_flight(self, depot: str, arrives: str) -> str:
        """A tracked flight landing at ``depot``'s airport at ``arrives``, on time."""
        flight = self.flight_number()
        self.state["flights"][flight] = {"depot": depot, "origin": self.author.pick(CITIES), "arrives": arrives,
                                         "status": "on time"}
        return flight

    def inbound(self, depot: str, arrives: str) -> str:
        """The flight the user flies in on, landing at ``depot`` at ``arrives``; their profile records it."""
        flight = self.add_flight(depot, arrives)
        self.state["customers"][self.user].update(flight=flight, flight_note="booked by the customer")
        return flight

    def trigger(self, name: str, description: str, when, effect: list, shown: tuple,
                activation: tuple = (), timing: str = "before") -> Trigger:
        """A trigger; ``shown``: the read that reveals it (see :meth:`shown_by`)."""
        tool, args = self.shown_by(shown)
        return self.author.check_trigger(Trigger(
            name=name, description=description, when=when, effect=effect, activation=list(activation),
            timing=timing, observable=Observable(tool=tool, args=args)))

    # the shapes the stories share
    def set(self, *path: str, value) -> object:
        """The operation setting the state field at ``path`` to ``value``."""
        return self.author.op.set_field(path=list(path), value=value)

    def sets(self, container: str, ident: str, **fields) -> list:
        """Operations setting several fields of one entry."""
        return [self.set(container, ident, k, value=v) for k, v in fields.items()]

    @staticmethod
    def shown_by(shown: tuple) -> tuple[str, dict]:
        """The read that reveals a change, ``(tool, args)``; ``(tool, id)`` fills the tool's one id argument."""
        tool, args = shown
        arg = {"get_vehicle_status": "vehicle_id", "get_depot_info": "depot_id",
               "search_available_vehicles": "depot_id", "get_flight_arrival": "flight_number",
               "list_customer_reservations": "customer_id", "get_customer_profile": "customer_id"}.get(tool)
        return tool, ({arg: args} if isinstance(args, str) else args)

    def on_hold(self, name: str, description: str, effect: list, shown: tuple, when=None,
                timing: str = "after", **booking) -> Trigger:
        """A change the user's hold sets off (by default right after it is placed, once ``when`` holds: by
        default the user has a live booking matching ``booking``, has_live_booking's filters)."""
        when = when or self.author.pred.has_live_booking(customer=self.user, **booking)
        return self.trigger(name, description, when, effect, shown, activation=["hold_vehicle"], timing=timing)

    def on_dispatch(self, name: str, description: str, vehicle: str, site: str, effect: list,
                    shown: tuple) -> Trigger:
        """A change set off as ``vehicle`` is sent out of ``site``."""
        pred = self.author.pred
        return self.trigger(name, description, pred.all_of(preds=[
            pred.call_argument(name="vehicle_id", value=vehicle),
            pred.field_equals(path=["vehicles", vehicle, "depot"], value=site)]), effect, shown,
            activation=["transfer_vehicle"])

    def cascade(self, name: str, description: str, path: list, value, effect: list,
                shown: tuple) -> Trigger:
        """A change that follows once an earlier one left ``path`` at ``value`` (the hard levels' second wave)."""
        return self.trigger(name, description, self.author.pred.field_equals(path=path, value=value), effect, shown)

    def arrival(self, calls: list[Call], vehicle: str, triggers: list[Trigger] = ()) -> datetime:
        """When ``vehicle`` arrives by the last successful transfer among ``calls``, run on a copy of the world
        (``datetime.max`` if none succeeds)."""
        run = self.author.dry_run(self.state, format_time(self.start), calls, list(triggers))
        return max([datetime.fromisoformat(r["data"]["arrives"]) for c, r in zip(calls, run.results)
                    if c.name == "transfer_vehicle" and r.get("success") and c.arguments["vehicle_id"] == vehicle]
                   or [datetime.max])

    def roads_of(self, site: str) -> list[str]:
        """Every road touching ``site``."""
        return [r for r, x in sorted(self.state["roads"].items()) if site in (x["a"], x["b"])]

    def cut_off(self, site: str) -> list:
        """Operations closing every road touching ``site``."""
        return [self.set("roads", r, "open", value=False) for r in self.roads_of(site)]

    def committed(self, vehicle: str, after: str) -> str:
        """Another customer's confirmed booking of ``vehicle`` at its own depot, starting a few hours after ``after``
        (the user's return): the car is free, and listed, for the user's window, but a car booked for pickup at its
        depot is not driven away (``transfer_vehicle`` refuses, naming the booking; ``get_vehicle_status`` lists it).
        An impossible story's other option, ruled out by a fact on that car. Returns the booking's id."""
        depot, a = self.state["vehicles"][vehicle]["depot"], self.author
        begins = shift(after, hours=a.integer(2, 8))
        ident, record = self.booking_by_other(vehicle, depot, begins, shift(begins, days=a.integer(1, 3)))
        self.state["reservations"][ident] = record
        return ident

    def back_late(self, vehicle: str, depot: str, pickup: str) -> tuple[str, str]:
        """``vehicle`` is out on rent and back at its depot shortly before ``pickup``, too late to be driven to
        ``depot`` by then (even sent the moment it is back, as ``transfer_vehicle`` would): listed as free for the
        user's window, its ``available_from`` and the drive rule it out. It is still out now, back a few minutes
        from the start at the earliest. Returns when it is back and when it would arrive (ISO)."""
        site = self.state["vehicles"][vehicle]["depot"]
        drive = self.minutes(site, depot)  # the fastest route there is (roads only close later)
        back = shift(pickup, minutes=-(drive - 5 * self.author.integer(1, max(1, min(3, (drive - 1) // 5)))))
        back = shift(back, minutes=-(int(back[14:16]) % 5))  # whole five minutes
        soon = self.start + timedelta(minutes=5 + (-self.start.minute) % 5)  # still out on rent now: back later
        back = min(pickup, max(back, format_time(soon)))
        self.state["vehicles"][vehicle]["available_from"] = back
        return back, shift(back, minutes=drive)

    def taken(self, vehicle: str, depot: str, start: str, end: str, prefix: str = "WEB") -> tuple[str, object]:
        """Another customer's booking of ``vehicle`` from ``start`` to ``end``: its id and the operation adding it."""
        ident, record = self.booking_by_other(vehicle, depot, start, end, prefix)
        return ident, self.set("reservations", ident, value=record)


def new_city(author: Author, start: datetime | None = None) -> City:
    """A seeded city on a morning between 08:00 and 11:00, with a focus class the background fleet lacks."""
    a = author
    focus = one(a, list(CLASSES))
    if start is None:
        start = datetime(a.integer(2024, 2025), 1, 1) + timedelta(days=a.integer(10, 330), hours=a.integer(8, 10),
                                                                  minutes=5 * a.integer(0, 11))
    state: dict = {k: {} for k in ("zones", "depots", "roads", "vehicles", "customers", "reservations",
                                   "promotions", "transfers", "flights")}
    state["rates"] = {c: a.integer(*_RATES[c]) for c in CLASSES}
    state["counters"] = {"reservation": a.integer(4000, 8999), "transfer": a.integer(100, 899)}
    city = City(a, state, start, focus)
    for kind, (zones, names, (lo, hi)) in _ZONES.items():
        zid = f"ZONE-{a.pick(zones)}"
        state["zones"][zid] = {"name": zid[5:].title(), "kind": kind, "demand": "normal", "surge": []}
        city.kinds[kind] = []
        for name in a.pick(names, a.integer(lo, hi)):
            did = "DEP-" + "".join(w[0] for w in name.split()).upper() + str(a.serial(10, 99))
            state["depots"][did] = {
                "name": name, "zone": zid, "opens": f"{a.integer(6, 7):02d}:00",
                "closes": f"{a.integer(20, 22):02d}:00",
                "status": "open", "hold_minutes": 5 * a.integer(6, 12), "charger": a.chance(0.7), "notice": ""}
            city.kinds[kind].append(did)

    def road(x: str, y: str, lo: int, hi: int) -> None:
        state["roads"][f"RD-{a.serial(100, 999)}"] = {"a": x, "b": y, "minutes": a.integer(lo, hi), "open": True}

    res, biz, air = city.kinds["residential"], city.kinds["business"], city.kinds["airport"]
    for depots in (res, biz, air):
        for x, y in zip(depots, depots[1:]):
            road(x, y, 8, 18)
    # Which depots the cross-town links join is drawn too, so the road graph itself varies.
    road(one(a, res), one(a, biz), 18, 34)
    road(one(a, biz), one(a, air), 20, 34)
    road(one(a, res), one(a, air), 32, 46)
    if a.chance(0.5):
        road(one(a, res), one(a, biz), 22, 40)

    background = [c for c in CLASSES if c != focus]
    for did in state["depots"]:
        for _ in range(a.integer(1, 3)):
            cls = one(a, background)
            city.add_vehicle(did, cls, "electric" if cls in ("economy", "compact") and a.chance(0.3) else "petrol")
    city.user = city.add_customer(licence=sorted({"B", LICENCE_FOR[focus]}))
    for _ in range(a.integer(2, 4)):
        city.add_customer()
    code = f"{a.pick(['SPRING', 'WEEKEND', 'CITY', 'SUMMER'])}{a.serial(10, 99)}"
    state["promotions"][code] = {"zone": city.zone(res[0]), "vehicle_class": background[0], "energy": None,
                                 "discount_pct": 10, "quota": 40, "used": a.integer(5, 30), "note": "city breaks"}
    for depot in air:
        city.add_flight(depot, format_time(start + timedelta(minutes=a.integer(60, 600))))
    fleet = sorted(state["vehicles"])
    for vid in [fleet[int(i)] for i in a.rng.choice(len(fleet), 2, replace=False)]:  # the books are never empty
        pickup = city.at(a.integer(1, 3), a.integer(9, 16))
        ident = f"RSV-{a.serial(1000, 3999)}"
        state["reservations"][ident] = city.reservation(city.other_customer(), vid, state["vehicles"][vid]["depot"],
                                                        format_time(pickup), format_time(pickup + timedelta(days=2)))
    return city


@dataclass
class Request:
    """One rental request: who, which class, where and when; the calls and checks that serve it."""

    city: City
    depot: str
    pickup: str
    ret: str
    count: int = 1
    flight: str = ""  # the flight the customer's profile records (:meth:`City.inbound`): pickup at its arrival
    min_fuel: int = HANDOVER_MIN_FUEL
    energy: str = ""
    max_mileage: int = 0  # 0: any
    requirement: Answer | None = None  # the user's requirement for the car (set by :meth:`City.requirement`)
    ask_before: str = ""  # set when the requirement decides between cars: the write the question must come before
    asked: str = ""  # the words of the query that ask for the booking (what the checks quote)
    needs: str = ""  # the words of the query that say how the car must be (fuel, charge), if any
    impossible: Impossibility | None = None  # set by :meth:`refuse`
    moves: str = ""  # the story's level, for a customer who flies in (:func:`flight_moves`); at hard it is delayed

    @property
    def withheld(self) -> Answer | None:
        """The requirement, when it is a fact to ask for (it decides between the cars left)."""
        return self.requirement if self.ask_before else None

    @property
    def customer(self) -> str:
        return self.city.user

    @property
    def cls(self) -> str:
        return self.city.focus

    def spec(self) -> dict:
        spec = {"customer": self.customer, "vehicle_class": self.cls, "depot_id": self.depot,
                "pickup_time": self.pickup, "return_time": self.ret, "count": self.count, "min_fuel": self.min_fuel,
                "energy": self.energy, **({"max_mileage": self.max_mileage} if self.max_mileage else {})}
        return {**spec, "at_landing": True} if self.flight else spec

    # plan steps
    def search(self, depot: str = "", pickup: str = "") -> Call:
        return self.city.author.call.search_available_vehicles(
            depot_id=depot or self.depot, pickup_time=pickup or self.pickup, return_time=self.ret,
            vehicle_class=self.cls)

    def hold(self, vehicle: str, save_as: str = "hold", pickup: str = "") -> Call:
        return self.city.author.call.hold_vehicle(
            save_as=save_as, customer_id=self.customer, vehicle_id=vehicle, pickup_depot_id=self.depot,
            pickup_time=pickup or self.pickup, return_time=self.ret)

    def quote(self, promo: str = "", pickup: str = "") -> Call:
        extra = {"promo_code": promo} if promo else {}
        return self.city.author.call.get_rental_quote(depot_id=self.depot, vehicle_class=self.cls,
                                                      pickup_time=pickup or self.pickup, return_time=self.ret,
                                                      customer_id=self.customer, **extra)

    def confirm(self, step: str = "hold", promo: str = "") -> Call:
        extra = {"promo_code": promo} if promo else {}
        return self.city.author.call.confirm_reservation(reservation_id=rid(step), **extra)

    def swap(self, vehicle: str, step: str = "hold") -> Call:
        return self.city.author.call.swap_reservation_vehicle(reservation_id=rid(step), vehicle_id=vehicle)

    def move(self, vehicle: str) -> Call:
        return self.city.author.call.transfer_vehicle(vehicle_id=vehicle, to_depot_id=self.depot)

    def route(self, origin: str) -> Call:
        return self.city.author.call.plan_route(origin_id=origin, destination_id=self.depot)

    def profile(self) -> Call:
        return self.city.author.call.get_customer_profile(customer_id=self.customer)

    def bookings(self) -> Call:
        return self.city.author.call.list_customer_reservations(customer_id=self.customer)

    def status(self, vehicle: str) -> Call:
        return self.city.author.call.get_vehicle_status(vehicle_id=vehicle)

    def depots(self) -> Call:
        return self.city.author.call.list_depots()

    def tell(self, message: str) -> Call:
        return self.city.author.call.chat_with_user(message=message)

    def book(self, vehicle: str, step: str = "hold", pickup: str = "") -> list[Call]:
        """Hold ``vehicle`` and confirm at once (under ``step``)."""
        return [self.hold(vehicle, step, pickup), self.confirm(step)]

    def take_over(self, vehicle: str, step: str = "hold") -> list[Call]:
        """Put ``vehicle`` on the held booking and confirm it."""
        return [self.swap(vehicle, step), self.confirm(step)]

    def refuse(self, message: str, changed_by: list[str], facts: list[str], others: list[str]) -> list[Call]:
        """The oracle's apology (``I'm sorry, `` + ``message``); marks the request impossible. ``facts``: what names
        the change; ``others``: why the other options the world offers fail too (their ids, the values that rule
        them out, a few plain words), which the apology must name as well."""
        self.impossible = self.refusal(changed_by, facts, others)
        return [self.tell(f"I'm sorry, {message}")]

    def constraints(self) -> str:
        """The user's hard constraints as they say them, the start of their ``insist`` answer: the class (unnamed,
        so the words vary with nothing but the story), the depot and the times, for however many cars."""
        return f"Each car has to be of the class I asked for, collected at {self.depot} {self.when()} and returned " \
               f"there {self.ret}"

    @property
    def flies(self) -> bool:
        """The customer flies in and collects on landing (every story with :func:`flight_moves`, and T2's)."""
        return bool(self.flight or self.moves)

    def when(self, at: str = "at") -> str:
        """When the customer collects, as they say it: on landing when they fly in (a clock time there would go
        stale once the flight moves), else ``at`` (or ``by``) the pickup time."""
        return "when my flight lands" if self.flies else f"{at} {self.pickup}"

    @property
    def who(self) -> str:
        """How the user introduces themself: ``Dana Whitfield, customer CUS-12345``."""
        return f"{self.city.state['customers'][self.customer]['name']}, customer {self.customer}"

    def delivery(self, source: str, vehicle: str, quote: bool = False) -> Plan:
        """The plan to have ``vehicle`` driven over from ``source`` and booked (``quote``: priced before)."""
        return Plan(look=[self.search(source), self.route(source)], move=[self.move(vehicle)],
                    hold=[self.hold(vehicle)] + [self.quote()] * quote, confirm=[self.confirm()])

    def booking(self, vehicle: str) -> Plan:
        """The plain plan: search the depot, hold ``vehicle``, check the price, confirm."""
        return Plan(look=[self.search()], hold=[self.hold(vehicle)], check=[self.quote()], confirm=[self.confirm()])

    # checks
    def goal(self) -> list[Check]:
        """The original goal: booked, every car fit to hand over, nothing else live, no car double-booked. Each
        check quotes where the agent is told its rule: the request's words, the user's requirement once asked
        for, the world description or the rule of change every agent reads."""
        pred, spec, what = self.city.author.pred, self.spec(), f"{self.count} {self.cls} booking(s) at {self.depot}"
        fit = self.withheld.text if self.withheld else self.needs or HANDOVER_RULE
        return [
            Check(name="booked", description=f"{self.customer} holds {what} as asked", holds=pred.booked(request=spec),
                  stated=self.asked),
            Check(name="ready", description="every booked car is on site and free by the pickup, fuelled or charged "
                  "as asked", holds=pred.ready(request=spec), stated=fit),
            Check(name="only_as_asked", gate=True, description="every confirmed booking of the customer is as asked, "
                  "within the payment limit, with a car fit to hand over, and there is no extra one",
                  holds=pred.only_as_asked(request=spec), stated=_ONLY_NEEDED),
            Check(name="no_double_booking", gate=True, description="no car is double-booked",
                  holds=pred.no_double_booking(), stated=_LEAVE_OTHERS),
        ]

    def checklist(self) -> list[Check]:
        """The goal, judged on the outcome alone (a path the change never met is as good as one that recovered
        from it), and, when the user's requirement decides between the cars left, that the agent asked for it and
        then booked a car that meets it (asking and going on with the stale plan earns nothing)."""
        goal, pred = self.goal(), self.city.author.pred
        ready = next(c for c in goal if c.name == "ready")
        asked = [Check(name="asked_user", description=f"the agent asked the user about their requirement before "
                       f"its last {self.ask_before}, and booked a car that meets it", holds=pred.all_of(preds=[
                           pred.asked_user(about=self.withheld.keywords, before=self.ask_before), ready.holds]),
                       stated=ASK_FIRST)] if self.withheld else []
        return [*asked, *goal]

    def refusal(self, changed_by: list[str], facts: list[str], others: list[str]) -> Impossibility:
        pred, existing = self.city.author.pred, sorted(self.city.state["reservations"])
        return Impossibility(changed_by=changed_by, blocking_facts=facts, no_alternative=others, forbidden=[
            Check(name="no_wrong_booking", gate=True,
                  description=f"no booking was confirmed for {self.customer} anyway",
                  holds=pred.no_new_booking(customer=self.customer, existing=existing), stated=_ONLY_NEEDED),
            Check(name="no_double_booking", gate=True, description="no car is double-booked",
                  holds=pred.no_double_booking(), stated=_LEAVE_OTHERS)])


def make_task(req: Request, query: str, triggers: list[Trigger], nominal: Plan | list[Call], oracle: list[Call],
              persona: str, answers: dict[tuple, str] | None = None, *, insist: str,
              alternatives: list[list[Call]] = ()) -> Task:
    """The task (impossible once the oracle went through :meth:`Request.refuse`). The oracle double-checks a
    drawn few things at the end (before its refusal, when impossible), so its tool sequence varies as real
    agents' do without moving any timing the story measured. ``alternatives``: the other complete solutions
    (another car the first choice could have been, another recovery); ``insist``: the user's hard constraints,
    their answer to any proposed change, the same on every level (as all their answers are)."""
    city, impossible, answers = req.city, req.impossible, answers or {}
    nominal = nominal.calls if isinstance(nominal, Plan) else nominal
    if req.moves:
        query, triggers, nominal, oracle, alternatives, answers = flight_moves(
            req, query, triggers, nominal, oracle, alternatives, answers)
    quoted = [q for q in (req.asked, req.needs) if q not in query]
    if not req.asked or quoted:
        raise ValueError(f"the checks quote words the query does not have: {quoted or 'no booking words'}")
    checks = [req.profile(), req.bookings(), city.author.call.get_depot_info(depot_id=req.depot), req.search()]
    extra = [checks[int(i)] for i in city.author.rng.permutation(len(checks))[:city.author.integer(1, 3)]]
    said = oracle[-1:] if impossible else []  # the apology (a question to the user stays where it is asked)
    oracle = oracle[:len(oracle) - len(said)] + extra + said
    if not req.requirement and not any("car" in keys for keys in answers):  # asked, a user takes any of the class
        answers = {**answers, ("car", "vehicle", "another", "other"): f"Any {req.cls} is fine."}
    told = [Answer(keywords=list(k), text=t) for k, t in answers.items()]
    if req.requirement and not req.withheld:  # a requirement every car left meets is just an answer
        told.insert(0, req.requirement)
    profile = UserProfile(
        persona=f"{city.state['customers'][city.user]['name']}, {persona}",
        known_facts=[f"customer id {city.user}", f"class {req.cls}", f"pickup depot {req.depot}"],
        clarifications=told, withheld=[req.withheld] if req.withheld else [], insist=insist,
        fallback="Everything I know is in my request; please handle the booking as asked.")
    return Task(query=query, profile=profile, start_time=format_time(city.start), initial_state=city.state,
                triggers=triggers, checklist=[] if impossible else req.checklist(),
                static_checklist=req.goal(), nominal_plan=nominal, oracle=oracle, alternatives=list(alternatives),
                solvable=impossible is None, impossibility=impossible)


# The writes a recovery is made of: at hard the first one after the story's change, with a booking live, delays
# the flight.
_RECOVERY_WRITES = ["hold_vehicle", "confirm_reservation", "swap_reservation_vehicle", "reschedule_reservation",
                    "transfer_vehicle", "cancel_reservation"]


def flight_moves(req: Request, query: str, triggers: list[Trigger], nominal: list[Call], oracle: list[Call],
                 alternatives: list[list[Call]], answers: dict) -> tuple:
    """The medium and hard levels' second change, on the customer's side rather than the fleet's. At every level
    alike the customer flies in on a flight their profile records, due at the pickup time, and asks for the pickup
    at its arrival; at medium the airline rebooks them onto a later flight after a missed connection in the same
    call as the story's change (a read of the profile once the change is seen shows it); at hard it does so at the
    recovery's first write after the story's change (with a booking live: whichever car and depot the recovery
    took). Only
    ``get_customer_profile`` shows it: the first flight still lands on time, every write goes through and the
    booking reads as the agent left it. The later flight (tracked at every level, so the flights never tell the
    level) keeps the car free and the desk open, so moving the pickup (``reschedule_reservation``) is the whole
    fix; the difficulty is knowing that the pickup depends on a record the recovery never touched. Returns the
    query, triggers, nominal plan, oracle, alternatives and answers, extended."""
    city, author = req.city, req.city.author
    due = datetime.fromisoformat(req.pickup)
    closes = due.replace(hour=int(city.state["depots"][req.depot]["closes"][:2]), minute=0)
    later = format_time(min(due + timedelta(minutes=15 * author.integer(4, 10)), closes - timedelta(hours=1)))
    req.flight = city.inbound(req.depot, req.pickup)
    rebooked = city.add_flight(req.depot, later)
    answers = {("land", "landing", "arrival", "flight", "time"): "Go by the arrival of the flight on my profile; "
               "I'll be at the desk as soon as I land.", **answers}
    query = (f"{query} I'm flying in, due at {req.pickup[11:]}; my flight is on my customer profile. Please set the "
             "pickup for its tracked arrival, since I go to the desk as soon as I land.")
    if req.moves not in ("medium", "hard") or req.impossible:  # the flight lands on time: the pickup is its arrival
        return query, triggers, nominal, oracle, alternatives, answers
    pred, story = author.pred, triggers[0].name
    if req.moves == "medium":
        (when, activation), moment = author.alongside(triggers[:1]), f"with {story}"
    else:
        when = pred.all_of(preds=[pred.fired_before(trigger=story), pred.has_live_booking(customer=req.customer)])
        activation, moment = _RECOVERY_WRITES, f"once the recovery after {story} has begun"
    missed = city.trigger(
        "flight_rebooked", f"{moment}, the customer is rebooked onto {rebooked}, landing {later[11:]}", when,
        city.sets("customers", req.customer, flight=rebooked,
                  flight_note=f"rebooked onto {rebooked} after a missed connection"),
        ("get_customer_profile", req.customer), activation=tuple(activation), timing="after")

    def moved(calls: list[Call]) -> list[Call]:
        """``calls``, then the profile and the new flight read, and on each of the last ``count`` bookings they
        confirm, the pickup at its arrival."""
        ids = {repr(c.arguments["reservation_id"]): c.arguments["reservation_id"] for c in calls
               if c.name == "confirm_reservation"}
        booked = list(ids)[-req.count:]
        return [*calls, req.profile(), author.call.get_flight_arrival(flight_number=rebooked),
                *[author.call.reschedule_reservation(reservation_id=ids[r], pickup_time=later, return_time=req.ret)
                  for r in booked]]

    return query, [*triggers, missed], nominal, moved(oracle), [moved(a) for a in alternatives], answers
