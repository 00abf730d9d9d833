"""The seeded Ticketing city every scenario specialises, and the pieces scenarios share.

:func:`new_city` draws a city from the author's generator: the customer's home, a drawn number
of transit stations joined by drawn lines, two to three venues whose two entry gates sit by
different stations, background events by other performers, and the *focus show* the stories
revolve around: its sections (prices, accessibility, gates, rows of free seats), its gates'
entry slots and its will-call desk. :class:`Request` is the customer's order: it writes the plan
steps and the checklist every scenario shares; :meth:`Request.refuse` writes the oracle's apology
and marks the request impossible; :func:`make_task` assembles the task.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sttgym.authoring import Author, Plan
from sttgym.checklist import Check
from sttgym.clock import floor_to, format_time, hhmm, shift
from sttgym.envs.arena.ticketing.world import reach_time
from sttgym.footprint import RULE
from sttgym.geo import shortest_route
from sttgym.judge import Impossibility
from sttgym.task import Call, Ref, Task
from sttgym.triggers import Observable, Trigger
from sttgym.user import Answer, UserProfile

__all__ = ["CONSULT", "ENTRY", "NAMES", "Author", "Plan", "Task", "City", "Request", "new_city", "leave_by", "hold_id",
           "order_id", "one", "intro", "make_task"]

_PERFORMERS = ["Velvet Harbour", "The Lantern Choir", "Mira Solano", "Northbound Static", "Ada Quartet",
               "Juniper Kite", "Sable & Finch", "Orla Byrne", "The Copper Tides", "Kasimir Trio", "Luna Verde",
               "Hollow Pines", "Idris Vale", "The Paper Moons", "Noor Ensemble", "Fable Street"]
_SHOWS = ["Live", "In Concert", "Tour Night", "Unplugged", "Anniversary Show", "Evening Set", "Album Launch",
          "Farewell Tour"]
_VENUES = ["Royal Arena", "Harbour Hall", "Old Mill Theatre", "Civic Auditorium", "Lakeside Pavilion",
           "Union Chapel", "Glasshouse", "Riverside Stage", "Northern Dome", "Corn Exchange"]
_STATIONS = ["Central", "Market Cross", "Parkside", "Quayside", "Cathedral", "Elm Road", "University", "Docklands",
             "Hillgate", "Westbrook", "Museum", "Canal Street"]
_LINES = ["Red line", "Blue line", "Green line", "Tram 4", "Tram 7", "Orange line", "Bus 12", "Bus 31"]
_PEOPLE = ["Dana Whitfield", "Omar Haddad", "Lena Fischer", "Kenji Watanabe", "Priya Raman", "Mateo Silva",
           "Grace Okafor", "Tomasz Nowak", "Sofia Romano", "Liam O'Brien", "Aisha Bello", "Jonas Berg",
           "Hana Kobayashi", "Felix Moreau", "Ines Duarte", "Arjun Mehta"]
# The people a customer brings, apart from the customers' own names so that no friend is taken for an account.
_FRIENDS = ["Maya Lindgren", "Tobias Reed", "Chiara Bellini", "Samuel Adeyemi", "Nadia Petrova", "Oscar Lund",
            "Yasmin Farouk", "Declan Murphy", "Leila Nasser", "Henrik Dahl", "Rosa Jimenez", "Callum Fraser",
            "Anouk de Vries", "Ravi Shankar", "Elena Vasquez", "Bruno Ferreira"]
_SECTIONS = ["Stalls", "Circle", "Balcony", "Floor", "Tier", "Terrace", "Gallery", "Box"]
_ROWS = "ABCDEFGH"
# What a group may need its section to have, and how the customer says so when asked: one shape of sentence, so that
# which need was drawn shows in its own words only.
FEATURES = {"covered": "Rain is forecast, so the section needs to be covered.",
            "hearing_loop": "My mother wears hearing aids, so the section needs a hearing loop.",
            "near_exit": "One of us panics in crowds, so the section needs to be near an exit.",
            "standing": "We want to dance, so the section needs to allow standing.",
            "legroom": "My partner is very tall, so the section needs extra legroom."}
# The words that bring out a withheld feature: how a customer asked about their needs naturally puts it.
FEATURE_WORDS = ("requirement", "require", "need", "needs", "prefer", "preference", "feature", "features",
                 "facilities")
CONSULT = " If the seats have to move to another section, ask me first: I have a requirement about the section."
ENTRY = "book our entry slot at the section's gate"  # how every request with an entry slot asks for it
# Asked at every level alike; at medium the party changes with the story's change, at hard once the recovery
# commits (:func:`party_moves`).
NAMES = "print our names on the tickets, one each, from the party list on my customer profile"
# The customer points to the list rather than saying names, so the answer holds at every level and after the change.
PARTY = {("name", "names", "party", "people", "friends", "guests", "who", "coming"): "Whoever is coming is always "
         "on the party list on my customer profile."}


def hold_id(step: str) -> Ref:
    """The hold id a saved ``hold_seats`` step created."""
    return Ref(step=step, path=("data", "hold_id"))


def order_id(step: str) -> Ref:
    """The order id a saved ``purchase`` step created."""
    return Ref(step=step, path=("data", "order_id"))


def one(author: Author, items: list):
    """One of ``items`` (not names: no split to respect)."""
    return items[author.integer(0, len(items) - 1)]


@dataclass
class City:
    """A drawn city: the state plus the handles scenarios specialise it with."""

    author: Author
    state: dict
    start: datetime
    user: str = ""
    home: str = ""
    event: str = ""  # the focus show
    venue: str = ""
    venues: list[str] = field(default_factory=list)
    sections: list[str] = field(default_factory=list)  # the focus show's, in the order they were added

    # ------------------------------------------------------------- reading
    def gates_of(self, venue: str) -> list[str]:
        return sorted(g for g, x in self.state["gates"].items() if x["venue"] == venue)

    def minutes(self, a: str, b: str) -> int | None:
        route = shortest_route(self.state["links"], a, b)
        return None if route is None else route[0]

    @property
    def show(self) -> dict:
        return self.state["events"][self.event]

    def price(self, section: str) -> int:
        return self.state["sections"][section]["price"]

    def gate(self, section: str) -> str:
        return self.state["sections"][section]["gate"]

    def at(self, hour: int, minute: int = 0, day: int = 0) -> str:
        return format_time(self.start.replace(hour=0, minute=0) + timedelta(days=day, hours=hour, minutes=minute))

    # ------------------------------------------------------------- building
    def add_section(self, gate: str, price: int, accessible: bool = False, rows: int | None = None,
                    run: int | None = None, event: str = "", name: str = "") -> str:
        """A section of the focus show (or ``event``) with ``rows`` rows of free seats; ``run``: the longest run of
        adjacent free seats in any row (gaps split the rest)."""
        a = self.author
        sid = f"SEC-{a.serial(100, 999)}"
        run = a.integer(6, 8) if run is None else run
        rows_out = {}
        for row in _ROWS[:a.integer(2, 3) if rows is None else rows]:
            start = a.integer(1, 12)
            seats = list(range(start, start + run)) if run else []
            if run:
                seats += [start + run + 1 + 2 * k for k in range(a.integer(0, 3))]  # singles with gaps after the run
            rows_out[row] = seats
        label = name or f"{one(a, _SECTIONS)} {a.integer(1, 9)}"
        self.state["sections"][sid] = {"event": event or self.event, "name": label, "price": price,
                                       "accessible": accessible, "gate": gate, "status": "open", "notice": "",
                                       "rows": rows_out}
        if not event or event == self.event:
            self.sections.append(sid)
        return sid

    def slots(self, event: dict, capacity: int | None = None) -> dict:
        """Entry slots every 15 minutes from the doors to the start."""
        a, out = self.author, {}
        moment = datetime.fromisoformat(event["doors"])
        while moment <= datetime.fromisoformat(event["starts"]):
            out[format_time(moment)] = a.integer(20, 60) if capacity is None else capacity
            moment += timedelta(minutes=15)
        return out

    def open_slots(self, *events: str) -> None:
        """Every gate of the events' venues gets those events' slots."""
        for e in events:
            show = self.state["events"][e]
            for g in self.gates_of(show["venue"]):
                self.state["gates"][g]["slots"].update(self.slots(show))

    def add_event(self, venue: str, doors: str, starts: str, performer: str = "", title: str = "") -> str:
        a = self.author
        eid = f"EVT-{a.serial(1000, 9999)}"
        performer = performer or a.pick(_PERFORMERS)
        self.state["events"][eid] = {"title": title or f"{performer} {one(a, _SHOWS)}", "performer": performer,
                                     "venue": venue, "doors": doors, "starts": starts, "status": "on_sale",
                                     "cart_minutes": 5 * a.integer(3, 4), "notice": ""}
        return eid

    def earliest_reachable(self, gate: str, event: str = "") -> str:
        """The first slot of ``gate`` for the show the customer reaches in time."""
        show = self.state["events"][event or self.event]
        customer = self.state["customers"][self.user]
        arrive = datetime.fromisoformat(customer["departs"]) + timedelta(minutes=self.minutes(self.home, gate))
        slots = sorted(s for s in self.state["gates"][gate]["slots"] if show["doors"] <= s <= show["starts"]
                       and datetime.fromisoformat(s) >= arrive)
        return slots[0]

    def budget(self, amount: int) -> None:
        self.state["customers"][self.user]["budget"] = amount

    def promo(self, words: list[str], pct: int, quota: int, used: int, note: str, sections: list | None = None,
              event: str | None = "") -> str:
        a = self.author
        code = f"{a.pick(words)}{a.serial(10, 99)}"
        self.state["promotions"][code] = {"event": self.event if event == "" else event, "sections": sections,
                                          "discount_pct": pct, "quota": quota, "used": used, "ends": None,
                                          "status": "active", "note": note}
        return code

    # ------------------------------------------------------------- triggers
    def trigger(self, name: str, description: str, when, effect: list, shown: tuple, activation: tuple = (),
                timing: str = "after") -> Trigger:
        """A trigger; ``shown``: the read that reveals it, as ``(tool, args)``."""
        return self.author.check_trigger(Trigger(
            name=name, description=description, when=when, effect=effect, activation=list(activation),
            timing=timing, observable=Observable(tool=shown[0], args=shown[1])))

    def set(self, *path: str, value) -> object:
        return self.author.op.set_field(path=list(path), value=value)

    def sets(self, container: str, ident: str, **fields) -> list:
        return [self.set(container, ident, k, value=v) for k, v in fields.items()]

    def on(self, tool: str, name: str, description: str, effect: list, shown: tuple, when=None,
           timing: str = "after") -> Trigger:
        """A change the customer's write ``tool`` sets off (``when``: by default the customer has a live hold after a
        hold, a paid order after a purchase)."""
        pred = self.author.pred
        default = pred.has_order(customer=self.user) if tool == "purchase" else pred.has_hold(customer=self.user)
        return self.trigger(name, description, when or default, effect, shown, activation=(tool,), timing=timing)

    def cascade(self, name: str, description: str, path: list, value, effect: list, shown: tuple) -> Trigger:
        """A change that follows once an earlier one left ``path`` at ``value`` (the hard levels' second wave)."""
        return self.trigger(name, description, self.author.pred.field_equals(path=path, value=value), effect, shown,
                            timing="before")


def new_city(author: Author, start: datetime | None = None, doors_hour: int | None = None) -> City:
    """A seeded city and a focus show on the evening of the start day (or the next, when ``start`` is late)."""
    a = author
    if start is None:
        start = datetime(a.integer(2024, 2025), 1, 1) + timedelta(days=a.integer(10, 330), hours=a.integer(9, 10),
                                                                  minutes=5 * a.integer(0, 11))
    state: dict = {k: {} for k in ("places", "links", "venues", "gates", "events", "sections", "customers", "carts",
                                   "promotions", "orders", "tickets")}
    state["settings"] = {"courier_minutes": 30 * a.integer(4, 6),
                         "delivery_fee": {"mobile": 0, "will_call": a.integer(2, 5), "courier": a.integer(8, 14)}}
    state["counters"] = {"hold": a.integer(1000, 4999), "order": a.integer(50000, 89999),
                         "ticket": a.integer(100000, 899999)}
    city = City(a, state, start)

    def link(x: str, y: str, lo: int, hi: int, line: str = "walk") -> None:
        state["links"][f"LNK-{a.serial(100, 999)}"] = {"a": x, "b": y, "minutes": a.integer(lo, hi), "open": True,
                                                       "line": line}

    stations = []
    for name in a.pick(_STATIONS, a.integer(4, 6)):
        sid = f"STN-{name.split()[0][:4].upper()}{a.serial(10, 99)}"
        state["places"][sid] = {"name": f"{name} station", "kind": "station"}
        stations.append(sid)
    lines = a.pick(_LINES, 3)
    # A main line through every station, and two drawn cross links: the graph itself varies with the seed.
    for x, y in zip(stations, stations[1:]):
        link(x, y, 4, 12, lines[0])
    for line in lines[1:]:
        x, y = (stations[int(i)] for i in a.rng.choice(len(stations), 2, replace=False))
        link(x, y, 8, 20, line)
    city.home = f"HOME-{a.serial(100, 999)}"
    state["places"][city.home] = {"name": "the customer's home", "kind": "home"}
    link(city.home, stations[0], 5, 12)
    if a.chance(0.5):
        link(city.home, stations[1], 10, 20)
    for name in a.pick(_VENUES, a.integer(2, 3)):
        vid = "VEN-" + "".join(w[0] for w in name.split()).upper() + str(a.serial(10, 99))
        state["venues"][vid] = {"name": name, "status": "open", "notice": "", "desk_status": "open",
                                "desk_opens": "00:00"}
        near = [stations[int(i)] for i in a.rng.choice(range(1, len(stations)), 2, replace=False)]
        for side, station in zip(("North", "South"), near):
            gid = f"GT-{vid[4:]}{side[0]}{a.serial(1, 9)}"
            state["places"][gid] = {"name": f"{name} {side} gate", "kind": "gate"}
            state["gates"][gid] = {"venue": vid, "name": f"{side} gate", "status": "open", "step_free": True,
                                   "notice": "", "slots": {}}
            link(gid, station, 3, 10)
        city.venues.append(vid)
    city.venue = one(a, city.venues)
    show_day = 0 if start.hour < 14 else 1
    doors = city.at(doors_hour or a.integer(18, 19), 30 * a.integer(0, 1), show_day)
    city.event = city.add_event(city.venue, doors, shift(doors, 15 * a.integer(4, 6)))
    city.open_slots(city.event)
    for v in city.venues:  # the desk opens well before the doors
        state["venues"][v]["desk_opens"] = hhmm(shift(doors, -15 * a.integer(4, 8)))
    for v in city.venues:  # background shows on other nights
        other = city.add_event(v, shift(doors, days=a.integer(2, 20)), shift(doors, 90, days=a.integer(2, 20)))
        state["events"][other]["starts"] = shift(state["events"][other]["doors"], 90)
        city.add_section(city.gates_of(v)[0], 10 * a.integer(4, 9), event=other)
    customer = f"CUS-{a.serial(10000, 99999)}"
    city.user = customer
    name = a.pick(_PEOPLE)
    state["customers"][customer] = {"name": name, "home": city.home, "budget": 0, "smartphone": True,
                                    "departs": shift(doors, -90), "party": [name], "party_note": ""}
    for _ in range(a.integer(1, 2)):
        ident, name = f"CUS-{a.serial(10000, 99999)}", a.pick(_PEOPLE)
        state["customers"][ident] = {
            "name": name, "home": city.home, "budget": 50 * a.integer(2, 8), "smartphone": a.chance(0.7),
            "departs": shift(doors, -60), "party": [name], "party_note": ""}
    code = f"{a.pick(['MEMBER', 'LOYAL', 'FRIENDS', 'STUDENT'])}{a.serial(10, 99)}"
    state["promotions"][code] = {"event": None, "sections": None, "discount_pct": 5, "quota": 500,
                                 "used": a.integer(100, 400), "ends": None, "status": "active",
                                 "note": "members' discount, any show"}
    return city


def leave_by(city: City, gate: str, slack: int = 0) -> None:
    """The customer leaves home so as to reach ``gate`` a drawn few minutes before the show's doors (plus
    ``slack`` minutes later)."""
    doors = city.show["doors"]
    city.state["customers"][city.user]["departs"] = floor_to(shift(
        doors, -city.minutes(city.home, gate) - 5 * city.author.integer(1, 3) + slack))


@dataclass
class Request:
    """One order: who, which show, how many seats, what else they need; the calls and checks that serve it."""

    city: City
    count: int
    events: list[str] = field(default_factory=list)  # shows that would do; the focus show by default
    accessible: bool = False
    entry: bool = False
    impossible: Impossibility | None = None
    feature: str = ""  # what the section must have, told only when asked (the alternative it picks)
    withheld: Answer | None = None
    named: str = ""  # with a feature: the section the query names, which has every feature
    how: str = "as mobile tickets"  # the query's words for how the tickets reach the customer
    level: str = ""  # the story's level: the party changes at medium and hard (:func:`party_moves`)

    def __post_init__(self):
        self.events = self.events or [self.city.event]

    @property
    def customer(self) -> str:
        return self.city.user

    def spec(self) -> dict:
        """The request as checks read it: a customer with a smartphone asked for mobile tickets, one without for
        paper ones, collected at will-call or couriered home."""
        phone = self.city.state["customers"][self.customer]["smartphone"]
        return {"customer": self.customer, "events": list(self.events), "count": self.count,
                "accessible": self.accessible, "entry": self.entry,
                "deliveries": ["mobile"] if phone else ["will_call", "courier"]}

    @property
    def seats(self) -> str:
        """How the query asks for the seats: ``3 seats together``."""
        return f"{self.count} {'accessible places' if self.accessible else 'seats'} together"

    # plan steps
    @property
    def call(self):
        return self.city.author.call

    def search(self) -> Call:
        return self.call.search_events(text=self.city.show["performer"])

    def event(self, event: str = "") -> Call:
        return self.call.get_event(event_id=event or self.city.event)

    def section(self, section: str) -> Call:
        return self.call.get_section(section_id=section)

    def venue(self, venue: str = "") -> Call:
        return self.call.get_venue(venue_id=venue or self.city.venue)

    def profile(self) -> Call:
        return self.call.get_customer(customer_id=self.customer)

    def orders(self) -> Call:
        return self.call.list_customer_orders(customer_id=self.customer)

    def promos(self) -> Call:
        return self.call.list_promotions(event_id=self.city.event)

    def travel(self, place: str) -> Call:
        return self.call.get_travel_time(origin_id=self.city.home, destination_id=place)

    def hold(self, section: str, step: str = "hold") -> Call:
        return self.call.hold_seats(save_as=step, customer_id=self.customer, section_id=section, count=self.count)

    def quote(self, step: str = "hold", code: str = "") -> Call:
        return self.call.get_quote(hold_id=hold_id(step), **({"promo_code": code} if code else {}))

    def apply(self, code: str, step: str = "hold") -> Call:
        return self.call.apply_promo(hold_id=hold_id(step), promo_code=code)

    def buy(self, delivery: str, step: str = "hold", code: str = "", save: str = "order") -> Call:
        return self.call.purchase(save_as=save, hold_id=hold_id(step), delivery=delivery,
                                  **({"promo_code": code} if code else {}))

    def deliver(self, delivery: str, save: str = "order") -> Call:
        return self.call.change_delivery(order_id=order_id(save), delivery=delivery)

    def cancel(self, save: str = "order") -> Call:
        return self.call.cancel_order(order_id=order_id(save))

    def slot(self, gate: str, slot: str, save: str = "order") -> Call:
        return self.call.book_entry_slot(order_id=order_id(save), gate_id=gate, slot=slot)

    def tell(self, message: str) -> Call:
        return self.call.chat_with_user(message=message)

    def name(self, names: list[str], save: str = "order") -> Call:
        return self.call.name_tickets(order_id=order_id(save), names=list(names))

    def entry_calls(self, section: str, save: str = "order", venue: str = "", slot: str = "") -> list[Call]:
        """Read the venue and the way to the section's gate, then book the first slot the customer reaches."""
        gate = self.city.gate(section)
        slot = slot or self.city.earliest_reachable(gate)
        return [self.profile(), self.venue(venue), self.travel(gate), self.slot(gate, slot, save)]

    def refuse(self, message: str, changed_by: list[str], facts: list[str]) -> list[Call]:
        """The oracle's apology (``I'm sorry, `` + ``message``); marks the request impossible."""
        pred, existing = self.city.author.pred, sorted(self.city.state["orders"])
        self.impossible = Impossibility(changed_by=changed_by, blocking_facts=facts, forbidden=[
            Check(name="no_order_anyway", gate=True, description=f"no paid order was left for {self.customer}",
                  holds=pred.no_new_order(customer=self.customer, existing=existing), stated=RULE)])
        return [self.tell(f"I'm sorry, {message}")]

    @property
    def who(self) -> str:
        return f"{self.city.state['customers'][self.customer]['name']}, customer {self.customer}"

    def feature_choice(self, asked: str, options: list[str]) -> str:
        """The group needs a feature that, of ``options`` (sections each workable per the tools), only one has;
        the section ``asked`` for has them all. Which one is drawn apart from anything a tool shows (price, gate,
        id order), and the customer says it only when asked; the chosen section."""
        a, sections = self.city.author, self.city.state["sections"]
        names = sorted(FEATURES)
        drawn = [names[int(i)] for i in a.rng.permutation(len(names))[:len(options)]]
        rest = [n for n in names if n not in drawn]
        for sid in self.city.sections:  # the show's other sections get none of the options' features
            sections[sid]["features"] = sorted(rest[int(i)] for i in a.rng.permutation(len(rest))[:a.integer(0, 2)])
        sections[asked]["features"] = names
        self.named = asked
        for sid, feature in zip(options, drawn):
            sections[sid]["features"] = [feature]
        pick = a.integer(0, len(options) - 1)
        self.feature = drawn[pick]
        self.withheld = Answer(keywords=list(FEATURE_WORDS), text=FEATURES[self.feature])
        return options[pick]

    def ask_feature(self, why: str) -> Call:
        """The oracle's question for the withheld feature, before it buys seats elsewhere (in words that propose no
        change of plan, which the customer would answer with their hard constraints)."""
        return self.tell(f"{why} A few sections still have seats together; you said you have a requirement about "
                         "the section: what does it need to have?")

    # checks
    def goal(self, feature: str = "") -> list[Check]:
        """The request met (in a section with ``feature``, when given; the gate reads the request as the tools
        show it). Each check quotes where the query states its rule."""
        pred, plain = self.city.author.pred, self.spec()
        spec = {**plain, "feature": feature} if feature else plain
        what = f"{self.count} adjacent seats" + (" (accessible)" if self.accessible else "") + (
            f" in a section with {feature.replace('_', ' ')}" if feature else "")
        checks = [
            Check(name="ticketed", description=f"{self.customer} holds a paid order of {what} for the show",
                  holds=pred.ticketed(request=spec), stated=self.seats),
            Check(name="delivered", description="the tickets reach the customer in time, the way they asked for "
                  "them (a delivery that works)", holds=pred.delivered(request=spec), stated=self.how)]
        if self.entry:
            checks.append(Check(name="entry_booked", description="an entry slot at the section's gate that the "
                                "customer reaches in time is booked", holds=pred.entry_booked(request=spec),
                                stated=ENTRY))
        checks.append(Check(name="tickets_named", description="the order's tickets carry the names on the "
                            "customer's party list as it is now, one each", holds=pred.tickets_named(request=spec),
                            stated=NAMES))
        checks.append(Check(name="only_as_asked", gate=True, description="one paid order at most, for the show, "
                            "of the seats asked, within the budget", holds=pred.only_as_asked(request=plain),
                            stated=RULE))
        return checks

    def checklist(self, trigger: str) -> list[Check]:
        """The goal, its milestones counted once the agent met the change (a result it got showed what
        ``trigger`` changed) and acted after it (a write of its own went through), or when the whole request holds
        regardless (an order the change never touched): noticing is evidence, never credit of its own, so looking
        without reacting earns nothing, and neither does a stale plan carried on blindly."""
        pred = self.city.author.pred
        goal = self.goal(self.feature)
        milestones = [c.holds for c in goal if not c.gate]
        reacted = pred.all_of(preds=[pred.noticed(trigger=trigger), pred.acted_on(trigger=trigger)])
        met = pred.any_of(preds=[reacted, pred.all_of(preds=milestones)])
        asked = []
        if self.feature:  # seats bought where the query asked (the change never in the way) need no question
            consulted = pred.any_of(preds=[pred.has_order(customer=self.customer, section=self.named),
                                           pred.asked_user(about=self.withheld.keywords, before="purchase")])
            asked.append(Check(name="asked_feature", description="the agent asked the customer what the section "
                               "needs before buying elsewhere (or bought the section asked for), and bought seats in "
                               "a section that has it (a question alone is no recovery)", stated=CONSULT.strip(),
                               holds=pred.all_of(preds=[consulted, goal[0].holds])))
        return [*asked,
                *[c if c.gate else c.model_copy(update={"description": f"{c.description}, once {trigger} was met "
                                                                       "or with the whole request met regardless",
                                                        "holds": pred.all_of(preds=[met, c.holds])})
                  for c in goal]]

    def other_slots(self, oracle: list[Call], triggers: list[Trigger]) -> list[list[Call]]:
        """The oracle with its last entry booking moved to each other slot of that gate that would do as well (the
        customer reaches it in time, between the doors and the start, with places left): any of them is a
        solution, so none may count as a change beyond the request."""
        city = self.city
        booked = [i for i, c in enumerate(oracle) if c.name == "book_entry_slot"]
        if not self.entry or not booked:
            return []
        run = city.author.dry_run(city.state, format_time(city.start), oracle, triggers)
        call, order = oracle[booked[-1]], run.results[booked[-1]]["data"]
        state, gate = run.state, oracle[booked[-1]].arguments["gate_id"]
        event = state["events"][order["event"]]
        arrives = format_time(reach_time(state, state["customers"][order["customer"]], gate))
        slots = sorted(t for t, left in state["gates"][gate]["slots"].items() if left >= self.count
                       and max(event["doors"], arrives) <= t <= event["starts"] and t != call.arguments["slot"])
        return [[*oracle[:booked[-1]], call.model_copy(update={"arguments": {**call.arguments, "slot": t}}),
                 *oracle[booked[-1] + 1:]] for t in slots]


def make_task(req: Request, query: str, triggers: list[Trigger], nominal: Plan | list[Call], oracle: list[Call],
              persona: str, answers: dict[tuple, str] | None = None, insist: str = "", noticed: str = "",
              alternatives: list[list[Call]] = ()) -> Task:
    """The task (impossible once the oracle went through :meth:`Request.refuse`). The oracle double-checks a
    drawn few things at the end (before its refusal, when impossible), so its tool sequence varies as real
    agents' do without moving any timing the story measured. ``insist``: the customer's hard constraints, their
    answer to any proposed change of plan at every level alike (so it never tells whether the request can be
    met); ``alternatives``: the other complete solutions (another section the request allows, taken first); every
    other entry slot that would do is added to them."""
    city, impossible = req.city, req.impossible
    nominal = nominal.calls if isinstance(nominal, Plan) else nominal
    query, triggers, nominal, oracle, alternatives, answers = party_moves(
        req, query, triggers, nominal, oracle, alternatives, answers or {})
    checks = [req.profile(), req.orders(), req.event(), req.venue()]
    extra = [checks[int(i)] for i in city.author.rng.permutation(len(checks))[:city.author.integer(1, 3)]]
    said = oracle[-1:] if impossible else []  # the refusal ends the oracle; a question stays where it was asked
    oracle = oracle[:len(oracle) - len(said)] + extra + said
    answers = {("seat", "seats", "section", "another", "other"): "Any seats side by side are fine, as long as the "
               "total stays within my budget" + (" and the section has what we need: ask me about our requirement."
                                                 if req.withheld else "."), **answers}
    profile = UserProfile(
        persona=f"{city.state['customers'][city.user]['name']}, {persona}",
        known_facts=[f"customer id {city.user}", f"show {city.event}", f"{req.count} seats together"],
        clarifications=[Answer(keywords=list(k), text=t) for k, t in answers.items()],
        withheld=[req.withheld] if req.withheld else [],
        insist=insist or None,
        fallback="Everything I know is in my request; please sort out the tickets as asked.")
    solutions = [] if impossible else [*alternatives, *req.other_slots(oracle, triggers)]
    return Task(query=query, profile=profile, start_time=format_time(city.start), initial_state=city.state,
                triggers=triggers,
                checklist=[] if impossible else req.checklist(noticed or triggers[0].name),
                static_checklist=req.goal(), nominal_plan=nominal, oracle=oracle, alternatives=solutions,
                solvable=impossible is None, impossibility=impossible)


def intro(req: Request) -> str:
    """How the user names the show: performer, venue and time."""
    city = req.city
    show, venue = city.show, city.state["venues"][city.venue]["name"]
    return (f"{show['performer']} at {venue} ({city.venue}) on {show['starts'][:10]}, doors {hhmm(show['doors'])} "
            f"(event {city.event})")


def party_moves(req: Request, query: str, triggers: list[Trigger], nominal: list[Call], oracle: list[Call],
                alternatives: list[list[Call]], answers: dict) -> tuple:
    """The second change, on the customer's side rather than the show's. At every level alike the customer brings
    friends whose names are on the party list of their profile, and the query asks for those names on the tickets
    (the user answers about them alike too). At medium, in the same call as the story's (first) change, a friend
    drops out and someone else takes the seat, so an agent that re-reads the profile once it has seen the change
    finds it. At hard it waits: once the story's change has fired, the recovery's first entry booking (whichever
    order, gate or slot it books) sets it off. The entry booking, not the purchase: the departure an entry slot is
    chosen by is on the same profile, so an agent reads it between buying and booking entry, and a change at the
    purchase would be in front of it unsought. Only ``get_customer`` shows it: no write fails, the order reads as
    the agent left it, and any names print, so naming the tickets again is the whole fix; the difficulty is knowing
    that the names come from a record the recovery never touched. The impossible levels' party never changes.
    Returns the query, triggers, nominal plan, oracle, alternatives and the user's answers, extended."""
    city, author = req.city, req.city.author
    customer = city.state["customers"][req.customer]
    friends = author.pick(_FRIENDS, req.count)  # the last one stands in at medium and hard
    party = [customer["name"], *friends[:-1]]
    customer["party"] = party
    query, answers = f"{query} Please also {NAMES}.", {**PARTY, **answers}
    final = party
    if req.level in ("medium", "hard") and not req.impossible:
        out = author.integer(1, req.count - 1)
        final = [*party[:out], friends[-1], *party[out + 1:]]
        pred, story = author.pred, triggers[0].name
        if req.level == "medium":
            (when, activation), moment = author.alongside(triggers[:1]), f"with {story}"
        else:
            when = pred.all_of(preds=[pred.fired_before(trigger=story), pred.has_order(customer=req.customer)])
            activation, moment = ["book_entry_slot"], f"once the recovery after {story} commits"
        triggers = [*triggers, city.trigger(
            "party_changed", f"{moment}, {party[out]} drops out and {friends[-1]} takes the seat", when,
            city.sets("customers", req.customer, party=final,
                      party_note=f"{party[out]} can't come; {friends[-1]} takes the seat"),
            ("get_customer", {"customer_id": req.customer}), activation=activation)]

    def named(calls: list[Call], names: list[str]) -> list[Call]:
        """``calls``, then the profile read and the names on the tickets of the last order they buy."""
        bought = [c.save_as for c in calls if c.name == "purchase"]
        return [*calls, req.profile(), req.name(names, bought[-1])]

    # The stale plan names its tickets as soon as it has them: named after a failed write had shown the story's
    # change, the naming would count as a reaction to it.
    last = max(i for i, c in enumerate(nominal) if c.name == "purchase")
    nominal = [*nominal[:last + 1], req.name(party, nominal[last].save_as), *nominal[last + 1:]]
    return (query, triggers, nominal, oracle if req.impossible else named(oracle, final),
            [named(a, final) for a in alternatives], answers)
