"""The seeded farm every Irrigation scenario specialises, and the pieces scenarios share.

:func:`new_farm` draws a farm from the author's generator: three pump houses (one pump each) joined by farm
tracks, one field per pump house whose header junction hangs off the house by an open main valve, closed
bypass mains between neighbouring headers (lower max flow), three segments on the first field and two to four
on the others, each behind its own field valve, morning and evening watering windows per segment, off-shift
crews at some pump houses, the district allocation, a fertigation mix per field (and a spare the injectors hold)
and a background run on the far field. :class:`Job` is the watering a story revolves around:
its plan steps, checklist and the oracle's apology; :func:`make_task` assembles the task and lists the other
solutions the farm offers (:func:`alternatives`), with the fertigation mix every level asks for and the medium and
hard levels' second change to it (:func:`mix_moves`: with the story's change at medium, after the recovery at hard).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

import itertools
import json

from sttgym.authoring import Author, Plan
from sttgym.checklist import Check
from sttgym.clock import format_time
from sttgym.envs.arena.irrigation.world import IrrigationWorld, run_minutes
from sttgym.footprint import RULE
from sttgym.judge import Impossibility
from sttgym.task import Call, Ref, Task
from sttgym.triggers import Observable, Trigger
from sttgym.user import Answer, UserProfile

__all__ = ["Author", "Plan", "Task", "Farm", "Job", "new_farm", "run_ref", "make_task"]

_FARMS = ["Willow Creek", "Red Barn", "Sunfield", "Oak Hollow", "Bramble Ridge", "Clearwater", "Stony Brook",
          "Golden Acre", "Maple Bend", "Heron Flats", "Cedar Vale", "Foxglove", "Dry Gulch", "Lark Meadow"]
_FIELDS = ["North Forty", "River Flat", "Long Acre", "Top Paddock", "Mill Field", "Orchard Block", "Low Meadow",
           "East Terrace", "Windmill Field", "Back Forty", "Church Acre", "Quarry Field", "Pond Field", "Hill Block"]
_CROPS = ["maize", "wheat", "lettuce", "tomatoes", "alfalfa", "potatoes", "onions", "sugar beet", "carrots",
          "soybeans", "strawberries", "barley", "sunflowers", "cabbage", "melons", "peppers"]
_SEEDLINGS = ["lettuce seedlings", "tomato transplants", "onion sets", "cabbage seedlings", "pepper transplants",
              "strawberry runners", "melon seedlings", "celery plugs"]
_PEOPLE = ["Ana Ruiz", "Ben Carter", "Chloe Martin", "Dmitri Petrov", "Esi Mensah", "Farid Khan", "Greta Lund",
           "Hugo Alves", "Ines Costa", "Jamal Wright", "Keiko Sato", "Lars Holm", "Maya Patel", "Nils Berg"]
_STATIONS = ["Lower", "Upper", "Riverside", "Hilltop", "Well", "Canal", "Weir", "Spring", "Bore", "Dam"]
_WATERS = ["river", "borehole", "reservoir"]  # where each pump house draws from, one each
_MIXES = ["NPK 15-5-30", "calcium nitrate", "NPK 20-20-20", "potassium nitrate", "MAP 12-61-0", "magnesium sulphate",
          "NPK 13-40-13", "urea-ammonium nitrate", "NPK 10-10-40", "monopotassium phosphate"]


def told(phrase: str) -> str:
    """``phrase``, which must be words of what every agent reads first (the world description, the tools and the
    engine's collateral rule): the ``stated`` quote of the checks that enforce it."""
    shown = f"{IrrigationWorld.description} {IrrigationWorld.open_valve.__doc__} {RULE}"
    assert phrase.lower() in " ".join(shown.lower().split()), phrase
    return phrase


WATERED = told("valid scheduled runs deliver its whole need inside its allowed windows")
NEED = told("no block may be scheduled more than its need")
FLOOD = told("opening one by hand floods its block")
GIVE_UP = told("leave no run scheduled for it and tell the manager why")
UNWIND = told("cancel or release anything you set up that the final plan does not use")


def run_ref(step: str) -> Ref:
    """The run id a saved ``schedule_run`` step created."""
    return Ref(step=step, path=("data", "run_id"))


def draw(author: Author, items: list):
    return items[author.integer(0, len(items) - 1)]


def iso(moment: datetime) -> str:
    return format_time(moment)


@dataclass
class Farm:
    """A drawn farm: the state plus the handles scenarios specialise it with."""

    author: Author
    state: dict
    start: datetime
    day: datetime
    houses: list[str] = field(default_factory=list)
    pumps: list[str] = field(default_factory=list)  # pumps[i] sits in houses[i]
    fields: list[str] = field(default_factory=list)  # fields[i] is fed from houses[i]
    headers: list[str] = field(default_factory=list)  # junction of fields[i]
    mains: list[str] = field(default_factory=list)  # main valve houses[i] -> headers[i]
    bypass: list[str] = field(default_factory=list)  # bypass[i]: headers[i] - headers[i + 1]
    segs: list[list[str]] = field(default_factory=list)  # segments of fields[i]
    crews: list[str] = field(default_factory=list)
    mixes: list[str] = field(default_factory=list)  # mixes[i]: the mix of fields[i]; the last one is the spare

    # ids and names
    def valve(self, a: str, b: str, kind: str, max_flow: int, length: int, status: str, house: str) -> str:
        vid = f"V-{self.author.serial(100, 999)}"
        self.state["valves"][vid] = {"name": f"{kind} valve {a}-{b}", "a": a, "b": b, "kind": kind,
                                     "max_flow": max_flow, "length": length, "status": status, "house": house,
                                     "unlocked_at": None, "note": ""}
        return vid

    def field_valve(self, seg: str) -> str:
        return next(v for v, x in sorted(self.state["valves"].items()) if x["kind"] == "field" and x["b"] == seg)

    def at(self, hh: int, mm: int = 0, days: int = 0) -> str:
        return iso(self.day + timedelta(days=days, hours=hh, minutes=mm))

    def windows(self, seg: str, *pairs: tuple[str, str]) -> None:
        self.state["segments"][seg]["windows"] = [{"start": a, "end": b} for a, b in pairs]

    def add_crew(self, house: str, status: str = "available", shift_end: str = "") -> str:
        a = self.author
        cid = f"CR-{a.serial(10, 99)}"
        self.state["crews"][cid] = {"name": f"{a.pick(_PEOPLE)}'s crew", "location": house, "available_from": None,
                                    "shift_end": shift_end or iso(self.start + timedelta(hours=a.integer(8, 10))),
                                    "status": status, "note": ""}
        self.crews.append(cid)
        return cid

    # triggers
    def set(self, *path: str, value) -> object:
        return self.author.op.set_field(path=list(path), value=value)

    def sets(self, *path: str, **fields) -> list:
        return [self.set(*path, k, value=v) for k, v in fields.items()]

    def trigger(self, name: str, description: str, when, effect: list, shown: tuple, activation: tuple = ()) -> Trigger:
        return self.author.check_trigger(Trigger(
            name=name, description=description, when=when, effect=effect, activation=list(activation),
            timing="after", observable=Observable(tool=shown[0], args=shown[1])))

    def on_write(self, name: str, description: str, tool: str, effect: list, shown: tuple, when=None) -> Trigger:
        """A change set off by the agent's ``tool`` write (once ``when`` holds; by default at once)."""
        when = when or self.author.pred.all_of(preds=[])
        return self.trigger(name, description, when, effect, shown, activation=(tool,))

    def cascade(self, name: str, description: str, path: list, value, effect: list, shown: tuple) -> Trigger:
        """A change that follows once an earlier one left ``path`` at ``value``."""
        return self.trigger(name, description, self.author.pred.field_equals(path=path, value=value), effect, shown)

    # dry runs
    def run(self, calls: list[Call], triggers: list[Trigger] = (), strict: bool = True):
        result = self.author.dry_run(self.state, iso(self.start), calls, list(triggers))
        if strict:
            for c, r in zip(calls, result.results):
                if c.name in self.author.tools and self.author.tools[c.name].mutates and not r.get("success"):
                    raise ValueError(f"{c.name}{c.arguments} fails in the dry run: {r.get('error')}")
        return result

    def time_after(self, calls: list[Call], triggers: list[Trigger] = ()) -> datetime:
        return datetime.fromisoformat(self.run(calls, triggers).end)

    def far_feed(self, flow: int) -> None:
        """Let the far pump house feed the first field at ``flow`` through both bypass mains, next to its own
        background run."""
        valves, pump = self.state["valves"], self.state["pumps"][self.pumps[2]]
        for v in self.bypass:
            valves[v]["max_flow"] = max(valves[v]["max_flow"], flow)
        pump["capacity"] = max(pump["capacity"], flow + 80)
        valves[self.mains[2]]["max_flow"] = max(valves[self.mains[2]]["max_flow"], flow + 80)

    def mix(self, seg: str) -> str:
        """The fertigation mix the record of ``seg``'s field names."""
        return self.state["fields"][self.state["segments"][seg]["field"]]["mix"]

    def background(self, seg: str, pump: str, start: str, flow: int) -> None:
        """A run already scheduled for another segment (made with the real tool)."""
        call = self.author.call.schedule_run(segment_id=seg, pump_id=pump, start=start, flow_m3h=flow,
                                             mix_id=self.mix(seg))
        self.state = self.run([call]).state
        for r in self.state["runs"].values():
            r["created"] = iso(self.start - timedelta(days=1))


def new_farm(author: Author, start: datetime | None = None, background: bool = True) -> Farm:
    """A seeded farm; the episode starts between 05:00 and 06:25 (or at ``start``)."""
    a = author
    day = datetime(a.integer(2024, 2025), 1, 1) + timedelta(days=a.integer(120, 250))
    if start is None:
        start = day + timedelta(hours=a.integer(5, 5), minutes=5 * a.integer(0, 17))
    day = datetime(start.year, start.month, start.day)
    state: dict = {k: {} for k in ("pumphouses", "pumps", "junctions", "fields", "segments", "valves", "tracks",
                                   "crews", "runs", "mixes")}
    state["counters"] = {"run": a.integer(100, 899)}
    state["allocation"] = {"permit": f"AL-{a.serial(1000, 9999)}", "limit": {},
                           "default_limit": 100 * a.integer(15, 30),
                           "notice": "district allocation: daily quota in m3, resets at 00:00"}
    farm = Farm(a, state, start, day)
    names, waters = a.pick(_STATIONS, 3), [_WATERS[int(i)] for i in a.rng.permutation(3)]
    for i, (name, fname) in enumerate(zip(names, a.pick(_FIELDS, 3))):
        h = f"PH-{a.serial(10, 99)}"
        state["pumphouses"][h] = {"name": f"{name} pump house", "water": f"{waters[i]} water", "notice": ""}
        p = f"P-{a.serial(100, 999)}"
        state["pumps"][p] = {"name": f"{name} pump", "house": h, "capacity": 10 * a.integer(14, 20), "status": "ready",
                             "note": ""}
        f = f"F-{a.serial(10, 99)}"
        state["fields"][f] = {"name": fname, "crop": a.pick(_CROPS)}
        j = f"J-{a.serial(10, 99)}"
        state["junctions"][j] = {"name": f"{fname} header"}
        farm.houses.append(h)
        farm.pumps.append(p)
        farm.fields.append(f)
        farm.headers.append(j)
        farm.mains.append(farm.valve(h, j, "main", 10 * a.integer(15, 20), a.integer(10, 30), "open", h))
        segs = []
        for k in range(a.integer(2, 4) if i else 3):
            s = f"SG-{a.serial(1000, 9999)}"
            state["segments"][s] = {"field": f, "name": f"{fname} block {k + 1}", "crop": state["fields"][f]["crop"],
                                    "moisture": a.integer(14, 26), "need_m3": 10 * a.integer(8, 16),
                                    "windows": [], "priority": "normal", "note": ""}
            farm.windows(s, (farm.at(a.integer(3, 4)), farm.at(a.integer(10, 11))),
                         (farm.at(a.integer(17, 18)), farm.at(22, 30)))
            farm.valve(j, s, "field", 10 * a.integer(10, 14), 5, "closed", h)
            segs.append(s)
        farm.segs.append(segs)
    for i in range(2):
        farm.bypass.append(farm.valve(farm.headers[i], farm.headers[i + 1], "bypass", 10 * a.integer(9, 12),
                                      a.integer(30, 50), "closed", farm.houses[i]))
    order = [farm.houses[int(i)] for i in a.rng.permutation(3)]
    for x, y in zip(order, order[1:]):
        state["tracks"][f"TR-{a.serial(10, 99)}"] = {"a": x, "b": y, "minutes": a.integer(12, 35), "open": True}
    for h in farm.houses:
        if a.chance(0.5):
            farm.add_crew(h, status="off_shift", shift_end=iso(start - timedelta(hours=1)))
    for name in a.pick(_MIXES, 4):
        farm.mixes.append(f"FM-{a.serial(100, 999)}")
        state["mixes"][farm.mixes[-1]] = {"name": f"{name} at {a.integer(5, 20) / 10} L/m3"}
    for f, mix in zip(farm.fields, farm.mixes):
        state["fields"][f].update(mix=mix, mix_note="set by the agronomist for the season")
    # background: one run on the last field, on its own pump
    seg = farm.segs[2][-1]
    if background:
        farm.background(seg, farm.pumps[2], iso(start + timedelta(minutes=5 * a.integer(2, 4))),
                        10 * a.integer(6, 7))
    return farm


@dataclass
class Job:
    """The watering a story revolves around: one segment from one pump at one flow and start."""

    farm: Farm
    seg: str
    pump: str
    flow: int
    start: str
    impossible: Impossibility | None = None
    source: str = ""  # the pump the manager wants the block fed from, told only when asked (see choose_source)
    withheld: Answer | None = None

    @property
    def record(self) -> dict:
        return self.farm.state["segments"][self.seg]

    @property
    def need(self) -> int:
        return self.record["need_m3"]

    @property
    def call(self):
        return self.farm.author.call

    def minutes(self, flow: int = 0, volume: int = 0) -> int:
        return run_minutes(volume or self.need, flow or self.flow)

    def end(self, start: str = "", flow: int = 0, volume: int = 0) -> str:
        begin = datetime.fromisoformat(start or self.start)
        return iso(begin + timedelta(minutes=self.minutes(flow, volume)))

    # reads
    def read(self, seg: str = "") -> Call:
        return self.call.get_segment(segment_id=seg or self.seg)

    def path(self, pump: str = "", seg: str = "", flow: int | None = None) -> Call:
        return self.call.get_network_path(pump_id=pump or self.pump, segment_id=seg or self.seg,
                                          flow_m3h=self.flow if flow is None else flow)

    def pump_read(self, pump: str = "") -> Call:
        return self.call.get_pump(pump_id=pump or self.pump)

    def tell(self, message: str) -> Call:
        return self.call.chat_with_user(message=message)

    def choose_source(self, pumps: list[str]) -> str:
        """Draw the pump, among ``pumps`` (each able to feed the block, each house drawing other water), whose water
        the manager accepts for the crop. The requirement, the water the crop may get, is told only to a question
        about the pump house; the pump listing shows each house's water."""
        st = self.farm.state
        self.source = draw(self.farm.author, pumps)
        water = st["pumphouses"][st["pumps"][self.source]["house"]]["water"]
        self.withheld = Answer(keywords=["pump", "pumps", "house", "station", "source"], text=(
            f"If it has to be fed from another pump house, it must be one that pumps {water}: any other water "
            f"clogs the drip lines of the {self.record['crop']}."))
        return self.source

    def insist(self, when: str, any_pump: bool = True) -> str:
        """The manager's hard constraint, their answer to any proposed change of plan, worded alike at every level
        of a conflict (so it never tells whether the block can be watered): the block's whole need ``when``, inside
        an allowed window, by any path, flow or start (and pump, unless the story lets the manager choose it)."""
        return (f"{self.seg} needs its {self.need} m3 {when}, inside an allowed watering window; any "
                f"{'pump, ' if any_pump else ''}path, flow or start that does that will do.")

    def ask_source(self) -> Call:
        return self.tell(f"Pump {self.pump} cannot water {self.seg} as planned. Which pump house may feed it?")

    # writes
    def feed_from(self, pump: str) -> list[Call]:
        """Open the bypass mains that join ``pump``'s field to the first one, from the far end inwards."""
        reach = self.farm.bypass[:self.farm.pumps.index(pump)]
        return [self.call.open_valve(valve_id=v) for v in reversed(reach)]

    def schedule(self, start: str = "", pump: str = "", flow: int = 0, seg: str = "", volume: int = 0,
                 step: str | None = None) -> Call:
        """A run carrying the mix the field's record names now (as the story builds it: before any change)."""
        extra = {"volume_m3": volume} if volume else {}
        return self.call.schedule_run(save_as=step, segment_id=seg or self.seg, pump_id=pump or self.pump,
                                      start=start or self.start, flow_m3h=flow or self.flow,
                                      mix_id=self.farm.mix(seg or self.seg), **extra)

    def cancel(self, step: str = "run0") -> Call:
        return self.call.cancel_run(run_id=run_ref(step))

    def nominal(self, *extra: Call) -> Plan:
        """Read the segment, its path and the fields (the mix); ``extra`` writes (valves, crews); schedule the run."""
        return Plan(look=[self.read(), self.path(), self.call.list_fields()], prepare=list(extra),
                    commit=[self.schedule(step="run0")])

    def refuse(self, message: str, changed_by: list[str], facts: list[str]) -> list[Call]:
        """The oracle's apology (``I'm sorry, `` + ``message``); marks the job impossible."""
        pred = self.farm.author.pred
        self.impossible = Impossibility(changed_by=changed_by, blocking_facts=facts, forbidden=[
            Check(name="no_run", gate=True, description=f"no run was left scheduled for {self.seg} anyway",
                  holds=pred.no_run(segment_id=self.seg), stated=GIVE_UP),
            Check(name="no_field_flooded", gate=True, description="no field valve was opened by hand",
                  holds=pred.no_field_flooded(), stated=FLOOD)])
        return [self.tell(f"I'm sorry, {message}")]

    # checks
    def goal(self, segs: list[str] = ()) -> list[Check]:
        pred = self.farm.author.pred
        segs, out = segs or [self.seg], []
        for s in segs:
            out += [Check(name=f"watered_{s}", description=f"valid runs deliver the whole need of {s} inside "
                          "its allowed windows", holds=pred.watered(segment_id=s), stated=WATERED),
                    Check(name=f"not_overwatered_{s}", gate=True, description=f"{s} gets no more than its need",
                          holds=pred.not_overwatered(segment_id=s), stated=NEED)]
        out += [Check(name="fertigated", description=f"{', '.join(segs)} watered, every run carrying the mix its "
                      "field's record names at the end", stated=MIX_ASKED,
                      holds=pred.all_of(preds=[pred.fertigated(segment_id=s) for s in segs])),
                Check(name="no_field_flooded", gate=True, description="no field valve was opened by hand",
                      holds=pred.no_field_flooded(), stated=FLOOD)]
        return out

    def checklist(self, trigger: str, segs: list[str] = (), kept: tuple = ()) -> list[Check]:
        """Milestones counted once the change was shown (by any read, listing or refused write): per block, every
        run left for it valid (and it has one: a block whose run was refused, or cancelled and not replaced, earns
        nothing), then its water coming (in part) from a run scheduled after the change. The ``kept`` blocks, whose
        earlier run survives the change, are gates instead: staying watered is no recovery, only not breaking it."""
        pred = self.farm.author.pred
        saw = pred.noticed(trigger=trigger)
        redo = [s for s in segs or [self.seg] if s not in kept]
        out = [Check(name=f"no_blocked_run_{s}", description=f"once {trigger} was shown, every run left for {s} is "
                     "valid (the stale one cancelled or replaced), and it has one", stated=UNWIND,
                     holds=pred.all_of(preds=[saw, pred.has_run(segment_id=s), pred.no_blocked_run(segment_id=s)]))
               for s in redo]
        if self.withheld:
            out.append(Check(name="asked_source", description="after noticing the change, the agent asked the "
                             "manager which pump house may feed the block before scheduling it elsewhere",
                             stated=CONSULT[CONSULT.index("check"):CONSULT.index(":")],
                             holds=pred.all_of(preds=[saw, pred.asked_user(about=self.withheld.keywords,
                                                                           before="schedule_run")])))
        source = {"pump_id": self.source} if self.source else {}  # other stories' checks stay as they were
        for c in self.goal(segs):
            s = c.name.split("_", 1)[-1]
            if c.gate:
                out.append(c)
            elif c.name == "fertigated":  # its own milestone: a right recovery with a stale mix keeps the others
                out.append(c.model_copy(update={"holds": pred.all_of(preds=[saw, c.holds])}))
            elif s in kept:
                out.append(c.model_copy(update={"gate": True, "description": f"{c.description} (its earlier run "
                                                "survives the change)"}))
            else:
                out.append(c.model_copy(update={
                    "description": f"{c.description}, with a run scheduled after {trigger}"
                                   + (f" from {self.source}" if self.source else ""),
                    "holds": pred.all_of(preds=[saw, pred.watered_since(segment_id=s, trigger=trigger, **source)])}))
        return out


def make_task(job: Job, query: str, triggers: list[Trigger], nominal: Plan | list[Call], oracle: list[Call],
              persona: str, level: str, answers: dict[tuple, str] | None = None, insist: str = "",
              segs: list[str] = (), kept: tuple = ()) -> Task:
    """Assemble the task at ``level``; impossible when the oracle ends in :meth:`Job.refuse`. Before signing off the
    oracle re-reads two drawn records, as operators do, so its call sequence differs between seeds. The manager
    insists on ``insist`` (their hard constraint, worded alike at every level) whenever a change of plan is
    proposed."""
    farm, impossible, answers = job.farm, job.impossible, {**MIX_ANSWER, **(answers or {})}
    nominal = nominal.calls if isinstance(nominal, Plan) else nominal
    a = farm.author
    query = f"{query} {MIX_QUERY}"
    triggers, oracle = mix_moves(job, triggers, oracle, list(segs) or [job.seg], level)
    checks = [job.read(), a.call.list_runs(segment_id=job.seg), a.call.list_pumps(), a.call.get_quota(),
              a.call.read_sensors(segment_id=job.seg), a.call.list_valves(node_id=job.seg), job.pump_read(),
              a.call.list_segments(field_id=farm.state["segments"][job.seg]["field"]), a.call.list_runs()]
    extra = [checks[int(i)] for i in a.rng.permutation(len(checks))[:2]]
    said = len(oracle)
    while said and oracle[said - 1].name == "chat_with_user":  # the last word stays last
        said -= 1
    oracle = oracle[:said] + extra + oracle[said:]
    answers.setdefault(("pump", "flow", "valve", "path", "later", "split", "other"),
                       f"Any {'' if job.withheld else 'pump, '}path, flow or start is fine, as long as the block gets "
                       "its full volume inside an allowed watering window today.")
    profile = UserProfile(
        persona=f"farm manager, {persona}",
        known_facts=[f"segment {job.seg}", f"{job.need} m3", f"pump {job.pump}", f"start {job.start}"],
        clarifications=[Answer(keywords=list(k), text=t) for k, t in answers.items()],
        withheld=[job.withheld] if job.withheld else [],
        insist=insist or None,
        fallback="Everything I know is in my request; please get the block watered as asked.")
    checklist = [] if impossible else job.checklist(triggers[0].name, segs, kept)
    return Task(query=query, profile=profile, start_time=iso(farm.start), initial_state=farm.state,
                triggers=triggers, checklist=checklist, static_checklist=job.goal(segs), nominal_plan=nominal,
                oracle=oracle, alternatives=[] if impossible else alternatives(farm, oracle, nominal, triggers,
                                                                               checklist),
                solvable=impossible is None, impossibility=impossible)


def alternatives(farm: Farm, oracle: list[Call], nominal: list[Call], triggers: list[Trigger],
                 checks: list[Check]) -> list[list[Call]]:
    """The other complete solutions the farm offers: the oracle's recovery with each block it schedules fed from
    each pump (at the run's own start and volume, its flow cut to what the new path carries), the closed mains and
    bypasses on those paths opened; as_is where a dry run makes every write and meets every check but the question
    (a dry run does not talk to the manager; the oracle's question stays in), one per final state."""
    stale = next((i for i, (x, y) in enumerate(zip(oracle, nominal)) if x != y), min(len(oracle), len(nominal)))
    recovery = oracle[stale:]
    # The medium and hard levels' re-read of the fields and fix of the mix act on the runs the schedules make:
    # after them.
    remix = [c for c in recovery if c.name in ("list_fields", "set_run_mix")]
    as_is = oracle[:stale] + [c for c in recovery if c.name not in ("open_valve", "schedule_run") and c not in remix]
    runs = [c for c in recovery if c.name == "schedule_run"]
    base = farm.run(as_is, triggers, strict=False).world
    judged = [c.holds for c in checks if c.name != "asked_source"]
    finals, out = {json.dumps(farm.run(oracle, triggers, strict=False).state, sort_keys=True)}, []
    for pumps in itertools.product(sorted(base.pumps), repeat=len(runs)):
        opens, schedules = [], []
        for run, pump in zip(runs, pumps):
            path = base.get_network_path(pump, run.arguments["segment_id"])["data"]
            if not path["reachable"]:
                break
            opens += [v["valve_id"] for v in path["valves"] if v["kind"] != "field" and v["status"] == "closed"
                      and v["valve_id"] not in opens]
            flow = min(run.arguments["flow_m3h"], path["max_flow"])
            schedules.append(run.model_copy(update={"arguments": {**run.arguments, "pump_id": pump, "flow_m3h": flow}}))
        else:
            plan = as_is + [farm.author.call.open_valve(valve_id=v) for v in opens] + schedules + remix
            dry = farm.run(plan, triggers, strict=False)
            final = json.dumps(dry.state, sort_keys=True)
            if final not in finals and all(r.get("success") for r in dry.results[len(as_is):]) \
                    and all(dry.world.holds(holds, log=dry.firing.log) for holds in judged):
                finals.add(final)
                out.append(plan)
    return out


def new_job(farm: Farm, i: int = 0, k: int = 0, flow: int = 0, start: str = "") -> Job:
    """The job: segment ``k`` of field ``i`` from that field's pump, at ``flow`` (drawn), starting at ``start``
    (drawn: 30 to 60 minutes after the episode starts)."""
    a = farm.author
    flow = flow or 10 * a.integer(7, 9)
    start = start or iso(farm.start + timedelta(minutes=5 * a.integer(6, 12)))
    return Job(farm, farm.segs[i][k], farm.pumps[i], flow, start)


def describe(job: Job) -> str:
    """How the user names the job."""
    seg = job.record
    return (f"segment {job.seg} ({seg['name']}, {seg['crop']}, {job.need} m3) from pump {job.pump} at "
            f"{job.flow} m3/h starting {job.start}")


# The manager's wish to be consulted, in the query of a story that lets them choose the pump house.
CONSULT = (" If my pump can't do it, check with me before you feed it from another pump house: not every source "
           "suits this crop.")

# What every request asks for at every level alike, naming once, plainly, the record the mix comes from.
MIX_ASKED = "each run also needs the field's fertigation mix"
MIX_QUERY = f"{MIX_ASKED[0].upper()}{MIX_ASKED[1:]}; the mix is on the field's record."
MIX_ANSWER = {("mix", "fertigation", "fertiliser", "fertilizer", "nutrient", "nutrients", "injector"):
              "Put the mix from the field's record on each run."}


def mix_moves(job: Job, triggers: list[Trigger], oracle: list[Call], segs: list[str],
              level: str) -> tuple[list[Trigger], list[Call]]:
    """The medium and hard levels' second change, on the field's side rather than the pipes'. At every level alike
    each run must carry the fertigation mix the field's record names (``list_fields``: ``mix``). At medium and hard
    (a solvable request) the agronomist switches the field to the spare mix: at medium in the same call as the
    story's change, so a re-read of the field once the change is seen shows it; at hard at the later of the
    recovery's first run scheduled after the story's change and its mix written (in whichever order, wherever and
    from whichever pump the recovery runs). Only ``list_fields`` shows it: the old mix stays valid, every write goes
    through and each run reads as the agent left it, so a mix written from the first read is stale and only a
    re-read of the field catches it. The mix changes no flow, window or quota, so setting it on the runs left
    (``set_run_mix``) is the whole fix. Returns the triggers and oracle, extended."""
    farm, pred, story = job.farm, job.farm.author.pred, triggers[0].name
    if level not in ("medium", "hard") or job.impossible:
        return triggers, oracle
    owner, spare = farm.state["segments"][job.seg]["field"], farm.mixes[-1]
    if {farm.state["segments"][s]["field"] for s in segs} != {owner}:
        raise ValueError(f"the requested blocks {segs} must share one field, whose mix switches")
    if level == "medium":
        (when, activation), moment = farm.author.alongside(triggers[:1]), f"with {story}"
    else:
        when, activation = pred.mixed_since(segments=segs, trigger=story), ("schedule_run", "set_run_mix")
        moment = f"once the recovery after {story} has a run with a mix"
    switched = farm.trigger(
        "mix_switched", f"{moment}, field {owner} switches to {spare}", when,
        farm.sets("fields", owner, mix=spare, mix_note=f"switched to {spare} after a leaf-tissue test"),
        ("list_fields", {}), activation=tuple(activation))
    triggers = [*triggers, switched]
    dry = farm.run(oracle, triggers)
    left = [c.save_as for c, r in zip(oracle, dry.results) if c.name == "schedule_run" and c.save_as
            and dry.state["runs"][r["data"]["run_id"]]["status"] == "scheduled"]
    return triggers, [*oracle, farm.author.call.list_fields(),
                      *[farm.author.call.set_run_mix(run_id=run_ref(step), mix_id=spare) for step in left]]


__all__ += ["new_job", "describe", "draw", "iso", "_SEEDLINGS", "CONSULT", "MIX_QUERY"]
