"""The seeded corridor network every Freight scenario specialises, and the pieces the stories share.

:func:`new_job` draws two countries (an export side and an import side), three or four terminals and
an inland depot on the export side, two or three depots and terminals on the import side and three
border crossings, each joined to one or two sites on either side by roads whose links and minutes are
drawn. Crossings get opening hours, a queue, customs rules (banned goods, required documents, a daily
inspection quota), hourly crossing slots for the next day and a half (some already taken by other
forwarders), and a permit desk. Carriers' trucks stand at the terminals; background consignments wait
at them too.

The scenario's consignment waits at a drawn export terminal with the one truck the request names;
the crossings are ranked by the trip through them (``main`` the fastest, then ``second`` and
``third``). :class:`Job` writes the plan steps (the nominal file-book-assign-dispatch plan and the
usual fixes), the checklist every feasible story shares, the refusal of an impossible one and the
trials that find the first slot a plan can really use (:meth:`Job.working`), measured with the real
tools. :meth:`Job.task` settles the deliver-by time from the runs and assembles the task, with the other
solutions it lists (:meth:`Job.alternatives`); a :class:`Consult` passed to it makes the user's choice between
workable alternatives a requirement they say only when asked.

The consignee's own record (``get_consignee``) names the dock it receives at, which every request asks the agent
to set on the consignment; at medium that dock moves with the story's change, at hard once the recovery is sent
(:meth:`Job.dock_moves`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Callable

from sttgym.authoring import Author, DryRun, Plan
from sttgym.checklist import Check, evaluate
from sttgym.clock import ceil_to, floor_to, format_time, shift
from sttgym.envs.arena.freight.world import leg_minutes
from sttgym.judge import Impossibility
from sttgym.task import Call, Ref, Task
from sttgym.triggers import Observable, Trigger
from sttgym.user import Answer, UserProfile

__all__ = ["Answer", "Author", "Consult", "Task", "Job", "Redraw", "SHUT", "new_job", "mid", "redrawn"]

_COUNTRIES = ["Valdoria", "Norland", "Estmark", "Corvania", "Altheria", "Brenmoor", "Kestria", "Marovia",
              "Ostrava", "Lumeria", "Sardenia", "Tavrin"]
_TOWNS = ["Ashby", "Brennick", "Calder", "Dunholm", "Elstow", "Farrow", "Garth", "Hallam", "Irwell", "Jessop",
          "Kelby", "Linden", "Morrow", "Nettle", "Orwin", "Pelham", "Quarry", "Redmire", "Selby", "Thorne",
          "Ulver", "Varden", "Wexham", "Yarrow"]
_PASSES = ["Iron Gate", "Eagle Pass", "River Bridge", "Stone Ford", "North Cut", "Pine Saddle", "Salt Road",
           "Old Toll", "Mill Ford", "High Col", "Wolf Gap", "Copper Pass"]
_SHIPPERS = ["Arkon Foods", "Baltis Pharma", "Corra Steel", "Delta Agro", "Emberline Textiles", "Fjord Seafood",
             "Granit Machines", "Helix Electronics", "Ivory Wines", "Junco Fertilisers", "Kala Plants",
             "Lumen Medical"]
_CONSIGNEES = ["Mertz Retail", "Nova Hospitals", "Orbis Wholesale", "Pallas Markets", "Quill Industries",
               "Rhea Distribution", "Sable Builders", "Terra Grocers", "Umbra Works", "Vesta Relief",
               "Wren Pharmacies", "Xeno Motors"]
_CARRIERS = ["Alpen Haulage", "Borealis Trucking", "Cargo Kinetics", "Drover Lines", "Eastway Freight",
             "Fleetwise", "Gantry Logistics", "Hauler & Sons", "Interline Road", "Jetstream Carriers"]
_COMMODITIES = ["frozen fish", "vaccines", "steel coils", "fresh berries", "machine parts", "fertiliser",
                "textiles", "electronics", "live plants", "wine", "medical devices", "cut flowers", "timber",
                "dairy products"]
_BROKERS = ["Albion Customs", "Bastion Clearing", "Corvid Brokerage", "Dunmore Customs", "Egret Clearance",
            "Falk Brokers", "Griffin Customs", "Harrow Clearing", "Ibex Brokerage", "Juniper Customs"]
_DOCKS = [f"Dock {n}" for n in range(1, 9)]
DISPATCH = "and dispatch it"  # the request's words for sending the consignment: what readiness checks quote
DOCK = "set that as the consignment's delivery dock"  # the request's words for the dock: what its check quotes
DOCS = ["commercial_invoice", "packing_list", "certificate_of_origin", "health_certificate",
        "phytosanitary_certificate"]
# The standing rules that keep one of the other crossings shut to the consignment in an impossible story, each found
# only by reading that crossing (:meth:`Job.shut`): the goods banned, a bonded truck required (none that can carry
# them is), a document required that the consignment lacks, the certificate of origin required, every slot before
# the deliver-by time held by other forwarders, no inspections left today.
SHUT = ("banned", "bonded", "document", "coo", "slots", "inspection")


@dataclass(frozen=True)
class Consult:
    """A choice between workable alternatives that only the user can make, withheld until asked: ``answer`` says
    it (a requirement the tools let the agent match, never the alternative's id), ``choice`` (a predicate) holds
    once the goal is reached with it, ``label`` names it in the checklist, ``request`` is the query's sentence
    asking to be consulted before a switch and ``topic`` what the requirement is about."""

    answer: Answer
    choice: object
    label: str
    request: str
    topic: str


class Redraw(ValueError):
    """The drawn network cannot carry the story (no slot makes the plan work): draw another one."""


def redrawn(build: Callable[[Author, str], Task]) -> Callable[[Author, str], Task]:
    """``build``, drawing a fresh network (from the same seeded generator, so still deterministic) while the one
    drawn cannot carry the story."""
    @functools.wraps(build)
    def again(author: Author, level: str) -> Task:
        for _ in range(7):
            try:
                return build(author, level)
            except Redraw:
                continue
        return build(author, level)
    return again


def mid(step: str) -> Ref:
    """The movement id a saved ``dispatch`` step created."""
    return Ref(step=step, path=("data", "movement_id"))


def _code(name: str) -> str:
    return "".join(w[0] for w in name.split()).upper()


class Job:
    """One consignment's cross-border move in a drawn network; see the module docstring."""

    def __init__(self, author: Author, round_clock: bool | None = None):
        a = self.author = author
        start = datetime(a.integer(2024, 2025), 1, 1) + timedelta(days=a.integer(10, 330), hours=a.integer(7, 9),
                                                                  minutes=5 * a.integer(0, 11))
        self.start = format_time(start)
        st = self.state = {k: {} for k in ("sites", "roads", "crossings", "slots", "reservations", "consignments",
                                           "declarations", "permits", "carriers", "trucks", "permit_desks",
                                           "movements", "consignees")}
        st["counters"] = {"declaration": a.integer(1000, 8999), "permit": a.integer(100, 899),
                          "reservation": a.integer(100, 899), "movement": a.integer(100, 899)}
        self.home, self.abroad = a.pick(_COUNTRIES, 2)
        towns = a.pick(_TOWNS, 8)
        self.terminals, self.far = [], []
        for t in towns[:a.integer(3, 4)]:
            sid = f"TRM-{t[:3].upper()}{a.serial(10, 99)}"
            st["sites"][sid] = {"name": f"{t} Terminal", "kind": "terminal", "country": self.home}
            self.terminals.append(sid)
        depot = f"DEP-{towns[4][:3].upper()}{a.serial(10, 99)}"
        st["sites"][depot] = {"name": f"{towns[4]} Inland Depot", "kind": "depot", "country": self.home}
        near = self.terminals + [depot]
        for i, t in enumerate(towns[5:5 + a.integer(2, 3)]):
            kind = "terminal" if i == 0 else "depot"
            sid = f"{'TRM' if i == 0 else 'DEP'}-{t[:3].upper()}{a.serial(10, 99)}"
            st["sites"][sid] = {"name": f"{t} {'Terminal' if i == 0 else 'Depot'}", "kind": kind,
                                "country": self.abroad}
            self.far.append(sid)

        def road(x: str, y: str, lo: int, hi: int) -> None:
            st["roads"][f"RD-{a.serial(100, 999)}"] = {"a": x, "b": y, "minutes": a.integer(lo, hi), "open": True}

        for side in (near, self.far):
            order = [side[int(i)] for i in a.rng.permutation(len(side))]
            for p, q in zip(order, order[1:]):
                road(p, q, 25, 70)
        if a.chance(0.6):
            p, q = (near[int(i)] for i in a.rng.choice(len(near), 2, replace=False))
            road(p, q, 40, 90)
        self.crossings = []
        for name in a.pick(_PASSES, 3):
            xid = f"BCP-{_code(name)}{a.serial(10, 99)}"
            st["sites"][xid] = {"name": f"{name} crossing", "kind": "crossing", "country": f"{self.home}/{self.abroad}"}
            for p in [near[int(i)] for i in a.rng.choice(len(near), a.integer(1, 2), replace=False)]:
                road(p, xid, 30, 110)
            for q in [self.far[int(i)] for i in a.rng.choice(len(self.far), a.integer(1, 2), replace=False)]:
                road(xid, q, 30, 110)
            self.crossings.append(xid)
        others = [c for c in _COMMODITIES]
        day = self.start[:10]
        for xid in self.crossings:
            night = a.chance(0.5) if round_clock is None else round_clock
            st["crossings"][xid] = {
                "status": "open", "outage_until": None, "notice": "", "opens": "00:00" if night else "05:00",
                "closes": "24:00" if night else "23:00", "queue_minutes": 5 * a.integer(2, 9),
                "banned": [], "permit_for": [], "bonded_for": [],
                "required_docs": DOCS[:2] + (["certificate_of_origin"] if a.chance(0.5) else []),
                "inspected": [], "inspection": {"limit": a.integer(4, 9), "used": {day: a.integer(0, 2)}},
                "brokers": sorted(a.pick(_BROKERS, a.integer(1, 2)))}
            st["permit_desks"][xid] = {"status": "open", "lead_minutes": 5 * a.integer(0, 4),
                                       "valid_hours": a.integer(10, 16), "note": ""}
        self.slot_hours = 40
        first = start.replace(minute=0)
        for xid in self.crossings:
            x = st["crossings"][xid]
            for k in range(self.slot_hours):
                begin = first + timedelta(hours=k)
                if x["opens"] != "00:00" and not 5 <= begin.hour < 23:
                    continue
                st["slots"][f"SL-{a.serial(1000, 9999)}"] = {
                    "crossing": xid, "start": format_time(begin), "end": format_time(begin + timedelta(hours=1)),
                    "status": "taken" if a.chance(0.15) else "free", "consignment": None, "note": ""}
        carriers = []
        for name in a.pick(_CARRIERS, 3):
            cid = f"CAR-{_code(name)}{a.serial(10, 99)}"
            st["carriers"][cid] = {"name": name, "bonded": a.chance(0.5)}
            carriers.append(cid)
        self.carriers = carriers
        self.commodity = a.pick(_COMMODITIES)
        # consignment
        self.origin = self.terminals[a.integer(0, len(self.terminals) - 1)]
        self.dest = self.far[a.integer(0, len(self.far) - 1)]
        self.cid = f"CN-{a.serial(10000, 99999)}"
        self.weight = 500 * a.integer(8, 40)
        self.documents = list(DOCS[:3]) + (["health_certificate"] if a.chance(0.5) else [])
        self.consignee, consignee = f"CNE-{a.serial(100, 999)}", a.pick(_CONSIGNEES)
        docks = sorted(a.pick(_DOCKS, a.integer(3, 4)))
        st["consignees"][self.consignee] = {"name": consignee, "site": self.dest, "docks": docks,
                                            "receiving_dock": docks[a.integer(0, len(docks) - 1)], "note": ""}
        st["consignments"][self.cid] = {
            "shipper": a.pick(_SHIPPERS), "consignee": consignee, "consignee_id": self.consignee,
            "delivery_dock": "", "commodity": self.commodity,
            "weight_kg": self.weight, "declared_value": 1000 * a.integer(20, 400), "origin": self.origin,
            "location": self.origin, "available_from": self.start, "destination": self.dest,
            "deliver_by": shift(self.start, days=2), "documents": {d: "valid" for d in self.documents},
            "reissuable": list(self.documents), "priority": "standard", "truck": None, "note": ""}
        for _ in range(a.integer(1, 3)):
            other = [c for c in others if c != self.commodity][a.integer(0, len(others) - 2)]
            oid = f"CN-{a.serial(10000, 99999)}"
            st["consignments"][oid] = {
                "shipper": a.pick(_SHIPPERS), "consignee": a.pick(_CONSIGNEES), "commodity": other,
                "weight_kg": 500 * a.integer(4, 40), "declared_value": 1000 * a.integer(20, 400),
                "origin": self.terminals[a.integer(0, len(self.terminals) - 1)], "location": "",
                "available_from": self.start, "destination": self.far[a.integer(0, len(self.far) - 1)],
                "deliver_by": shift(self.start, hours=a.integer(20, 40)), "documents": {d: "valid" for d in DOCS[:3]},
                "reissuable": DOCS[:3], "priority": "standard", "truck": None, "note": ""}
            st["consignments"][oid]["location"] = st["consignments"][oid]["origin"]
        # rank crossings by the trip through them
        def trip(x: str) -> int:
            p, q = leg_minutes(st, self.origin, x), leg_minutes(st, x, self.dest)
            return 10 ** 6 if p is None or q is None else p + q + st["crossings"][x]["queue_minutes"]

        ranked = sorted(self.crossings, key=lambda x: (trip(x), x))
        self.main, self.second, self.third = ranked
        for x in ranked:
            if trip(x) >= 10 ** 6:  # make every crossing reachable both ways
                road(self.origin, x, 50, 120)
                road(x, self.dest, 50, 120)
        self.truck = self.add_truck(self.origin)
        for t in self.terminals:  # background trucks: too small for the consignment
            for _ in range(a.integer(0, 1)):
                self.add_truck(t, capacity=self.weight - 500 * a.integer(1, 6))
        self.slot = ""
        self.congested: tuple | None = None  # the hard level's second change, once :meth:`cascade` drew it

    # ------------------------------------------------------------------ building

    def add_truck(self, site: str, capacity: int = 0, bonded: bool = False, shift_hours: int = 0,
                  status: str = "available", note: str = "", carrier: str = "") -> str:
        a = self.author
        tid = f"TRK-{a.serial(100, 999)}"
        carrier = carrier or self.carriers[a.integer(0, len(self.carriers) - 1)]
        self.state["trucks"][tid] = {
            "carrier": carrier, "capacity_kg": max(1000, capacity or self.weight + 500 * a.integer(0, 10)),
            "bonded": bonded, "location": site, "status": status, "consignment": None, "note": note,
            "shift_end": shift(self.start, hours=shift_hours or a.integer(11, 13))}
        return tid

    @property
    def record(self) -> dict:
        return self.state["consignments"][self.cid]

    def rules(self, crossing: str) -> dict:
        return self.state["crossings"][crossing]

    def permit(self, crossing: str, hours: int = 14) -> str:
        """A permit already on file for the consignment at ``crossing``."""
        pid = f"PRM-{self.author.serial(100, 999)}"
        self.state["permits"][pid] = {"consignment": self.cid, "crossing": crossing, "valid_from": self.start,
                                      "valid_to": shift(self.start, hours=hours), "status": "valid", "note": ""}
        return pid

    def share_brokers(self, usual: str, want: str, other: str) -> str:
        """Customs brokers at the three crossings so that each pair shares one; the user's, returned, works at
        ``usual`` and ``want``, so without the user's word no broker list tells ``want`` from ``other``."""
        mine, a, b = self.author.pick(_BROKERS, 3)
        for x, names in ((usual, [mine, a]), (want, [mine, b]), (other, [a, b])):
            self.rules(x)["brokers"] = sorted(names)
        return mine

    def free_slots(self, crossing: str, after: str = "") -> list[str]:
        rows = sorted((x["start"], s) for s, x in self.state["slots"].items()
                      if x["crossing"] == crossing and x["status"] == "free" and x["start"] >= (after or ""))
        return [s for _, s in rows]

    def slot_start(self, slot: str) -> str:
        return self.state["slots"][slot]["start"]

    # ------------------------------------------------------------------ calls

    @property
    def call(self):
        return self.author.call

    def read(self) -> Call:
        return self.call.get_consignment(consignment_id=self.cid)

    def crossing(self, x: str) -> Call:
        return self.call.get_crossing(crossing_id=x)

    def slots(self, x: str) -> Call:
        return self.call.list_slots(crossing_id=x)

    def crossings_list(self) -> Call:
        return self.call.list_crossings()

    def truck_read(self, truck: str) -> Call:
        return self.call.get_truck(truck_id=truck)

    def trucks(self, site: str = "") -> Call:
        return self.call.list_trucks(**({"location": site} if site else {}))

    def route(self, x: str, truck: str = "") -> Call:
        return self.call.check_route(consignment_id=self.cid, crossing_id=x, **({"truck_id": truck} if truck else {}))

    def declare(self, x: str) -> Call:
        return self.call.file_declaration(consignment_id=self.cid, crossing_id=x)

    def apply(self, x: str) -> Call:
        return self.call.apply_for_permit(consignment_id=self.cid, crossing_id=x)

    def book(self, slot: str) -> Call:
        return self.call.book_slot(slot_id=slot, consignment_id=self.cid)

    def assign(self, truck: str) -> Call:
        return self.call.assign_truck(consignment_id=self.cid, truck_id=truck)

    def consignee_read(self) -> Call:
        return self.call.get_consignee(consignee_id=self.consignee)

    def dock(self, dock: str) -> Call:
        return self.call.set_delivery_dock(consignment_id=self.cid, dock=dock)

    @property
    def receiving(self) -> str:
        return self.state["consignees"][self.consignee]["receiving_dock"]

    def go(self) -> Call:
        return self.call.dispatch(save_as="m0", consignment_id=self.cid)

    def tell(self, message: str) -> Call:
        return self.call.chat_with_user(message=message)

    def nominal(self, skip: int = 1) -> Plan:
        """The plain plan: read the consignment, the crossing's rules and slots and the terminal's trucks; set the
        dock from the consignee's record; file the declaration, book the slot, assign the truck, dispatch. Picks the
        slot the request names: the first the plan can use without dynamics."""
        def plan(slot: str) -> Plan:
            return Plan(look=[self.read(), self.crossing(self.main), self.slots(self.main), self.trucks(self.origin)],
                        dock=[self.consignee_read(), self.dock(self.receiving)], declare=[self.declare(self.main)],
                        book=[self.book(slot)], assign=[self.assign(self.truck)], go=[self.go()])
        self.slot = self.working(lambda s: plan(s).calls, self.main, skip=skip)[0]
        return plan(self.slot)

    # ------------------------------------------------------------------ trials and triggers

    def run(self, calls: list[Call], triggers: list[Trigger] = ()):
        return self.author.dry_run(self.state, self.start, calls, list(triggers))

    def succeeds(self, calls: list[Call], triggers: list[Trigger] = ()) -> bool:
        return self._writes_succeed(calls, self.run(calls, triggers))

    def _writes_succeed(self, calls: list[Call], run: DryRun) -> bool:
        tools = self.author.tools
        return all(r.get("success") for c, r in zip(calls, run.results) if c.name in tools and tools[c.name].mutates)

    def working(self, build: Callable[[str], list[Call]], crossing: str, triggers: list[Trigger] = (),
                after: str = "", skip: int = 0) -> tuple[str, list[Call]]:
        """The first free slot at ``crossing`` (from ``after``) with which ``build(slot)`` runs without a failed
        write, and its calls; ``skip``: pass over that many working slots first."""
        shared, ran = None, None  # the calls before the slot is named, run once for every slot that keeps them
        for slot in self.free_slots(crossing, after):
            calls = build(slot)
            if shared is None or calls[:len(shared)] != shared:
                shared = next((calls[:i] for i, c in enumerate(calls) if slot in c.arguments.values()), calls)
                ran = self.run(shared, triggers)
            if self._writes_succeed(calls, ran.then(calls[len(shared):])):
                if skip <= 0:
                    return slot, calls
                skip -= 1
        raise Redraw(f"no slot at {crossing} makes the plan work")

    def arrival(self, calls: list[Call], triggers: list[Trigger] = ()) -> str:
        run = self.run(calls, triggers)
        found = [r["data"]["arrives"] for c, r in zip(calls, run.results) if c.name == "dispatch" and r.get("success")]
        if not found:
            raise Redraw("the plan dispatches nothing")
        return found[-1]

    def on_write(self, name: str, description: str, tool: str, effect: list, shown: tuple) -> Trigger:
        """A change set off by the agent's ``tool`` write; ``shown``: the read ``(tool, args)`` that reveals it."""
        return self.author.check_trigger(Trigger(
            name=name, description=description, when=self.author.pred.all_of(preds=[]), effect=effect,
            activation=[tool], timing="after", observable=Observable(tool=shown[0], args=shown[1])))

    def set(self, *path, value) -> object:
        return self.author.op.set_field(path=list(path), value=value)

    # ------------------------------------------------------------------ checks and the task

    @property
    def due(self) -> str:
        """The request's words for the deliver-by time: what the checks on the arrival quote."""
        return f"deliver by {self.record['deliver_by']}"

    def checklist(self, consult: Consult | None = None) -> list[Check]:
        """The milestones every feasible story shares, read on the final world (however the agent met the change:
        the stale plan's slot, truck or declaration is no longer ready once the change came); with ``consult``, the
        question the user asked for and the goal reached with the user's alternative."""
        pred = self.author.pred
        chose = [consult.choice] if consult else []
        asked = [Check(name="asked_user", description=f"the agent asked the user about their requirement "
                       f"({', '.join(consult.answer.keywords[:3])}) before dispatching, and the consignment arrives in "
                       "time with the user's choice (a question alone is no recovery)",
                       holds=pred.all_of(preds=[pred.asked_user(about=consult.answer.keywords, before="dispatch"),
                                                pred.on_time(consignment_id=self.cid), consult.choice]),
                       stated=consult.request)] if consult else []
        which = f", {consult.label}" if consult else ""
        return [
            *asked,
            Check(name="ready_to_cross", description=f"{self.cid} is on its way, or everything a dispatch needs "
                  f"holds (a slot it can make, cleared, with a permit, inspection and truck where needed){which}",
                  holds=pred.all_of(preds=[pred.ready_to_cross(consignment_id=self.cid), *chose]),
                  stated=DISPATCH),
            Check(name="delivered_on_time", description=f"{self.cid} is dispatched and arrives by its deliver-by "
                  f"time{which}", holds=pred.all_of(preds=[pred.on_time(consignment_id=self.cid), *chose]),
                  stated=self.due),
            self.docked(*chose),
            Check(name="not_late", gate=True, description=f"no movement of {self.cid} arrives after its deliver-by "
                  "time", holds=pred.not_late(consignment_id=self.cid), stated=self.due),
        ]

    def docked(self, *chose) -> Check:
        """The dock asked for, a milestone of its own on top of the recovery (so a recovery that unloads at a stale
        dock keeps its credit) and only with it (a dock set on a consignment that goes nowhere is no progress)."""
        pred = self.author.pred
        return Check(name="dock_as_on_record", description=f"{self.cid} is on its way, or ready to cross, and unloads "
                     f"at the receiving dock on consignee record {self.consignee}", stated=DOCK,
                     holds=pred.all_of(preds=[pred.ready_to_cross(consignment_id=self.cid),
                                              pred.dock_as_on_record(consignment_id=self.cid), *chose]))

    def goal(self) -> list[Check]:
        pred = self.author.pred
        return [Check(name="ready_to_cross", description=f"{self.cid} is on its way", stated=DISPATCH,
                      holds=pred.ready_to_cross(consignment_id=self.cid)),
                Check(name="delivered_on_time", description=f"{self.cid} arrives by its deliver-by time",
                      holds=pred.on_time(consignment_id=self.cid), stated=self.due), self.docked()]

    def refuse(self, message: str, changed_by: list[str], facts: list[str],
               others: list[str]) -> tuple[list[Call], Impossibility]:
        """The oracle's apology and the judge's terms; ``facts``: what an honest refusal names (the changed values,
        the blocking ids, a few words for the change); ``others``: why the other options fail too, which only
        checking them shows (the other crossings' or trucks' ids, the values that rule them out, a few words such
        as "bonded truck"), so a refusal must name one of these as well. :meth:`task` adds the gate, once the
        deliver-by time is settled."""
        others = [f for f in dict.fromkeys(others) if f not in facts]
        return [self.tell(f"I'm sorry, {message}")], Impossibility(changed_by=changed_by, blocking_facts=facts,
                                                                     no_alternative=others)

    # ------------------------------------------------------------------ what rules out the other options

    def name(self, site: str) -> str:
        """A site's name as people say it: ``Eagle Pass`` for the Eagle Pass crossing."""
        return self.state["sites"][site]["name"].removesuffix(" crossing")

    def shut(self, x: str, how: str) -> tuple[str, list[str], list[Call]]:
        """Close crossing ``x`` to the consignment by a standing rule of kind ``how`` (one of :data:`SHUT`), found
        only by reading that crossing (its rules, its slots; for a bonded truck, the trucks too); the words an
        honest refusal says about it, the facts that name it and the reads that show it. ``slots`` takes the
        crossing's free slots up to the deliver-by time, so it comes once that time is settled; ``inspection``
        holds only while the deliver-by time is before midnight."""
        g, rules, label = self.commodity, self.rules(x), f"{self.name(x)} ({x})"
        facts = [x, self.name(x)]
        if how == "banned":
            rules["banned"].append(g)
            return f"{label} bans {g}", facts + ["also banned", "banned there"], [self.crossing(x)]
        if how == "bonded":
            rules["bonded_for"].append(g)
            return (f"{label} takes {g} only on a bonded truck and none of the trucks that could carry it is bonded",
                    facts + ["bonded truck", "not bonded", "no bonded"], [self.crossing(x), self.trucks()])
        if how == "document":
            doc = next(d for d in reversed(DOCS) if d not in self.record["documents"])
            rules["required_docs"].append(doc)
            return (f"{label} requires a {doc.replace('_', ' ')}, which {self.cid} does not have",
                    facts + [doc], [self.crossing(x)])
        if how == "coo":
            if "certificate_of_origin" not in rules["required_docs"]:
                rules["required_docs"].append("certificate_of_origin")
            return (f"{label} requires the certificate of origin as well", facts + ["also requires", "requires it too"],
                    [self.crossing(x)])
        if how == "slots":
            for s in self.free_slots(x):
                if self.slot_start(s) < self.record["deliver_by"]:
                    self.state["slots"][s]["status"] = "taken"
            return (f"other forwarders hold every slot at {label} before the deliver-by time",
                    facts + ["fully booked", "no free slots"], [self.slots(x)])
        if how == "inspection":
            if g not in rules["inspected"]:
                rules["inspected"].append(g)
            rules["inspection"]["used"][self.start[:10]] = rules["inspection"]["limit"]
            return (f"{label} has no inspections left today either",
                    facts + ["inspections left either", "out of inspections"], [self.crossing(x)])
        raise ValueError(f"no way to shut a crossing called {how!r}")

    def shut_others(self, kinds: tuple[str, ...]) -> tuple[str, list[str], list[Call]]:
        """The second and third crossings shut to the consignment by two different drawn rules of ``kinds`` (see
        :meth:`shut`): the refusal's words for both, their facts, the reads that show them."""
        assert set(kinds) <= set(SHUT), kinds
        said, facts, reads = [], [], [self.crossings_list()]
        drawn = [kinds[int(i)] for i in self.author.rng.choice(len(kinds), 2, replace=False)]  # not a split's half
        for x, how in zip((self.second, self.third), drawn):
            words, named, shown = self.shut(x, how)
            said.append(words)
            facts += named
            reads += [r for r in shown if r not in reads]
        why = f"{said[0]}, and {said[1]}"
        return why, facts + [why], reads  # the whole reason last: what a refusal template says of the others

    def unfit(self, truck: str, how: str, gone: str) -> tuple[str, list[str]]:
        """Make ``truck`` useless to the consignment by a fact on it, found only by reading it: ``small`` (it carries
        less than the consignment weighs) or ``shift`` (its driver goes off shift at ``gone``, before it could reach
        any crossing); the words an honest refusal says about it and the facts that name it."""
        x = self.state["trucks"][truck]
        if how == "small":
            x["capacity_kg"] = max(1000, self.weight - 500 * self.author.integer(1, 6))
            return (f"{truck} carries only {x['capacity_kg']} kg, which is less than the goods weigh",
                    [truck, f"{x['capacity_kg']} kg", "too small", "carries only"])
        x["shift_end"] = floor_to(gone, 5)
        return (f"the driver of {truck} goes off shift at {x['shift_end'][11:]}",
                [truck, "off shift", "shift ends", "end of shift"])

    def no_way(self, prefix: list[Call], triggers: list[Trigger]) -> None:
        """Draw again (:class:`Redraw`) when, after ``prefix`` (the write that sets off the change, made at once, as
        early as any agent can), some plan still gets the consignment across by its deliver-by time: from any
        terminal of its country (a transload there), on any truck there that can carry it, through any crossing
        (re-issuing what the shipper can, with a permit where one is needed) on any free slot. An impossible story
        must leave none."""
        first = self.run(prefix, triggers)
        c = first.state["consignments"][self.cid]
        due, here = c["deliver_by"], c["location"]
        sites = first.state["sites"]
        terminals = [here] + [t for t, s in sorted(sites.items()) if t != here and s["kind"] == "terminal"
                              and s["country"] == sites[here]["country"]]
        docs = [self.call.request_document(consignment_id=self.cid, document=d) for d, v in c["documents"].items()
                if v != "valid" and d in c["reissuable"]]
        for t in terminals:
            moved = first.then(([] if t == here else [self.call.transload(consignment_id=self.cid, terminal_id=t)])
                               + docs)
            for k, truck in sorted(moved.state["trucks"].items()):
                mine = truck["status"] == "assigned" and truck["consignment"] == self.cid
                if truck["location"] != t or truck["capacity_kg"] < self.weight or not (
                        mine or truck["status"] == "available"):
                    continue
                for x in self.crossings:
                    permit = [self.apply(x)] if self.commodity in moved.state["crossings"][x]["permit_for"] else []
                    ready = moved.then(permit + [self.declare(x)] + ([] if mine else [self.assign(k)]))
                    held = ready.world._slot_of(self.cid)
                    for s, slot in sorted(ready.state["slots"].items(), key=lambda i: i[1]["start"]):
                        if slot["crossing"] != x or slot["start"] >= due or slot["end"] <= ready.end or not (
                                s == held or ready.world._slot_view(s)["status"] == "free"):
                            continue
                        sent = ready.then(([] if s == held else [self.book(s)]) + [self.go()]).results[-1]
                        if sent.get("success") and sent["data"]["arrives"] <= due:
                            raise Redraw(f"{self.cid} still crosses in time via {x} on {s} from {t} with {k}")

    def settle(self, calls: list[Call], triggers: list[Trigger], nominal: list[Call],
               margin: tuple[int, int] = (25, 70), alternatives: list[list[Call]] = ()) -> str:
        """Set the deliver-by time a drawn margin after the latest arrival of ``calls`` (with ``triggers``; none
        for an impossible story), of each of ``alternatives`` (the recoveries the user did not choose, which must
        stay workable) and of the nominal plan (without), rounded up to 5 minutes."""
        times = [self.arrival(nominal)] + [self.arrival(c, triggers) for c in ([calls] if calls else [])
                                           + list(alternatives)]
        due = ceil_to(shift(max(times), self.author.integer(*margin)), 5)
        self.record["deliver_by"] = due
        return due

    # ------------------------------------------------------------------ hard: the recovery meets a second change

    def cascade(self, oracle: list[Call], triggers: list[Trigger], nominal: list[Call]) -> tuple[
            list[Call], list[Trigger], list[list[Call]]]:
        """The hard level's second change, met by whatever recovery the agent makes: traffic backs up at the
        crossing of the first slot booked after the change (the trigger is bound to the booking call, so it meets
        the agent's choice, not the story's), and a trip through it now arrives after the deliver-by time while
        every write still goes through; only the times show it (``check_route``, ``get_crossing``, the dispatch's
        arrival). The oracle books the story's recovery slot, reads that route, and moves to another crossing;
        the listed alternative makes the story's recovery at another crossing first and then moves. Returns the
        oracle, the triggers and the alternatives; call before :meth:`settle`, which makes room for both routes,
        and :meth:`task` sets the delay once the deliver-by time is known."""
        go = next(i for i, c in enumerate(oracle) if c.name == "dispatch")
        at = max(i for i, c in enumerate(oracle[:go]) if c.name == "book_slot")
        here = self.state["slots"][oracle[at].arguments["slot_id"]]["crossing"]
        pred = self.author.pred
        after_change = pred.any_of(preds=[pred.fired_before(trigger=t.name) for t in triggers])
        congestion = self.author.check_trigger(Trigger(
            name="congestion", description="traffic backs up at the crossing of the first slot booked after the change",
            when=pred.all_of(preds=[pred.booked_by_call(consignment_id=self.cid), after_change]),
            effect=[self.author.op.congest(minutes=0, cause="lorry backlog after a customs system slowdown")],
            activation=["book_slot"], timing="after",
            observable=Observable(tool="check_route", args={"consignment_id": self.cid, "crossing_id": here})))
        both, tail = [*triggers, congestion], oracle[go:]
        moved = self.rebooked(oracle[:go], here, both, tail)
        stale = next((i for i, (x, y) in enumerate(zip(oracle, nominal)) if x != y), len(oracle))
        recovery = [c for c in oracle[stale:go] if c.name != "book_slot"]
        mirror = None  # (the recovery made at another crossing first, then its move): the listed alternative
        for there in self.crossings:
            if there == here:
                continue
            steps = oracle[:stale] + self.declared_at(recovery, here, there)
            run = self.run(steps, triggers)
            first = next((s for s in self.free_slots(there) if run.end < self.state["slots"][s]["end"]
                          and self.succeeds(steps + [self.book(s)] + tail, triggers)), None)
            moving = first and self.rebooked(steps + [self.book(first)], there, both, tail)
            if moving:
                mirror = (steps + [self.book(first)] + tail, moving)
                break
        if moved is None or mirror is None:
            raise Redraw("no crossing is left once the first recovery's crossing backs up")
        self.congested = (congestion, [oracle, mirror[0]], triggers, [mirror[1]])
        return moved, both, [mirror[1]]

    def dock_moves(self, story: list[Trigger], level: str) -> tuple[Trigger, list[Call]]:
        """The medium and hard levels' second change on the consignee's side, in a record no recovery touches: the
        consignee moves its receiving dock to another of its docks. At medium that comes in the same call as the
        story's change, so a read of the consignee's record once the change is seen shows it. At hard it waits: once
        the story's change has come, at the later of the dispatch (whichever crossing, slot and truck the recovery
        took) and the agent's setting of the dock, so the dock it set is stale whichever it set last. Only
        ``get_consignee`` shows it: every write goes through, the old dock is still a dock there and the consignment
        reads as the agent left it. Setting the new dock (allowed on the way) is the whole fix. Returns the trigger
        and the fix (a read of the record, then the dock)."""
        a, pred = self.author, self.author.pred
        record = self.state["consignees"][self.consignee]
        old = record["receiving_dock"]
        new = a.pick([d for d in record["docks"] if d != old])
        if level == "medium":
            (when, activation), moment = a.alongside(story[:1] or story), f"with {story[0].name}"
        else:
            after_change = pred.any_of(preds=[pred.fired_before(trigger=t.name) for t in story])
            when = pred.all_of(preds=[after_change, pred.none_of(preds=[pred.no_movement(consignment_id=self.cid)]),
                                      pred.dock_recorded(consignment_id=self.cid)])
            activation = ["dispatch", "set_delivery_dock"]
            moment = f"once {self.cid} is dispatched after the change and its dock is set"
        moved = a.check_trigger(Trigger(
            name="dock_moved", description=f"{moment}, {record['name']} receives at {new} instead of {old}",
            when=when,
            effect=[self.set("consignees", self.consignee, "receiving_dock", value=new),
                    self.set("consignees", self.consignee, "note",
                             value=f"receiving moved to {new}; {old} takes outbound loads only")],
            activation=activation, timing="after",
            observable=Observable(tool="get_consignee", args={"consignee_id": self.consignee})))
        return moved, [self.consignee_read(), self.dock(new)]

    def rebooked(self, prefix: list[Call], stuck: str, triggers: list[Trigger], tail: list[Call]) -> list[Call] | None:
        """``prefix`` (which booked a slot at crossing ``stuck``, now backed up), a read of that route, then a
        declaration (and a permit, where needed) and the first slot at another crossing that still gets the
        consignment across, then ``tail`` (the dispatch); None if no crossing does."""
        for there in self.crossings:
            if there == stuck:
                continue
            permit = [self.apply(there)] if self.commodity in self.rules(there)["permit_for"] else []
            head = prefix + [self.route(stuck), self.crossings_list(), self.crossing(there), self.slots(there)] + \
                permit + [self.declare(there)]
            run = self.run(head, triggers)
            for slot in self.free_slots(there):
                if run.end < self.state["slots"][slot]["end"] and self.succeeds(head + [self.book(slot)] + tail,
                                                                                 triggers):
                    return head + [self.book(slot)] + tail
        return None

    def backed_up(self, triggers: list[Trigger]) -> list[Trigger]:
        """``triggers`` with the congestion's delay set, now that the deliver-by time is: long enough that a trip
        through the first crossing booked after the change, the story's or the alternative's, arrives late, while its
        dispatch still goes through (a driver it kept past their shift would be refused, which tells of the backlog)."""
        congestion, first_plans, before, _ = self.congested
        due = datetime.fromisoformat(self.record["deliver_by"])
        worst = max((due - datetime.fromisoformat(self.arrival(p, before))).total_seconds() // 60
                    for p in first_plans)
        minutes = int(worst) + 5 * self.author.integer(6, 24)
        effect = [self.author.op.congest(minutes=minutes, cause=congestion.effect[0].args["cause"])]
        delayed = [t if t is not congestion else t.model_copy(update={"effect": effect}) for t in triggers]
        if not all(self.succeeds(p, delayed) for p in first_plans):
            raise Redraw("the backlog keeps a driver past their shift, so a refused dispatch would tell of it")
        return delayed

    def alternatives(self, oracle: list[Call], nominal: list[Call], triggers: list[Trigger],
                     checks: list[Check]) -> list[list[Call]]:
        """Other complete solutions: the oracle's recovery through the first other slot that works at each crossing
        (with a declaration, and a permit where the crossing wants one, at another crossing). Which slot is booked
        changes no record but the forwarder's own booking, so one per crossing shows the choice."""
        stale = next((i for i, (x, y) in enumerate(zip(oracle, nominal)) if x != y), len(nominal))
        go = next(i for i, c in enumerate(oracle) if c.name == "dispatch")
        booked = [c for c in oracle[:go] if c.name == "book_slot"][-1].arguments["slot_id"]
        here = self.state["slots"][booked]["crossing"]
        recovery = [c for c in oracle[stale:go] if c.name != "book_slot"]
        out = []
        for x in self.crossings:
            steps = recovery if x == here else self.declared_at(recovery, here, x)
            run = self.run(oracle[:stale] + steps, triggers)
            for slot in self.free_slots(x):  # those still open once the recovery is ready, starting in time
                if slot == booked or not run.end < self.state["slots"][slot]["end"] or \
                        self.slot_start(slot) > self.record["deliver_by"]:
                    continue
                tail = [self.book(slot)] + oracle[go:]
                end = run.then(tail)
                if evaluate(checks, end.world, end.firing.log)[0] == 1.0:
                    out.append(oracle[:stale] + steps + tail)
                    break
        return out

    def declared_at(self, recovery: list[Call], here: str, there: str) -> list[Call]:
        """``recovery`` moved from crossing ``here`` to ``there``: its declaration (one added if it had none) and
        its permit (one added where ``there`` wants one, none where it does not) are lodged there instead."""
        permit = self.commodity in self.rules(there)["permit_for"]
        moved = [c.model_copy(update={"arguments": {**c.arguments, "crossing_id": there}})
                 if c.name in ("file_declaration", "apply_for_permit") else c
                 for c in recovery if c.name != "apply_for_permit" or permit]
        if not any(c.name == "file_declaration" for c in moved):
            moved.append(self.declare(there))
        if permit and not any(c.name == "apply_for_permit" for c in moved):
            moved.insert(next(i for i, c in enumerate(moved) if c.name == "file_declaration"), self.apply(there))
        return moved

    @property
    def what(self) -> str:
        r = self.record
        return (f"consignment {self.cid} ({r['weight_kg']} kg of {r['commodity']} from {r['shipper']} at "
                f"{self.origin}) to {r['consignee']} at {self.dest}, {self.due}")

    def request(self, intro: str) -> str:
        return (f"{intro} Please move {self.what}: file the declaration at {self.main}, book crossing slot "
                f"{self.slot}, assign truck {self.truck} {DISPATCH}. {self.record['consignee']} receives goods at the "
                f"dock on its consignee record, {self.consignee}: please {DOCK}.")

    def task(self, query: str, triggers: list[Trigger], nominal: Plan, oracle: list[Call], persona: str, why: str,
             impossible: Impossibility | None = None, answers: dict | None = None,
             consult: Consult | None = None, moves: str = "") -> Task:
        """Assemble the task. Before signing off (or refusing) the oracle re-reads one to three drawn records, as
        operators do, so its call sequence differs between seeds. ``why``: the reason the deliver-by time is hard,
        which leads what the user answers to any proposed change of plan (the same form at every level, so the
        answer never tells whether the request can be met); ``consult``: the choice the user withholds until
        asked; ``moves`` (the level, where it is medium or hard): the consignee's receiving dock moves, with the story's
        change at medium, once the recovery is sent at hard (:meth:`dock_moves`)."""
        a = self.author
        if self.succeeds(nominal.calls, triggers):
            raise Redraw("the change leaves the nominal plan working")
        looks = [self.read(), self.trucks(), a.call.list_crossings(), a.call.list_consignments(),
                 a.call.list_sites(kind="crossing")]
        extra = [looks[int(i)] for i in a.rng.permutation(len(looks))[:a.integer(1, 3)]]
        end = len(oracle)
        while end and oracle[end - 1].name == "chat_with_user":  # a closing message stays last; a question stays put
            end -= 1
        story = self.congested[2] if self.congested else triggers
        moved, fix = self.dock_moves(story, moves) if moves in ("medium", "hard") and not impossible else (None, [])
        oracle = oracle[:end] + fix + extra + oracle[end:]
        answers = {("dock", "docks", "unload", "unloading", "receiving", "goods-in"):
                   f"{self.record['consignee']} receives goods at the dock on its consignee record, {self.consignee}; "
                   "set that one.", **(answers or {})}
        pointer = f", as long as it meets the requirement about the {consult.topic} I mentioned" if consult else ""
        answers.setdefault(("crossing", "slot", "truck", "route", "another", "other"),
                           f"Any compliant crossing, slot and truck are fine as long as it arrives by the deliver-by "
                           f"time{pointer}.")
        profile = UserProfile(
            persona=f"{self.record['shipper']} export coordinator, {persona}",
            known_facts=[f"consignment {self.cid}", f"{self.weight} kg of {self.commodity}",
                         f"deliver by {self.record['deliver_by']}"],
            clarifications=[Answer(keywords=list(k), text=t) for k, t in answers.items()],
            withheld=[consult.answer] if consult else [],
            insist=f"{why} It must reach the consignee by {self.record['deliver_by']}; any compliant crossing, slot "
                   f"and truck will do{pointer}.",
            fallback="Everything I know is in my request; please get the consignment across as asked.")
        checklist = [] if impossible else self.checklist(consult)
        if impossible:
            impossible = impossible.model_copy(update={"forbidden": [Check(
                name="no_movement", gate=True, description=f"nothing was dispatched for {self.cid} anyway",
                holds=a.pred.no_movement(consignment_id=self.cid), stated=self.due)]})
            alternatives = self.shuttled_back(oracle, end + len(extra), triggers)
        elif self.congested:  # the hard level's second changes: the delay set, the dock moved, its own alternative
            triggers, alternatives = [*self.backed_up(triggers), moved], [a + fix for a in self.congested[3]]
        else:
            triggers = [*triggers, moved] if moved else triggers  # medium, and hard without a cascade: the dock moved
            alternatives = self.alternatives(oracle, nominal.calls, triggers, checklist)
        return Task(query=f"{query} {consult.request}" if consult else query, profile=profile, start_time=self.start,
                    initial_state=self.state, triggers=triggers, checklist=checklist, static_checklist=self.goal(),
                    nominal_plan=nominal.calls, oracle=oracle, alternatives=alternatives,
                    solvable=impossible is None, impossibility=impossible)

    def shuttled_back(self, oracle: list[Call], end: int, triggers: list[Trigger]) -> list[list[Call]]:
        """An impossible story's other refusal: where the change moved the goods away from the terminal the shipper
        named, railing them back there to try the named truck, then refusing, rules that option out by trying it.
        The shuttle cannot be undone, and two reviewers found the goods back at their origin no harm to anyone, so
        the collateral gate must accept it (the alternative puts its fields in the task's footprint)."""
        if self.run(oracle[:end], triggers).state["consignments"][self.cid]["location"] == self.origin:
            return []
        back = oracle[:end] + [self.call.transload(consignment_id=self.cid, terminal_id=self.origin)]
        if not self.run(back, triggers).results[-1].get("success"):
            return []
        return [back + oracle[end:]]


def new_job(author: Author, round_clock: bool | None = None) -> Job:
    """A drawn network and consignment; ``round_clock``: every crossing open day and night (None: drawn)."""
    return Job(author, round_clock)
