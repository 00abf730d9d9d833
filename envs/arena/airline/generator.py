"""The seeded route network every Airline scenario specialises, and the pieces scenarios share.

:func:`new_network` draws a network from the author's generator: the traveller's origin and
destination, a primary hub in a city with two airports (joined by a ground transfer), two more
hubs, a few other airports, three carriers with their hold times and change fees, connecting
times per airport, a background timetable that never joins the origin to the destination
before the traveller's deadline, other passengers' bookings and a promotion. The scenario
places every flight the story needs itself (:meth:`Net.fly`, timed by :meth:`Net.legal_after`),
so it decides which alternatives exist and, when impossible, that none does.

:class:`Trip` is the traveller's request: the plan steps (search, check, hold, quote, ticket,
change, cancel), the checklist every story shares (each check quoting where the agent is told its
rule) and the other solutions a task lists (:meth:`Trip.alternatives`, every other routing that
flies the request once the change came). :meth:`Trip.refuse` writes the oracle's apology and marks
the request impossible; :func:`make_task` assembles the task, and :func:`passports` gives every request the
passport on the traveller's profile to record on the ticket and, at hard, switches the profile to the
traveller's other passport once the recovery is ticketed and a passport recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sttgym.authoring import Author, Plan
from sttgym.checklist import Check, evaluate
from sttgym.clock import floor_to, format_time, hhmm, minutes_between, shift
from sttgym.envs.arena.airline.world import AirlineWorld
from sttgym.judge import Impossibility
from sttgym.task import Call, Ref, Task
from sttgym.triggers import Observable, Trigger
from sttgym.user import Answer, UserProfile

__all__ = ["CONSULT", "Author", "Plan", "Task", "Net", "Trip", "new_network", "bid", "one", "make_task",
           "standard_query", "hhmm", "shift", "minutes_between", "floor_to"]

# A fictional world, so that no model's idea of real distances or visa rules gets in the way.
# (code, city, country): airports of one-airport cities; two-airport cities are (city, country, [codes]).
_SINGLE = [("AVR", "Avernay", "VL"), ("BRQ", "Brisquet", "VL"), ("CDN", "Caldena", "MR"), ("DLV", "Dalvik Bay", "MR"),
           ("ESK", "Eskerholm", "NR"), ("FRN", "Farnmouth", "NR"), ("GLD", "Goldharbor", "OS"),
           ("HVN", "Havenport", "OS"), ("ILM", "Ilmara", "TQ"), ("JSP", "Jasper Falls", "TQ"),
           ("KRV", "Korvana", "LB"), ("LMF", "Lumenfeld", "LB"), ("MRW", "Marrowgate", "PD"), ("NVL", "Novalis", "PD"),
           ("OKH", "Okhara", "ZR"), ("PLM", "Palmira Sound", "ZR"), ("QSR", "Qasira", "AX"), ("RDW", "Redwater", "AX"),
           ("SLT", "Saltmere", "CV"), ("TRV", "Trevaine", "CV"), ("UMB", "Umbria Point", "DK"), ("VSK", "Veskan", "DK"),
           ("WLD", "Wildemark", "GN"), ("XNA", "Xenara", "GN"), ("YRK", "Yarrowick", "HL"), ("ZNT", "Zenithia", "HL"),
           ("ALB", "Albrecht", "JV"), ("BYL", "Bayleaf", "JV")]
_TWIN = [("Port Calder", "KS", ["PCI", "PCN"]), ("Brennmark", "RM", ["BMI", "BMS"]), ("Solvane", "ET", ["SVI", "SVC"]),
         ("Castelmora", "UV", ["CMI", "CMV"]), ("Nordhaven", "WY", ["NHI", "NHB"]),
         ("Ostrava Nova", "FB", ["OVI", "OVN"]),
         ("Meridia", "QP", ["MDI", "MDC"]), ("Valemont", "YQ", ["VMI", "VMT"]), ("Kessaly", "IZ", ["KSI", "KSR"]),
         ("Torrington", "BW", ["TGI", "TGN"])]
_CARRIERS = [("NX", "Northwind"), ("AQ", "Aquila Air"), ("SV", "Silverline"), ("BO", "Boreal"),
             ("MZ", "Meridian Air"), ("TQ", "Tasman Air"), ("KV", "Kestrel"), ("OL", "Orla Airways"),
             ("HJ", "Heron Jet"), ("PV", "Pavo Air")]
_PEOPLE = ["Dana Whitfield", "Omar Haddad", "Lena Fischer", "Kenji Watanabe", "Priya Raman", "Mateo Silva",
           "Grace Okafor", "Tomasz Nowak", "Sofia Romano", "Liam O'Brien", "Aisha Bello", "Jonas Berg",
           "Hana Kobayashi", "Felix Moreau", "Ines Duarte", "Arjun Mehta"]
_NATIONS = ["Arvenian", "Belmoran", "Cestrian", "Dovaric", "Elurian", "Fenwari", "Galtese", "Hollish", "Istrani",
            "Jorvic", "Kavelan", "Lutherian"]
_PROMO_WORDS = ["SKYSAVER", "CITYHOP", "REDEYE", "WEEKENDER", "FLYMORE", "JETSET", "BIZLITE", "ONWARD"]
# How a traveller asked about their airline naturally puts it; the words that bring out a withheld airline.
AIRLINE_WORDS = ("airline", "airlines", "carrier", "carriers", "requirement", "prefer", "preference", "loyalty")
CONSULT = " If you have to rebook me, ask me first: I have a requirement about the airline."
BUDGET = "against my budget"  # the request's words for the budget every ticket must fit
RELEASE = "cancel or release anything you set up that the final plan does not use"  # the collateral rule's words
AIRCRAFT = ["A320", "A321", "B737", "B738", "E190", "A220"]
# The medium and hard levels' second change, on the traveller's side: every request asks for the passport that the
# passenger profile names to be recorded on the ticket (at every level alike, so the query never tells the levels
# apart). The words name the profile once, as where the passport comes from: words that bid a re-read of it
# ("current", "always") had players re-read it before finishing and catch the switch.
PASSPORT = ("Please also record on the ticket the passport I fly on, which my passenger profile names, for the "
            "advance passenger information.")
PASSPORT_ANSWER = {("passport", "passports", "document", "documents", "apis"):
                   "The passport I fly on is the one my passenger profile names."}
# The writes the hard level's switch waits for, the later of the two: the recovery's ticket (or the change that makes
# a stale ticket fly the request) and the agent's record of a passport.
SWITCH_AT = ("confirm_booking", "change_segment", "record_travel_document")
# Why the travel office puts the traveller on their other passport; the first one stays as it was (still valid), so
# re-reading it shows nothing.
_LODGED = ["is lodged with a consulate for a work visa", "is with an embassy for a visa for next month's trip"]


def one(author: Author, items: list):
    """One of ``items`` (not names: no split to respect)."""
    return items[author.integer(0, len(items) - 1)]


def bid(step: str) -> Ref:
    """The booking id a saved ``hold_itinerary`` step created."""
    return Ref(step=step, path=("data", "booking_id"))


@dataclass
class Net:
    """A drawn network: the state plus the handles scenarios specialise it with."""

    author: Author
    state: dict
    start: datetime  # the session starts here; the traveller flies the next day
    user: str = ""
    roles: dict[str, str] = field(default_factory=dict)  # O, D, H1, H1x, H2, H3 -> airport; A, B, C -> carrier
    durations: dict[tuple, int] = field(default_factory=dict)

    def __getattr__(self, name: str) -> str:
        roles = self.__dict__.get("roles", {})
        if name in roles:
            return roles[name]
        raise AttributeError(name)

    @property
    def day(self) -> str:
        return format_time(self.start + timedelta(days=1))[:10]

    def at(self, hour: int, minute: int = 0) -> str:
        return f"{self.day}T{hour:02d}:{minute:02d}"

    def minutes(self, origin: str, destination: str) -> int:
        key = tuple(sorted((origin, destination)))
        if key not in self.durations:
            self.durations[key] = 5 * self.author.integer(12, 30)
        return self.durations[key]

    def fly(self, origin: str, destination: str, departs: str, carrier: str = "", seats: int | None = None,
            fare: int | None = None, inbound: str | None = None, aircraft: str = "") -> str:
        """Add a flight; its id, e.g. NX412."""
        a, carrier = self.author, carrier or self.A
        fid = f"{carrier}{a.serial(100, 999)}"
        fare = fare if fare is not None else 5 * a.integer(18, 40)
        self.state["flights"][fid] = {
            "carrier": carrier, "origin": origin, "destination": destination, "departs": departs,
            "arrives": shift(departs, self.minutes(origin, destination)), "status": "scheduled",
            "aircraft": aircraft or f"{a.pick(AIRCRAFT)}-{a.serial(100, 999)}", "inbound": inbound,
            "seats": {"economy": a.integer(2, 9) if seats is None else seats, "business": a.integer(0, 3)},
            "fares": {"economy": fare, "business": 3 * fare}, "notice": ""}
        return fid

    def f(self, fid: str) -> dict:
        return self.state["flights"][fid]

    def arr(self, fid: str) -> str:
        return self.f(fid)["arrives"]

    def dep(self, fid: str) -> str:
        return self.f(fid)["departs"]

    def mct(self, airport: str, interline: bool = False) -> int:
        return self.state["airports"][airport]["interline_mct" if interline else "mct"]

    def legal_after(self, fid: str, carrier: str = "", slack: int = 15, origin: str = "") -> str:
        """The departure ``slack`` minutes past the earliest legal connection out of ``fid``'s arrival (from
        ``origin``, another airport of the city, when given; on ``carrier``, interline if not a partner)."""
        first = self.f(fid)
        origin = origin or first["destination"]
        carrier = carrier or first["carrier"]
        partners = carrier == first["carrier"] or carrier in self.state["carriers"][first["carrier"]]["partners"]
        ground = 0 if origin == first["destination"] else self.ground(first["destination"], origin)
        return shift(first["arrives"], ground + self.mct(origin, not partners) + slack)

    def arriving_by(self, origin: str, destination: str, arrive: str) -> str:
        """The departure of a flight from ``origin`` that lands at ``destination`` at ``arrive``."""
        return shift(arrive, -self.minutes(origin, destination))

    def via(self, hub: str, lands: str, carrier: str = "", slack: int = 15) -> list[str]:
        """Two flights origin -> ``hub`` -> destination on one carrier, landing at ``lands``, the connection
        ``slack`` minutes longer than the minimum."""
        carrier = carrier or self.C
        second = self.fly(hub, self.D, self.arriving_by(hub, self.D, lands), carrier)
        first = self.fly(self.O, hub, self.arriving_by(self.O, hub, shift(self.dep(second), -(self.mct(hub) + slack))),
                         carrier)
        return [first, second]

    def ground(self, a: str, b: str) -> int:
        return next(x["minutes"] for x in self.state["ground_links"].values() if {x["a"], x["b"]} == {a, b})

    def link(self, a: str, b: str) -> str:
        return next(k for k, x in sorted(self.state["ground_links"].items()) if {x["a"], x["b"]} == {a, b})

    def name(self, airport: str) -> str:
        return self.state["airports"][airport]["name"]

    def full(self, *fids: str) -> None:
        """No economy seat left on ``fids``."""
        for fid in fids:
            self.f(fid)["seats"]["economy"] = 0

    def distractors(self, latest: str) -> None:
        """Flights on the traveller's legs that leave after ``latest`` (they never reach in time)."""
        a = self.author
        for origin, destination in ((self.O, self.H1), (self.H1, self.D), (self.O, self.H2), (self.H2, self.D)):
            if a.chance(0.6):
                self.fly(origin, destination, shift(floor_to(latest, 5), 5 * a.integer(2, 24)),
                         one(a, [self.A, self.B, self.C]))

    # triggers
    def set(self, *path: str, value) -> object:
        return self.author.op.set_field(path=list(path), value=value)

    def sets(self, container: str, ident: str, **fields) -> list:
        return [self.set(container, ident, k, value=v) for k, v in fields.items()]

    def trigger(self, name: str, description: str, when, effect: list, shown: tuple, activation: tuple = (),
                timing: str = "before") -> Trigger:
        """A trigger; ``shown``: the read ``(tool, args)`` the story expects to reveal it (its observable)."""
        return self.author.check_trigger(Trigger(
            name=name, description=description, when=when, effect=effect, activation=list(activation),
            timing=timing, observable=Observable(tool=shown[0], args=shown[1])))

    def on_write(self, name: str, description: str, effect: list, shown: tuple, ticketed: bool = False) -> Trigger:
        """A change set off right after the traveller's first hold (``ticketed``: their first ticket)."""
        pred = self.author.pred
        if ticketed:
            return self.trigger(name, description, pred.has_booking(passenger=self.user, status="ticketed"),
                                effect, shown, activation=["confirm_booking"], timing="after")
        return self.trigger(name, description, pred.has_booking(passenger=self.user, status="held"), effect,
                            shown, activation=["hold_itinerary"], timing="after")

    def cascade(self, name: str, description: str, path: list, value, effect: list, shown: tuple) -> Trigger:
        """A change that follows as soon as an earlier one left ``path`` at ``value``."""
        return self.trigger(name, description, self.author.pred.field_equals(path=path, value=value), effect, shown)

    @staticmethod
    def status_of(fid: str) -> tuple:
        return "get_flight_status", {"flight_id": fid}


def _airport(name: str, city: str, country: str, hub: bool, mct: int, extra: int) -> dict:
    return {"name": name, "city": city, "country": country, "hub": hub, "mct": mct, "interline_mct": mct + extra,
            "status": "open", "notice": "", "transit_visa_for": [], "transit_rule": ""}


def new_network(author: Author) -> Net:
    """A seeded network on a morning between 08:00 and 10:55; the traveller flies the next day."""
    a = author
    start = datetime(a.integer(2024, 2025), 1, 1) + timedelta(days=a.integer(10, 330), hours=a.integer(8, 10),
                                                              minutes=5 * a.integer(0, 11))
    state: dict = {k: {} for k in ("flights", "airports", "ground_links", "carriers", "passengers", "bookings",
                                   "promotions")}
    state["counters"] = {"booking": a.integer(4000, 8999)}
    net = Net(a, state, start)
    n_other = a.integer(1, 3)
    singles = a.pick(_SINGLE, 5 + n_other)
    twins = a.pick(_TWIN, 2)
    for role, (code, city, country) in zip(("O", "D", "H2", "H3"), singles[:4]):
        net.roles[role] = code
        hub = role in ("H2", "H3")
        state["airports"][code] = _airport(f"{city} {'International' if hub else 'Airport'}", city, country, hub,
                                           5 * a.integer(7 if hub else 5, 13 if hub else 9), 5 * a.integer(5, 9))
    city, country, codes = twins[0]
    net.roles["H1"], net.roles["H1x"] = codes
    for code, main in zip(codes, (True, False)):
        state["airports"][code] = _airport(f"{city} {'International' if main else 'City'}", city, country, main,
                                           5 * a.integer(8, 14), 5 * a.integer(5, 9))
    state["ground_links"][f"GT-{a.serial(100, 999)}"] = {"a": codes[0], "b": codes[1], "minutes": 5 * a.integer(9, 16),
                                                         "open": True}
    others = [code for code, _, _ in singles[4:]]
    city2, country2, codes2 = twins[1]
    others += codes2
    for code, ocity, ocountry in singles[4:]:
        state["airports"][code] = _airport(f"{ocity} Airport", ocity, ocountry, False, 5 * a.integer(5, 9),
                                           5 * a.integer(5, 9))
    for code in codes2:
        state["airports"][code] = _airport(f"{city2} {'International' if code == codes2[0] else 'City'}", city2,
                                           country2, code == codes2[0],
                                           5 * a.integer(8, 12), 5 * a.integer(5, 9))
    state["ground_links"][f"GT-{a.serial(100, 999)}"] = {"a": codes2[0], "b": codes2[1],
                                                         "minutes": 5 * a.integer(8, 14), "open": True}
    carriers = a.pick(_CARRIERS, 3)
    for role, (code, cname) in zip(("A", "B", "C"), carriers):
        net.roles[role] = code
        state["carriers"][code] = {"name": cname, "hold_minutes": 5 * a.integer(6, 12),
                                   "change_fee": 10 * a.integer(4, 12), "partners": [], "notice": ""}
    # Background timetable: hubs and other airports only, never the traveller's origin or destination.
    spokes = [net.H1, net.H2, net.H3] + others
    for _ in range(a.integer(3, 8)):
        x, y = (spokes[int(i)] for i in a.rng.choice(len(spokes), 2, replace=False))
        if state["airports"][x]["city"] != state["airports"][y]["city"]:
            net.fly(x, y, net.at(a.integer(6, 20), 5 * a.integer(0, 11)), one(a, [net.roles[r] for r in "ABC"]))
    nation = a.pick(_NATIONS)
    net.user = f"PAX-{a.serial(10000, 99999)}"
    state["passengers"][net.user] = {"name": a.pick(_PEOPLE), "nationality": nation,
                                     "visas": sorted({state["airports"][net.H3]["country"]}),
                                     "tier": one(a, ["standard", "silver"]), "budget": 0}
    background = sorted(state["flights"])
    for _ in range(a.integer(1, 3)):
        pid = f"PAX-{a.serial(10000, 99999)}"
        state["passengers"][pid] = {"name": a.pick(_PEOPLE), "nationality": a.pick(_NATIONS), "visas": [],
                                    "tier": one(a, ["standard", "silver", "gold"]), "budget": 50 * a.integer(8, 30)}
        fid = background[a.integer(0, len(background) - 1)]
        state["bookings"][f"BK-{a.serial(1000, 3999)}"] = {
            "passenger": pid, "segments": [fid], "cabin": "economy", "status": "ticketed",
            "held_at": format_time(start - timedelta(days=3)), "ticket_by": None,
            "price": state["flights"][fid]["fares"]["economy"], "fees": 0, "promo": None, "promo_pct": 0,
            "offloaded": []}
    code = f"{a.pick(_PROMO_WORDS)}{a.serial(10, 99)}"
    state["promotions"][code] = {"carriers": [net.B], "discount_pct": 10, "quota": 50, "used": a.integer(5, 40),
                                 "status": "active", "note": "spring sale"}
    return net


@dataclass
class Trip:
    """The traveller's request: from the origin to the destination, landing by ``arrive_by``."""

    net: Net
    arrive_by: str
    planned: list[str]  # the itinerary the request names
    impossible: Impossibility | None = None
    wanted: list[str] = field(default_factory=list)  # the alternative the traveller's withheld airline picks
    withheld: Answer | None = None
    # The passports a solution records on its ticket, in order: the one the profile names at the start and, at hard,
    # the one it names once switched (:func:`passports`); none when impossible.
    passports: list[str] = field(default_factory=list)

    @property
    def passenger(self) -> str:
        return self.net.user

    def spec(self) -> dict:
        return {"passenger": self.passenger, "origin": self.net.O, "destination": self.net.D,
                "arrive_by": self.arrive_by, "cabin": "economy"}

    # plan steps
    @property
    def call(self):
        return self.net.author.call

    def search(self, origin: str, destination: str) -> Call:
        return self.call.search_flights(origin=origin, destination=destination, date=self.net.day)

    def check(self, fids: list[str]) -> Call:
        return self.call.check_itinerary(passenger_id=self.passenger, flight_ids=list(fids))

    def hold(self, fids: list[str], step: str = "hold") -> Call:
        return self.call.hold_itinerary(save_as=step, passenger_id=self.passenger, flight_ids=list(fids))

    def quote(self, fids: list[str], promo: str = "") -> Call:
        extra = {"promo_code": promo} if promo else {}
        return self.call.get_fare_quote(flight_ids=list(fids), passenger_id=self.passenger, **extra)

    def confirm(self, step: str = "hold", promo: str = "") -> Call:
        extra = {"promo_code": promo} if promo else {}
        return self.call.confirm_booking(booking_id=bid(step), **extra)

    def change(self, old: str, new: str, step: str = "hold") -> Call:
        return self.call.change_segment(booking_id=bid(step), old_flight_id=old, new_flight_id=new)

    def cancel(self, step: str = "hold") -> Call:
        return self.call.cancel_booking(booking_id=bid(step))

    def status(self, fid: str) -> Call:
        return self.call.get_flight_status(flight_id=fid)

    def booking(self, step: str = "hold") -> Call:
        return self.call.get_booking(booking_id=bid(step))

    def airport(self, code: str) -> Call:
        return self.call.get_airport_info(airport_id=code)

    def airports(self) -> Call:
        return self.call.list_airports()

    def profile(self) -> Call:
        return self.call.get_passenger_profile(passenger_id=self.passenger)

    def bookings(self) -> Call:
        return self.call.list_passenger_bookings(passenger_id=self.passenger)

    def promos(self) -> Call:
        return self.call.list_promotions()

    def carriers(self) -> Call:
        return self.call.list_carriers()

    def tell(self, message: str) -> Call:
        return self.call.chat_with_user(message=message)

    def document(self, doc: str) -> Call:
        return self.call.get_travel_document(document_id=doc)

    def documented(self, calls: list[Call], docs: list[str]) -> list[Call]:
        """``calls``, then for each of ``docs`` in turn: the profile and the document read, and its number recorded
        on the last booking ``calls`` ticket."""
        tickets = [c.arguments["booking_id"] for c in calls if c.name == "confirm_booking"]
        numbers = self.net.state["documents"]
        return [*calls, *[step for d in docs for step in (self.profile(), self.document(d), self.call.
                record_travel_document(booking_id=tickets[-1], document_number=numbers[d]["number"]))]]

    def book(self, fids: list[str], step: str = "again", promo: str = "") -> list[Call]:
        """Hold ``fids`` and ticket at once."""
        return [self.hold(fids, step), self.confirm(step, promo)]

    def reroute(self, fids: list[str], step: str = "again", promo: str = "") -> list[Call]:
        """Check ``fids``, drop the old booking, hold and ticket the new routing."""
        return [self.check(fids), self.cancel(), *self.book(fids, step, promo)]

    def nominal(self, promo: str = "") -> Plan:
        """The plain plan: search both legs, check the routing, hold, price, ticket."""
        first, second = self.net.f(self.planned[0]), self.net.f(self.planned[-1])
        return Plan(look=[self.search(first["origin"], first["destination"]),
                          self.search(second["origin"], second["destination"])],
                    check=[self.check(self.planned)], hold=[self.hold(self.planned)],
                    price=[self.quote(self.planned, promo)], confirm=[self.confirm(promo=promo)])

    def refuse(self, message: str, changed_by: list[str], facts: list[str], others: list[str]) -> list[Call]:
        """The oracle's apology (``I'm sorry, `` + ``message``); marks the request impossible. ``facts``: what an
        honest refusal names (the changed values, the blocking ids, a few words for the change); ``others``: why
        the other routings the world offers fail too, which only checking them shows (their flight ids, the hub
        they go through, the late landing time, a few words such as "direct flight full"). The change never says
        that nothing else works, so a refusal must name one of these as well."""
        pred = self.net.author.pred
        others = [f for f in dict.fromkeys(others) if f not in facts]  # a landing time may be a changed one too
        self.impossible = Impossibility(changed_by=changed_by, blocking_facts=facts, no_alternative=others, forbidden=[
            Check(name="no_wrong_ticket", gate=True, description=f"no ticket was issued for {self.passenger} anyway",
                  holds=pred.no_new_ticket(passenger=self.passenger, existing=[]), stated=self.deadline),
            Check(name="one_ticket", gate=True, description="at most one ticket, within the budget",
                  holds=pred.one_ticket(request=self.spec()), stated=BUDGET),
            Check(name="seats_released", gate=True, description="no hold on a routing that cannot be flown is left "
                  "blocking seats", holds=pred.nothing_held(passenger=self.passenger), stated=RELEASE)])
        return [self.cancel(), self.tell(f"I'm sorry, {message}")]

    def too_late(self, fids: list[str]) -> list[str]:
        """What names a routing that lands after the deadline, as a refusal would: the hub it connects at (its code
        or its city), its flights, the time it lands, and that in words."""
        hub = self.net.f(fids[0])["destination"]
        return [hub, self.net.state["airports"][hub]["city"], *fids, hhmm(self.net.arr(fids[-1])),
                f"the routing via {hub} lands after the deadline"]

    @property
    def who(self) -> str:
        return f"{self.net.state['passengers'][self.passenger]['name']}, passenger {self.passenger}"

    def afford(self, *itineraries: list[str], fee: bool = False) -> None:
        """The traveller's budget covers each of ``itineraries`` (and a change fee, when ``fee``), with a margin."""
        s = self.net.state
        most = max(sum(s["flights"][f]["fares"]["economy"] for f in fids) for fids in itineraries)
        extra = max(c["change_fee"] for c in s["carriers"].values()) if fee else 0
        s["passengers"][self.passenger]["budget"] = most + extra + 10 * self.net.author.integer(2, 8)

    def carrier_choice(self, hub: str) -> list[list[str]]:
        """Two or three routings through ``hub``, each on its own carrier and landing in time. Which one the
        traveller wants is their airline, which they tell only when asked: drawn apart from anything a tool
        shows (departure order, fares, flight numbers), so no heuristic beats a guess."""
        net, a = self.net, self.net.author
        carriers = [net.roles[r] for r in "ABC"]
        routings = [net.via(hub, shift(self.arrive_by, -5 * a.integer(1, 5)), carrier=carriers[int(i)])
                    for i in a.rng.permutation(3)[:a.integer(2, 3)]]
        self.wanted = routings[a.integer(0, len(routings) - 1)]
        self.loyal(net.f(self.wanted[0])["carrier"])
        return routings

    def loyal(self, carrier: str) -> None:
        """The traveller needs ``carrier`` for any rebooking, and says so only when asked about the airline."""
        name = self.net.state["carriers"][carrier]["name"]
        self.withheld = Answer(keywords=list(AIRLINE_WORDS), text=f"If you rebook me, it has to be on {name} "
                               f"({carrier}): I'm two flights short of their gold status and need those miles.")

    def ask_airline(self, why: str) -> Call:
        """The oracle's question for the withheld airline, before it books an alternative (worded as a question,
        not a proposal: a proposed change of plan gets the traveller's hard constraints instead)."""
        return self.tell(f"{why} Before I rebook you: you said you have a requirement about the airline. Which "
                         "airline do you need?")

    @property
    def deadline(self) -> str:
        """The request's words for its deadline: what the checks on the landing time quote."""
        return f"landing by {self.arrive_by} at the latest"

    # checks
    def goal(self) -> list[Check]:
        pred, spec = self.net.author.pred, self.spec()
        return [Check(name="ticketed", description=f"{self.passenger} holds a ticket {self.net.O} -> {self.net.D} "
                      f"landing by {self.arrive_by} that can be flown as it stands", holds=pred.trip_ticketed(
                          request=spec), stated=self.deadline),
                Check(name="passport_recorded", description="that ticket carries the passport the traveller's "
                      "profile names at the end", holds=pred.documented(request=spec), stated=PASSPORT),
                Check(name="nothing_stale", description="no other hold or ticket of the traveller is left broken",
                      holds=pred.bookings_sound(request=spec), stated=RELEASE),
                Check(name="one_ticket", gate=True, description="at most one ticket, within the budget with fees",
                      holds=pred.one_ticket(request=spec), stated=BUDGET)]

    def checklist(self, trigger: str) -> list[Check]:
        """Milestones that count once ``trigger`` has happened, in the world it left (seen or not: a ticket that
        flies the request then counts however the agent got there; a hold, once made or changed since), and the
        gate."""
        pred, spec = self.net.author.pred, self.spec()

        def secured(request):  # a hold the change left untouched is the stale plan's, not a recovery
            return pred.secured_since(request=request, trigger=trigger)

        asked, chosen, on = [], spec, ""
        if self.wanted:  # the goal is the traveller's airline, asked for before the ticket
            chosen = {**spec, "carrier": self.net.f(self.wanted[0])["carrier"]}
            on = f" on {chosen['carrier']}, the traveller's airline"
            asked = [Check(name="asked_airline", description="the agent asked the traveller which airline they need "
                           "before ticketing an alternative, and ticketed it (a question alone is no recovery)",
                           holds=pred.all_of(preds=[pred.asked_user(about=self.withheld.keywords,
                                                                    before="confirm_booking"),
                                                    pred.trip_ticketed(request=chosen)]), stated=CONSULT.strip())]
        return [Check(name="alternative_secured", description=f"after the change, a ticket, or a hold made or "
                      f"changed since, flies the request as it stands{on}", holds=secured(chosen),
                      stated=self.deadline),
                Check(name="stale_unwound", description="after the change, every live hold or ticket of the "
                      "traveller can be flown as asked, and one is secured", holds=pred.all_of(preds=[
                          pred.bookings_sound(request=spec), secured(spec)]), stated=RELEASE),
                *asked,
                Check(name="ticketed", description=f"after the change, a ticket lands at {self.net.D} by "
                      f"{self.arrive_by} and can be flown{on}", holds=pred.all_of(preds=[
                          pred.happened(trigger=trigger), pred.trip_ticketed(request=chosen)]),
                      stated=self.deadline),
                # its own milestone, so that the recovered ticket still counts when the passport on it went stale
                Check(name="passport_recorded", description=f"after the change, that ticket{on} carries the passport "
                      "the traveller's profile names at the end", holds=pred.all_of(preds=[
                          pred.happened(trigger=trigger), pred.documented(request=chosen)]), stated=PASSPORT),
                Check(name="one_ticket", gate=True, description="at most one ticket, within the budget with fees",
                      holds=pred.one_ticket(request=spec), stated=BUDGET)]

    def routings(self, world: AirlineWorld, ignore: str) -> list[list[str]]:
        """Every direct flight or two-flight connection that flies the request in ``world`` as it stands (the
        traveller's booking ``ignore`` given up) and fits the budget at its best fare."""
        flights, net = world.state["flights"], self.net
        firsts = [f for f, x in sorted(flights.items()) if x["origin"] == net.O]
        lasts = [f for f, x in sorted(flights.items()) if x["destination"] == net.D]
        candidates = [[f] for f in firsts if f in lasts] + [[f, g] for f in firsts for g in lasts if f != g]
        budget = world.state["passengers"][self.passenger]["budget"]
        return [fids for fids in candidates if flights[fids[-1]]["arrives"] <= self.arrive_by
                and not world.problems(self.passenger, fids, "economy", ignore=ignore)
                and world.best_price(fids, "economy") <= budget]

    def alternatives(self, oracle: list[Call], triggers: list[Trigger], checks: list[Check]) -> list[list[Call]]:
        """Every other complete solution: the oracle up to its first write after the change, then a reroute onto
        each other routing that flies the request there (ticketed with the promotion that prices it lowest), kept
        when it meets every check."""
        a = self.net.author
        start = format_time(self.net.start)
        solved = a.dry_run(self.net.state, start, oracle, triggers)
        events, bookings = solved.firing.log.events, solved.state["bookings"].values()
        flown = [b["segments"] for b in bookings if b["passenger"] == self.passenger and b["status"] == "ticketed"]
        recovery = next((i for i, c in enumerate(oracle) if i >= events[0]["call_index"] and a.tools[c.name].mutates),
                        None)
        if recovery is None:
            return []
        prefix = oracle[:recovery]
        base = a.dry_run(self.net.state, start, prefix, triggers)
        stale = base.saved["hold"]["data"]["booking_id"]
        out = []
        for fids in self.routings(base.world, ignore=stale):
            steps = self.documented(self.reroute(fids, promo=base.world.best_fare(fids, "economy")[1]), self.passports)
            end = base.then(steps)
            if fids not in flown and evaluate(checks, end.world, end.firing.log)[0] == 1.0:
                out.append(prefix + steps)
        return out


def make_task(trip: Trip, query: str, triggers: list[Trigger], nominal: Plan | list[Call], oracle: list[Call],
              persona: str, insist: str, answers: dict[tuple, str] | None = None, *, level: str) -> Task:
    """The task (impossible once the oracle went through :meth:`Trip.refuse`). The oracle records the passport the
    request asks for (at hard, reading the profile again and recording the one it names then: :func:`passports`)
    and double-checks a drawn few things at the end (before its refusal), so its tool sequence varies as real
    agents' do. ``insist``: why the traveller's constraints are hard, which leads what they answer to any proposed
    change of plan (the same form at every level, so the answer never tells whether the request can be met)."""
    net, impossible, answers = trip.net, trip.impossible, dict(answers or {})
    nominal = nominal.calls if isinstance(nominal, Plan) else nominal
    checks = [trip.profile(), trip.bookings(), trip.airport(net.D), trip.carriers(), trip.airport(net.O),
              trip.promos()]
    extra = [checks[int(i)] for i in net.author.rng.permutation(len(checks))[:net.author.integer(1, 3)]]
    query, triggers, nominal = passports(trip, query, triggers, nominal, level)
    answers.update(PASSPORT_ANSWER)
    said = oracle[-1:] if impossible else []  # the refusal ends the oracle; a question stays where it was asked
    oracle = trip.documented(oracle[:len(oracle) - len(said)], trip.passports) + extra + said
    anyway = (f"Any routing is fine as long as I land at {net.D} by {hhmm(trip.arrive_by)} in economy within my "
              "budget" + (", on the airline I need: ask me which." if trip.withheld else "."))
    answers.setdefault(("flight", "routing", "route", "another", "other", "connection", "via"), anyway)
    answers.setdefault(("budget", "price", "fare", "cost"), "My budget per booking is on my passenger profile.")
    profile = UserProfile(
        persona=f"{net.state['passengers'][net.user]['name']}, {persona}",
        known_facts=[f"passenger id {net.user}", f"from {net.O} to {net.D}", f"land by {trip.arrive_by}"],
        clarifications=[Answer(keywords=list(k), text=t) for k, t in answers.items()],
        withheld=[trip.withheld] if trip.withheld else [], insist=f"{insist} {anyway}",
        fallback="Everything I know is in my request; please handle the booking as asked.")
    checklist = [] if impossible else trip.checklist(triggers[0].name)
    return Task(query=query, profile=profile, start_time=format_time(net.start), initial_state=net.state,
                triggers=triggers, checklist=checklist, static_checklist=trip.goal(), nominal_plan=nominal,
                oracle=oracle, alternatives=trip.alternatives(oracle, triggers, checklist) if checklist else [],
                solvable=impossible is None, impossibility=impossible)


def passports(trip: Trip, query: str, triggers: list[Trigger], nominal: list[Call], level: str) -> tuple:
    """The medium and hard levels' second change, on the traveller's side rather than the network's, one hop behind
    what the agent re-checks. The traveller holds two passports of their nationality (``get_travel_document``),
    drawn after everything else so that the stories' instances and timings stay as they were; the profile names the
    one they fly on. At every level alike the query asks for that passport to be recorded on the ticket and names
    the profile once, and the traveller says the same. At medium the traveller's travel office switches the profile
    to the other passport in the same call as the story's change, so a read of the profile once the change is seen
    shows it. At hard it waits: once the story's change has fired, at the later of the recovery's ticket (one that
    flies the request, whichever routing and booking the recovery took) and the agent's record of a passport on it,
    so the number the agent recorded goes stale whatever order it worked in. Only ``get_passenger_profile`` shows it:
    the first passport still reads as it did, no write fails, and the ticket reads as the agent left it. Both
    passports share the nationality, so no connection or visa rule moves, and recording the other number is the whole
    fix. An impossible request tickets nothing to record a passport on, and the profile stays as it is. Returns the
    query, triggers and nominal plan, extended, and sets :attr:`Trip.passports`."""
    net, a = trip.net, trip.net.author
    traveller = net.state["passengers"][trip.passenger]
    docs = net.state.setdefault("documents", {})
    for _ in range(2):
        docs[f"TD-{a.serial(10000, 99999)}"] = {
            "passenger": trip.passenger, "kind": "passport", "nationality": traveller["nationality"],
            "number": f"{one(a, list('CFGHJKLMNPRTVX'))}{a.serial(1000000, 9999999)}",
            "expires": format_time(net.start + timedelta(days=a.integer(400, 3000)))[:10]}
    planned, later = sorted(docs)[::1 if a.chance(0.5) else -1]
    traveller.update(travel_document=planned, document_note="the passport the traveller flies on")
    query, nominal = f"{query} {PASSPORT}", trip.documented(nominal, [planned])
    trip.passports = [] if trip.impossible else [planned]
    if level not in ("medium", "hard") or trip.impossible:
        return query, triggers, nominal
    pred, story = a.pred, triggers[0].name
    if level == "medium":
        when, activation = a.alongside(triggers[:1])
        moment = f"with {story}"
    else:
        when = pred.all_of(preds=[pred.fired_before(trigger=story), pred.ticket_documented(request=trip.spec())])
        activation, moment = SWITCH_AT, f"once the recovery after {story} is ticketed and a passport recorded"
    switch = net.trigger(
        "passport_switched", f"{moment}, the traveller's profile names {later} instead of {planned}", when,
        net.sets("passengers", trip.passenger, travel_document=later,
                 document_note=f"switched to {later} by the travel office: {planned} {one(a, _LODGED)}"),
        ("get_passenger_profile", {"passenger_id": trip.passenger}), activation=activation, timing="after")
    trip.passports = [planned, later]
    return query, [*triggers, switch], nominal


def standard_query(trip: Trip, extra: str = "") -> str:
    """The usual request: the routing, the deadline, the steps."""
    net = trip.net
    legs = " then ".join(trip.planned)
    via = net.f(trip.planned[0])["destination"]
    return (f"Hi, {trip.who} here. I need to fly from {net.name(net.O)} ({net.O}) to {net.name(net.D)} ({net.D}) "
            f"on {net.day}, economy, {trip.deadline}. The desk suggested connecting at {via} on {legs}. Please "
            f"check the routing, hold it, price it {BUDGET} and ticket it.{extra}")
