"""The seeded specimen network every ClinicalLab scenario specialises, and the pieces scenarios share.

:func:`new_case` draws a network from the author's generator: two to four wards and clinics, one or two
courier hubs and three labs joined by roads whose links are drawn, a test catalogue, analysers, background
orders with their specimens, couriers whose shifts are over or whose vans keep only ambient specimens, and the
*focus order*: one specimen at one ward, an assigned courier and the *home lab* the ward sends to.
Scenarios then decide which alternatives exist (another lab, a refrigerated courier, a relay at a hub).

:class:`Case` writes the plan steps a coordinator makes (reads, accession, pickup, handoff, cancellations),
the conflict-free nominal plan, triggers set off by the agent's writes, the checklist every scenario shares
and, for impossible levels, the refusal: cancel what is booked, ask the ward to recollect and tell them why.
:meth:`Case.hand_over` is the medium and hard levels' second change, on the ward's side, one hop behind the doctor
the bleep comes from. :func:`make_task` assembles the task.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sttgym.authoring import Author, Plan
from sttgym.checklist import Check
from sttgym.clock import format_time
from sttgym.envs.arena.clinicallab.world import (ACCESSIONED_IN_TIME, NO_COURIER, NOTHING_SPOILED, RECOLLECT,
                                                  UNWIND)
from sttgym.geo import shortest_route
from sttgym.judge import Impossibility
from sttgym.task import Call, Ref, Task
from sttgym.triggers import Observable, Trigger
from sttgym.user import Answer, UserProfile

__all__ = ["CONTACT", "Author", "Plan", "Task", "Case", "new_case", "make_task", "acc", "run", "draw", "options",
           "finish", "retrying"]

_WARDS = ["Maple Ward", "Cedar Ward", "Willow Ward", "Rowan Ward", "Aspen Ward", "Birch Ward", "Hazel Ward",
          "Elm Ward", "Linden Ward", "Poplar Ward", "Holly Ward", "Alder Ward"]
_CLINICS = ["Harbour Clinic", "Northfield Clinic", "Quarry Lane Clinic", "Southgate Clinic", "Millpond Clinic",
            "Riverside Clinic", "Kingsway Clinic", "Orchard Clinic", "Beacon Clinic", "Westbrook Clinic"]
_HUBS = ["Central Depot", "Ring Road Hub", "Station Hub", "Canal Hub", "Airfield Hub", "Market Hub"]
_LABS = ["St Anne's Pathology", "Regional Core Lab", "Lakeside Diagnostics", "University Lab Services",
         "Eastside Reference Lab", "County Hospital Lab", "Meadow Pathology", "Hillcrest Laboratory",
         "Bridgewater Lab", "Northgate Diagnostics"]
_COURIERS = ["Ines Duarte", "Kwame Mensah", "Hana Kobayashi", "Piotr Zielinski", "Ruth Adeyemi", "Samir Haddad",
             "Elif Demir", "Marco Bellini", "Nadia Petrova", "Callum Reid", "Yusuf Karim", "Freya Lund",
             "Tomas Novak", "Aroha Ngata", "Lucia Ferreira", "Dev Malhotra"]
_DOCTORS = ["Dr Okafor", "Dr Lindgren", "Dr Varga", "Dr Moreau", "Dr Achebe", "Dr Sorensen", "Dr Rahman",
            "Dr Castillo", "Dr Whitlock", "Dr Nakamura", "Dr Brennan", "Dr Oyelaran", "Dr Keskin", "Dr Fontaine"]
_MODELS = ["Cobas 8000", "Architect c16000", "Atellica CH", "AU5800", "Vitros 5600", "DxC 700", "Alinity c",
           "Sysmex XN-10"]
# code: (name, specimen type, storage, stability minutes range)
_TESTS = {
    "TROP": ("high-sensitivity troponin", "blood", "refrigerated", (180, 300)),
    "BGAS": ("blood gas", "blood", "ambient", (150, 240)),
    "UCUL": ("urine culture", "urine", "refrigerated", (240, 420)),
    "HIST": ("frozen section histology", "tissue", "frozen", (240, 480)),
    "PCRV": ("respiratory virus PCR", "swab", "refrigerated", (240, 420)),
    "COAG": ("coagulation screen", "blood", "ambient", (180, 300)),
    "AMMO": ("plasma ammonia", "blood", "frozen", (150, 240)),
    "LACT": ("lactate", "blood", "refrigerated", (150, 240)),
}
_VEHICLES = {"ambient": "bicycle courier box", "refrigerated": "chilled van", "frozen": "dry-ice van"}
# The ward's wish to be consulted, in the query of a story whose ward has a requirement for the lab.
CONSULT = " If it has to go to another lab, check with me first: the team has a reason to prefer one."
# What the ward's answer to a question about the lab names: its words (a withheld requirement's keywords cover them).
_LAB_WORDS = ["lab", "labs", "laboratory", "redirect", "baseline", "analyser", "analyzer", "trend"]
# What every request asks besides the specimen's route, at every level alike: the bleep comes from the doctor the
# ward's own record names, which no story's change touches (at medium the ward names another with the story's change,
# at hard once the recovery is booked and a bleep recorded: Case.hand_over). Named plainly, once: words that say the
# value may move ("whoever", "now") send a careful agent back to the record before it finishes, and the level no
# longer separates anyone.
CONTACT = ("record our on-call doctor's bleep on the accession the specimen goes under, so the lab phones them the "
           "result: our ward's site record names the doctor, and their clinician record has the bleep")


def acc(step: str) -> Ref:
    """The accession id a saved ``accession_specimen`` step created."""
    return Ref(step=step, path=("data", "accession_id"))


def run(step: str) -> Ref:
    """The run id a saved ``book_pickup`` or ``schedule_handoff`` step created."""
    return Ref(step=step, path=("data", "run_id"))


def draw(author: Author, choices: list):
    """One of ``choices`` (sites, codes: not names, so no split applies)."""
    return choices[int(author.rng.integers(len(choices)))]


@dataclass
class Case:
    """A drawn network and its focus order: the state plus the handles scenarios specialise it with."""

    author: Author
    state: dict
    start: datetime
    oid: str = ""
    sid: str = ""
    ward: str = ""
    home: str = ""  # the lab the ward sends the test to
    courier: str = ""  # the courier the plan uses
    hubs: list[str] = field(default_factory=list)
    labs: list[str] = field(default_factory=list)  # home first
    wards: list[str] = field(default_factory=list)
    impossible: Impossibility | None = None
    choice: str = ""  # the lab meeting the ward's requirement when the home lab fails (see require_model)
    withheld: Answer | None = None  # the ward's requirement for the lab, told only when asked about the lab

    # ------------------------------------------------------------------ the world
    @property
    def test(self) -> str:
        return self.state["orders"][self.oid]["test"]

    @property
    def spec(self) -> dict:
        return self.state["specimens"][self.sid]

    @property
    def storage(self) -> str:
        return self.spec["storage"]

    def minutes(self, a: str, b: str) -> int | None:
        route = shortest_route(self.state["roads"], a, b)
        return None if route is None else route[0]

    def name(self, site: str) -> str:
        return self.state["sites"][site]["name"]

    def road(self, a: str, b: str, minutes: int) -> str:
        rid = f"RD-{self.author.serial(100, 999)}"
        self.state["roads"][rid] = {"a": a, "b": b, "minutes": minutes, "open": True, "note": ""}
        return rid

    def add_site(self, kind: str, name: str, prefix: str) -> str:
        a = self.author
        sid = f"{prefix}-{a.serial(100, 999)}"
        self.state["sites"][sid] = {"name": name, "kind": kind, "access": "open", "notice": ""}
        if kind in ("ward", "clinic"):  # the doctor on call and the next on the rota (hard hands over to them)
            on_call, _ = (self.add_clinician(sid, doctor) for doctor in a.pick(_DOCTORS, 2))
            self.state["sites"][sid]["on_call"] = on_call
        return sid

    def add_clinician(self, site: str, name: str) -> str:
        cid = f"DOC-{self.author.serial(100, 999)}"
        self.state["clinicians"][cid] = {"name": name, "ward": site, "bleep": str(self.author.serial(2000, 7999))}
        return cid

    def rota(self) -> list[str]:
        """The clinicians of the focus ward, the one on call first."""
        on_call = self.state["sites"][self.ward]["on_call"]
        return [on_call] + [c for c, x in sorted(self.state["clinicians"].items())
                            if x["ward"] == self.ward and c != on_call]

    def bleep(self, clinician: str = "") -> str:
        """``clinician``'s bleep; by default the on-call doctor's at the start."""
        return self.state["clinicians"][clinician or self.rota()[0]]["bleep"]

    def add_lab(self, tests: list[str], close: str = "") -> str:
        a = self.author
        name, taken = a.pick(_LABS), self.lab_names()
        while name in taken:  # drawn from the split's half of the whole pool, so the halves never mix
            name = a.pick(_LABS)
        lab = self.add_site("lab", name, "LAB")
        limit = a.integer(25, 45)
        self.state["labs"][lab] = {"status": "open", "notice": "", "tests": sorted(tests),
                                   "intake": {"open": "07:00", "close": close or f"{a.integer(18, 21)}:00"},
                                   "capacity": {"limit": limit, "used": {format_time(self.start)[:10]:
                                                                         a.integer(3, limit // 2)}}}
        self.state["analysers"][f"AN-{a.serial(100, 999)}"] = {"lab": lab, "model": a.pick(_MODELS),
                                                               "tests": sorted(tests), "status": "running",
                                                               "note": ""}
        self.labs.append(lab)
        return lab

    def lab_names(self) -> list[str]:
        return [self.state["sites"][x]["name"] for x in self.labs]

    def add_courier(self, location: str, storage: list[str] | None = None, shift_hours: tuple = (8, 10),
                    status: str = "available", available_from: str | None = None, shift_end: str = "") -> str:
        a = self.author
        storage = storage or ["ambient", self.storage]
        cid = f"CR-{a.serial(100, 999)}"
        best = "frozen" if "frozen" in storage else "refrigerated" if "refrigerated" in storage else "ambient"
        self.state["couriers"][cid] = {
            "name": a.pick(_COURIERS), "vehicle": _VEHICLES[best], "storage": sorted(set(storage)),
            "location": location, "available_from": available_from,
            "shift_end": shift_end or format_time(self.start + timedelta(hours=a.integer(*shift_hours))),
            "status": status, "note": ""}
        return cid

    def set(self, *path: str, value) -> object:
        return self.author.op.set_field(path=list(path), value=value)

    def sets(self, *path: str, **fields) -> list:
        return [self.set(*path, k, value=v) for k, v in fields.items()]

    def on_write(self, name: str, description: str, tool: str | tuple[str, ...], effect: list, shown: tuple,
                 when=None, timing: str = "after") -> Trigger:
        """A change set off by the agent's ``tool`` write (or any of several) once ``when`` holds: by default once
        the write has booked a run for the specimen (a refused booking changes nothing)."""
        return self.author.check_trigger(Trigger(
            name=name, description=description, when=when or self.author.pred.run_booked(order_id=self.oid),
            effect=effect, activation=[tool] if isinstance(tool, str) else list(tool), timing=timing,
            observable=Observable(tool=shown[0], args=shown[1])))

    def hand_over(self, story: Trigger, level: str) -> tuple[Trigger, str]:
        """The medium and hard levels' second change, on the ward's side rather than the network's, one hop behind
        the doctor the agent knows: the ward's site record names the next doctor on its rota as on call. At medium
        that comes in the same call as ``story``'s change, so a read of the ward's record once the change is seen
        shows it. At hard it waits until a run is booked after ``story`` (whichever courier and lab the recovery
        took) and its accession records a bleep, at the later of the two writes: whatever bleep the agent recorded,
        and whenever, it is stale by the time both writes are made. The doctor the agent read stays as they were,
        so re-checking their record shows nothing; only the ward's site record shows it. No write fails, and the
        accession and run read as the agent left them. Recording the new doctor's bleep is the whole fix. The
        trigger and the new doctor."""
        pred, (old, new) = self.author.pred, self.rota()[:2]
        if level == "medium":
            (when, tools), moment = self.author.alongside([story]), f"with {story.name}"
        else:
            when = pred.all_of(preds=[pred.fired_before(trigger=story.name),
                                      pred.routed_since(order_id=self.oid, trigger=story.name),
                                      pred.contact_recorded(order_id=self.oid)])
            tools = ("book_pickup", "schedule_handoff", "set_result_contact")
            moment = f"once a run is booked after {story.name} and a bleep recorded on its accession"
        trigger = self.on_write(
            "on_call_handover", f"{moment}, {self.ward}'s on-call passes from {old} (bleep {self.bleep(old)}) to "
            f"{new} (bleep {self.bleep(new)})", tuple(tools),
            [self.set("sites", self.ward, "on_call", value=new)], ("get_site", {"site_id": self.ward}), when=when)
        return trigger, new

    def dry(self, calls: list[Call], triggers: list[Trigger] = ()):
        return self.author.dry_run(self.state, format_time(self.start), calls, list(triggers))

    def time_after(self, calls: list[Call], triggers: list[Trigger] = ()) -> datetime:
        return datetime.fromisoformat(self.dry(calls, triggers).end)

    def must_work(self, calls: list[Call], triggers: list[Trigger] = ()) -> list[dict]:
        """Run ``calls``; every write must succeed (a scenario that builds a failing oracle is a bug)."""
        out = self.dry(calls, triggers)
        for c, r in zip(calls, out.results):
            if c.name in self.author.tools and self.author.tools[c.name].mutates and not r.get("success"):
                raise ValueError(f"{c.name}{c.arguments} fails in the dry run: {r.get('error')}")
        return out.results

    @contextmanager
    def stability_ignored(self):
        """The specimen kept stable for two days meanwhile: dry runs then time routes, whatever the limit."""
        saved = self.spec["stable_minutes"]
        self.spec["stable_minutes"] = 48 * 60
        try:
            yield
        finally:
            self.spec["stable_minutes"] = saved

    def accessioned_at(self, calls: list[Call], triggers: list[Trigger] = ()) -> list[str]:
        """When each successful booking among ``calls`` gets the specimen accessioned (stability ignored)."""
        with self.stability_ignored():
            results = self.dry(calls, triggers).results
        return [r["data"]["accession_at"] for c, r in zip(calls, results)
                if c.name in ("book_pickup", "schedule_handoff") and r.get("success")]

    def recovered_at(self, calls: list[Call], triggers: list[Trigger] = ()) -> str | None:
        """When the last booking of ``calls`` gets the specimen accessioned (stability ignored); None when it fails
        (a courier whose shift ends before the recovery's reads are done)."""
        with self.stability_ignored():
            results = self.dry(calls, triggers).results
        last = [r for c, r in zip(calls, results) if c.name in ("book_pickup", "schedule_handoff")][-1]
        return last["data"]["accession_at"] if last.get("success") else None

    def booked_in_time(self, calls: list[Call], triggers: list[Trigger], until: datetime) -> bool:
        """Whether the last booking of ``calls`` succeeds (stability aside) and gets the specimen accessioned by
        ``until``."""
        at = self.recovered_at(calls, triggers)
        return at is not None and at <= format_time(until)

    def settle_stability(self, valid: list[list[Call]], triggers: list[Trigger], spoiled: list[list[Call]] = (),
                         margin: tuple[int, int] = (15, 30)) -> str:
        """Set the specimen's stability so every run of ``valid`` (with ``triggers``) makes it with a drawn margin
        and every run of ``spoiled`` (with ``triggers``) does not; the stable-until time, ISO."""
        fits = [t for calls in valid for t in self.accessioned_at(calls, triggers)[-1:]]
        late = [t for calls in spoiled for t in self.accessioned_at(calls, triggers)[-1:]]
        until = datetime.fromisoformat(max(fits)) + timedelta(minutes=self.author.integer(*margin))
        until -= timedelta(minutes=until.minute % 5)
        if late and format_time(until) >= min(late):
            raise ValueError(f"no stability limit fits {max(fits)} but not {min(late)}")
        collected = datetime.fromisoformat(self.spec["collected_at"])
        self.spec["stable_minutes"] = int((until - collected).total_seconds() // 60)
        return format_time(until)

    def still_booked(self, calls: list[Call], triggers: list[Trigger] = ()) -> list[str]:
        """When the runs still booked after ``calls`` (with ``triggers``) get the specimen accessioned, earliest
        first, counting only those with no problem but stability."""
        with self.stability_ignored():
            world = self.dry(calls, triggers).world
            return sorted(x["accession_at"] for r, x in world.runs.items() if x["specimen"] == self.sid
                          and world._run_valid(r))

    def spec_site(self) -> str:
        return self.spec["site"]

    def result_of(self, calls: list[Call], triggers: list[Trigger] = ()) -> dict:
        return self.dry(calls, triggers).results[-1]

    # ------------------------------------------------------------------ plan steps
    @property
    def call(self):
        return self.author.call

    def read(self) -> Call:
        return self.call.get_order(order_id=self.oid)

    def specimen(self) -> Call:
        return self.call.get_specimen(specimen_id=self.sid)

    def lab(self, lab: str) -> Call:
        return self.call.get_lab(lab_id=lab)

    def ward_records(self, clinician: str = "") -> list[Call]:
        """The ward's site record and the clinician record of its on-call doctor (``clinician``, once known)."""
        return [self.call.get_site(site_id=self.ward),
                self.call.get_clinician(clinician_id=clinician or self.rota()[0])]

    def find_labs(self) -> Call:
        return self.call.list_labs(test=self.test)

    def couriers(self, location: str = "") -> Call:
        return self.call.list_couriers(**({"location": location} if location else {}))

    def courier_info(self, courier: str) -> Call:
        return self.call.get_courier(courier_id=courier)

    def travel(self, a: str, b: str) -> Call:
        return self.call.get_travel_time(origin_id=a, destination_id=b)

    def see_run(self, step: str) -> Call:
        return self.call.get_run(run_id=run(step))

    def custody(self) -> Call:
        return self.call.get_custody(specimen_id=self.sid)

    def accession(self, lab: str, step: str = "a0", date: str = "") -> Call:
        extra = {"intake_date": date} if date else {}
        return self.call.accession_specimen(save_as=step, specimen_id=self.sid, lab_id=lab, **extra)

    def unaccession(self, step: str = "a0") -> Call:
        return self.call.cancel_accession(accession_id=acc(step))

    def contact(self, step: str = "a0", clinician: str = "") -> Call:
        """``clinician``'s bleep (by default the on-call doctor's at the start) on the accession ``step`` made."""
        return self.call.set_result_contact(accession_id=acc(step), bleep=self.bleep(clinician))

    def register(self, lab: str, step: str = "a0", date: str = "") -> list[Call]:
        """The accession at ``lab`` with the on-call doctor's bleep on it, as the request asks."""
        return [self.accession(lab, step, date), self.contact(step)]

    def pickup(self, courier: str, step: str = "a0", save: str = "r0") -> Call:
        return self.call.book_pickup(save_as=save, specimen_id=self.sid, courier_id=courier, accession_id=acc(step))

    def relay(self, courier: str, hub: str, second: str, step: str = "a0", save: str = "r0") -> Call:
        return self.call.schedule_handoff(save_as=save, specimen_id=self.sid, courier_id=courier, hub_id=hub,
                                          relay_courier_id=second, accession_id=acc(step))

    def unbook(self, step: str = "r0") -> Call:
        return self.call.cancel_run(run_id=run(step))

    def tell(self, message: str) -> Call:
        return self.call.chat_with_user(message=message)

    def analysers_of(self, lab: str) -> list[dict]:
        return [x for _, x in sorted(self.state["analysers"].items()) if x["lab"] == lab]

    def require_model(self, labs: list[str] = ()) -> str:
        """The ward's requirement for the lab, the same on every level of a story that consults: the patient's
        earlier results were run on the home lab's analyser model, and the team reads the trend only against that
        model. One of ``labs`` (each able to take the specimen in time; none on an impossible level) is drawn to
        run the test on that model and every other lab is given another, so ``get_lab`` shows which lab meets the
        requirement but only the ward's answer, to a question about the lab, tells that it is one. Returns the
        drawn lab (``""`` without ``labs``)."""
        a = self.author
        model = self.analysers_of(self.home)[0]["model"]
        self.choice = draw(a, labs) if labs else ""
        for lab in self.labs[1:]:
            for x in self.analysers_of(lab):
                x["model"] = model
                while x["model"] == model and lab != self.choice:
                    x["model"] = a.pick(_MODELS)
        self.withheld = Answer(keywords=_LAB_WORDS, text=(
            f"The patient's earlier {self.test} results were run on a {model} analyser and the team reads the trend "
            f"against them: if it can't be {self.name(self.home)}, it has to be a lab that runs {self.test} on a "
            f"{model}."))
        return self.choice

    def ask_lab(self) -> Call:
        """The oracle's question about the lab (in words the ward does not take for a proposed change of plan)."""
        return self.tell(f"Specimen {self.sid} cannot be accessioned at {self.home} as planned. Which lab should "
                         "it go to? You said the team has a reason to prefer one.")

    def blind_arrival(self, plan: Plan) -> datetime:
        """When the nominal plan's run, booked without its reads (the earliest anyone books it), arrives."""
        return datetime.fromisoformat(self.result_of(plan.without("look").calls)["data"]["arrives"])

    def nominal(self, courier: str = "") -> Plan:
        """Read the order, specimen, home lab, couriers, the drive, the ward's record and its on-call doctor's;
        accession at the home lab with the doctor's bleep; book the pickup."""
        return Plan(look=[self.read(), self.specimen(), self.lab(self.home), self.couriers(),
                          self.travel(self.ward, self.home), *self.ward_records()],
                    register=self.register(self.home), book=[self.pickup(courier or self.courier)])

    def redirect(self, lab: str, courier: str, date: str = "", a: str = "a1", r: str = "r1") -> list[Call]:
        return [*self.register(lab, a, date), self.pickup(courier, a, r)]

    def refuse(self, message: str, changed_by: list[str], facts: list[str], unwind: list[Call] = (),
               reason: str = "") -> list[Call]:
        """Unwind what is booked, ask the ward to recollect, and tell the user why (``I'm sorry, `` + message)."""
        pred = self.author.pred
        self.impossible = Impossibility(changed_by=changed_by, blocking_facts=facts, forbidden=[
            Check(name="nothing_shipped", gate=True, description=f"no courier carries {self.sid} anyway",
                  holds=pred.nothing_shipped(order_id=self.oid), stated=NO_COURIER),
            Check(name="recollection_requested", gate=True, description=f"the ward was asked to recollect for "
                  f"{self.oid}", holds=pred.recollection_requested(order_id=self.oid), stated=RECOLLECT)])
        reason = reason or self.sid  # a value the agent was shown: the blocking notice, or the specimen
        return [*unwind, self.call.request_recollection(order_id=self.oid, reason=reason),
                self.tell(f"I'm sorry, specimen {self.sid} cannot be accessioned in time: {message} "
                          "I have asked the ward to recollect it.")]

    # ------------------------------------------------------------------ checks
    def goal(self) -> list[Check]:
        pred = self.author.pred
        return [Check(name="accessioned_in_time", description=f"a booked run gets {self.sid} accessioned at a lab "
                      f"able to run {self.test} within its intake window and stability limit",
                      holds=pred.routed(order_id=self.oid), stated=ACCESSIONED_IN_TIME),
                Check(name="contact_current", description=f"that run's accession records the bleep of the doctor "
                      f"{self.ward}'s site record names", holds=pred.contact_current(order_id=self.oid),
                      stated=CONTACT)]

    def checklist(self, trigger: str) -> list[Check]:
        """The milestones of a recovery, each an outcome reached once the change was met (by any route: a read, a
        listing, a failed write's error, a booking that shows the courier's notes; meeting it earns nothing by
        itself): nothing halted or off track left standing, the ward asked about the lab before the booking (when
        it has a requirement), a run booked since the change that gets the specimen accessioned in time (at the
        lab meeting the requirement, if any), and its accession recording the bleep of the doctor the ward's record
        names at the end (a milestone of its own, so a recovery with a stale bleep keeps the route's credit). The
        gate: nothing booked would spoil it."""
        pred = self.author.pred
        saw = pred.noticed(trigger=trigger)
        asked = [Check(name="asked_lab", description="after meeting the change, the agent asked the ward about the "
                       "lab before booking the new run", holds=pred.all_of(preds=[
                           saw, pred.asked_user(about=self.withheld.keywords, before="book_pickup")]),
                       stated=CONSULT.strip())] if self.choice else []
        lab = {"lab_id": self.choice} if self.choice else {}
        routed = pred.all_of(preds=[saw, pred.routed_since(order_id=self.oid, trigger=trigger, **lab)])
        return [
            Check(name="stale_unwound", description=f"after meeting {trigger}, no halted or off-track run of "
                  f"{self.sid} is left standing", holds=pred.all_of(preds=[saw, pred.no_stale_run(order_id=self.oid)]),
                  stated=UNWIND),
            *asked,
            Check(name="rerouted", description=f"a run booked after {trigger} gets {self.sid} accessioned in time"
                  + (f" at {self.choice}, the lab meeting the ward's requirement" if self.choice else ""),
                  holds=routed, stated=self.withheld.text if self.choice else ACCESSIONED_IN_TIME),
            Check(name="contact_current", description=f"that run's accession records the bleep of the doctor "
                  f"{self.ward}'s site record names", holds=pred.all_of(preds=[
                      routed, pred.contact_current(order_id=self.oid)]), stated=CONTACT),
            Check(name="no_spoiled_run", gate=True, description=f"no booked run of {self.sid} would deliver it "
                  "spoiled or to a lab that cannot take it", holds=pred.nothing_stale(order_id=self.oid),
                  stated=NOTHING_SPOILED),
        ]


def new_case(author: Author, test: str = "", start: datetime | None = None, n_labs: int = 3) -> Case:
    """A seeded network on a morning between 08:00 and 11:00 with its focus order at a ward."""
    a = author
    if start is None:
        start = datetime(a.integer(2024, 2025), 1, 1) + timedelta(days=a.integer(10, 330), hours=a.integer(8, 10),
                                                                  minutes=5 * a.integer(0, 11))
    state: dict = {k: {} for k in ("sites", "clinicians", "roads", "labs", "analysers", "tests", "orders",
                                   "specimens", "couriers", "accessions", "runs")}
    state["counters"] = {"accession": a.integer(10000, 89999), "run": a.integer(1000, 8999)}
    case = Case(a, state, start)
    codes = sorted(_TESTS)
    test = test or draw(a, codes)
    others = [c for c in codes if c != test]
    others = [others[int(i)] for i in a.rng.permutation(len(others))[:3]]
    for code in codes:  # the test catalogue is the same in every region; labs run some of it
        name, kind, storage, _ = _TESTS[code]
        state["tests"][code] = {"name": name, "specimen": kind, "storage": storage}
    for name in a.pick(_WARDS, a.integer(1, 2)):
        case.wards.append(case.add_site("ward", name, "WRD"))
    for name in a.pick(_CLINICS, a.integer(1, 2)):
        case.wards.append(case.add_site("clinic", name, "CLN"))
    for name in a.pick(_HUBS, a.integer(1, 2)):
        case.hubs.append(case.add_site("hub", name, "HUB"))
    case.oid = f"ORD-{a.serial(10000, 99999)}"
    case.sid = f"SP-{a.serial(10000, 99999)}"
    case.ward = case.wards[0]
    _, kind, storage, _ = _TESTS[test]
    collected = start - timedelta(minutes=5 * a.integer(2, 8))
    state["specimens"][case.sid] = {"order": case.oid, "patient": f"MRN-{a.serial(100000, 999999)}", "type": kind,
                                    "storage": storage, "collected_at": format_time(collected),
                                    "stable_minutes": 24 * 60, "site": case.ward, "note": ""}  # drawn by the story
    state["orders"][case.oid] = {"patient": state["specimens"][case.sid]["patient"], "ward": case.ward, "test": test,
                                 "specimen": case.sid, "priority": "routine", "status": "open", "note": ""}
    for _ in range(n_labs):
        case.add_lab([test] + [c for c in others if a.chance(0.6)])
    case.home = case.labs[0]
    # roads: a drawn chain over every site, a few chords; the home lab reachable from the ward
    sites = list(state["sites"])
    order = [sites[int(i)] for i in a.rng.permutation(len(sites))]
    for x, y in zip(order, order[1:]):
        case.road(x, y, a.integer(10, 30))
    for _ in range(a.integer(2, 4)):
        x, y = (sites[int(i)] for i in a.rng.choice(len(sites), 2, replace=False))
        case.road(x, y, a.integer(15, 45))
    # background: other orders, couriers out of play
    for _ in range(a.integer(1, 2)):
        code = draw(a, others)
        name, kind2, storage2, (l2, h2) = _TESTS[code]
        o, s = f"ORD-{a.serial(10000, 99999)}", f"SP-{a.serial(10000, 99999)}"
        w = draw(a, case.wards)
        patient = f"MRN-{a.serial(100000, 999999)}"
        state["specimens"][s] = {"order": o, "patient": patient, "type": kind2, "storage": storage2,
                                 "collected_at": format_time(start - timedelta(minutes=5 * a.integer(1, 10))),
                                 "stable_minutes": 5 * (a.integer(l2, h2) // 5), "site": w, "note": ""}
        state["orders"][o] = {"patient": patient, "ward": w, "test": code, "specimen": s, "priority": "routine",
                              "status": "open", "note": ""}
    for _ in range(a.integer(1, 2)):
        case.add_courier(draw(a, case.hubs + case.wards), ["ambient"] if storage != "ambient" else ["ambient"],
                         status="off_shift", shift_end=format_time(start - timedelta(hours=a.integer(1, 3))))
    if storage != "ambient":
        case.add_courier(draw(a, case.hubs), ["ambient"])  # in service, but cannot keep the specimen's condition
    case.courier = case.add_courier(draw(a, case.hubs + case.wards[1:]), shift_hours=(7, 9))
    return case


def make_task(case: Case, query: str, triggers: list[Trigger], nominal: Plan | list[Call], oracle: list[Call],
              persona: str, answers: dict[tuple, str] | None = None, alternatives: list[list[Call]] = ()) -> Task:
    """The task. The ward's coordinator is the user; the oracle, like a careful coordinator, closes with a
    drawn handful of look-ups (the order, the specimen, the custody chain, the ward's orders, the labs) before
    its last word to the ward, so its call sequence varies between seeds while no measured timing moves.
    ``alternatives``: the other complete recoveries that get the specimen accessioned in time.

    The ward answers alike on every level, solvable or not: to any proposed change of plan with its hard
    constraints (the specimen accessioned before it goes off, by a courier that keeps it; ask about another
    lab), to a question about the lab, a courier, a recollection or the bleep with what holds for every order. The
    query asks for the ward's bleep on the accession at every level alike (:data:`CONTACT`), so its words never
    tell the hard level, where the bleep moves."""
    a = case.author
    order = case.state["orders"][case.oid]
    closing = [case.read(), case.specimen(), case.custody(), a.call.list_orders(ward_id=case.ward),
               a.call.list_sites(kind="lab")]
    picked = a.rng.permutation(len(closing))[:a.integer(1, 3)]
    said = len(oracle)
    while said and oracle[said - 1].name == "chat_with_user":  # the last word stays last
        said -= 1
    steps = oracle[:said] + [closing[int(k)] for k in picked] + oracle[said:]
    replies = {  # a ward with a requirement for the lab tells it instead (withheld answers come first)
        ("bleep", "doctor", "contact", "phone", "phoned"): "Our ward's site record names our on-call doctor, and "
                                                          "their clinician record has the bleep.",
        ("lab", "labs", "laboratory", "redirect"): "Any lab that runs the test will do, as long as the specimen is "
                                                   "accessioned before it goes off.",
        ("courier", "couriers", "relay", "handoff"): "Any courier in service that can keep the specimen will do, as "
                                                     "long as it is accessioned before it goes off.",
        ("recollect", "redraw", "new sample", "spoil"):
            "Only ask us to recollect if there is truly no way to get this specimen tested in time.",
        **(answers or {})}
    profile = UserProfile(
        persona=f"nurse coordinator at {case.name(order['ward'])}, {persona}",
        known_facts=[f"order {case.oid}", f"specimen {case.sid}", f"test {order['test']}",
                     f"patient {order['patient']}"],
        clarifications=[Answer(keywords=list(k), text=t) for k, t in replies.items()],
        withheld=[case.withheld] if case.withheld else [],
        insist=f"Specimen {case.sid} for order {case.oid} has to be accessioned before it goes off, by a courier "
               f"that can keep it; if it cannot be {case.home}, ask me about the lab before you book one.",
        fallback="That is all I know; please get the specimen to the lab as I asked.")
    solvable = case.impossible is None
    return Task(query=f"{query} Our ward is {case.ward}; please also {CONTACT}.", profile=profile,
                start_time=format_time(case.start), initial_state=case.state,
                triggers=triggers, checklist=case.checklist(triggers[0].name) if solvable else [],
                static_checklist=case.goal(),
                nominal_plan=nominal.calls if isinstance(nominal, Plan) else nominal, oracle=steps,
                alternatives=list(alternatives), solvable=solvable, impossibility=case.impossible)


def retrying(build_once, tries: int = 12):
    """``build_once(author, level)`` until a draw fits its story (a draw whose timings cannot tell the stale plan
    from the recovery is redrawn from the same generator, so the instance stays a function of the seed)."""

    def build(author: Author, level: str) -> Task:
        for attempt in range(tries):
            try:
                return build_once(author, level)
            except ValueError:
                if attempt == tries - 1:
                    raise
        raise AssertionError("unreachable")

    build.__doc__ = build_once.__doc__
    return build


def options(case: Case, before: list[Call], triggers: list[Trigger], keep: bool = False,
            couriers: list[str] | None = None) -> list[tuple[str, str, str]]:
    """Every direct route still open after ``before`` (run with ``triggers``): ``(accessioned_at, lab, courier)``,
    earliest first, stability ignored; ``keep``: the home accession ``a0`` stands, so only the home lab."""
    state = case.state
    labs = [case.home] if keep else case.labs
    couriers = couriers if couriers is not None else [
        c for c, x in sorted(state["couriers"].items()) if x["status"] == "available" and case.storage in x["storage"]]
    with case.stability_ignored():
        ran = case.dry(before, triggers)  # once: each route goes on from here
    out = []
    for lab in labs:
        for c in couriers:
            steps = [case.pickup(c, "a0", "zr")] if keep else case.redirect(lab, c, a="zz", r="zr")
            last = ran.then(steps).results[-1]
            if last.get("success"):
                out.append((last["data"]["accession_at"], lab, c))
    return sorted(out)


def finish(case: Case, level: str, triggers: list[Trigger], plan: Plan, seen: list[Call], unwind: list[Call],
           refusal: str, facts: list[str], query: str, persona: str, answers: dict | None = None,
           keep_lab: bool = False, reason: str = "", consult: bool = False) -> Task:
    """The recovery every story shares, sized by level, with timings measured on the world.

    After the stale plan and the reads that show the change (``seen``) and the unwinding (``unwind``), the oracle
    looks for the earliest direct route that still gets the specimen accessioned: easy takes it at once; medium first
    reads the labs and couriers it weighs; hard also rules out a trap (the lab nearest the ward is full today, shown
    by ``get_lab``) and checks the courier it picks. At medium and hard the ward's on-call doctor hands over
    (:meth:`Case.hand_over`: with the story's change, or once the run is booked with a bleep on its accession), so the
    oracle reads the ward's record and the new doctor's again and records the new bleep. The specimen's stability
    limit is then drawn so the nominal plan (without the change) and the recovery fit while the stale plan does not.
    Impossible: no lab but the home lab runs the test and no route the change leaves fits the stability limit; the
    oracle reads the evidence, unwinds, asks for recollection and says why. With ``consult`` (medium and hard), the
    change leaves several labs and the ward, asked before the booking, tells its requirement for the lab, which one of
    them meets (drawn, see :meth:`Case.require_model`); every one of them is made to fit the stability limit. The ward
    of a consulting story has the requirement on its impossible level too, so nothing it says tells the levels apart.

    Every other direct route that fits the stability limit (another courier, another lab that takes the specimen
    in time; with ``consult`` only to the lab the ward needs) is an equally valid recovery: the task lists each as
    an alternative solution."""
    a = case.author
    stale = plan.calls
    before = stale + seen + unwind
    doctor = ""  # medium and hard: the ward's on-call doctor once the handover has come
    if level == "hard":  # the trap: the lab nearest the ward has no capacity left today
        others = [x for x in case.labs if x != case.home]
        trap = min(others, key=lambda x: (case.minutes(case.ward, x) or 999, x))
        day = format_time(case.start)[:10]
        case.state["labs"][trap]["capacity"]["used"][day] = case.state["labs"][trap]["capacity"]["limit"]
    if level in ("medium", "hard"):
        handover, doctor = case.hand_over(triggers[0], level)
        triggers = [*triggers, handover]
    if level == "impossible":
        for lab in case.labs[1:]:
            case.state["labs"][lab]["tests"] = [t for t in case.state["labs"][lab]["tests"] if t != case.test]
            for x in case.state["analysers"].values():
                if x["lab"] == lab:
                    x["tests"] = [t for t in x["tests"] if t != case.test]
    if level in ("medium", "hard") and not keep_lab:  # the assigned courier's shift ends soon after its run
        done = datetime.fromisoformat(case.result_of(stale)["data"]["arrives"])
        case.state["couriers"][case.courier]["shift_end"] = format_time(done + timedelta(minutes=a.integer(5, 10)))
        case.add_courier(draw(a, case.hubs + case.labs[1:]))  # the next shift's courier, on duty
    base_at = case.accessioned_at(stale)  # the nominal plan in a world without the change
    if not base_at:
        raise ValueError("the nominal plan fails without the change")
    stale_at = case.still_booked(stale, triggers)  # the stale run as the change leaves it, if still booked
    if level == "impossible":  # ... and as it leaves the same writes made without reading first (sooner)
        stale_at += case.still_booked([c for c in stale if a.tools[c.name].mutates], triggers)
    found = options(case, before, triggers, keep=keep_lab)
    if level == "impossible":
        fits = base_at[-1]
        worst = min([t for t, _, _ in found] + stale_at, default="9999")
        until = datetime.fromisoformat(fits) + timedelta(minutes=a.integer(10, 20))
        until -= timedelta(minutes=until.minute % 5)
        if format_time(until) >= worst:
            raise ValueError(f"an alternative at {worst} would still fit")
        case.spec["stable_minutes"] = int((until - datetime.fromisoformat(case.spec["collected_at"]))
                                          .total_seconds() // 60)
        oracle = stale + seen + [case.find_labs()] + case.refuse(refusal, [t.name for t in triggers], facts, unwind,
                                                                    reason)
        if consult:
            case.require_model()
        return make_task(case, query + (CONSULT if consult else ""), triggers, plan, oracle, persona, answers)
    if not found:
        raise ValueError("no route survives the change")
    earliest = {}  # lab: the earliest route to it
    for route in found:
        earliest.setdefault(route[1], route)
    consult = consult and level in ("medium", "hard")
    if consult and len(earliest) < 2:
        raise ValueError("the change leaves the ward no choice of lab")
    if level == "easy":
        pick = found[0]
        look = [case.find_labs()] if pick[1] != case.home else []
    else:
        look = [case.find_labs(), case.couriers()]
        pick = earliest[case.require_model(sorted(earliest))] if consult else found[0]
        if level == "medium":
            look += [case.lab(pick[1]), case.courier_info(pick[2])]
        else:
            others = [x for x in case.labs if x != case.home]
            look += [case.lab(x) for x in others] + [case.travel(case.spec_site(), x) for x in others] + \
                [case.courier_info(c) for c in dict.fromkeys([case.courier, pick[2]])]

    def recovery(route: tuple[str, str, str]) -> list[Call]:
        _, lab, courier = route
        kept = lab == case.home and keep_lab
        fix = [case.pickup(courier, "a0", "r1")] if kept else case.redirect(lab, courier)
        recontact = [*case.ward_records(doctor), case.contact("a0" if kept else "a1", doctor)] if doctor else []
        return stale + seen + look + ([case.ask_lab()] if consult else []) + unwind + fix + recontact

    oracle = recovery(pick)
    # every lab the ward could have named must take the specimen in time, so only asking tells them apart: each by
    # its earliest route that still works once the recovery's reads are done
    reached = [next(filter(None, (case.recovered_at(recovery(route), triggers) for route in found
                                  if route[1] == lab)), None) for lab in earliest] if consult else \
        [case.recovered_at(oracle, triggers)]
    if None in reached:
        raise ValueError("a lab the ward could name is out of reach once the recovery's reads are done")
    fits = max([base_at[-1], *reached])
    until = datetime.fromisoformat(fits) + timedelta(minutes=a.integer(15, 30))
    until -= timedelta(minutes=until.minute % 5)
    if stale_at and format_time(until) >= stale_at[0]:
        until = datetime.fromisoformat(stale_at[0]) - timedelta(minutes=5)
        if format_time(until) < fits:
            raise ValueError(f"the stale run ({stale_at[0]}) is no later than the recovery ({fits})")
    case.spec["stable_minutes"] = int((until - datetime.fromisoformat(case.spec["collected_at"])).total_seconds() // 60)
    case.must_work(oracle, triggers)
    others = [recovery(route) for route in found if route != pick and (not consult or route[1] == pick[1])]
    alternatives = [calls for calls in others if case.booked_in_time(calls, triggers, until)]
    return make_task(case, query + (CONSULT if consult else ""), triggers, plan, oracle, persona, answers,
                     alternatives)
