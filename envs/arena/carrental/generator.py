"""The seeded CarRental city every scenario specialises, and what scenarios share.

:func:`new_world` draws a city (three zones, seven depots joined by roads, a background
fleet, customers, rates, a promotion, tracked flights) from the generator it is handed. The
background fleet never includes the scenario's *focus class*: a scenario places every
vehicle of that class itself, so it knows exactly which alternatives exist.

:class:`Booking` is the request most stories revolve around (a customer, a class, a pickup
depot and window); it writes the plan steps and the outcome checks that scenarios share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

from sttgym.checklist import Check, EpisodeLog
from sttgym.clock import format_time
from sttgym.env import UserChannel
from sttgym.envs.arena.carrental.world import (HANDOVER_MIN_FUEL, LICENCE_FOR, CarRentalWorld, hold_expires,
                                              live_status, overlaps, price_of, when)
from sttgym.geo import shortest_route
from sttgym.judge import Impossibility
from sttgym.task import Call, Ref, Task
from sttgym.triggers import Context, Trigger
from sttgym.user import Answer, UserProfile

__all__ = ["CLASSES", "Base", "Booking", "new_world", "elapsed", "iso", "car", "rid", "tell", "holds_of", "lapsed_hold",
           "no_double_booking", "fleet_unmoved", "cannot", "make_task", "user_profile"]

CLASSES = ("economy", "compact", "suv", "van", "premium")
_RATES = {"economy": (35, 45), "compact": (45, 60), "suv": (75, 100), "van": (85, 110), "premium": (130, 170)}
_ZONES = {
    "residential": (["NORTH", "EAST", "WEST", "HILLS", "RIVER"],
                    ["Maple Heights", "Riverside", "Old Town", "Greenfield", "Lakeside", "Hillcrest", "Elm Park"]),
    "business": (["DOWNTOWN", "CENTRE", "HARBOUR", "MIDTOWN"],
                 ["Central Station", "Financial District", "Tech Park", "Harbour Front", "Market Square"]),
    "airport": (["AIRPORT"], ["Airport Terminal 1", "Airport Terminal 2", "Airport Parkway"]),
}
_DEPOTS_PER_ZONE = {"residential": 3, "business": 2, "airport": 2}
_PEOPLE = ["Dana Whitfield", "Omar Haddad", "Lena Fischer", "Kenji Watanabe", "Priya Raman", "Mateo Silva",
           "Grace Okafor", "Tomasz Nowak", "Sofia Romano", "Liam O'Brien", "Aisha Bello", "Jonas Berg"]
_CITIES = ["Lisbon", "Oslo", "Vienna", "Madrid", "Dublin", "Prague", "Athens", "Helsinki"]
_AIRLINES = ["LX", "OS", "AF", "KL", "IB", "SK"]
_LABEL = {"economy": "economy car", "compact": "compact car", "suv": "SUV", "van": "van", "premium": "premium car"}


def car(cls: str, count: int = 1, article: bool = True) -> str:
    """How a user names ``count`` cars of a class: ``an SUV``, ``two compact cars``, ``SUV`` (no article)."""
    label = _LABEL[cls]
    if not article:
        return label
    if count > 1:
        return f"{['two', 'three', 'four'][count - 2]} {label}s"
    return ("an " if label[0] in "AEIOUaeiou" else "a ") + label


def iso(moment: datetime) -> str:
    return format_time(moment)


def elapsed(calls: list[Call]) -> int:
    """Simulated minutes a list of calls takes: the sum of the tools' costs."""
    owner = lambda name: UserChannel if name == "chat_with_user" else CarRentalWorld  # noqa: E731
    return sum(getattr(owner(c.name), c.name).__sttgym_tool__["cost"] for c in calls)


@dataclass
class Base:
    """A drawn city: the state plus the handles scenarios need to specialise it."""

    rng: np.random.Generator
    state: dict
    start: datetime
    focus: str  # the vehicle class the story is about; the background fleet has none of it
    user: str  # the customer who writes the query
    zone_of_kind: dict[str, str]  # residential/business/airport -> zone id
    _used: set = field(default_factory=set)

    # ------------------------------------------------------------- lookups

    def depots_in(self, kind: str) -> list[str]:
        zone = self.zone_of_kind[kind]
        return sorted(d for d, x in self.state["depots"].items() if x["zone"] == zone)

    def zone(self, depot: str) -> str:
        return self.state["depots"][depot]["zone"]

    def name(self, depot: str) -> str:
        return self.state["depots"][depot]["name"]

    def minutes(self, a: str, b: str, avoid_roads: tuple = ()) -> int | None:
        """Fastest driving time between two depots, optionally with some roads closed."""
        roads = {r: {**x, "open": x["open"] and r not in avoid_roads} for r, x in self.state["roads"].items()}
        route = shortest_route(roads, a, b)
        return None if route is None else route[0]

    def at(self, day: int, hour: int, minute: int = 0) -> datetime:
        """``day`` days after the start date, at ``hour:minute``."""
        midnight = self.start.replace(hour=0, minute=0)
        return midnight + timedelta(days=day, hours=hour, minutes=minute)

    def trip(self, day: int = 1) -> tuple[datetime, datetime]:
        """A rental window: pickup ``day`` days after the start, return one to three days later (within hours)."""
        pickup = self.at(day, int(self.rng.integers(9, 15)), 30 * int(self.rng.integers(2)))
        return pickup, self.at(day + int(self.rng.integers(1, 4)), int(self.rng.integers(9, 18)))

    def pick(self, options: list[str]) -> str:
        return options[int(self.rng.integers(len(options)))]

    def price(self, depot: str, cls: str, pickup: datetime, ret: datetime, promo_discount: int = 0) -> int:
        tier = self.state["customers"][self.user]["tier"]
        return price_of(self.state, depot, cls, pickup, ret, tier, promo_discount)["total"]

    # ------------------------------------------------------------ additions

    def unique(self, prefix: str, low: int, high: int) -> str:
        while True:
            ident = f"{prefix}-{int(self.rng.integers(low, high))}"
            if ident not in self._used:
                self._used.add(ident)
                return ident

    def add_vehicle(self, depot: str, cls: str, energy: str = "petrol", fuel: int | None = None,
                    available_from: datetime | None = None, status: str = "available") -> str:
        vid = self.unique("VH", 1000, 9999)
        self.state["vehicles"][vid] = {
            "class": cls, "energy": energy, "fuel_pct": int(self.rng.integers(70, 101)) if fuel is None else fuel,
            "mileage_km": int(self.rng.integers(4, 95)) * 1000 + int(self.rng.integers(0, 1000)),
            "status": status, "depot": depot, "available_from": iso(available_from) if available_from else None}
        return vid

    def add_customer(self, **fields) -> str:
        cid = self.unique("CUS", 10000, 99999)
        name = _PEOPLE[int(self.rng.integers(len(_PEOPLE)))]
        self.state["customers"][cid] = {
            "name": name, "licence": ["B"], "licence_expires": iso(self.at(int(self.rng.integers(400, 2500)), 0))[:10],
            "tier": ["standard", "silver", "gold"][int(self.rng.integers(3))],
            "payment_limit": int(self.rng.integers(8, 30)) * 50, **fields}
        return cid

    def add_reservation(self, customer: str, vehicle: str, depot: str, pickup: datetime, ret: datetime) -> str:
        """A confirmed reservation already on the books (made before the episode)."""
        self.state["counters"]["reservation"] += 1
        ident = f"RSV-{self.state['counters']['reservation']}"
        self.state["reservations"][ident] = self.reservation(customer, vehicle, depot, pickup, ret)
        return ident

    def flight_number(self) -> str:
        return self.unique(self.pick(_AIRLINES), 100, 9999).replace("-", "")

    def reservation(self, customer: str, vehicle: str, depot: str, pickup: datetime, ret: datetime) -> dict:
        """A confirmed reservation record (for the state, or as a trigger's new value)."""
        cls = self.state["vehicles"][vehicle]["class"]
        tier = self.state["customers"][customer]["tier"]
        return {"customer": customer, "vehicle": vehicle, "class": cls, "pickup_depot": depot, "return_depot": depot,
                "pickup_time": iso(pickup), "return_time": iso(ret), "status": "confirmed",
                "held_at": iso(self.start - timedelta(days=2)),
                "price": price_of(self.state, depot, cls, pickup, ret, tier)["total"], "promo": None,
                "promo_discount": 0}

    def other_customer(self) -> str:
        """A customer other than the user (for bookings that compete with the user's)."""
        return sorted(c for c in self.state["customers"] if c != self.user)[int(self.rng.integers(3))]

    def promo_code(self, words: tuple[str, ...]) -> str:
        return self.unique(words[int(self.rng.integers(len(words)))], 10, 99)


def new_world(rng: np.random.Generator) -> Base:
    """A seeded city on a morning between 08:00 and 11:00, with a drawn focus class the background fleet lacks."""
    focus = CLASSES[int(rng.integers(len(CLASSES)))]
    year, day = int(rng.integers(2024, 2026)), int(rng.integers(10, 340))
    start = datetime(year, 1, 1) + timedelta(days=day, hours=int(rng.integers(8, 11)),
                                             minutes=5 * int(rng.integers(0, 12)))
    state: dict = {k: {} for k in ("zones", "depots", "roads", "vehicles", "customers", "reservations",
                                   "promotions", "transfers", "flights")}
    state["rates"] = {c: int(rng.integers(*_RATES[c])) for c in CLASSES}
    state["counters"] = {"reservation": int(rng.integers(4000, 8999)), "transfer": int(rng.integers(100, 899))}
    base = Base(rng, state, start, focus, user="", zone_of_kind={})

    by_kind: dict[str, list[str]] = {}
    for kind, (zone_names, depot_names) in _ZONES.items():
        zid = f"ZONE-{zone_names[int(rng.integers(len(zone_names)))]}"
        base.zone_of_kind[kind] = zid
        state["zones"][zid] = {"name": zid[5:].title(), "kind": kind, "demand": "normal", "surge": []}
        names = [depot_names[i] for i in rng.permutation(len(depot_names))[:_DEPOTS_PER_ZONE[kind]]]
        by_kind[kind] = []
        for name in names:
            did = base.unique("DEP-" + "".join(w[0] for w in name.split()).upper(), 10, 99)
            state["depots"][did] = {
                "name": name, "zone": zid, "opens": f"{int(rng.integers(6, 8)):02d}:00",
                "closes": f"{int(rng.integers(20, 23)):02d}:00", "status": "open",
                "hold_minutes": 5 * int(rng.integers(6, 13)), "charger": bool(rng.random() < 0.7), "notice": ""}
            by_kind[kind].append(did)

    def road(a: str, b: str, low: int, high: int) -> None:
        rid = base.unique("RD", 100, 999)
        state["roads"][rid] = {"a": a, "b": b, "minutes": int(rng.integers(low, high)), "open": True}

    for depots in by_kind.values():
        for a, b in zip(depots, depots[1:]):
            road(a, b, 8, 19)
    res, biz, air = by_kind["residential"], by_kind["business"], by_kind["airport"]
    road(res[0], biz[0], 18, 34)
    road(res[-1], biz[-1], 20, 36)
    road(biz[-1], air[0], 20, 34)
    road(res[1], air[-1], 32, 46)

    background = [c for c in CLASSES if c != focus]
    for did in state["depots"]:
        for _ in range(int(rng.integers(2, 4))):
            cls = background[int(rng.integers(len(background)))]
            energy = "electric" if cls in ("economy", "compact") and rng.random() < 0.3 else "petrol"
            base.add_vehicle(did, cls, energy)

    base.user = base.add_customer(licence=sorted({"B", LICENCE_FOR[focus]}))
    for _ in range(3):
        base.add_customer()

    code = base.promo_code(("SPRING", "WEEKEND", "CITY"))
    state["promotions"][code] = {"zone": base.zone_of_kind["residential"], "vehicle_class": background[0],
                                 "energy": None, "discount_pct": 10, "quota": 40, "used": int(rng.integers(5, 30)),
                                 "note": "weekend city breaks"}
    for depot in air:
        state["flights"][base.flight_number()] = {"depot": depot, "origin": _CITIES[int(rng.integers(len(_CITIES)))],
                                    "arrives": iso(start + timedelta(minutes=int(rng.integers(60, 600)))),
                                    "status": "on time"}

    # Two unrelated bookings keep the books realistic; they use background vehicles only.
    others = sorted(c for c in state["customers"] if c != base.user)
    fleet = sorted(state["vehicles"])
    for i, pick in enumerate(rng.permutation(len(fleet))[:2]):
        vid = fleet[int(pick)]
        pickup = base.at(int(rng.integers(1, 4)), int(rng.integers(9, 17)))
        base.add_reservation(others[i], vid, state["vehicles"][vid]["depot"], pickup, pickup + timedelta(days=2))
    return base


# --------------------------------------------------------------------- the request


@dataclass
class Booking:
    """One rental request: who, which class, where and when."""

    customer: str
    cls: str
    depot: str
    pickup: datetime
    ret: datetime

    @property
    def times(self) -> dict:
        return {"pickup_time": iso(self.pickup), "return_time": iso(self.ret)}

    def moved(self, pickup: datetime) -> "Booking":
        return Booking(self.customer, self.cls, self.depot, pickup, self.ret)

    # plan steps

    def search(self, depot: str | None = None) -> Call:
        return Call(name="search_available_vehicles",
                    arguments={"depot_id": depot or self.depot, **self.times, "vehicle_class": self.cls})

    def hold(self, vehicle: str, save_as: str = "hold") -> Call:
        return Call(name="hold_vehicle", save_as=save_as, arguments={
            "customer_id": self.customer, "vehicle_id": vehicle, "pickup_depot_id": self.depot, **self.times})

    def quote(self, promo: str = "") -> Call:
        args = {"depot_id": self.depot, "vehicle_class": self.cls, **self.times, "customer_id": self.customer}
        return Call(name="get_rental_quote", arguments={**args, "promo_code": promo} if promo else args)

    def confirm(self, step: str = "hold", promo: str = "") -> Call:
        args: dict = {"reservation_id": rid(step)}
        return Call(name="confirm_reservation", arguments={**args, "promo_code": promo} if promo else args)

    def profile(self) -> Call:
        return Call(name="get_customer_profile", arguments={"customer_id": self.customer})

    def verify(self) -> Call:
        return Call(name="list_customer_reservations", arguments={"customer_id": self.customer})

    # outcomes

    def matches(self, res: dict, pickup_window: tuple[datetime, datetime] | None = None) -> bool:
        """``res`` is a confirmed reservation that serves this request (pickup inside ``pickup_window``
        when given, else exactly at the requested time)."""
        if res.get("status") != "confirmed" or res.get("customer") != self.customer:
            return False
        if (res.get("class"), res.get("pickup_depot"), res.get("return_depot"), res.get("return_time")) != \
                (self.cls, self.depot, self.depot, iso(self.ret)):
            return False
        pickup = when(res.get("pickup_time"))
        lo, hi = pickup_window or (self.pickup, self.pickup)
        return pickup is not None and lo <= pickup <= hi

    def checks(self, count: int = 1, pickup_window: tuple[datetime, datetime] | None = None,
               fuel: int = HANDOVER_MIN_FUEL, energy: str | None = None) -> list[Check]:
        """The outcome checks of serving this request with ``count`` cars.

        Booked, ready (on site by pickup, fuelled to ``fuel``%, of ``energy`` if given), exactly the
        bookings asked for, paid within the customer's limit, and nothing collateral broken.
        """
        window = pickup_window or (self.pickup, self.pickup)
        span = (min(window[0], self.pickup), self.ret)
        lo, hi = window

        def served(s: dict) -> list[dict]:
            return [r for r in s["reservations"].values() if self.matches(r, window)]

        def ready(s: dict, res: dict) -> bool:
            v = s["vehicles"][res["vehicle"]]
            there = when(v["available_from"])
            return (v["status"] == "available" and v["depot"] == self.depot and v["fuel_pct"] >= fuel
                    and (there is None or there <= when(res["pickup_time"]))
                    and (energy is None or v["energy"] == energy))

        def live(s: dict, log: EpisodeLog) -> list[dict]:
            end = end_of(log)
            return [r for r in s["reservations"].values() if r["customer"] == self.customer and alive(s, r, end)
                    and r["status"] in ("held", "confirmed")
                    and overlaps(span[0], span[1], when(r["pickup_time"]), when(r["return_time"]))]

        what = car(self.cls, count)
        when_text = f"pickup {iso(lo)}" if lo == hi else f"pickup between {iso(lo)} and {iso(hi)}"
        limit = lambda s: s["customers"][self.customer]["payment_limit"]  # noqa: E731
        return [
            Check("booked", f"{self.customer} holds {count} confirmed {self.cls} booking(s) at {self.depot}, "
                  f"{when_text}, return {iso(self.ret)}", lambda s, _: len(served(s)) >= count),
            Check("vehicle_ready", f"{what} booked, at {self.depot} and free by pickup, at least {fuel}% "
                  f"fuelled{', electric' if energy else ''}",
                  lambda s, _: served(s) and all(ready(s, r) for r in served(s))),
            Check("exact_bookings", f"{self.customer} has exactly {count} live booking(s) for the trip, each one "
                  "confirmed as asked", lambda s, log: len(live(s, log)) == count
                  and all(self.matches(r, window) for r in live(s, log))),
            Check("within_budget", "every booking for the trip is charged within the customer's payment limit",
                  lambda s, _: served(s) and all(r["price"] <= limit(s) for r in served(s))),
            Check("nothing_broken", "no live hold of the customer is left dangling and no vehicle is double-booked",
                  lambda s, log: not [r for r in s["reservations"].values() if r["customer"] == self.customer
                                      and r["status"] == "held" and alive(s, r, end_of(log))]
                  and no_double_booking(s, end_of(log))),
        ]


def tell(message: str) -> Call:
    """Tell the user something (how impossible tasks end: the blocking fact, named)."""
    return Call(name="chat_with_user", arguments={"message": message})


def rid(step: str) -> Ref:
    """The reservation id a saved ``hold_vehicle`` step created."""
    return Ref(step=step, path=("data", "reservation_id"))


# ----------------------------------------------------------------- conditions


def holds_of(state: dict, customer: str, depot: str | None = None, vehicle: str | None = None) -> list[dict]:
    """The customer's reservations still in status ``held`` (lapsed or not), optionally filtered."""
    return [r for _, r in sorted(state["reservations"].items()) if r["customer"] == customer
            and r["status"] == "held" and depot in (None, r["pickup_depot"]) and vehicle in (None, r["vehicle"])]


def lapsed_hold(state: dict, ctx: Context, customer: str, vehicle: str) -> bool:
    """The customer's hold on ``vehicle`` has lapsed by the time of this call."""
    now = when(ctx.now)
    return any(hold_expires(state, r) < now for r in holds_of(state, customer, vehicle=vehicle))


# ------------------------------------------------------------------ collateral


def end_of(log: EpisodeLog) -> datetime | None:
    """The simulated time the episode ended at (after its last accepted call), or None if it made none."""
    return when(log.calls[-1]["at"]) if log.calls else None


def alive(state: dict, res: dict, end: datetime | None) -> bool:
    """``res`` still counts at ``end``: anything but a hold that had lapsed by then (None: nothing lapsed)."""
    return end is None or live_status(state, res, end) != "expired"


def no_double_booking(state: dict, end: datetime | None = None) -> bool:
    """No vehicle carries two overlapping reservations that are live (held, confirmed or out on rent) at ``end``."""
    by_vehicle: dict[str, list[tuple[datetime, datetime]]] = {}
    for _, r in sorted(state["reservations"].items()):
        if r["status"] in ("held", "confirmed", "picked_up") and alive(state, r, end):
            by_vehicle.setdefault(r["vehicle"], []).append((when(r["pickup_time"]), when(r["return_time"])))
    for spans in by_vehicle.values():
        spans.sort()
        if any(a[1] > b[0] for a, b in zip(spans, spans[1:])):
            return False
    return True


def no_new_booking(customer: str, initial: dict, what: str) -> Check:
    """Forbidden change on impossible tasks: the customer got no confirmed booking beyond ``initial``."""
    before = {r for r, x in initial["reservations"].items() if x["status"] == "confirmed"}
    return Check("no_wrong_booking", f"no booking that breaks the requirement was confirmed for {customer} ({what})",
                 lambda s, _: not [r for r, x in s["reservations"].items() if x["customer"] == customer
                                   and x["status"] == "confirmed" and r not in before])


def fleet_unmoved(initial: dict, vehicles: list[str]) -> Check:
    """Forbidden change: none of ``vehicles`` was sent anywhere pointless."""
    homes = {v: initial["vehicles"][v]["depot"] for v in vehicles}
    return Check("no_pointless_transfer", f"{', '.join(vehicles)} stayed where they were",
                 lambda s, _: all(s["vehicles"][v]["depot"] == home for v, home in homes.items()))


# ------------------------------------------------------------------------ tasks


def cannot(base: Base, keywords: list[str], wrong: str, *forbidden: Check) -> Impossibility:
    """An impossible task's verdict: name one of ``keywords``; no new booking (``wrong`` says what it would
    be), no double booking, and ``forbidden``. Call it once the initial state is complete."""
    clean = Check("no_double_booking", "no vehicle is double-booked", lambda s, log: no_double_booking(s, end_of(log)))
    return Impossibility(blocking_keywords=keywords, forbidden=[no_new_booking(base.user, base.state, wrong), clean,
                                                                *forbidden])


def make_task(base: Base, query: str, profile: UserProfile, triggers: list[Trigger], checks: list[Check],
              nominal: list[Call], oracle: list[Call], impossible: Impossibility | None = None,
              static: list[Check] | None = None) -> Task:
    """The task of a drawn city: ``checks`` hold with dynamics (impossible tasks are judged instead), ``static``
    (default ``checks``) without."""
    return Task(query=query, profile=profile, start_time=iso(base.start), initial_state=base.state,
                triggers=triggers, checklist=[] if impossible else checks, static_checklist=static or checks,
                nominal_plan=nominal, oracle=oracle, solvable=impossible is None, impossibility=impossible)


# ----------------------------------------------------------------------- users


def user_profile(base: Base, role: str, facts: list[str], answers: dict[tuple[str, ...], str] | None = None,
                 withheld: dict[tuple[str, ...], str] | None = None, insist: str | None = None) -> UserProfile:
    """The user's profile: who they are, what they know, and how they answer."""
    name = base.state["customers"][base.user]["name"]
    return UserProfile(
        persona=f"{name}, {role}",
        known_facts=facts,
        clarifications=[Answer(keywords=list(k), text=t) for k, t in (answers or {}).items()],
        withheld=[Answer(keywords=list(k), text=t) for k, t in (withheld or {}).items()],
        insist=insist,
        fallback="Everything I know is in my request; please handle the booking as asked.",
    )

