"""The seeded Hotel city every scenario specialises, and the pieces scenarios share.

:func:`new_city` draws a city from the author's generator: three or four districts with a drawn
number of hotels each, a conference venue and a station, walking links inside districts and
transit links across them whose ends and minutes are drawn, background room types, guests, a
promotion, shuttles and meeting rooms. The background rooms never include the scenario's *focus
kind*: a scenario places every room type of that kind itself, so it decides which alternatives
exist (and, when impossible, that none does).

:class:`Request` is the stay most stories revolve around: the user's guest (or party), the kind
of room, the nights, the venue it must be within reach of, and extras (arrival, shuttle, meeting
room). It writes the plan steps and the checklist every scenario shares; :meth:`Request.refuse`
writes the oracle's apology and marks the request impossible; :func:`make_task` assembles the task.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sttgym.authoring import Author, Plan
from sttgym.checklist import Check
from sttgym.clock import format_time
from sttgym.envs.arena.hotel.world import KINDS, stay_price, travel
from sttgym.footprint import RULE
from sttgym.judge import Impossibility
from sttgym.task import Call, Ref, Task
from sttgym.triggers import Observable, Trigger
from sttgym.user import Answer, UserProfile

__all__ = ["CONSULT", "MOVES", "Author", "Plan", "Task", "City", "Request", "new_city", "rid", "one", "make_task"]

_DISTRICTS = ["Old Town", "Riverside", "Harbour", "University", "Castle Hill", "Market", "Docklands", "Parkside",
              "Station Quarter", "Cathedral", "Canal Side", "Uptown"]
_HOTELS = ["Grand", "Regent", "Meridian", "Lindenhof", "Belvedere", "Astoria", "Carlton", "Palisade", "Orchard",
           "Bellevue", "Kingsway", "Lantern", "Cortile", "Sable", "Juniper", "Harbourlight", "Mariner", "Aurora",
           "Rosewood", "Granite", "Willow", "Cobalt", "Saffron", "Thistle"]
_VENUES = ["Congress Centre", "Exhibition Halls", "Convention Forum", "Trade Fair Pavilion", "Science Campus",
           "Concert Hall"]
_STATIONS = ["Central Station", "North Station", "Airport Rail Link", "South Terminal"]
_PEOPLE = ["Amara Nwosu", "Bjorn Lindqvist", "Chloe Martin", "Daniel Rosen", "Elif Demir", "Farah Khan",
           "Giulia Conti", "Hiroshi Sato", "Isabel Costa", "Jakub Novak", "Kavya Iyer", "Lucas Petit",
           "Maren Holt", "Nikolai Orlov", "Olivia Grant", "Pablo Ruiz"]
_ROOM_NAMES = {"standard": ["Classic Double", "City Room", "Standard Queen", "Superior Twin"],
               "deluxe": ["Deluxe King", "Executive Room", "Deluxe Courtyard", "Premier Double"],
               "family": ["Family Room", "Family Studio", "Connecting Family", "Family Loft"],
               "suite": ["Junior Suite", "Corner Suite", "Tower Suite", "Garden Suite"],
               "accessible": ["Accessible King", "Accessible Twin", "Step-free Double", "Accessible Studio"]}
_RATES = {"standard": (90, 140), "deluxe": (150, 210), "family": (170, 230), "suite": (260, 380),
          "accessible": (100, 150)}
_WINGS = ["east", "west", "north", "garden", "tower"]
_PROMO_WORDS = ["CONGRESS", "EARLYBIRD", "CITYBREAK", "STAYLONGER", "MEMBERS", "WEEKDAY"]
_LABEL = {"standard": "standard room", "deluxe": "deluxe room", "family": "family room", "suite": "suite",
          "accessible": "accessible room"}
HORIZON = 9  # days of inventory the books hold from the start date
# What a guest may need a hotel to have, and how they say so when asked: one shape of sentence, so that which need
# was drawn shows in its own words only.
AMENITIES = {"parking": "I am driving in, so the hotel needs parking.",
             "gym": "I train before the sessions, so the hotel needs a gym.",
             "pool": "I swim every day, so the hotel needs a pool.",
             "pets": "My dog travels with me, so the hotel needs to accept pets.",
             "spa": "I am recovering from an injury, so the hotel needs a spa."}
# The words that bring out a withheld amenity: how a guest asked about their needs naturally puts it.
AMENITY_WORDS = ("requirement", "require", "need", "needs", "amenity", "amenities", "facility", "facilities", "prefer",
                 "preference")
# The medium and hard levels' second change, on the guest's side: the query asks for the arrival on the profile to be
# recorded (at every level alike).
ARRIVAL = {("arrival", "arrive", "flight", "land", "time"): "My current arrival time is always on my guest profile."}
MOVES = "record my arrival time from my guest profile on every room booked, so the rooms are ready when I get there"
# How a refusal says that no other hotel serves either (the rule every agent reads asks why none of the other
# options works), beside the other hotels' ids.
ELSEWHERE = ["no other hotel", "other hotels", "none of the other", "nowhere else", "no hotel"]
CONSULT = " If you have to move me to another hotel, ask me first: I have a requirement about its facilities."


def rid(step: str) -> Ref:
    """The reservation id a saved ``hold_room`` step created."""
    return Ref(step=step, path=("data", "reservation_id"))


def one(author: Author, items: list):
    """One of ``items`` (not names: no split to respect)."""
    return items[author.integer(0, len(items) - 1)]


def rooms(kind: str, count: int = 1) -> str:
    """How a user names rooms of a kind with the kind a tool takes: ``two suites (kind suite)``."""
    label = _LABEL[kind]
    many = f"{'two' if count == 2 else 'three'} {label}s" if count > 1 else ("an " if label[0] in "aeiou" else "a ") \
        + label
    return f"{many} (kind {kind})"


@dataclass
class City:
    """A drawn city: the state plus the handles scenarios specialise it with."""

    author: Author
    state: dict
    start: datetime
    focus: str
    user: str = ""
    venue: str = ""
    station: str = ""
    districts: dict[str, list[str]] = field(default_factory=dict)  # district -> hotel ids

    @property
    def a_room(self) -> str:
        """The focus kind with its article: ``an accessible room``, ``a suite room``."""
        return f"{'an' if self.focus[0] in 'aeiou' else 'a'} {self.focus} room"

    # geography
    def minutes(self, a: str, b: str) -> int | None:
        return travel(self.state, a, b)

    def by_distance(self, target: str = "") -> list[str]:
        """Hotels that reach ``target`` (the venue by default), nearest first."""
        target = target or self.venue
        reach = [h for h in sorted(self.state["hotels"]) if self.minutes(h, target) is not None]
        return sorted(reach, key=lambda h: (self.minutes(h, target), h))

    def split(self, n: int, target: str = "") -> tuple[list[str], list[str], int]:
        """The ``n`` or more hotels nearest ``target`` (within the returned minutes), and the rest beyond."""
        ranked = self.by_distance(target)
        target = target or self.venue
        cut = self.minutes(ranked[n - 1], target)
        return [h for h in ranked if self.minutes(h, target) <= cut], \
            [h for h in ranked if self.minutes(h, target) > cut], cut

    def name(self, ident: str) -> str:
        return (self.state["hotels"].get(ident) or self.state["places"][ident])["name"]

    def district_of(self, hotel: str) -> str:
        return self.state["hotels"][hotel]["district"]

    def links_of(self, site: str) -> list[str]:
        return [k for k, x in sorted(self.state["links"].items()) if site in (x["a"], x["b"])]

    def link(self, a: str, b: str, minutes: int, mode: str, name: str = "") -> str:
        ident = f"LNK-{self.author.serial(100, 999)}"
        self.state["links"][ident] = {"a": a, "b": b, "minutes": minutes, "mode": mode, "name": name or
                                      f"{mode} {self.name(a)} - {self.name(b)}", "open": True}
        return ident

    # time
    def day(self, offset: int) -> str:
        return (self.start.date() + timedelta(days=offset)).isoformat()

    def at(self, offset: int, hour: int, minute: int = 0) -> str:
        return format_time(self.start.replace(hour=hour, minute=minute) + timedelta(days=offset))

    def stay(self) -> tuple[str, int]:
        """A drawn check-in (one to three days ahead) and number of nights."""
        return self.day(self.author.integer(1, 3)), self.author.integer(2, 4)

    # entities
    def add_room(self, hotel: str, kind: str = "", free: int = 1, nights: list[str] | None = None,
                 floor: int | None = None, wing: str = "", ready_from: str = "", rate: int | None = None) -> str:
        """A room type at ``hotel`` with ``free`` rooms on ``nights`` (and drawn counts on the other nights)."""
        a, kind = self.author, kind or self.focus
        ident = f"RT-{a.serial()}"
        inventory = {self.day(d): a.integer(0, 4) for d in range(HORIZON)}
        for n in nights or []:
            inventory[n] = free
        self.state["room_types"][ident] = {
            "hotel": hotel, "kind": kind, "name": a.pick(_ROOM_NAMES[kind]),
            "floor": a.integer(2, 9) if floor is None else floor, "wing": wing or one(a, _WINGS),
            "rate": a.integer(*_RATES[kind]) if rate is None else rate, "accessible": kind == "accessible",
            "ready_from": ready_from or f"{a.integer(14, 15)}:00", "inventory": inventory}
        return ident

    def add_guest(self, **fields) -> str:
        a = self.author
        gid = f"GST-{a.serial(10000, 99999)}"
        self.state["guests"][gid] = {"name": a.pick(_PEOPLE), "tier": one(a, ["member", "silver", "gold"]),
                                     "needs_accessible": False, "payment_limit": 100 * a.integer(5, 15),
                                     "arrival": None, "arrival_note": "", **fields}
        return gid

    def other_guest(self) -> str:
        return one(self.author, sorted(g for g in self.state["guests"] if g != self.user))

    def add_shuttle(self, hotel: str, departs: str, seats: int | None = None, riders: int = 0,
                    destination: str = "") -> str:
        ident = f"SHT-{self.author.serial(100, 999)}"
        seats = self.author.integer(6, 12) if seats is None else seats
        others = [self.other_guest() for _ in range(riders)]
        self.state["shuttles"][ident] = {"hotel": hotel, "destination": destination or self.venue,
                                         "departs": departs, "seats": seats, "riders": others, "status": "scheduled"}
        return ident

    def add_meeting_room(self, hotel: str, slots: list[str], capacity: int = 12, wing: str = "",
                         taken: tuple = ()) -> str:
        a = self.author
        ident = f"MTG-{a.serial(100, 999)}"
        self.state["meeting_rooms"][ident] = {
            "hotel": hotel, "name": f"{one(a, ['Salon', 'Studio', 'Board Room', 'Forum'])} {a.integer(1, 9)}",
            "wing": wing or one(a, _WINGS), "capacity": capacity,
            "slots": {s: (self.other_guest() if s in taken else None) for s in slots}}
        return ident

    def price(self, room_type: str, nights: int, promo: int = 0) -> int:
        return stay_price(self.state, room_type, nights, self.state["guests"][self.user]["tier"], promo)

    def afford(self, room_type: str, nights: int, margin: int = 0) -> None:
        """The user's card covers a stay of ``room_type`` with a drawn margin (or exactly ``margin`` over)."""
        self.state["guests"][self.user]["payment_limit"] = self.price(room_type, nights) + (
            margin or 20 * self.author.integer(1, 5))

    def afford_all(self, nights: int) -> None:
        """The user's card covers a stay in any room of the focus kind, with a drawn margin."""
        focus = [t for t, x in sorted(self.state["room_types"].items()) if x["kind"] == self.focus]
        self.state["guests"][self.user]["payment_limit"] = max(self.price(t, nights) for t in focus) + \
            20 * self.author.integer(1, 5)

    def code(self) -> str:
        return f"{self.author.pick(_PROMO_WORDS)}{self.author.serial(10, 99)}"

    # triggers
    def set(self, *path: str, value) -> object:
        return self.author.op.set_field(path=list(path), value=value)

    def sets(self, container: str, ident: str, **fields) -> list:
        return [self.set(container, ident, k, value=v) for k, v in fields.items()]

    def trigger(self, name: str, description: str, when, effect: list, shown: tuple, activation: tuple = (),
                timing: str = "after") -> Trigger:
        """A trigger; ``shown``: ``(tool, args)`` of the read that reveals it (``args`` an id fills the tool's one
        id argument)."""
        tool, args = shown
        if isinstance(args, str):
            args = {{"get_hotel": "hotel_id", "list_guest_reservations": "guest_id", "get_guest": "guest_id",
                     "search_availability": "hotel_id", "list_promotions": "hotel_id", "list_shuttles": "hotel_id",
                     "list_meeting_rooms": "hotel_id", "get_room_type": "room_type_id"}[tool]: args}
        return self.author.check_trigger(Trigger(
            name=name, description=description, when=when, effect=effect, activation=list(activation),
            timing=timing, observable=Observable(tool=tool, args=args)))

    def on_write(self, tool: str, name: str, description: str, effect: list, shown: tuple, when=None,
                 timing: str = "after") -> Trigger:
        """A change set off by the user's ``tool`` call (by default once the guest has a live booking)."""
        when = when or self.author.pred.has_live(guest=self.user)
        return self.trigger(name, description, when, effect, shown, activation=(tool,), timing=timing)

    def cascade(self, name: str, description: str, path: list, value, effect: list, shown: tuple) -> Trigger:
        """A change that follows once an earlier one left ``path`` at ``value``."""
        return self.trigger(name, description, self.author.pred.field_equals(path=path, value=value), effect, shown)


def new_city(author: Author, districts: int | None = None) -> City:
    """A seeded city on a morning between 08:00 and 11:00, with a focus kind the background rooms lack."""
    a = author
    focus = one(a, list(KINDS))
    start = datetime(a.integer(2024, 2025), 1, 1) + timedelta(days=a.integer(10, 330), hours=a.integer(8, 10),
                                                              minutes=5 * a.integer(0, 11))
    state: dict = {k: {} for k in ("hotels", "places", "links", "room_types", "promotions", "guests",
                                   "reservations", "shuttles", "meeting_rooms")}
    state["counters"] = {"reservation": a.integer(40000, 89999)}
    city = City(a, state, start, focus)
    names = a.pick(_HOTELS, 12)
    for district in a.pick(_DISTRICTS, districts or a.integer(3, 4)):
        city.districts[district] = []
        for _ in range(a.integer(2, 3)):
            name = names.pop()
            hid = f"HTL-{name[:3].upper()}{a.serial(10, 99)}"
            state["hotels"][hid] = {
                "name": f"Hotel {name}", "district": district, "status": "open", "notice": "",
                "check_in_from": "15:00", "late_cutoff": f"{a.integer(22, 23)}:{one(a, ['00', '30'])}",
                "night_desk": a.chance(0.4), "key_lockers": a.integer(0, 3), "hold_minutes": 5 * a.integer(4, 8),
                "closed_floors": [], "closed_wings": [], "rush_cleans": a.integer(1, 3)}
            city.districts[district].append(hid)
    order = list(city.districts)
    for hotels in city.districts.values():
        for x, y in zip(hotels, hotels[1:]):
            city.link(x, y, a.integer(4, 12), "walk")
    for d1, d2 in zip(order, order[1:]):
        city.link(one(a, city.districts[d1]), one(a, city.districts[d2]), a.integer(10, 24),
                  one(a, ["tram", "metro"]))
    if a.chance(0.6):
        city.link(one(a, city.districts[order[0]]), one(a, city.districts[order[-1]]), a.integer(18, 30), "road")
    city.venue = f"VEN-{a.serial(100, 999)}"
    city.station = f"STN-{a.serial(100, 999)}"
    home = one(a, order)
    state["places"][city.venue] = {"name": a.pick(_VENUES), "kind": "venue", "district": home}
    state["places"][city.station] = {"name": a.pick(_STATIONS), "kind": "station", "district": one(a, order)}
    city.link(one(a, city.districts[home]), city.venue, a.integer(3, 9), "walk")
    city.link(one(a, city.districts[state["places"][city.station]["district"]]), city.station, a.integer(3, 9), "walk")
    background = [k for k in KINDS if k not in (focus, "accessible")]
    for hid in state["hotels"]:
        for i in a.rng.permutation(len(background))[:2]:
            city.add_room(hid, background[int(i)])
    city.user = city.add_guest(needs_accessible=focus == "accessible")
    for _ in range(a.integer(2, 4)):
        city.add_guest()
    hid = one(a, sorted(state["hotels"]))
    kind = next(state["room_types"][t]["kind"] for t in sorted(state["room_types"])
                if state["room_types"][t]["hotel"] == hid)
    state["promotions"][city.code()] = {"hotel": hid, "kind": kind, "discount_pct": 5 * a.integer(2, 4),
                                        "nightly_quota": a.integer(3, 6), "used": {}, "note": "weekend breaks"}
    # Background shuttles run to the station and background meeting rooms are let in the evening, so neither ever
    # opens a way round a story's change (the stories' shuttles go to the venue, their slots are in the day).
    for hid in sorted(state["hotels"]):
        if a.chance(0.4):
            city.add_shuttle(hid, city.at(a.integer(1, 3), a.integer(6, 20), 15 * a.integer(0, 3)),
                             riders=a.integer(0, 2), destination=city.station)
        if a.chance(0.3):
            city.add_meeting_room(hid, [city.at(a.integer(1, 3), h) for h in (16, 18)], a.integer(8, 30))
    for rt in [t for t in sorted(state["room_types"])][:2]:  # the books are never empty
        x = state["room_types"][rt]
        check_in = city.day(a.integer(1, 4))
        x["inventory"][check_in] = x["inventory"].get(check_in, 0) + 1
        state["reservations"][f"RSV-{a.serial(10000, 39999)}"] = {
            "guest": city.other_guest(), "hotel": x["hotel"], "room_type": rt, "kind": x["kind"],
            "check_in": check_in, "nights": 1, "status": "confirmed", "held_at": format_time(start - timedelta(days=3)),
            "expires_at": format_time(start - timedelta(days=3)), "price": x["rate"], "promo": None,
            "arrival": None, "ready_at": None, "key_locker": False, "note": ""}
    return city


@dataclass
class Request:
    """One stay request: who, which kind of room, which nights, within reach of which venue, and extras."""

    city: City
    hotel: str  # the hotel the user names (the plan's first choice)
    check_in: str
    nights: int
    max_minutes: int
    count: int = 1
    fixed_hotel: bool = False  # only that hotel will do
    arrival: bool = False
    shuttle_by: str = ""
    meeting: str = ""
    capacity: int = 1
    progress: str = "booked"  # with extras: the milestone before the goal (booked, arrival or seat)
    extra: str = ""  # the query's words asking for the extras (the arrival, the shuttle, the meeting room)
    kept: str = ""  # impossible: the hotel where the plan's own booking, made before the change, may stay
    impossible: Impossibility | None = None
    wanted: str = ""  # the alternative hotel the guest's withheld need picks
    withheld: Answer | None = None
    # The level of a story whose request also carries the guest's arrival (at every level alike, so that the query
    # never tells the levels apart); at medium the guest's flight moves with the story's change, at hard once the stay
    # is rebooked (:func:`arrival_moves`).
    moves: str = ""

    @property
    def guest(self) -> str:
        return self.city.user

    @property
    def kind(self) -> str:
        return self.city.focus

    @property
    def venue(self) -> str:
        return self.city.venue

    def spec(self) -> dict:
        return {"guest": self.guest, "kind": self.kind, "check_in": self.check_in, "nights": self.nights,
                "count": self.count, "venue": self.venue, "max_minutes": self.max_minutes,
                "hotel": self.hotel if self.fixed_hotel else "", "arrival": self.arrival, "shuttle_by": self.shuttle_by,
                "meeting": self.meeting, "capacity": self.capacity}

    # plan steps
    @property
    def call(self):
        return self.city.author.call

    def search(self, hotel: str = "") -> Call:
        return self.call.search_availability(hotel_id=hotel or self.hotel, check_in=self.check_in,
                                             nights=self.nights, kind=self.kind)

    def hold(self, room_type: str, save_as: str = "hold") -> Call:
        return self.call.hold_room(save_as=save_as, guest_id=self.guest, room_type_id=room_type,
                                   check_in=self.check_in, nights=self.nights)

    def confirm(self, step: str = "hold", promo: str = "") -> Call:
        extra = {"promo_code": promo} if promo else {}
        return self.call.confirm_reservation(reservation_id=rid(step), **extra)

    def book(self, room_type: str, step: str = "hold", promo: str = "") -> list[Call]:
        return [self.hold(room_type, step), self.confirm(step, promo)]

    def cancel(self, step: str = "hold") -> Call:
        return self.call.cancel_reservation(reservation_id=rid(step))

    def quote(self, room_type: str, promo: str = "") -> Call:
        extra = {"promo_code": promo} if promo else {}
        return self.call.get_quote(guest_id=self.guest, room_type_id=room_type, check_in=self.check_in,
                                   nights=self.nights, **extra)

    def profile(self) -> Call:
        return self.call.get_guest(guest_id=self.guest)

    def bookings(self) -> Call:
        return self.call.list_guest_reservations(guest_id=self.guest)

    def hotel_info(self, hotel: str = "") -> Call:
        return self.call.get_hotel(hotel_id=hotel or self.hotel)

    def hotels(self) -> Call:
        return self.call.list_hotels()

    def travel(self, hotel: str) -> Call:
        return self.call.get_travel_time(origin_id=hotel, destination_id=self.venue)

    def promos(self, hotel: str = "") -> Call:
        return self.call.list_promotions(hotel_id=hotel or self.hotel)

    def shuttles(self, hotel: str = "") -> Call:
        return self.call.list_shuttles(hotel_id=hotel or self.hotel)

    def ride(self, shuttle: str) -> Call:
        return self.call.book_shuttle(shuttle_id=shuttle, guest_id=self.guest)

    def meetings(self, hotel: str = "") -> Call:
        return self.call.list_meeting_rooms(hotel_id=hotel or self.hotel)

    def meet(self, room: str) -> Call:
        return self.call.book_meeting_room(meeting_room_id=room, start=self.meeting, guest_id=self.guest)

    def arrive(self, when: str, step: str = "hold") -> Call:
        return self.call.set_arrival(reservation_id=rid(step), arrival=when)

    def rush(self, when: str, step: str = "hold") -> Call:
        return self.call.rush_housekeeping(reservation_id=rid(step), ready_by=when)

    def tell(self, message: str) -> Call:
        return self.call.chat_with_user(message=message)

    def refuse(self, message: str, changed_by: list[str], facts: list[str]) -> list[Call]:
        """The oracle's apology (``I'm sorry, `` + ``message``); marks the request impossible."""
        self.impossible = self.refusal(changed_by, facts)
        return [self.tell(f"I'm sorry, {message}")]

    @property
    def who(self) -> str:
        return f"{self.city.state['guests'][self.guest]['name']}, guest {self.guest}"

    @property
    def where(self) -> str:
        """How the user names the reach they need: ``within 25 minutes of the Congress Centre (VEN-123)``."""
        return f"within {self.max_minutes} minutes of the {self.city.name(self.venue)} ({self.venue})"

    @property
    def reach(self) -> str:
        """The reach as the guest insists on it, by the venue's id: ``within 25 minutes of VEN-123`` (a drawn name in
        every answer to a proposed change would be noise that tells instances apart)."""
        return f"within {self.max_minutes} minutes of {self.venue}"

    def stay_text(self) -> str:
        return f"{rooms(self.kind, self.count)} for {self.nights} nights from {self.check_in}"

    def amenity_choice(self, options: list[str]) -> str:
        """The guest needs an amenity that, of ``options`` (hotels each workable per the tools), only one has; the
        hotel the request names has them all. Which one is drawn apart from anything a tool shows (distance,
        price, id order), and the guest says it only when asked; the chosen hotel."""
        a, hotels = self.city.author, self.city.state["hotels"]
        names = sorted(AMENITIES)
        for h in sorted(hotels):  # the rest get drawn ones, so that no hotel stands out for having the field
            hotels[h]["amenities"] = sorted(names[int(i)] for i in a.rng.permutation(len(names))[:a.integer(0, 3)])
        hotels[self.hotel]["amenities"] = names
        drawn = [names[int(i)] for i in a.rng.permutation(len(names))[:len(options)]]
        for h, amenity in zip(options, drawn):
            hotels[h]["amenities"] = [amenity]
        pick = a.integer(0, len(options) - 1)
        self.wanted = options[pick]
        self.withheld = Answer(keywords=list(AMENITY_WORDS), text=AMENITIES[drawn[pick]])
        return self.wanted

    def ask_amenity(self, why: str) -> Call:
        """The oracle's question for the withheld need, before it books another hotel (in words that propose no
        change of plan, which the guest would answer with their hard constraints)."""
        return self.tell(f"{why} A few hotels within reach still have the room; you said you have a requirement "
                         "about the facilities: what do you need the hotel to have?")

    # checks
    def goal(self, wanted: str = "") -> list[Check]:
        """The request met (at ``wanted``, when given: the hotel the guest's withheld need picks; the gate reads
        the request as the tools show it). Each check quotes where the query states its rule."""
        pred, plain = self.city.author.pred, self.spec()
        spec = {**plain, "hotel": wanted} if wanted else plain
        what = f"{self.count} {self.kind} room(s) {self.where}" + (f" at {wanted}, which has what the guest needs"
                                                                   if wanted else "")
        booked = Check(name="booked", description=f"{self.guest} holds {what}, all at one open hotel",
                       holds=pred.booked(request=spec), stated=self.where)
        if not (self.arrival or self.shuttle_by or self.meeting):
            checks = [Check(name="secured", description=f"{self.guest} holds or has booked {what}, all at one open "
                            "hotel, at a price the card covers", holds=pred.secured(request=spec), stated=self.where),
                      booked]
        else:  # a step on the way that a recovery never takes back, then everything asked for
            step = {"booked": booked,
                    "arrival": Check(name="arrival_current", description="a booked stay records the guest's arrival "
                                     "as it is now", holds=pred.arrival_current(request=spec), stated=self.extra),
                    "seat": Check(name="seat_in_time", description=f"the guest has a shuttle seat reaching the venue "
                                  f"by {self.shuttle_by}", holds=pred.seat_in_time(request=spec),
                                  stated=self.extra)}[self.progress]
            checks = [step, Check(name="arranged", description="the arrival, shuttle or meeting room asked for works "
                                  "out with the booked hotel", holds=pred.arranged(request=spec), stated=self.extra)]
        checks.append(Check(name="only_as_asked", gate=True, description="every confirmed reservation of the guest "
                            "serves the request within the card limit, and there is no extra one (nor an extra "
                            "meeting room or shuttle seat)",
                            holds=pred.only_as_asked(request=plain), stated=RULE))
        return checks

    def checklist(self, trigger: str) -> list[Check]:
        """The feasible task's checklist: the goal's milestones, each counted once the agent met the change (a
        result it got showed what ``trigger`` changed) and acted after it (a write of its own went through), or
        when the whole request holds regardless (a booking the change never touched); the goal's gates as they
        are. Reading the change without acting on it earns nothing, and neither does a stale plan carried on
        blindly."""
        pred = self.city.author.pred
        goal = self.goal(self.wanted)
        milestones = [c.holds for c in goal if not c.gate]
        reacted = pred.all_of(preds=[pred.noticed(trigger=trigger), pred.acted_on(trigger=trigger)])
        met = pred.any_of(preds=[reacted, pred.all_of(preds=milestones)])
        out = []
        if self.wanted:  # asking earns nothing until the answer is acted on: a question is no recovery
            out.append(Check(name="asked_amenity", description="the agent asked the guest what the hotel must have "
                             "before confirming another one, and booked the hotel that has it", stated=CONSULT.strip(),
                             holds=pred.all_of(preds=[pred.asked_user(about=self.withheld.keywords,
                                                                      before="confirm_reservation"), milestones[-1]])))
        for check in goal:
            if not check.gate:
                check = check.model_copy(update={"description": f"{check.description} (once {trigger} was met, or "
                                                                "with the whole request met regardless)",
                                                 "holds": pred.all_of(preds=[met, check.holds])})
            out.append(check)
        return out

    def refusal(self, changed_by: list[str], facts: list[str]) -> Impossibility:
        """What the judge checks: the change, and why no other hotel within reach serves either (each story's
        apology says so; an other hotel's id counts too); the forbidden gate: no stay confirmed anyway (besides the
        ``kept`` ones the plan had already confirmed before the change, at the hotel asked for)."""
        city = self.city
        pred, existing = city.author.pred, sorted(city.state["reservations"])
        others = [h for h in city.by_distance() if h != self.hotel and city.minutes(h, self.venue) <= self.max_minutes]
        return Impossibility(changed_by=changed_by, blocking_facts=facts, no_alternative=[*others, *ELSEWHERE], forbidden=[
            Check(name="no_wrong_booking", gate=True, description=f"no stay was confirmed for {self.guest} anyway",
                  holds=pred.no_new_booking(guest=self.guest, existing=existing, hotel=self.kept,
                                           kept=self.count if self.kept else 0), stated=RULE)])


def make_task(req: Request, query: str, triggers: list[Trigger], nominal: Plan | list[Call], oracle: list[Call],
              persona: str, answers: dict[tuple, str] | None = None, insist: str = "",
              alternatives: list[list[Call]] = ()) -> Task:
    """Assemble the task; it is impossible once the oracle went through :meth:`Request.refuse`. ``insist``: the
    guest's hard constraints, their answer to any proposed change of plan at every level alike (so it never tells
    whether the request can be met); ``alternatives``: the other complete solutions (another equivalent hotel,
    room type, shuttle or meeting room taken at the first decision)."""
    city, author = req.city, req.city.author
    plan = nominal.calls if isinstance(nominal, Plan) else list(nominal)
    if req.moves:
        query, triggers, plan, oracle, alternatives, answers = arrival_moves(
            req, query, triggers, plan, oracle, alternatives, answers, level=req.moves)
    # Before it answers, the oracle double-checks a drawn one to three of: the guest's reservations, the profile, the
    # hotel asked for and its availability. Real agents differ in this; every timing the story measured comes first.
    spot = [int(i) for i in author.rng.permutation(4)[:author.integer(1, 3)]]
    closing = [(req.bookings, req.profile, req.hotel_info, req.search)[i]() for i in spot]
    replies = oracle[-1:] if req.impossible else []  # the refusal ends the oracle; a question stays where asked
    work = oracle[:len(oracle) - len(replies)]
    where = (f"It has to be {req.hotel}." if req.fixed_hotel else
             f"Any hotel {req.where} is fine, as long as it is {req.city.a_room} for the same nights"
             + (" and has what I need: ask me about my requirement." if req.withheld else "."))
    replies_by_topic = {("hotel", "another", "other", "elsewhere", "different", "alternative"): where,
                        **(answers or {})}
    guest = city.state["guests"][city.user]
    profile = UserProfile(
        persona=f"{guest['name']}, {persona}",
        known_facts=[f"guest id {city.user}", f"room kind {req.kind}", f"check-in {req.check_in}",
                     f"{req.nights} nights", f"venue {req.venue}"],
        clarifications=[Answer(keywords=list(words), text=text) for words, text in replies_by_topic.items()],
        withheld=[req.withheld] if req.withheld else [],
        insist=insist or None,
        fallback="Everything I know is in my request; please handle the booking as asked.")
    return Task(query=query, profile=profile, start_time=format_time(city.start), initial_state=city.state,
                triggers=triggers, checklist=req.checklist(triggers[0].name) if req.impossible is None else [],
                static_checklist=req.goal(), nominal_plan=plan, oracle=work + closing + replies,
                alternatives=[list(a) for a in alternatives], solvable=req.impossible is None,
                impossibility=req.impossible)


def arrival_moves(req: Request, query: str, triggers: list[Trigger], plan: list[Call], oracle: list[Call],
                  alternatives: list[list[Call]], answers: dict | None, level: str) -> tuple:
    """The medium and hard levels' second change, on the guest's side rather than the hotel's. At every level alike
    the query also asks for the arrival on the guest's profile to be recorded. At medium the guest's flight is
    rebooked onto a later one in the same call as the story's change, so a read of the profile once the change is
    seen shows it; at hard it waits until a stay is confirmed after the story's change (whichever hotel the
    recovery picked). Only ``get_guest`` shows it: no write fails, and the booking the agent just made still reads
    as it left it. The later arrival is inside every hotel's ready and key hours, so recording it is the whole fix;
    the difficulty is knowing that the arrival depends on a record the recovery never touched. Returns the query,
    triggers, nominal plan, oracle, alternatives and the user's answers, extended."""
    city, author = req.city, req.city.author

    def recorded(calls: list[Call], when: str, read: bool) -> list[Call]:
        """``calls`` and then, on each of the last ``count`` stays they confirm, the arrival."""
        stays = [c.arguments["reservation_id"] for c in calls if c.name == "confirm_reservation"][-req.count:]
        return [*calls, *[req.profile()] * read,
                *[req.call.set_arrival(reservation_id=r, arrival=when) for r in stays]]

    # The recovered stay is progress of its own (``booked``): a stale arrival then fails ``arranged`` alone.
    req.arrival, req.progress, req.extra = True, "booked", MOVES
    day = (city.start.date().fromisoformat(req.check_in) - city.start.date()).days
    planned = city.at(day, author.integer(15, 17), 15 * author.integer(0, 3))
    later = format_time(min(datetime.fromisoformat(planned) + timedelta(minutes=15 * author.integer(6, 14)),
                            datetime.fromisoformat(city.at(day, 21, 45))))
    city.state["guests"][req.guest].update(arrival=planned, arrival_note="flight lands in the afternoon")
    query, answers = f"{query} Please also {MOVES}.", {**ARRIVAL, **(answers or {})}
    if req.impossible:  # the refusal keeps no stay to record an arrival on
        return query, triggers, recorded(plan, planned, False), oracle, alternatives, answers
    if level not in ("medium", "hard"):
        return (query, triggers, recorded(plan, planned, False), recorded(oracle, planned, True),
                [recorded(a, planned, True) for a in alternatives], answers)
    pred, story = author.pred, triggers[0].name
    if level == "medium":
        (when, activation), moment = author.alongside(triggers[:1]), f"with {story}"
    else:
        when = pred.all_of(preds=[pred.has_confirmed(guest=req.guest), pred.fired_before(trigger=story)])
        activation, moment = ("confirm_reservation",), f"once a stay is confirmed after {story}"
    rebooked = city.trigger(
        "flight_moved", f"{moment}, the guest's flight is rebooked: arrival {later[11:]} instead of {planned[11:]}",
        when, city.sets("guests", req.guest, arrival=later, arrival_note="flight rebooked onto a later connection"),
        ("get_guest", req.guest), activation=tuple(activation), timing="after")
    return (query, [*triggers, rebooked], recorded(plan, planned, False), recorded(oracle, later, True),
            [recorded(a, later, True) for a in alternatives], answers)
