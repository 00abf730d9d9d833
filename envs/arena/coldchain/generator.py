"""A seeded ColdChain region, and the plan, check and task pieces every scenario shares.

The region is built around one delivery: a far regional hub (``hub``, with the user's lot and van)
and a city hub (``hub2``) near the target clinic, a depot on each side, three clinics with roles in
the stories, and a varying number of further depots, clinics, vans and lots hanging off the core
road graph on roads long enough never to be a shortcut (so the corridor into the city stays the
fastest way in and the detours stay slower). Every id, travel time, quantity and clock time is drawn
from the author's generator; every timing a scenario needs is measured by a dry run of its plans.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import timedelta

from sttgym.authoring import Author, DryRun, Plan
from sttgym.checklist import Check
from sttgym.clock import ceil_to, floor_to, format_time, hhmm, parse_time, shift
from sttgym.envs.arena.coldchain.world import PENDING, ColdChainWorld, cooling_covers
from sttgym.footprint import RULE
from sttgym.judge import Impossibility
from sttgym.task import Call, Ref, Task, resolve
from sttgym.triggers import Observable, Trigger
from sttgym.user import Answer, UserProfile
from sttgym.schema import Pred

__all__ = ["Author", "Check", "Plan", "Task", "Region", "build_base", "deliver", "collect", "shipment", "survey",
           "maybe", "calls", "arrival", "EARLY", "DELIVERED", "ON_TIME", "COLD", "TEAM", "COUNT", "goal", "gate",
           "left_waiting", "cancelled", "routed", "unwound", "secured", "seen", "dispatched", "unshipped", "recount",
           "top_up", "alternatives", "task"]

HUB_NAMES = ["NORTH", "SOUTH", "EAST", "WEST", "RIVERSIDE", "HARBOR", "CENTRAL", "VALLEY", "SUMMIT", "MIDLAND",
             "PORT", "MILLBROOK", "QUARRY", "GATEWAY", "LOWLAND", "UPLAND", "BEACON", "FOUNDRY", "ORCHARD", "CANAL"]
CLINIC_NAMES = ["DOWNTOWN", "MAPLE", "ELMWOOD", "OAKRIDGE", "BAYVIEW", "CEDAR", "HILLCREST", "MEADOW", "PARKSIDE",
                "WILLOW", "BRIDGEPORT", "STATION", "ASHFORD", "BIRCHWOOD", "CLOVER", "DUNMORE", "FERNHILL", "GLENVIEW",
                "HOLLY", "IVYBANK", "JUNIPER", "KINGSLEY", "LARKSPUR", "MARSHFIELD", "NORWOOD", "PINEGROVE"]
DISTRICTS = ["Northgate", "Riverbend", "Eastfield", "Lakeside", "Southmoor", "Westbrook", "Highland", "Fairview",
             "Stonebridge", "Ashcombe", "Brookvale", "Kingsmere", "Oakhurst", "Redcliff", "Silverdale", "Thornbury"]
# (product, lot code, lowest and highest storage temperature in degrees C)
PRODUCTS = [("insulin", "INS", 2, 8), ("measles-rubella vaccine", "MR", 2, 8), ("hepatitis B vaccine", "HEPB", 2, 8),
            ("rotavirus vaccine", "ROTA", 2, 8), ("rabies immunoglobulin", "RIG", 2, 8), ("HPV vaccine", "HPV", 2, 8),
            ("varicella vaccine", "VAR", -25, -15), ("mRNA COVID-19 vaccine", "MRNA", -25, -15),
            ("yellow fever vaccine", "YF", 2, 8), ("polio vaccine (OPV)", "OPV", -25, -15)]
CHILLED, FROZEN = (0, 10), (-30, -12)  # bands the two kinds of cooling unit hold
# The core road graph by role: (one end, other end, fewest and most minutes).
ROADS = [("hub", "depot1", 45, 55), ("depot1", "clinic", 50, 60), ("depot1", "clinic3", 50, 60),
         ("hub", "clinic3", 100, 115), ("clinic3", "clinic2", 20, 25), ("clinic2", "clinic", 20, 25),
         ("clinic", "hub2", 10, 18), ("hub2", "depot2", 10, 15), ("depot2", "clinic3", 15, 25)]
OPTIONAL_ROADS = [("hub2", "clinic2", 12, 20), ("depot2", "clinic2", 15, 25)]  # city streets some regions have
SPARE_ROAD = (60, 80)  # roads to the extra sites: too long to shorten any trip between the core sites
# What a coordinator asked which stock the programme may use would hear named.
ALLOCATION = ["lot", "lots", "stock", "batch", "allocated", "allocation", "programme", "program", "requirement"]


def told(phrase: str) -> str:
    """``phrase``, which must be words of what every agent reads first (the world description and the engine's
    collateral rule): the ``stated`` quote of the checks that enforce it."""
    assert phrase.lower() in f"{ColdChainWorld.description} {RULE}".lower(), phrase
    return phrase


DELIVERED = told("exactly the doses requested are received where they are needed")
ON_TIME = told("before the session they are for")
IN_HOURS = told("while the receiving site is open")
COLD = told("Every load must ride a working cooling unit that holds its lot's temperature band and is not overdue "
            "for its reset, from a lot that is available and within its use-by time")
DANGLING = told("Leave no shipment reserved, assigned or on the road that the plan does not use")
TELL = told("If a request cannot be met, tell the user why")
UNWIND = told("cancel or release anything you set up that the final plan does not use")
TEAM = "The team signs for cold deliveries in person"  # ST3's request says so (and quotes it)
CONSULT = "If the doses have to come from another site, ask me first which stock we may use."
# How many doses a request asks for: the session's registrations, never a number of the request's own, at every level
# alike, so that the words never tell the level. The count sits one hop behind the schedule, on the list the session's
# entry names, and the words name that record once as where it comes from and never hint that it moves (at medium it
# goes up with the story's change, at hard once the recovery commits, see recount): "always", "now" or "current" had
# players re-read it before finishing and catch the change.
COUNT = ("Send one dose for each person on the session's registration list (the clinic's immunization schedule "
         "names the list).")


@dataclass
class Region:
    """The base world of one instance, the roles its entities play, and the level being built: its methods are the
    pieces scenarios assemble (the change and its cause, the oracle's plan, the milestones, the task)."""

    author: Author
    state: dict
    start: str
    district: str
    product: str
    band: tuple[int, int]
    qty: int
    hub: str = ""
    hub2: str = ""
    depot1: str = ""
    depot2: str = ""
    clinic: str = ""
    clinic2: str = ""
    clinic3: str = ""
    lot: str = ""
    lot2: str = ""
    vehicle: str = ""  # the user's van, at hub
    vehicle2: str = ""  # a van of the right class at hub2
    vehicle3: str = ""  # a van of the right class at depot1
    session: str = ""  # the target session at clinic
    roads: dict[str, str] = field(default_factory=dict)  # "role-role" -> road id
    level: str = ""
    plan: Plan | None = None  # the nominal plan: look, then ship the lot in the van (a scenario may replace it)
    sites: list[str] = field(default_factory=list)  # where the doses may be received (by default the clinic)
    team: bool = False  # whether they must be received where and while the session's team is (ST3)
    split: list[tuple[str, str, int]] = field(default_factory=list)  # the released doses, when no lot holds them all
    promised: str = ""  # with a rival lot at hub2: the one promised to another campaign
    withheld: Answer | None = None  # with a rival lot at hub2: the batches the programme may use, told when asked
    rule: Answer | None = None  # that requirement where it is no secret (no rival lot), told when asked all the same
    posted_at: str = ""  # when a change comes while the agent still reads (drawn on first use)
    added: int = 0  # medium, hard: the doses late registrations add to the session (0: its count never moves)
    settled: bool = False  # whether the session's start is final

    # ------------------------------------------------------------- entity builders

    def add_lot(self, site: str, quantity: int, product: str | None = None, **extra) -> str:
        """A lot of ``product`` (default: the mission's) stored at ``site``."""
        name = product or self.product
        code, lo, hi = next((c, a, b) for p, c, a, b in PRODUCTS if p == name)
        lot_id = f"LOT-{code}-{self.author.serial()}"
        self.state["goods_inventory"][lot_id] = {
            "product": name, "batch": f"B{self.author.serial(10000, 99999)}", "site_id": site,
            "quantity": int(quantity),
            "temp_min_c": lo, "temp_max_c": hi, "use_by": shift(self.start, 60 * 24 * self.author.integer(20, 200)),
            "status": "available", "note": None, **extra}
        return lot_id

    def add_vehicle(self, site: str, fits: bool = True, **extra) -> str:
        """An idle vehicle at ``site`` whose cooling unit holds the mission's band (``fits``) or the other one."""
        frozen = (self.band[1] < 0) == fits
        band = FROZEN if frozen else CHILLED
        vehicle_id, unit_id = f"VH-{self.author.serial(100, 999)}", f"CU-{self.author.serial()}"
        self.state["vehicles"][vehicle_id] = {
            "kind": "freezer truck" if frozen else "refrigerated van", "site_id": site, "status": "idle",
            "cooling_unit_id": unit_id, "capacity": self.author.integer(25, 40) * 100, "available_from": None,
            "shipment_ids": [], "route_stop_ids": [], "departed_at": None, "scheduled_departure": None, "note": None,
            **extra}
        self.state["cooling_units"][unit_id] = {
            "vehicle_id": vehicle_id, "min_temp_c": band[0], "max_temp_c": band[1], "status": "operational",
            "reset_due_by": shift(self.start, 60 * self.author.integer(9, 11))}
        return vehicle_id

    def add_session(self, clinic: str, start: str, doses: int, product: str | None = None) -> str:
        """A session on ``clinic``'s schedule, whose entry names the registration list that holds its count."""
        session_id, listed = f"IMM-{self.author.serial()}", f"REG-{self.author.serial()}"
        self.state["registration_lists"][listed] = {"session_id": session_id, "site_id": clinic,
                                                    "product": product or self.product, "registered": int(doses),
                                                    "note": None}
        self.state["clinics"][clinic]["immunization_schedule"][session_id] = {
            "product": product or self.product, "registration_list": listed, "start": start, "site_id": clinic,
            "note": None}
        return session_id

    def add_shipment(self, destination: str, status: str, quantity: int | None = None, **extra) -> str:
        """A shipment of the user's lot made before the episode (an allocation hold, another clinic's order)."""
        shipment_id = f"SHP-{self.author.serial()}"
        self.state["shipments"][shipment_id] = {
            "goods_id": self.lot, "product": self.product, "quantity": quantity or self.qty, "origin_site_id": self.hub,
            "destination_site_id": destination, "status": status, "vehicle_id": None, "hold_expires": None,
            "created_at": shift(self.start, -900), "dispatched_at": None, "received_at": None, **extra}
        return shipment_id

    def add_reset_window(self, depot: str, start: str, minutes: int) -> str:
        window_id = f"RST-{self.author.serial()}"
        self.state["cooling_unit_resets"][window_id] = {
            "depot_id": depot, "start": start, "end": shift(start, minutes), "status": "open", "cooling_unit_id": None}
        return window_id

    def roles(self, *names: str) -> list[str]:
        """The ids of the entities playing the roles ``names`` ("lot2", "hub", ...): tables name roles."""
        return [getattr(self, name) for name in names]

    def unit_of(self, vehicle_id: str) -> str:
        return self.state["vehicles"][vehicle_id]["cooling_unit_id"]

    @property
    def targets(self) -> list[str]:
        """The sites the doses may be received at."""
        return self.sites or [self.clinic]

    # ------------------------------------------------------------------ the session

    @property
    def session_path(self) -> list:
        return ["clinics", self.clinic, "immunization_schedule", self.session]

    @property
    def registration_list(self) -> str:
        """The id of the target session's registration list, where its count is."""
        return self.state["clinics"][self.clinic]["immunization_schedule"][self.session]["registration_list"]

    def registered(self) -> Call:
        """The read that shows the session's count."""
        return self.author.call.get_registration_list(registration_list_id=self.registration_list)

    @property
    def session_start(self) -> str:
        return self.state["clinics"][self.clinic]["immunization_schedule"][self.session]["start"]

    def settle(self, *arrivals: str, slack: tuple[int, int] = (6, 15)) -> str:
        """Start the target session a random while (in five-minute steps) after the latest of ``arrivals``."""
        start = ceil_to(shift(max(arrivals), self.author.integer(*slack) * 5))
        self.state["clinics"][self.clinic]["immunization_schedule"][self.session]["start"] = start
        self.settled = True
        return start

    def settle_after(self, oracle: list[Call], triggers: list[Trigger], **slack) -> str:
        """Settle the session after the nominal plan's arrival without dynamics and, when the task is feasible,
        after the oracle's arrival with them."""
        arrivals = [self.arrival(self.plan.calls)]
        if self.level != "impossible":
            arrivals.append(self.arrival(oracle, triggers))
        return self.settle(*arrivals, **slack)

    def later(self, moment: str, lo: int, hi: int) -> str:
        """``lo`` to ``hi`` five-minute steps after ``moment``, rounded up to a five-minute mark."""
        return ceil_to(shift(moment, 5 * self.author.integer(lo, hi)))

    def earlier(self, moment: str, lo: int, hi: int) -> str:
        """``lo`` to ``hi`` five-minute steps before ``moment``, rounded down to a five-minute mark."""
        return floor_to(shift(moment, -5 * self.author.integer(lo, hi)))

    def run(self, calls: list[Call], triggers: list[Trigger] = ()) -> DryRun:
        return self.author.dry_run(self.state, self.start, calls, triggers)

    def arrival(self, calls: list[Call], triggers: list[Trigger] = (), site: str | None = None) -> str:
        """When a dry run of ``calls`` last received a delivery at ``site`` (by default the clinic)."""
        return arrival(self.run(calls, triggers), site or self.clinic)

    # ----------------------------------------------------------- what causes a change

    @property
    def early(self) -> bool:
        """Whether this level's change is posted while the agent still reads (easy)."""
        return self.level in EARLY

    @property
    def moment(self) -> str:
        """A moment while the agent is still reading: the change is there before anything is booked."""
        self.posted_at = self.posted_at or shift(self.start, self.author.integer(1, 4))
        return self.posted_at

    def registrations(self) -> int:
        """The doses late registrations add to the session's count at medium and hard (drawn on first use): a
        scenario whose lots must cover them asks before it draws its lots."""
        self.added = self.added or 50 * self.author.integer(1, 2)
        return self.added

    def cause(self, **later) -> dict:
        """At easy levels the clock, at :attr:`moment`; at the others what ``later`` names (a write of the plan: an
        impossible level's change too is met by the request's own commitment, never posted for any reader)."""
        return {"when": self.author.pred.time_reached(moment=self.moment)} if self.early else later

    def on_write(self, tool: str, timing: str = "after", **arguments) -> dict:
        """A trigger caused by the agent's call of the write ``tool`` with (at least) ``arguments``."""
        return {"activation": [tool], "timing": timing, "when": self.author.pred.calling(tool=tool,
                                                                                         arguments=arguments)}

    def on_road(self) -> dict:
        """A trigger caused by the doses leaving for the clinic."""
        return {"activation": ["update_vehicle_status"], "timing": "after",
                "when": self.author.pred.on_road_to(site_id=self.clinic, product=self.product)}

    def change(self, name: str, what: str, seen: Call, effect: list, **cause) -> Trigger:
        """A trigger whose change shows through the read ``seen``, checked against the kit's rules (activated by
        writes only, observed by a read)."""
        return self.author.check_trigger(Trigger(name=name, description=what, effect=effect, **cause,
                                                 observable=Observable(tool=seen.name, args=seen.arguments)))

    def set(self, path: list, **values) -> list:
        """Operations setting the fields ``values`` of the entity at ``path``."""
        return [self.author.op.set_field(path=[*path, key], value=value) for key, value in values.items()]

    def set_all(self, container: str, ids: list[str], **values) -> list:
        """Operations setting the same fields of each entity ``ids`` of ``container``."""
        return [op for i in ids for op in self.set([container, i], **values)]

    # ------------------------------------------------------------------- plans

    def ship(self, lot: str, origin: str, van: str, to: str | None = None, tag: str = "ship",
             booked: bool = False) -> list[Call]:
        """One delivery of the doses from ``lot`` at ``origin`` in ``van`` to ``to`` (the clinic); ``booked``: of
        the shipment already created under ``tag`` (it is loaded, routed, sent and received)."""
        return calls(deliver(self, lot, origin, van, [origin, to or self.clinic], to, tag=tag))[1 if booked else 0:]

    # Reads every story makes somewhere.

    def lots(self) -> Call:
        return self.author.call.list_lots(product=self.product)

    def vans_at(self, site: str) -> Call:
        return self.author.call.list_vehicles_at_site(site_id=site)

    def stock_at(self, site: str) -> Call:
        return self.author.call.get_goods_inventory_at_site(site_id=site)

    def travel(self, origin: str, destination: str | None = None) -> Call:
        return self.author.call.get_travel_time(origin_site_id=origin, destination_site_id=destination or self.clinic)

    def look(self, *find: Call) -> list[Call]:
        """The reads that find stock elsewhere: the lots of the product, the city hub's vans (and ``find``)."""
        return [*maybe(self, self.author.call.list_sites()), self.lots(), self.vans_at(self.hub2), *find]

    def rival_lot(self) -> tuple[str, Call]:
        """A second lot of the product at the city hub, as usable as :attr:`lot2`. Which of the two the programme
        may use (the other is :attr:`promised`) is drawn apart from their ids, quantities and use-by dates; the user
        states the requirement, the batches the programme may use, only when asked (:attr:`withheld`), and the
        listings show each lot's batch. Returns the programme's lot and the oracle's question."""
        lots = sorted([self.lot2, self.add_lot(self.hub2, self.qty + self.author.integer(2, 9) * 50)])
        ours = lots[self.author.integer(0, 1)]
        self.promised = next(lot for lot in lots if lot != ours)
        self.withheld = self.allocation(ours)
        return ours, self.author.call.chat_with_user(
            message=f"{self.hub2} holds two lots of {self.product}, {lots[0]} and {lots[1]}: which lot may we use?")

    def allocation(self, ours: str) -> Answer:
        """The programme's requirement: the batches it may use, the user's own lot's and ``ours``'s. A story with
        no rival lot still has the user state it when asked (:attr:`rule`), worded as where it is withheld, so that
        having a requirement to tell never marks a level."""
        inventory = self.state["goods_inventory"]
        batches = sorted({inventory[self.lot]["batch"], inventory[ours]["batch"]})
        return Answer(keywords=ALLOCATION, text=f"Our programme may only use stock released under batches "
                      f"{batches[0]} and {batches[1]}; the other batches of {self.product} in the region are "
                      "promised to other campaigns.")

    def asked(self, trigger: str) -> list[Check]:
        """With a :meth:`rival_lot`, the milestone that the agent, after the change was shown, asked the user which
        stock to use before it booked the doses it finally used (its last shipment), and the gate that the promised
        lot stayed put."""
        if self.withheld is None:
            return []
        return [Check(name="asked_user", description="after the change was shown, the agent asked the user which "
                      "stock the programme may use before booking it", stated=CONSULT[CONSULT.index("ask"):-1],
                      holds=seen(self, trigger, holds=self.author.pred.asked_user(about=self.withheld.keywords,
                                                                                  before="create_new_shipment"))),
                unshipped(self, [self.promised], "promised_lot_untouched", "promised to another campaign",
                          "are promised to other campaigns")]

    def source(self, van: str | None = None, *find: Call, lot: str | None = None, origin: str | None = None,
               to: str | None = None) -> list[Call]:
        """Source the doses elsewhere (by default the city hub's lot, in its van): :meth:`look`, then ship."""
        return self.look(*find) + self.ship(lot or self.lot2, origin or self.hub2, van or self.vehicle2, to, tag="city")

    def respond(self, *seen: Call, then: list[Call] = (), phase: str = "route", recall: bool = False,
                cancel: str | Ref | None = None) -> list[Call]:
        """The oracle: the change's ``seen`` reads, then ``then``. At easy levels after the plan's reads; at the
        others after the stale plan through ``phase``, the van recalled (``recall``) and the stale shipment (or
        ``cancel``) cancelled."""
        if self.early:
            return self.plan["read"] + [*seen, *then]
        back = [self.author.call.update_vehicle_status(vehicle_id=self.vehicle, status="idle")] if recall else []
        return self.plan.upto(phase) + [*seen, *back, self.author.call.cancel_shipment(
            shipment_id=cancel or shipment()), *then]

    def recounted(self, oracle: list[Call], triggers: list[Trigger]) -> list[Call]:
        """At medium and hard, ``oracle`` as it meets the second change on the clinic's side (:func:`recount`): the
        doses the late registrations add topped up on its last van to leave (:func:`top_up`); at the other levels as
        it is. A scenario calls it once its oracle is whole, before it measures any timing on it."""
        if self.level not in ("medium", "hard"):
            return oracle
        self.registrations()
        topped = top_up(self, self.run([], triggers), oracle)
        if topped is None:  # a layout bug, not a seed: the scenario draws its lots to cover the registrations
            raise RuntimeError("no lot the recovery's van loads from still holds the added doses")
        return topped

    def insist(self, extra: str = "", where: str = "", stock: str = "any released, usable stock") -> str:
        """The user's hard constraints, their answer to any proposed change of plan, worded alike at every level of
        a conflict (so that it never tells whether the request can be met): ``where`` the doses must be received,
        which ``stock`` will do, and any ``extra`` constraint of the story."""
        where = where or f"reach {self.clinic} before session {self.session} starts"
        return (f"All the doses the session needs (one per person on its registration list), no fewer and no "
                f"more, have to {where}, kept between {self.band[0]} and "
                f"{self.band[1]} degrees C the whole way; {stock} and any van that holds that band will do."
                + (f" {extra}" if extra else ""))

    # ------------------------------------------------------------ checks, task

    def ladder(self, trigger: str, stale: dict | Pred | None = None, unwind: bool | None = None) -> list[Check]:
        """The milestones before dispatch: the ``stale`` commitment unwound (its shipment's fields, by default the
        user's lot, or a predicate) where the change met one (``unwind``, by default at medium and hard), then the
        doses secured on a run that makes it."""
        unwind = not self.early if unwind is None else unwind
        return ([unwound(self, trigger, stale or {"goods_id": self.lot})] if unwind else []) + [secured(self, trigger)]

    def none_sent(self, name: str, description: str, stated: str, sites: list[str] | None = None) -> Check:
        """A forbidden gate: no dose of the product left for (or reached) ``sites`` (the clinic)."""
        return gate(name, description, self.author.pred.none_sent(product=self.product, sites=sites or [self.clinic]),
                    stated)

    def unshipped(self, lots: list[str], name: str, why: str, stated: str = COLD) -> Check:
        return unshipped(self, lots, name, why, stated)

    def task(self, triggers: list[Trigger], oracle: list[Call], **parts) -> Task:
        """The task (see :func:`task`), the session settled after the runs unless a scenario settled it itself."""
        if not self.settled:
            self.settle_after(oracle, triggers)
        return task(self, self.level, triggers=triggers, oracle=oracle, withheld=self.withheld, rule=self.rule,
                    **parts)


def choose(author: Author, items: list, n: int) -> list:
    """``n`` distinct items of ``items`` (structure, not names: every item may be drawn)."""
    return [items[i] for i in author.rng.choice(len(items), size=n, replace=False)]


def build_base(author: Author, level: str = "") -> Region:
    """A fresh region with the mission's lot and van at ``hub``; the session time is provisional (settle it)."""
    pick, integer = author.pick, author.integer
    day = parse_time("2024-03-04T00:00") + timedelta(days=integer(0, 600))
    start = format_time(day + timedelta(minutes=integer(84, 102) * 5))  # 07:00 to 08:30
    hub_names, clinic_names = pick(HUB_NAMES, 2), pick(CLINIC_NAMES, 3 + integer(0, 2))
    depot_numbers = [author.serial(10, 99) for _ in range(2 + integer(0, 2))]
    districts = pick(DISTRICTS, 3)
    product, _, lo, hi = pick(PRODUCTS)
    state: dict = {"distribution_hubs": {}, "depots": {}, "clinics": {}, "vehicles": {}, "cooling_units": {},
                   "cooling_unit_resets": {}, "goods_inventory": {}, "shipments": {}, "route_stops": {}, "roads": {},
                   "registration_lists": {}}
    r = Region(author=author, state=state, start=start, district=districts[0], product=product, band=(lo, hi),
               qty=integer(4, 15) * 50, level=level)
    for i, name in enumerate(hub_names):
        state["distribution_hubs"][f"HUB-{name}"] = {
            "name": f"{name.title()} {'Regional' if i == 0 else 'City'} Hub", "district": districts[i],
            "hours": {"open": "05:00", "close": "22:00"}, "status": "operational", "notice": None,
            "cold_dispatch": None}
    for i, number in enumerate(depot_numbers):
        state["depots"][f"DPT-{number:03d}"] = {
            "name": f"Depot {number}", "district": districts[min(i, 2)], "hours": {"open": "06:00", "close": "20:00"},
            "status": "operational", "notice": None}
    for i, name in enumerate(clinic_names):
        opens, closes = integer(12, 14) * 30, integer(32, 36) * 30  # open before any van can arrive
        state["clinics"][f"CLINIC-{name}"] = {
            "name": f"{name.title()} Clinic", "district": districts[1 if i < 3 else 2], "status": "operational",
            "notice": None, "immunization_schedule": {},
            "hours": {"open": f"{opens // 60:02d}:{opens % 60:02d}", "close": f"{closes // 60:02d}:{closes % 60:02d}"}}
    hubs, depots, clinics = list(state["distribution_hubs"]), list(state["depots"]), list(state["clinics"])
    roles = {"hub": hubs[0], "hub2": hubs[1], "depot1": depots[0], "depot2": depots[1], "clinic": clinics[0],
             "clinic2": clinics[1], "clinic3": clinics[2]}
    for role, site in roles.items():
        setattr(r, role, site)

    def road(a: str, b: str, minutes: int) -> str:
        road_id = f"RD-{author.serial(10, 99)}"
        state["roads"][road_id] = {"a": a, "b": b, "minutes": minutes, "open": True, "note": None}
        return road_id

    for a, b, fewest, most in ROADS + [x for x in OPTIONAL_ROADS if author.chance(0.5)]:
        r.roads[f"{a}-{b}"] = road(roles[a], roles[b], integer(fewest, most))
    core = list(roles.values())
    for extra in depots[2:] + clinics[3:]:  # each hangs off one or two core sites
        for anchor in choose(author, core, 1 + int(author.chance(0.4))):
            road(extra, anchor, integer(*SPARE_ROAD))

    r.lot = r.add_lot(r.hub, r.qty + integer(2, 9) * 50)
    r.lot2 = r.add_lot(r.hub2, r.qty + integer(2, 9) * 50)
    r.vehicle = r.add_vehicle(r.hub)
    r.add_vehicle(r.hub, fits=False)  # a van of the wrong temperature class parked next to the right one
    r.vehicle2 = r.add_vehicle(r.hub2)
    r.vehicle3 = r.add_vehicle(r.depot1)
    r.add_vehicle(r.depot2, fits=False)
    for site in choose(author, core, integer(0, 2)):
        r.add_vehicle(site, fits=False)
    others = [p for p, *_ in PRODUCTS if p != product]
    for site in [r.hub, r.depot2] + choose(author, depots + hubs, integer(0, 2)):
        r.add_lot(site, integer(4, 19) * 50, product=pick(others))
    for depot in depots[:2]:
        for offset in sorted({integer(6, 29) for _ in range(2)}):
            r.add_reset_window(depot, shift(start, offset * 10), 40)
    r.session = r.add_session(r.clinic, shift(start, 600), r.qty)
    r.add_session(r.clinic2, shift(start, integer(20, 39) * 10), integer(2, 9) * 50, pick(others))
    r.plan = Plan(read=survey(r), **deliver(r, r.lot, r.hub, r.vehicle, [r.hub, r.clinic]))
    return r


# --------------------------------------------------------------------------- plans


def survey(r: Region, first: Call | None = None) -> list[Call]:
    """The reads a careful coordinator makes before committing (some also look up the drive); ``first`` replaces
    the look at the hub's stock."""
    call = r.author.call
    reads = [[first or call.get_goods_inventory_at_site(site_id=r.hub)],
             [call.list_clinic_immunization_schedule(site_id=r.clinic), r.registered()],  # the list the entry names
             [call.list_operational_hours(site_id=r.clinic)],
             [call.get_vehicle_status(vehicle_id=r.vehicle)],
             *[[c] for c in maybe(r, call.get_travel_time(origin_site_id=r.hub, destination_site_id=r.clinic))]]
    return [c for i in r.author.rng.permutation(len(reads)) for c in reads[i]]  # people check things in any order


def shipment(tag: str = "ship") -> Ref:
    """The id of the shipment a plan created under ``tag``."""
    return Ref(step=tag, path=("data", "shipment_id"))


def deliver(r: Region, lot: str, origin: str, vehicle: str, stops: list[str], destination: str | None = None,
            quantity: int | None = None, tag: str = "ship", held: str | None = None) -> dict[str, list[Call]]:
    """The phases of one delivery: create the shipment, load it and route the van, dispatch it, sign the receipt
    (``held``: of that existing shipment, nothing created)."""
    call, destination, ref = r.author.call, destination or r.clinic, held or shipment(tag)
    create = {} if held else {"ship": [call.create_new_shipment(save_as=tag, goods_id=lot, origin_site_id=origin,
                                                                destination_site_id=destination,
                                                                quantity=quantity or r.qty)]}
    return {**create, "assign": [call.assign_shipment_to_vehicle(shipment_id=ref, vehicle_id=vehicle)],
            "route": [call.add_or_update_route_plan(vehicle_id=vehicle, route_plan=stops)],
            "go": [call.update_vehicle_status(vehicle_id=vehicle, status="in_transit")],
            "receive": [call.register_goods_receipt(shipment_id=ref, site_id=destination)]}


def maybe(r: Region, *optional: Call) -> list[Call]:
    """Reads a coordinator may or may not make here (so that instances differ in what the oracle calls)."""
    return [c for c in optional if r.author.chance(0.5)]


def calls(phases: dict[str, list[Call]]) -> list[Call]:
    return [c for cs in phases.values() for c in cs]


def arrival(run: DryRun, site: str) -> str:
    """When the last delivery a dry run made to ``site`` was received."""
    times = [s["received_at"] for s in run.state["shipments"].values()
             if s["status"] == "delivered" and s["destination_site_id"] == site]
    if not times or not run.ok():
        failed = [i for i, x in enumerate(run.results) if not x.get("success")]
        raise RuntimeError(f"the dry run delivered nothing to {site} (failed calls {failed}: "
                           f"{[run.results[i].get('error') for i in failed]})")
    return max(times)


# The levels whose change is posted while the agent still reads. An impossible level's comes with the request's own
# writes, as at medium: posted for any reader, a refusal at the first refused write would pass without the agent ever
# looking for a way round (the observation-only adversaries of sttgym.agents.adversaries did exactly that).
EARLY = ("easy",)


# -------------------------------------------------------------------------- checks


def goal(r: Region) -> tuple[Check, list[Check]]:
    """The delivery milestone and the harm gates no outcome may break, read from the final state. Stopping early
    breaks no gate: only a late, closed-door or warm delivery, or a warm load on the road, does."""
    pred, args = r.author.pred, {"product": r.product, "sites": r.targets}
    timing = (pred.received_with_team if r.team else pred.received_before_session)(**args, clinic=r.clinic,
                                                                                   session=r.session)
    # Exactly the request: with "at least", a policy that ships whatever large number it likes passes without
    # reading the quantity (under RL the tiny CPU model learned to ship 700 doses whatever was asked: docs/training.md).
    delivered = Check(name="doses_delivered", description=f"exactly the doses of {r.product} that session "
                      f"{r.session} needs, as its registration list has them at the end, were received at "
                      + " or ".join(r.targets), stated=COUNT,
                      holds=pred.doses_received(**args, clinic=r.clinic, session=r.session))
    gates = [gate("on_time", "every delivery was received where and while the team was there" if r.team else
                  "every delivery was received before the session starts (as scheduled at the end)", timing,
                  TEAM if r.team else ON_TIME),
             gate("within_receiving_hours", "every delivery arrived while the receiving site was open",
                  pred.received_in_hours(**args), IN_HOURS),
             gate("cold_chain_kept", "every delivered or dispatched load rode a working cooling unit that holds its "
                  "band, and its lot was usable", pred.cold_chain_kept(**args), COLD)]
    return delivered, gates


def left_waiting(r: Region, ignore: list[str] = ()) -> list[Check]:
    """What an impossible task forbids besides its own gates: a stale shipment left pending, silence to the user."""
    pred, args = r.author.pred, {"product": r.product, "sites": r.targets}
    return [gate("nothing_dangling", "no shipment is left reserved, assigned or on the road without a receipt",
                 pred.nothing_pending(ignore=list(ignore)), DANGLING),
            gate("user_not_left_waiting", "the doses arrived, or the user was told in words why they could not",
                 pred.settled(**args, at_least=r.qty), TELL)]


def gate(name: str, description: str, holds, stated: str) -> Check:
    return Check(name=name, description=description, holds=holds, gate=True, stated=stated)


def unshipped(r: Region, lots: list[str], name: str, why: str, stated: str) -> Check:
    return gate(name, f"no dose of {', '.join(lots)} ({why}) was shipped", r.author.pred.lots_unshipped(lots=lots),
                stated)


# Milestones: each false in the initial world and out of reach of the stale plan, so the oracle's prefixes climb
# from 0 (still reading, or redoing the stale plan's first steps) to 1 (doses received). None asks which lot, van or
# route the recovery took: any the user accepts will do (the alternatives are listed). ``noticed`` never stands
# alone: it is folded into every recovery milestone, so a change shown to the agent and left unanswered earns
# nothing, and so does ignoring the request's lot and van without having met the change. Every milestone counts
# the doses asked for, no fewer and no more, so guessing a large quantity earns no credit a wrong guess would not: as
# the session's registration list has them at the end, except that a recovery in progress may carry no fewer than it
# first had (so a recovery made before the count went up, at hard, is progress of its own).

def cancelled(r: Region, **match):
    return r.author.pred.shipment_exists(statuses=["cancelled"], **match)


def routed(r: Region, statuses: tuple[str, ...] = ("assigned", "in_transit", "delivered"), at_least: int | None = None,
           **match):
    """The doses the session needs as its registration list has them at the end (or from ``at_least`` up to those) are on a
    van that can leave now (or, by ``statuses``, on the road, or received) whose route reaches the clinic, or the
    team, in time over open roads, cold all the way."""
    return r.author.pred.reaches_in_time(product=r.product, sites=r.targets, clinic=r.clinic, session=r.session,
                                         at_least=at_least, team=r.team, statuses=list(statuses), **match)


def seen(r: Region, trigger: str, holds) -> Pred:
    """``holds``, once what ``trigger`` changed was shown to the agent (by any read, listing or refused write)."""
    return r.author.pred.all_of(preds=[r.author.pred.noticed(trigger=trigger), holds])


def unwound(r: Region, trigger: str, stale: dict | Pred) -> Check:
    """The stale commitment (``stale``: its shipment's fields, or a predicate) was cancelled, or put on a run that
    still makes it, once the change was shown."""
    holds = stale if isinstance(stale, Pred) else r.author.pred.any_of(preds=[cancelled(r, **stale),
                                                                              routed(r, at_least=r.qty, **stale)])
    return Check(name="stale_plan_unwound", description="after the change was shown, the stale plan's shipment was "
                 "cancelled or put on a run that still makes it", holds=seen(r, trigger, holds), stated=UNWIND)


def secured(r: Region, trigger: str) -> Check:
    return Check(name="alternative_secured", holds=seen(r, trigger, routed(r, at_least=r.qty)), stated=ON_TIME,
                 description="after the change was shown, the doses asked for (no fewer than the registration "
                             "list first had, no more than it has at the end) were loaded on a van that can leave and reach "
                             "the clinic (or the team) in time, over open roads, cold all the way")


def dispatched(r: Region, trigger: str) -> Check:
    return Check(name="dispatched_in_time", description="after the change was shown, the doses the registration list has "
                 "at the end left on a run that reaches the clinic (or the team) in time, over open roads, cold all the "
                 "way", stated=ON_TIME,
                 holds=seen(r, trigger, routed(r, statuses=("in_transit", "delivered"))))


# ------------------------------------------------------------------ the second change


def recount(r: Region, story: list[Trigger]) -> Trigger:
    """The medium and hard levels' second change, on the clinic's side rather than the stock's, the vans' or the
    roads': late registrations raise the count on the session's registration list (:attr:`Region.added`). At
    medium they come in the same call as the story's (first) change, so an agent that re-reads what its plan
    depends on once it sees that change finds them. At hard, once the agent has met the story's change and the
    story is done changing, its first write that commits doses (a shipment booked or loaded, whatever the lot, site
    or van) is met by them. That write is the later of the recovery's commitment and the agent's writing of the
    count (a booking's quantity; a shipment booked before the story's change commits again only when loaded), so
    however the agent orders its work the count it wrote goes stale. Only
    ``get_registration_list`` shows it: the schedule, which the agent re-checks for the session's start, still
    names the same list; no write fails, and what the agent booked still reads as it left it. The lot the recovery
    loads still holds the added doses, so a top-up on the same van before it leaves (or the shipment booked again
    for the new count) is the whole fix; the difficulty is knowing that the count comes from a record the recovery
    never touched."""
    pred, needed, names = r.author.pred, r.qty + r.added, [t.name for t in story]
    if r.level == "medium":
        (when, activation), moment = r.author.alongside(story[:1]), f"with {names[0]}"
    else:
        when = pred.all_of(preds=[pred.any_of(preds=[pred.noticed(trigger=n) for n in names]),
                                  *[pred.fired_before(trigger=n) for n in names], pred.committing(product=r.product)])
        activation = ["create_new_shipment", "assign_shipment_to_vehicle"]
        moment = f"once the recovery commits doses after {', '.join(names)}"
    return r.change(
        "session_recounted", f"{moment}, {r.added} late registrations raise session {r.session}'s list "
        f"{r.registration_list} to {needed}", r.registered(),
        r.set(["registration_lists", r.registration_list], registered=needed,
              note=f"{r.added} late registrations added"), activation=activation, timing="after", when=when)


def top_up(r: Region, base: DryRun, calls: list[Call]) -> list[Call] | None:
    """``calls`` (the end of a whole solution, after ``base``) once the session needs :attr:`Region.added` doses more:
    after a look at the registration list, the added doses booked from a usable lot that still has them free, one already on
    the last van to leave or else one where its route picks up, loaded on that van before it leaves and received
    with the rest; None where no such lot has them."""
    call = r.author.call
    go = max(i for i, c in enumerate(calls) if c.name == "update_vehicle_status"
             and c.arguments["status"] == "in_transit")
    van = calls[go].arguments["vehicle_id"]
    before = base.then(calls[:go])
    state, free = before.state, {x["goods_id"]: x["free"] for x in before.world.list_lots(r.product)["data"]["lots"]}
    vehicle, inventory = state["vehicles"][van], state["goods_inventory"]
    load = [state["shipments"][s] for s in vehicle["shipment_ids"]]
    if not load:  # a delivery the world refused: nothing to top up
        return None
    to = load[0]["destination_site_id"]
    stops = [vehicle["site_id"]] + [state["route_stops"][s]["site_id"] for s in vehicle["route_stop_ids"]]
    pickups = stops[:len(stops) - stops[::-1].index(to) - 1]
    lots = [s["goods_id"] for s in load] + [g for g, x in sorted(inventory.items()) if x["site_id"] in pickups]
    source = next((g for g in lots if free.get(g, 0) >= r.added and inventory[g]["status"] == "available"
                   and g != r.promised), None)
    if source is None:
        return None
    ref = shipment("top_up")
    received = max(i for i, c in enumerate(calls) if c.name == "register_goods_receipt")
    return [*calls[:go], r.registered(),
            call.create_new_shipment(save_as="top_up", goods_id=source, origin_site_id=inventory[source]["site_id"],
                                     destination_site_id=to, quantity=r.added),
            call.assign_shipment_to_vehicle(shipment_id=ref, vehicle_id=van), *calls[go:received + 1],
            call.register_goods_receipt(shipment_id=ref, site_id=to), *calls[received + 1:]]


# ---------------------------------------------------------------------- alternatives

DELIVERY = ("create_new_shipment", "assign_shipment_to_vehicle", "add_or_update_route_plan", "register_goods_receipt")


def _delivers(call: Call) -> bool:
    """Whether ``call`` is a step of a delivery (booking, loading, routing, dispatching, signing), not a read, a
    question, a recall, a cancellation or a service."""
    return call.name in DELIVERY or (call.name == "update_vehicle_status" and call.arguments["status"] == "in_transit")


def collect(r: Region, parts: list[tuple[str, str, int]], van: str, to: str) -> list[Call]:
    """One run of ``van`` picking up each part (lot, site, doses) in turn and delivering them all to ``to``."""
    stops = [site for _, site, _ in parts] + [to]
    runs = [deliver(r, lot, site, van, stops, to, quantity=n, tag=lot) for lot, site, n in parts]
    return [c for phase in ("ship", "assign") for run in runs for c in run[phase]] + runs[-1]["route"] + \
        runs[-1]["go"] + [c for run in runs for c in run["receive"]]


def alternatives(r: Region, oracle: list[Call], triggers: list[Trigger], checks: list[Check]) -> list[list[Call]]:
    """The other complete solutions the world offers: the oracle with its recovery's deliveries swapped for one in
    each van that holds the band, of each lot of the product (or of the region's :attr:`Region.split`), to each site
    the doses may go to, or for the stale shipment itself on another van (at medium and hard, each topped up for
    the added registrations); kept where a dry run makes every delivery and meets the goal and every gate of
    ``checks``, one per final state."""
    call, nominal = r.author.call, r.plan.calls
    stale_part = next((i for i, (a, b) in enumerate(zip(oracle, nominal)) if a != b), min(len(oracle), len(nominal)))
    # The recovery's deliveries go, and with them (at medium and hard) the oracle's look at the raised count, which each
    # alternative's own top-up makes again.
    recount_look = r.registered() if r.added else None
    kept = oracle[:stale_part] + [c for c in oracle[stale_part:] if not _delivers(c) and c != recount_look]
    stale = next(c.arguments["shipment_id"] for c in nominal if c.name == "assign_shipment_to_vehicle")
    kept_stale = [c for c in kept if not (c.name == "cancel_shipment" and c.arguments["shipment_id"] == stale)]
    reuse = r.run(kept_stale, triggers)
    held = reuse.state["shipments"].get(resolve(stale, reuse.saved))
    live = held is not None and held["status"] != "cancelled"
    unwinding = kept_stale + ([call.cancel_shipment(shipment_id=stale)] if live else [])  # fresh stock: stale let go
    fresh = r.run(unwinding, triggers)
    state = fresh.state
    vans = [v for v, x in sorted(state["vehicles"].items())
            if cooling_covers(state["cooling_units"][x["cooling_unit_id"]], state["goods_inventory"][r.lot])]
    lots = [(lot, x["site_id"]) for lot, x in sorted(state["goods_inventory"].items()) if x["product"] == r.product]
    sources = [r.split, r.split[::-1]] if r.split else [[(lot, site, r.qty)] for lot, site in lots]
    tries = [(unwinding, fresh, collect(r, parts, van, to)) for parts in sources for van in vans for to in r.targets]
    if live:  # the stale shipment itself, loaded on another van
        ends = [held["origin_site_id"], held["destination_site_id"]]
        tries += [(kept_stale, reuse, calls(deliver(r, held["goods_id"], ends[0], van, ends, ends[1], held=stale)))
                  for van in vans]
    solved = r.run(oracle, triggers).state
    others = [i for i, x in solved["shipments"].items() if x["status"] in PENDING]  # not the request's (a waitlist)
    goal_checks = [c.holds for c in checks if c.gate or c.name == "doses_delivered"] + [
        r.author.pred.nothing_pending(ignore=others)]
    finals, out = {json.dumps(solved, sort_keys=True)}, []
    for before, base, delivery in tries:
        delivery = top_up(r, base, delivery) if r.added else delivery
        if delivery is None:  # no lot the van loads from holds the doses the registrations added
            continue
        run = base.then(delivery)
        final = json.dumps(run.state, sort_keys=True)
        if final not in finals and all(x.get("success") for x in run.results[len(base.results):]) \
                and all(run.world.holds(holds, log=run.firing.log) for holds in goal_checks):
            finals.add(final)
            out.append(before + delivery)
    return out


# --------------------------------------------------------------------------- tasks


def profile(r: Region, vehicle_note: str, facts: list[str], insist: str, withheld: Answer | None,
            rule: Answer | None) -> UserProfile:
    """The programme coordinator behind every ColdChain request; ``withheld``: the requirement the story turns on,
    told only when asked (which outranks the coordinator's usual "any usable stock will do"); ``rule``: the same
    requirement where it decides nothing."""
    return UserProfile(
        persona=f"I coordinate cold-chain deliveries for the {r.district} immunization programme.",
        known_facts=[f"Session {r.session} at {r.clinic} needs one dose of {r.product} for each person on its "
                     "registration list, which the clinic's immunization schedule names.", *facts],
        clarifications=[
            Answer(keywords=["vehicle", "van", "truck", "driver"], text=vehicle_note),
            Answer(keywords=["deadline", "time", "when", "session", "start"],
                   text=f"The doses must be at the clinic before session {r.session} starts."),
            Answer(keywords=["temperature", "cold", "cooling", "fridge"],
                   text=f"Keep them between {r.band[0]} and {r.band[1]} degrees C the whole way."),
            Answer(keywords=["quantity", "doses", "how", "many"],
                   text=f"One for each person on session {r.session}'s registration list, no fewer and no more; "
                        "the clinic's immunization schedule names the list."),
            Answer(keywords=["other", "alternative", "elsewhere", "stock"],
                   text=f"Any released, usable stock of {r.product} in the region will do."),
            *([rule] if rule else [])],
        withheld=[withheld] if withheld else [],
        insist=insist, fallback="I'm not sure what you mean. The details are in my request.")


def task(r: Region, level: str, *, query: str = "", triggers: list[Trigger], oracle: list[Call],
         milestones: list[Check] = (), ignore: list[str] = (), vehicle_note: str = "", facts: list[str] = (),
         insist: str = "", refusal: str = "", blocking: list[str] = (), forbidden: list[Check] = (),
         withheld: Answer | None = None, rule: Answer | None = None) -> Task:
    """One instance as a task. A feasible task's checklist is the scenario's ``milestones`` (the reaction to the
    change, the alternative secured), then the doses dispatched in time and received, then the harm gates; its
    alternatives are every other way the world offers (:func:`alternatives`). At the impossible level the oracle
    ends by telling the user the ``refusal`` and the judge wants one of the ``blocking`` facts and every
    ``forbidden`` check to hold (nothing left pending besides ``ignore``); at the feasible levels those three are
    not used. With ``withheld`` (the stock the programme may use, see :meth:`Region.rival_lot`), the request asks
    to be consulted before stock is taken from elsewhere. Every request takes its count from the session's registration
    list (:data:`COUNT`); at medium and hard, where the scenario's oracle was :meth:`Region.recounted`, that count goes
    up with the story's change (medium) or once the recovery commits (hard: :func:`recount`). The user insists on
    ``insist`` (by default :meth:`Region.insist`) at every level."""
    delivered, gates = goal(r)
    start = r.session_start
    query = (query or f"Please ship doses of {r.product} from lot {r.lot} at {r.hub} to {r.clinic} in our van "
             f"{r.vehicle}, for session {r.session} on {start[:10]} at {hhmm(start)}, and register the receipt at the "
             f"clinic.") + f" {COUNT}"
    if r.added:
        triggers = [*triggers, recount(r, triggers)]
    if withheld:
        query += f" {CONSULT}"
    vehicle_note = vehicle_note or f"{r.vehicle} is ours; any van holding {r.band[0]} to {r.band[1]} degrees C is fine."
    common = dict(query=query, profile=profile(r, vehicle_note, list(facts), insist or r.insist(), withheld, rule),
                  start_time=r.start, initial_state=r.state, triggers=triggers, nominal_plan=r.plan.calls)
    if level != "impossible":
        checklist = [*milestones, dispatched(r, triggers[0].name), delivered, *gates]
        return Task(**common, static_checklist=[delivered, *gates], oracle=list(oracle), checklist=checklist,
                    alternatives=alternatives(r, oracle, triggers, checklist))
    waiting = left_waiting(r, ignore)
    return Task(**common, static_checklist=[delivered, *gates, *waiting], checklist=[], solvable=False,
                oracle=[*oracle, r.author.call.chat_with_user(message=refusal)],
                impossibility=Impossibility(changed_by=[t.name for t in triggers], blocking_facts=list(blocking),
                                            forbidden=[*forbidden, waiting[0]]))
