"""The seeded CarShare city every scenario specialises, and the ride request most stories share.

:func:`new_city` draws a city from the author's generator: four to six zones (residential,
business, nightlife, airport) joined by links whose end points, driving and walking minutes
are drawn, one to three parking spots a zone (a charging hub in some), a background fleet,
members, a charger per hub and a promotion. The background fleet never includes the scenario's
*focus category*: a scenario places every car of that category itself, so it decides which
alternatives exist within the member's walking reach (and, when impossible, what rules out each
of them: :meth:`Ride.low_car` places one listed and rentable, with less charge or fuel than the
ride needs, and :meth:`Ride.short_of` says so as a refusal does).

:class:`Ride` is the request most stories revolve around (a member wants a car of a category
they can walk to, unlocked for a drive to a destination): it writes the plan steps and the
checklist. :meth:`City.trigger` writes a trigger with the read that reveals it;
:meth:`Ride.refuse` writes the oracle's apology and marks the request impossible (with what
names the change, and why the other options fail too);
:func:`make_task` assembles the task.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sttgym.authoring import Author, Plan
from sttgym.checklist import Check
from sttgym.clock import shift
from sttgym.envs.arena.carshare.world import MIN_START_LEVEL, estimate, walk_minutes
from sttgym.footprint import RULE
from sttgym.judge import Impossibility
from sttgym.task import Call, Ref, Task
from sttgym.triggers import Observable, Trigger
from sttgym.user import Answer, UserProfile

__all__ = ["Author", "Plan", "Task", "City", "Ride", "new_city", "rid", "tid", "one", "make_task", "draw_ride",
           "consulted", "withheld_zone", "drive_away", "appointment_moves", "ONLY_NEEDED", "SHORT_OF_CHARGE",
           "APPOINTMENT"]

CATEGORIES = {"city": (["Fiat 500", "Toyota Aygo", "Renault Twingo", "Smart ForFour", "Kia Picanto",
                        "Hyundai i10"], 4),
              "compact": (["VW Golf", "Peugeot 308", "Renault Zoe", "Ford Focus", "Opel Astra", "Seat Leon"], 5),
              "estate": (["Skoda Octavia Combi", "VW Passat Variant", "Toyota Corolla Touring", "Kia Ceed SW",
                          "Ford Mondeo Estate", "Peugeot 508 SW"], 5),
              "van": (["VW Multivan", "Ford Tourneo", "Mercedes Vito", "Renault Trafic", "Citroen Spacetourer",
                       "Peugeot Traveller"], 8)}
_ZONES = {"residential": ["MAPLE", "ELMWOOD", "BIRCH", "ROSEHILL", "LINDEN", "ASHFORD", "CLOVER", "WILLOW"],
          "business": ["EXCHANGE", "CIVIC", "HARBOUR", "MERIDIAN", "FORUM", "QUAYSIDE"],
          "nightlife": ["NEONSTREET", "OLDDOCKS", "ARTQUARTER", "CANALSIDE"],
          "airport": ["AIRPORT", "AIRFIELD"]}
_SPOTS = ["Station Square", "Library Lane", "Market Row", "Park Gate", "Church Street", "Mill Yard", "School Road",
          "Tram Depot", "Bakery Corner", "Garden Court", "Bridge End", "Post Office"]
_PEOPLE = ["Nora Lind", "Idris Kaya", "Mia Santos", "Jakob Weiss", "Leila Amari", "Tariq Hussain", "Elena Petrova",
           "Owen Carter", "Yuki Sato", "Rosa Ferreira", "Samir Nasser", "Clara Jensen", "Daniel Osei", "Ana Rios",
           "Marek Zielinski", "Hugo Lambert"]
_PROMOS = ["GREENWEEK", "FRESHSTART", "MIDNIGHT", "CITYHOP", "WEEKENDER", "COMMUTE", "SPRINGRIDE", "NIGHTOWL"]
_LABEL = {"city": "city car", "compact": "compact car", "estate": "estate car", "van": "8-seat van"}
ONLY_NEEDED = RULE.split(": ")[0]  # where the gates' rule is told: the rule of change every agent reads
# Where the member drives, as the request says it at every level of the stories with an appointment: the record the
# hard level's second change moves (:func:`appointment_moves`), named once, plainly.
APPOINTMENT = "my appointment (its zone is on my member profile)"
# How a plain-words refusal says a car holds too little charge or fuel for the ride (besides its level itself).
SHORT_OF_CHARGE = ["too low", "low charge", "low fuel", "low battery", "enough charge", "enough fuel", "charged enough",
                   "too little", "almost empty"]


def rid(step: str) -> Ref:
    """The reservation id a saved ``reserve_car``/``reserve_handoff`` step created."""
    return Ref(step=step, path=("data", "reservation_id"))


def tid(step: str) -> Ref:
    """The trip id a saved ``start_trip`` step created."""
    return Ref(step=step, path=("data", "trip_id"))


def one(author: Author, items: list):
    """One of ``items`` (not names: no split to respect)."""
    return items[author.integer(0, len(items) - 1)]


@dataclass
class City:
    """A drawn city: the state plus the handles scenarios specialise it with."""

    author: Author
    state: dict
    start: str
    focus: str  # the category the story is about; the background fleet has none
    user: str = ""
    home: str = ""
    kinds: dict[str, list[str]] = field(default_factory=dict)

    def walk(self, a: str, b: str) -> int | None:
        return walk_minutes(self.state, a, b)

    def by_walk(self, origin: str) -> list[str]:
        """Every other reachable zone, nearest on foot first."""
        zones = [z for z in sorted(self.state["zones"]) if z != origin and self.walk(origin, z) is not None]
        return sorted(zones, key=lambda z: (self.walk(origin, z), z))

    def spot_in(self, zone: str, kind: str = "") -> str:
        spots = [s for s, x in sorted(self.state["spots"].items()) if x["zone"] == zone and kind in ("", x["kind"])]
        return one(self.author, spots)

    def add_car(self, zone: str, category: str = "", energy: str = "", level: int | None = None,
                status: str = "available", spot: str = "", notice: str = "") -> str:
        a = self.author
        category = category or self.focus
        models, seats = CATEGORIES[category]
        energy = energy or one(a, ["ev", "petrol"])
        cid = f"CS-{a.serial()}"
        self.state["cars"][cid] = {
            "model": one(a, models), "category": category, "seats": seats, "energy": energy,
            "level_pct": a.integer(55, 95) if level is None else level, "zone": zone,
            "spot": spot or self.spot_in(zone), "status": status, "notice": notice}
        return cid

    def add_member(self, home: str, **fields) -> str:
        a = self.author
        mid = f"MB-{a.serial(10000, 99999)}"
        self.state["members"][mid] = {"name": a.pick(_PEOPLE), "plan": one(a, ["basic", "plus", "business"]),
                                      "age": a.integer(21, 70), "licence_valid": True,
                                      "credit_limit": 10 * a.integer(15, 40), "home_zone": home, **fields}
        return mid

    def other_member(self) -> str:
        return one(self.author, sorted(m for m in self.state["members"] if m != self.user))

    def set(self, *path: str, value) -> object:
        return self.author.op.set_field(path=list(path), value=value)

    def sets(self, container: str, ident: str, **fields) -> list:
        return [self.set(container, ident, k, value=v) for k, v in fields.items()]

    def taken(self, car: str, note: str = "walk-in reservation") -> tuple[str, list]:
        """Another member's reservation of ``car``: its id and the operations adding it."""
        ident = f"RES-{self.author.serial(100000, 999999)}"
        record = {"member": self.other_member(), "car": car, "status": "active", "created_at": self.start,
                  "expires_at": shift(self.start, 24 * 60), "extended": False, "note": note, "after_trip": None}
        return ident, [self.set("reservations", ident, value=record)]

    def trigger(self, name: str, description: str, when, effect: list, shown: tuple, activation: tuple = (),
                timing: str = "before") -> Trigger:
        """A trigger; ``shown``: the ``(tool, args)`` read that reveals it."""
        return self.author.check_trigger(Trigger(
            name=name, description=description, when=when, effect=effect, activation=list(activation),
            timing=timing, observable=Observable(tool=shown[0], args=shown[1])))

    def on_write(self, name: str, description: str, tool: str, arg: str, value: str, effect: list, shown: tuple,
                 timing: str = "before") -> Trigger:
        """A change set off by the agent's ``tool`` call passing ``value`` as ``arg``."""
        return self.trigger(name, description, self.author.pred.call_argument(name=arg, value=value), effect,
                            shown, activation=(tool,), timing=timing)

    def cascade(self, name: str, description: str, path: list, value, effect: list, shown: tuple,
                activation: tuple = (), timing: str = "before") -> Trigger:
        """A second wave: once an earlier change left ``path`` at ``value``, the agent's next write sets it off
        (the nominal plan's next write as much as a recovery's); with ``activation``, the same write that set
        off the first change spreads it at once."""
        return self.cascade_on(name, description, self.author.pred.field_equals(path=path, value=value), effect,
                               shown, activation, timing)

    def cascade_on(self, name: str, description: str, when, effect: list, shown: tuple, activation: tuple = (),
                   timing: str = "before") -> Trigger:
        """:meth:`cascade` on any condition ``when`` (such as one about the car the member holds, whichever)."""
        return self.trigger(name, description, when, effect, shown, activation=activation or WRITES, timing=timing)


WRITES = ("reserve_car", "reserve_handoff", "start_trip", "change_destination", "end_trip", "cancel_reservation",
          "extend_reservation", "book_charger")


def new_city(author: Author) -> City:
    """A seeded city at a drawn time of day, with a focus category the background fleet lacks."""
    a = author
    focus = one(a, sorted(CATEGORIES))
    start = f"{a.integer(2024, 2025)}-{a.integer(1, 12):02d}-{a.integer(1, 28):02d}T" \
            f"{a.integer(7, 20):02d}:{5 * a.integer(0, 11):02d}"
    state: dict = {k: {} for k in ("zones", "links", "spots", "cars", "members", "reservations", "trips",
                                   "chargers", "charge_sessions", "promotions")}
    state["rates"] = {"basic": {"per_minute": 0.3 + 0.01 * a.integer(0, 9), "per_km": 0.2},
                      "plus": {"per_minute": 0.25 + 0.01 * a.integer(0, 5), "per_km": 0.15},
                      "business": {"per_minute": 0.35, "per_km": 0.1}, "km_per_minute": 0.6}
    state["counters"] = {"reservation": a.integer(4000, 8999), "trip": a.integer(100, 899), "session": 10}
    city = City(a, state, start, focus)
    homes = a.pick(_ZONES["residential"], a.integer(2, 3))
    named = [("residential", n) for n in homes] + [(k, a.pick(_ZONES[k])) for k in ("business", "nightlife")]
    for kind, name in named:
        zid = f"ZN-{name}"
        state["zones"][zid] = {"name": name.title(), "kind": kind, "demand": "normal",
                               "hold_minutes": 5 * a.integer(3, 6), "parking": "open", "petrol_allowed": True,
                               "surcharge": {"airport": 6, "business": 2}.get(kind, 0), "notice": ""}
        city.kinds.setdefault(kind, []).append(zid)
        for i, spot in enumerate(a.pick(_SPOTS, a.integer(1, 3))):
            sid = f"SP-{a.serial(100, 999)}"
            state["spots"][sid] = {"zone": zid, "name": spot, "kind": "hub" if i == 0 and a.chance(0.4) else "street"}
    zones = list(state["zones"])
    order = [zones[int(i)] for i in a.rng.permutation(len(zones))]

    def link(x: str, y: str) -> None:
        if x == y or any({x, y} == {k["a"], k["b"]} for k in state["links"].values()):
            return
        drive = a.integer(3, 10)
        state["links"][f"LK-{a.serial(100, 999)}"] = {"a": x, "b": y, "minutes": drive,
                                                     "walk": drive * a.integer(2, 3) + a.integer(0, 4), "open": True}

    for x, y in zip(order, order[1:]):
        link(x, y)
    for _ in range(a.integer(1, 3)):
        link(one(a, zones), one(a, zones))
    # The airport lies out of town: one long link from a drawn zone, far beyond anyone's walk.
    airport = f"ZN-{a.pick(_ZONES['airport'])}"
    state["zones"][airport] = {"name": airport[3:].title(), "kind": "airport", "demand": "normal",
                               "hold_minutes": 5 * a.integer(3, 6), "parking": "open", "petrol_allowed": True,
                               "surcharge": 6, "notice": ""}
    city.kinds["airport"] = [airport]
    sid = f"SP-{a.serial(100, 999)}"
    state["spots"][sid] = {"zone": airport, "name": "Terminal Car Park", "kind": "street"}
    gate = one(a, zones)
    state["links"][f"LK-{a.serial(100, 999)}"] = {"a": gate, "b": airport, "minutes": a.integer(14, 22),
                                                 "walk": a.integer(45, 70), "open": True}
    zones.append(airport)
    for cid, (sid, spot) in enumerate(sorted(state["spots"].items())):
        if spot["kind"] == "hub":
            state["chargers"][f"CH-{a.serial(10, 99)}"] = {"zone": spot["zone"], "spot": sid, "status": "working",
                                                          "slots": a.integer(2, 4), "notice": ""}
    background = [c for c in CATEGORIES if c != focus]
    for zid in zones:
        for _ in range(a.integer(0, 2)):
            city.add_car(zid, one(a, background))
    city.home = one(a, city.kinds["residential"])
    city.user = city.add_member(city.home)
    for _ in range(a.integer(2, 3)):
        city.add_member(one(a, zones))
    code = f"{a.pick(_PROMOS)}-{a.serial(10, 99)}"
    state["promotions"][code] = {"discount_pct": 10 * a.integer(1, 3), "categories": [one(a, background)],
                                 "energy": None, "quota": 50, "used": a.integer(5, 40),
                                 "resets_at": shift(start, 24 * 60)[:10] + "T00:00", "note": "background offer"}
    return city


@dataclass
class Ride:
    """One ride request: who, which category, how far they walk, where they drive; its calls and checks."""

    city: City
    destination: str
    max_walk: int
    min_level: int = 30
    energy: str = ""
    promo: bool = False
    by: str = ""
    pickup_zones: list[str] = field(default_factory=list)  # the only zones the user will take a car in (withheld)
    asked: str = ""  # the words of the query that ask for the ride (what the goal quotes)
    impossible: Impossibility | None = None
    moves: str = ""  # the story's level, for a member driving to an appointment (:func:`appointment_moves`)

    @property
    def member(self) -> str:
        return self.city.user

    @property
    def home(self) -> str:
        return self.city.home

    @property
    def call(self):
        return self.city.author.call

    @property
    def to(self) -> str:
        """Where the member drives, as they say it: their appointment, whose zone only the profile gives (a zone
        named in the request could not move), else the destination."""
        return APPOINTMENT if self.moves else self.destination

    def spec(self) -> dict:
        """The ride as checks read it; to an appointment, wherever the trip goes (``to_appointment`` judges that)."""
        return {"member": self.member, "home": self.home, "max_walk": self.max_walk, "category": self.city.focus,
                "min_level": self.min_level, "destination": "" if self.moves else self.destination,
                "energy": self.energy, "promo": self.promo, "by": self.by,
                **({"pickup_zones": self.pickup_zones} if self.pickup_zones else {})}

    def reach(self) -> list[str]:
        """Zones within walking reach of home (home first)."""
        return [self.home] + [z for z in self.city.by_walk(self.home) if self.city.walk(self.home, z) <= self.max_walk]

    def beyond(self) -> list[str]:
        return [z for z in self.city.by_walk(self.home) if self.city.walk(self.home, z) > self.max_walk]

    # plan steps
    def find(self, zone: str = "", walk: int | None = None) -> Call:
        return self.call.find_cars(zone_id=zone or self.home, max_walk_minutes=self.max_walk if walk is None else walk,
                                   category=self.city.focus)

    def reserve(self, car: str, step: str = "res") -> Call:
        return self.call.reserve_car(save_as=step, member_id=self.member, car_id=car)

    def start(self, zone: str, step: str = "res", promo: str = "", save_as: str = "trip") -> Call:
        extra = {"promo_code": promo} if promo else {}
        return self.call.start_trip(save_as=save_as, reservation_id=rid(step), member_zone_id=zone,
                                    destination_zone_id=self.destination, **extra)

    def cancel(self, step: str = "res") -> Call:
        return self.call.cancel_reservation(member_id=self.member, reservation_id=rid(step))

    def take(self, car: str, zone: str, step: str = "again", promo: str = "") -> list[Call]:
        """Reserve ``car`` (parked in ``zone``) and unlock it at once."""
        return [self.reserve(car, step), self.start(zone, step, promo)]

    def look(self, car: str) -> Call:
        return self.call.get_car(car_id=car)

    def quote(self, car: str, promo: str = "") -> Call:
        extra = {"promo_code": promo} if promo else {}
        return self.call.quote_price(member_id=self.member, car_id=car, destination_zone_id=self.destination, **extra)

    def profile(self) -> Call:
        return self.call.get_member(member_id=self.member)

    def bookings(self) -> Call:
        return self.call.list_member_reservations(member_id=self.member)

    def walk_to(self, zone: str) -> Call:
        return self.call.get_travel_time(from_zone_id=self.home, to_zone_id=zone, mode="walk")

    def zones(self) -> Call:
        return self.call.list_zones()

    def tell(self, message: str) -> Call:
        return self.call.chat_with_user(message=message)

    def refuse(self, message: str, changed_by: list[str], facts: list[str], no_alternative: list[str],
               existing: int = 0) -> list[Call]:
        """The oracle's apology (``I'm sorry, `` + ``message``); marks the request impossible. ``facts``: what names
        the change; ``no_alternative``: why the other options the world offers fail too."""
        pred = self.city.author.pred
        self.impossible = Impossibility(changed_by=changed_by, blocking_facts=facts,
                                        no_alternative=list(dict.fromkeys(no_alternative)), forbidden=[
            Check(name="no_trip_anyway", gate=True, description=f"no trip was started for {self.member} anyway",
                  holds=pred.no_new_trip(member=self.member, existing=existing), stated=ONLY_NEEDED)])
        return [self.tell(f"I'm sorry, {message}")]

    def low_car(self, zone: str, **kw) -> str:
        """A car of the category in ``zone`` that may be rented (above the console's minimum) but holds less charge or
        fuel than the ride needs: an option a listing shows, ruled out by its level."""
        a = self.city.author
        return self.city.add_car(zone, level=a.integer(MIN_START_LEVEL + 2, self.min_level - 6),
                                 **{"energy": self.energy, **kw})

    def short_of(self, car: str) -> tuple[str, list[str]]:
        """Why ``car`` does not serve (it holds too little), as a refusal says it, and the facts that say so: its
        level and :data:`SHORT_OF_CHARGE`."""
        c = self.city.state["cars"][car]
        what = "charge" if c["energy"] == "ev" else "fuel"
        return (f"{car} in {c['zone']} has just {c['level_pct']}% {what}, below the {self.min_level}% you need",
                [f"{c['level_pct']}%", *SHORT_OF_CHARGE])

    @property
    def who(self) -> str:
        return f"{self.city.state['members'][self.member]['name']}, member {self.member}"

    def constraints(self) -> str:
        """The member's hard constraints as they say them, the start of their ``insist`` answer: the category
        (unnamed, so the words vary with nothing but the story), the walk, the level, the destination."""
        car, level = ("an electric car", "charge") if self.energy == "ev" else ("a car", "charge or fuel")
        return (f"I need {car} of the category I asked for within {self.max_walk} minutes' walk of {self.home}, with "
                f"at least {self.min_level}% {level}, for my drive to {self.to}")

    def wants(self) -> str:
        """How the user names the car: ``an estate car (category estate)``."""
        label = _LABEL[self.city.focus]
        return ("an " if label[0] in "aeiou" else "a ") + f"{label} (category {self.city.focus})"

    # checks
    def goal(self, existing: int = 0) -> list[Check]:
        """On an open trip as asked (quoting the query's words for the ride, :attr:`asked`), and no second trip.
        The checklist with dynamics is the same, judged on the outcome alone: a path the change never met is as
        good as one that recovered from it, and a stale reservation left is the collateral gate's to judge."""
        pred, spec = self.city.author.pred, self.spec()
        # To an appointment the ride counts on its own, so a recovery planned to a stale zone earns part of the score.
        heading = [Check(name="to_appointment", description=f"that trip is planned to end in the zone of the "
                         f"appointment on {self.member}'s profile, as the profile reads at the end",
                         holds=pred.riding_to_appointment(ride=spec), stated=APPOINTMENT)] if self.moves else []
        return [Check(name="riding", description=f"{self.member} is on an open trip"
                      f"{'' if self.moves else ' to ' + self.destination} in a {self.city.focus} car picked up within "
                      f"{self.max_walk} walking minutes of {self.home}, with at least {self.min_level}%",
                      holds=pred.riding(ride=spec), stated=self.asked), *heading,
                Check(name="single_trip", gate=True, description="no more than one trip was started for the member",
                      holds=pred.single_trip(member=self.member, existing=existing), stated=ONLY_NEEDED)]


def draw_ride(city: City, reach: int = 1, **kw) -> tuple[Ride, list[str]]:
    """The ride most stories share: to a drawn non-residential zone beyond the walk (a drive away), walking
    as far as the ``reach``-th nearest zone of home; and the zones by walk from home (``[n1, n2, ...]``)."""
    near = city.by_walk(city.home)
    walk = city.walk(city.home, near[reach - 1])
    dests = [z for z in sorted(city.state["zones"]) if city.state["zones"][z]["kind"] != "residential"]
    return Ride(city, one(city.author, drive_away(city, city.home, walk, dests)), walk, **kw), near


def drive_away(city: City, origin: str, walk: int, zones: list[str]) -> list[str]:
    """The ones of ``zones`` a drive away from ``origin``: beyond the ``walk`` (all of them if none is)."""
    return [z for z in zones if (minutes := city.walk(origin, z)) is None or minutes > walk] or zones


def withheld_zone(city: City, zones: list[str], keywords: list[str], why: str) -> tuple[str, Answer]:
    """The one of ``zones`` that a fact only the user knows picks, drawn apart from walk, id and listing order, and
    the fact as the user tells it when asked about any of ``keywords`` (``why`` names the zone as ``{zone}``)."""
    zone = one(city.author, sorted(zones))
    return zone, Answer(keywords=keywords, text=why.format(zone=f"{city.state['zones'][zone]['name']} ({zone})"))


def consulted(author: Author, answer: Answer, before: str, met: Check, stated: str) -> Check:
    """The milestone of a fact only the user knows: the agent asked the user about ``answer`` ahead of its last
    successful ``before`` (the write that commits to an alternative) and the outcome meets the fact (``met``: asking
    and going on with the stale plan earns nothing); ``stated``: the query's words asking to be consulted."""
    pred = author.pred
    return Check(name="asked_user", description=f"the agent asked the user about {'/'.join(answer.keywords[:3])} "
                 f"before its last {before}, and {met.description}", stated=stated, holds=pred.all_of(preds=[
                     pred.asked_user(about=answer.keywords, before=before), met.holds]))


def make_task(city: City, ride, query: str, triggers: list[Trigger], nominal: Plan, oracle: list[Call],
              persona: str, goal: list[Check], answers: dict | None = None, *, insist: str,
              checklist: list[Check] | None = None, checks: list[Call] = (), withheld: list[Answer] = (),
              told: list[Answer] = (), alternatives: list[list[Call]] = ()) -> Task:
    """The task (impossible once the oracle went through :meth:`Ride.refuse`). The oracle double-checks two or
    three of ``checks`` (five reads), drawn in a drawn order, at the end (before its refusal), so its tool sequence
    varies as real agents' do; a question to the user (a ``withheld`` fact) stays where the oracle asks it. A
    story with such a fact has it on every level: where it decides nothing it is ``told`` (a plain answer), and
    either way the user has no blanket answer about other cars. ``insist``: the user's hard constraints, their
    answer to any proposed change on every level alike; ``checklist``: the checks with dynamics (by default the
    ``goal``, judged on the outcome); ``alternatives``: the other complete solutions."""
    author, impossible = city.author, ride.impossible
    if ride.moves:
        triggers, oracle, alternatives, answers = appointment_moves(ride, triggers, oracle, alternatives, answers)
    checks = list(checks) or [ride.profile(), ride.bookings(), author.call.list_member_trips(member_id=city.user),
                              ride.zones(), author.call.get_zone(zone_id=city.home)]
    extra = [checks[int(i)] for i in author.rng.permutation(len(checks))[:author.integer(2, 3)]]
    said = oracle[-1:] if impossible else []  # the apology
    oracle = oracle[:len(oracle) - len(said)] + extra + said
    answers = {**({} if withheld or told else {("car", "another", "other", "different"):
                                               f"Any {city.focus} car I can walk to is fine."}), **(answers or {})}
    profile = UserProfile(
        persona=f"{city.state['members'][city.user]['name']}, {persona}",
        known_facts=[f"member id {city.user}", f"home zone {city.home}", f"category {city.focus}"],
        clarifications=[*told, *(Answer(keywords=list(k), text=t) for k, t in answers.items())],
        withheld=list(withheld), insist=insist,
        fallback="Everything I know is in my request; please sort out the car as asked.")
    return Task(query=query, profile=profile, start_time=city.start, initial_state=city.state, triggers=triggers,
                checklist=[] if impossible else checklist or goal, static_checklist=goal, nominal_plan=nominal.calls,
                oracle=oracle, alternatives=list(alternatives), solvable=impossible is None,
                impossibility=impossible)


def appointment_moves(ride: Ride, triggers: list[Trigger], oracle: list[Call], alternatives: list[list[Call]],
                      answers: dict | None) -> tuple:
    """The medium and hard levels' second change, on the member's side rather than the fleet's. At every level alike
    the member drives to an appointment their calendar syncs to their profile (``get_member``: ``appointment_zone``,
    ``appointment_note``), in the ride's destination, and the request says only that its zone is on the profile. At
    medium the organiser moves the appointment to another zone in the same call as the story's change (a read of
    the profile once the change is seen shows it). At hard, once the story's change has fired and the member is on
    a trip that serves the ride planned to end there (the recovery's unlock, or the destination changed to it
    afterwards: whichever car and zone the agent took), the organiser moves the appointment to another zone. Only
    the profile shows it: the old zone is as it was, every
    write goes through and the trip reads as the agent left it. The new zone is a drive that fits the member's
    credit limit from wherever in their walk the car was taken, so re-planning the open trip
    (``change_destination``) is the whole fix. Returns the triggers, oracle, alternatives and answers, extended."""
    city, author = ride.city, ride.city.author
    s, member = city.state, city.user
    starts = ride.reach()

    def affordable(zone: str) -> bool:
        prices = [estimate(s, s["members"][member], {}, start, zone, None) for start in starts]
        return all(p is not None and p["total"] <= s["members"][member]["credit_limit"] for p in prices)

    later = one(author, drive_away(city, city.home, ride.max_walk, [
        z for z in sorted(s["zones"]) if z not in (ride.destination, city.home) and affordable(z)]))
    s["members"][member].update(appointment_zone=ride.destination, appointment_note="client meeting, synced from "
                                "the member's calendar")
    if not s["zones"][ride.destination]["petrol_allowed"]:  # the core the request speaks of takes in both zones
        s["zones"][later].update(petrol_allowed=False, notice=s["zones"][ride.destination]["notice"])
    answers = {("appointment", "destination", "meeting", "going"): "Please go by the appointment on my member "
               "profile: that's where I'm driving.", **(answers or {})}
    if ride.moves not in ("medium", "hard") or ride.impossible:  # the appointment stays where the profile has it
        return triggers, oracle, alternatives, answers
    pred, story = author.pred, triggers[0].name
    if ride.moves == "medium":
        (when, activation) = author.alongside(triggers[:1])
        description = f"with {story}, the appointment moves to {later}"
    else:
        when = pred.all_of(preds=[pred.fired_before(trigger=story), pred.riding_to_appointment(ride=ride.spec())])
        activation = ("start_trip", "change_destination")
        description = f"once the member rides to the appointment after {story}, it moves to {later}"
    moved = city.trigger(
        "appointment_moved", description, when,
        city.sets("members", member, appointment_zone=later,
                  appointment_note=f"client meeting, moved to {later} by the organiser"),
        ("get_member", {"member_id": member}), activation=tuple(activation), timing="after")

    def replanned(calls: list[Call]) -> list[Call]:
        """``calls``, then the profile read and the open trip sent to the appointment's new zone."""
        trip = next(c for c in reversed(calls) if c.name == "start_trip").save_as
        return [*calls, ride.profile(), author.call.change_destination(trip_id=tid(trip), destination_zone_id=later)]

    return [*triggers, moved], replanned(oracle), [replanned(a) for a in alternatives], answers
