"""The sandbox's API on a realistic generated world: the proxy behaves like the in-process class everywhere the engine
looks, episodes replay identically through both, limits stop calls without stopping the episode."""

from __future__ import annotations

import ast
import copy
import inspect
import json
import multiprocessing
import os
import subprocess
import sys
import time
import typing

import pytest

from sttgym.actions import ToolCall
from sttgym.agents.reference import OracleAgent
from sttgym.authoring import tool_specs
from sttgym.checklist import Check
from sttgym.clock import Clock
from sttgym.core import ToolEnv
from sttgym.env import ArenaEnv
from sttgym.registry import DOMAINS, Domain
from sttgym.rollout import rollout
from sttgym.schema import Op, Pred
from sttgym.synth import sandbox
from sttgym.synth.audit import SAFE_BUILTINS, execute
from sttgym.synth.sandbox import Limits, SandboxError, Unsafe, audit, call_function, load_world, unload
from sttgym.task import Call, Task
from sttgym.tools import collect_tools, read_annotation
from sttgym.triggers import Observable, Trigger
from sttgym.user import UserProfile
from sttgym.world import World, json_copy, operations_of, predicates_of
from tests.synth.conftest import REQUIRED

# A world as the synthesis pipeline asks an LLM to write it: a domain outside the ten, in the project's conventions.
GARAGE = '''from __future__ import annotations

from typing import Literal

from sttgym.clock import local_time, shift
from sttgym.tools import fail, ok, tool
from sttgym.world import World, operation, predicate


class GarageWorld(World):
    """A multi-level parking garage: bays, reservations and levels that can close."""

    domain = "Garage"
    description = "A parking garage: bays on levels, reservations with arrival windows, and level closures."

    def _bay_view(self, bay_id: str) -> dict:
        bay = self.bays[bay_id]
        return {"bay_id": bay_id, **bay, "level_open": self.levels[bay["level"]]["open"]}

    @tool
    def list_bays(self, level: str | None = None, size: Literal["compact", "standard", "large"] | None = None) -> dict:
        """List the bays, optionally on one level or of one size.

        Args:
            level: Only bays on this level, e.g. L2.
            size: Only bays of this size.
        """
        if level is not None and level not in self.levels:
            return fail(f"no level {level!r}")
        bays = [self._bay_view(b) for b in sorted(self.bays)
                if (level is None or self.bays[b]["level"] == level) and (size is None or self.bays[b]["size"] == size)]
        return ok({"bays": bays, "now": self.now})

    @tool
    def get_bay(self, bay_id: str) -> dict:
        """Read one bay.

        Args:
            bay_id: The bay's id, e.g. B-101.
        """
        if bay_id not in self.bays:
            return fail(f"no bay {bay_id!r}")
        return ok(self._bay_view(bay_id))

    @tool(mutates=True, cost=3)
    def reserve_bay(self, bay_id: str, plate: str, arrive_by: str) -> dict:
        """Reserve a free bay for a vehicle arriving by a given time.

        Args:
            bay_id: The bay to reserve.
            plate: The vehicle's licence plate.
            arrive_by: ISO time by which the vehicle arrives; the hold lapses after it.
        """
        bay = self.bays.get(bay_id)
        if bay is None:
            return fail(f"no bay {bay_id!r}")
        if not self.levels[bay["level"]]["open"]:
            return fail(f"level {bay['level']} is closed")
        if bay["status"] != "free":
            return fail(f"bay {bay_id} is {bay['status']}")
        arrive = local_time(arrive_by)
        if arrive is None or arrive < self.clock.now:
            return fail(f"arrive_by must be a future ISO time (now {self.now})")
        rid = self.next_id("reservation", "R")
        self.reservations[rid] = {"bay": bay_id, "plate": plate, "arrive_by": arrive_by, "status": "held"}
        bay.update(status="reserved", plate=plate)
        return ok({"reservation_id": rid}, message=f"{bay_id} held for {plate} until {arrive_by}")

    @tool(mutates=True, cost=2)
    def cancel_reservation(self, reservation_id: str) -> dict:
        """Cancel a reservation and free its bay.

        Args:
            reservation_id: The reservation to cancel.
        """
        res = self.reservations.get(reservation_id)
        if res is None or res["status"] != "held":
            return fail(f"no held reservation {reservation_id!r}")
        res["status"] = "cancelled"
        self.bays[res["bay"]].update(status="free", plate=None)
        return ok(message=f"{reservation_id} cancelled")

    @tool(cost=10)
    def wait(self, minutes: int) -> dict:
        """Wait before acting again.

        Args:
            minutes: How long to wait, up to 60.
        """
        if not 0 < minutes <= 60:
            return fail("minutes must be between 1 and 60")
        self.clock.advance(minutes - 10)
        return ok(message=f"waited until {shift(self.now, 0)}")

    @predicate
    def bay_held_for(self, bay_id: str, plate: str) -> bool:
        return self.bays[bay_id]["status"] == "reserved" and self.bays[bay_id]["plate"] == plate

    @predicate
    def reserving_on(self, level: str, ctx) -> bool:
        return ctx.tool == "reserve_bay" and self.bays[ctx.arguments["bay_id"]]["level"] == level

    @predicate
    def made_reservations(self, count: int, log) -> bool:
        return len(log.called("reserve_bay")) >= count

    @operation
    def close_level(self, level: str, reason: str = "maintenance") -> None:
        self.levels[level].update(open=False, notice=reason)
        for bay_id in sorted(self.bays):
            if self.bays[bay_id]["level"] == level and self.bays[bay_id]["status"] == "reserved":
                self.bays[bay_id].update(status="blocked")
'''

START = "2024-05-01T09:00"
STATE = {"levels": {"L2": {"open": True, "notice": None}, "L3": {"open": True, "notice": None}},
         "bays": {"B-201": {"level": "L2", "size": "standard", "status": "free", "plate": None},
                  "B-202": {"level": "L2", "size": "large", "status": "free", "plate": None},
                  "B-301": {"level": "L3", "size": "standard", "status": "free", "plate": None}},
         "reservations": {}, "counters": {"reservation": 0}}


def _call(name: str, **arguments) -> Call:
    return Call(name=name, arguments=arguments)


def _held(bay: str) -> Pred:
    return Pred(name="bay_held_for", args={"bay_id": bay, "plate": "KX-12"})


NOMINAL = [_call("list_bays", level="L2"),
           _call("reserve_bay", bay_id="B-201", plate="KX-12", arrive_by="2024-05-01T10:00")]
ORACLE = NOMINAL + [_call("get_bay", bay_id="B-201"), _call("wait", minutes=30), _call("list_bays", level="L3"),
                    _call("reserve_bay", bay_id="B-301", plate="KX-12", arrive_by="2024-05-01T10:30")]
# Both kinds of effect (a domain operation, diffed over the whole state; set_field, read at its path), a condition on
# the call being made (ctx), checks that read the episode (log) in the parent and in the worker, nested predicates.
TASK = Task(
    query="Please hold a bay on level 2 for my car KX-12; I arrive by 10:00.", profile=UserProfile(persona="a driver"),
    start_time=START, initial_state=STATE,
    triggers=[Trigger(name="level_flooded", description="level 2 floods as the agent reserves there",
                      activation=["reserve_bay"], when=Pred(name="reserving_on", args={"level": "L2"}),
                      effect=[Op(name="close_level", args={"level": "L2", "reason": "flooding"})],
                      observable=Observable(tool="get_bay", args={"bay_id": "B-201"})),
              Trigger(name="bay_resized", description="B-301 is re-marked as a large bay", timing="after",
                      when=Pred(name="time_reached", args={"moment": "2024-05-01T09:30"}),
                      effect=[Op(name="set_field", args={"path": ["bays", "B-301", "size"], "value": "large"})],
                      observable=Observable(tool="get_bay", args={"bay_id": "B-301"}))],
    checklist=[Check(name="held_on_l3", description="a bay on level 3 is held", holds=_held("B-301")),
               Check(name="saw_flood", description="re-read the flooded bay",
                     holds=Pred(name="noticed", args={"trigger": "level_flooded"})),
               Check(name="reserved", description="one reservation succeeded",
                     holds=Pred(name="made_reservations", args={"count": 1})),
               Check(name="nothing_on_l2", description="nothing held on the flooded level", gate=True,
                     holds=Pred(name="none_of", args={"preds": [_held("B-201").model_dump()]}))],
    static_checklist=[Check(name="held_on_l2", description="B-201 is held", holds=_held("B-201"))],
    nominal_plan=NOMINAL, oracle=ORACLE)
ACTIONS = ([{"name": c.name, "arguments": c.arguments} for c in ORACLE[:3]]
           + [{"name": "reserve_bay", "arguments": {"bay_id": "B-301"}},  # refused before any tool runs
              {"name": "chat_with_user", "arguments": {"message": "Level 2 just flooded; may I use level 3?"}}]
           + [{"name": c.name, "arguments": c.arguments} for c in ORACLE[3:]] + [{"content": "Task Completed"}])


@pytest.fixture(scope="module")
def local() -> type[World]:
    return load_world(GARAGE, isolate=False)


@pytest.fixture(scope="module")
def isolated():
    world = load_world(GARAGE)
    yield world
    unload(world)


def play(world: type[World], monkeypatch: pytest.MonkeyPatch) -> list:
    monkeypatch.setitem(DOMAINS, "Garage", Domain("Garage", world, {("S1", "easy"): lambda author: TASK}))
    env = ArenaEnv("Garage", "S1", "easy")
    trace = [env.reset(options={"task": TASK.model_dump()})]
    trace += [env.step(action) for action in ACTIONS]
    return trace


def test_the_generated_world_passes_the_audit():
    assert audit(GARAGE) == []


def test_the_proxy_presents_the_same_tools_predicates_and_operations(local, isolated):
    assert issubclass(isolated, World) and isolated.__name__ == local.__name__ == "GarageWorld"
    assert (isolated.domain, isolated.description) == (local.domain, local.description)
    ours, theirs = tool_specs(local), tool_specs(isolated)
    assert {n: (s.schema, s.cost, s.mutates) for n, s in ours.items()} == \
           {n: (s.schema, s.cost, s.mutates) for n, s in theirs.items()}
    assert typed(predicates_of(isolated)) == typed(predicates_of(local))
    assert typed(operations_of(isolated)) == typed(operations_of(local))
    assert "made_reservations" in predicates_of(isolated) and "close_level" in operations_of(isolated)
    forwarded = [s for n, s in predicates_of(isolated).items() if n in vars(isolated)]
    annotations = [p.annotation for s in forwarded for p in s.parameters.values()]
    assert str in annotations and not any(isinstance(a, str) for a in annotations)  # types, never text to evaluate


def typed(signatures: dict[str, inspect.Signature]) -> dict[str, list]:
    """Signatures with each annotation as the type it names (the in-process class keeps them as text)."""
    def read(annotation):
        return read_annotation(annotation) if isinstance(annotation, str) else annotation

    return {name: [(p.name, p.kind, p.default, read(p.annotation)) for p in s.parameters.values()]
            + [read(s.return_annotation)] for name, s in signatures.items()}


def test_an_episode_replays_identically_in_process_and_isolated(local, isolated, monkeypatch):
    in_process, through_worker = play(local, monkeypatch), play(isolated, monkeypatch)
    assert through_worker == in_process
    final = in_process[-1]
    assert final[1] == 1.0 and final[2]  # the oracle solves the task: the trace is a real episode, not two failures
    assert [e["trigger"] for e in final[4]["trigger_log"]] == ["level_flooded", "bay_resized"]
    # 21 minutes of tool costs and the 20 more that wait(minutes=30) moved the env's clock by, inside the worker
    assert final[4]["clock"] == "2024-05-01T09:41"


def _module_source(domain: str) -> str:
    return inspect.getsource(sys.modules[DOMAINS[domain].world.__module__])


@pytest.mark.parametrize("domain", sorted(set(DOMAINS) - {"ColdChain"}))
def test_the_projects_own_worlds_build_and_replay_identically_through_the_sandbox(domain, monkeypatch):
    """A hand-written world's module, loaded as if generated: its scenario builds the same task through the proxy
    (dry runs included) and the oracle's episode is the same, call by call."""
    real = DOMAINS[domain]
    proxy = load_world(_module_source(domain), class_name=real.world.__name__)
    runs = []
    try:
        for world in (real.world, proxy):
            monkeypatch.setitem(DOMAINS, domain, Domain(domain, world, real.scenarios))
            env = ArenaEnv(domain, "T1", "easy")
            trajectory = rollout(env, OracleAgent(), seed=3)
            runs.append((env.task, trajectory.steps, trajectory.info))
    finally:
        unload(proxy)
    assert runs[1] == runs[0]
    assert runs[0][2]["score"] == 1.0


def test_the_audit_refuses_only_coldchains_import_of_the_judge():
    problems = audit(_module_source("ColdChain"))
    assert len(problems) == 1 and "import from sttgym.judge is not allowed" in problems[0]


def test_a_world_may_fill_in_its_state_in_a_constructor_that_hands_on_to_worlds():
    """As Freight's world does: ``def __init__`` annotated with ``Clock``, calling ``super().__init__`` (the one dunder
    a class may define, and the one way to reach it); the constructor runs in the worker on every call."""
    source = GARAGE.replace("from sttgym.clock import local_time", "from sttgym.clock import Clock, local_time")
    source = source.replace('    domain = "Garage"\n', '    domain = "Garage"\n\n'
                            '    def __init__(self, state: dict, clock: Clock):\n'
                            '        super().__init__(state, clock)\n'
                            '        state.setdefault("visits", 0)\n', 1)
    assert "super().__init__" in source and audit(source) == []
    world = load_world(source)
    try:
        garage = world(json_copy(STATE), Clock(START))
        assert garage.get_bay(bay_id="B-201")["success"] and garage.state["visits"] == 0
    finally:
        unload(world)


def test_simulated_time_advances_the_shared_clock_through_the_proxy(local, isolated):
    for world in (local, isolated):
        clock = Clock(START)
        garage = world(json_copy(STATE), clock)
        assert garage.wait(minutes=45)["success"]
        assert clock.minutes == 35  # the tool's own advance; its cost (10) is the env's to add
        assert garage.reserve_bay(bay_id="B-201", plate="A", arrive_by="2024-05-01T09:30")["success"] is False


def test_state_lives_in_the_parent_so_snapshot_and_restore_work(isolated, monkeypatch):
    monkeypatch.setitem(DOMAINS, "Garage", Domain("Garage", isolated, {("S1", "easy"): lambda author: TASK}))
    env = ArenaEnv("Garage", "S1", "easy", dynamics=False)
    env.reset(options={"task": TASK})
    before = env.snapshot()
    env.step(ACTIONS[1])
    state = env.world.state
    assert state["bays"]["B-201"]["status"] == "reserved"
    env.restore(before)
    assert env.world.state is state and state == STATE
    _, _, _, _, info = env.step({"name": "get_bay", "arguments": {"bay_id": "B-201"}})
    assert info["result"]["data"]["status"] == "free"  # the worker reads the restored state


def test_worlds_sharing_a_worker_each_see_their_own_state(isolated):
    first, second = isolated(json_copy(STATE), Clock(START)), isolated(json_copy(STATE), Clock(START))
    assert first.reserve_bay(bay_id="B-201", plate="A", arrive_by="2024-05-01T10:00")["success"]
    assert second.get_bay(bay_id="B-201")["data"]["status"] == "free"
    assert first.get_bay(bay_id="B-201")["data"]["status"] == "reserved"
    first.state["bays"]["B-201"]["status"] = "free"  # the engine changing the state in the parent (a trigger)
    assert first.get_bay(bay_id="B-201")["data"]["status"] == "free"


def _reserve_in_child(world: type[World], queue) -> None:
    garage = world(json_copy(STATE), Clock(START))
    result = garage.reserve_bay(bay_id="B-201", plate="KX-12", arrive_by="2024-05-01T10:00")
    queue.put((result["success"], garage.state["bays"]["B-201"]["status"], world._sttgym_sandbox.process.pid))


def test_a_forked_process_gets_a_worker_of_its_own(isolated):
    garage = isolated(json_copy(STATE), Clock(START))
    garage.get_bay(bay_id="B-201")
    ours = isolated._sttgym_sandbox.process.pid
    context = multiprocessing.get_context("fork")  # what forking harnesses (vector envs, data workers) do
    queue = context.Queue()
    child = context.Process(target=_reserve_in_child, args=(isolated, queue))
    child.start()
    succeeded, status, theirs = queue.get(timeout=120)
    child.join(60)
    assert (succeeded, status, child.exitcode) == (True, "reserved", 0) and theirs != ours
    assert isolated._sttgym_sandbox.process.pid == ours  # the parent's worker neither shared nor ended
    assert garage.get_bay(bay_id="B-201")["data"]["status"] == "free"


def test_exceptions_cross_as_their_own_types(local, isolated):
    for world in (local, isolated):
        garage = world(json_copy(STATE), Clock(START))
        assert garage.holds(_held("B-999")) is False  # KeyError inside the predicate: does not hold
        with pytest.raises(KeyError):
            garage.apply({"name": "close_level", "args": {"level": "L9"}})
        with pytest.raises(TypeError):
            garage.bay_held_for(bay_id="B-201")


WORLD_WITH_FAULTS = '''
from sttgym.tools import fail, ok, tool
from sttgym.world import World, predicate


class Jammed(Exception):
    pass


class FaultyWorld(World):
    domain = "Faulty"
    description = "A world whose tools fail in the ways generated code does."

    @tool
    def divide(self, n: int) -> dict:
        """Divide by n.

        Args:
            n: The divisor.
        """
        return ok(100 // n)

    @tool
    def jam(self) -> dict:
        """Raise the world's own exception."""
        raise Jammed("the barrier is stuck")

    @tool(mutates=True)
    def spin(self) -> dict:
        """Never return."""
        self.state["spun"] = True
        while True:
            pass

    @predicate
    def spinning(self) -> bool:
        while True:
            pass

    @tool
    def when(self) -> dict:
        """Return something that is not JSON."""
        return ok(self.clock.now)
'''
LIMITS = Limits(cpu_s=0.5, wall_s=3, memory_mb=400)


def _perform(world: type[World], calls: list[tuple[str, dict]]) -> list[str]:
    """The observations of ``calls`` through the core's call cycle (its guard turns a raising tool into a failure)."""
    env = ToolEnv()
    env.clock, env.call_log = Clock(START), []
    env.world = world({}, env.clock)
    env.tools = collect_tools(env.world)
    return [env.perform(ToolCall(name, arguments))[0] for name, arguments in calls]


def test_a_tool_that_raises_fails_like_in_process():
    calls = [("divide", {"n": 0}), ("divide", {"n": 7}), ("jam", {}), ("when", {})]
    isolated = load_world(WORLD_WITH_FAULTS, limits=LIMITS)
    try:
        observations = _perform(isolated, calls)
    finally:
        unload(isolated)
    assert observations == _perform(load_world(WORLD_WITH_FAULTS, isolate=False), calls)
    assert "internal error in divide: ZeroDivisionError" in observations[0]
    assert "internal error in jam: Jammed" in observations[2]  # the code's own exception class, by name
    assert "2024-05-01 09:03:00" in observations[3]  # a datetime reads as render_result renders it in-process


def test_a_limit_fails_the_tool_call_and_the_next_call_runs_in_a_fresh_worker():
    world = load_world(WORLD_WITH_FAULTS, limits=LIMITS)
    try:
        faulty = world({"counters": {}}, Clock(START))
        result = faulty.spin()
        assert result["success"] is False and result["internal_error"] and result["sandbox"] in ("cpu", "timeout")
        assert faulty.state == {"counters": {}}  # a stopped call changes nothing
        assert faulty.divide(n=4) == {"success": True, "data": 25}
        assert world._sttgym_sandbox.starts == 2
        with pytest.raises(SandboxError) as stopped:  # a predicate has no failed result to give: it raises
            faulty.holds({"name": "spinning", "args": {}})
        assert stopped.value.kind in ("cpu", "timeout")
    finally:
        unload(world)


def test_a_worker_killed_from_outside_between_calls_is_replaced_without_losing_a_call():
    world = load_world(WORLD_WITH_FAULTS, limits=LIMITS)
    try:
        world._sttgym_sandbox.process.kill()
        world._sttgym_sandbox.process.wait()
        assert world({}, Clock(START)).divide(n=2) == {"success": True, "data": 50}
        assert world._sttgym_sandbox.starts == 2
    finally:
        unload(world)


def test_idle_workers_beyond_the_cap_end_and_come_back_when_called(monkeypatch):
    monkeypatch.setattr(sandbox, "MAX_LIVE_WORKERS", 1)
    first = load_world(WORLD_WITH_FAULTS, limits=LIMITS)
    second = load_world(WORLD_WITH_FAULTS, limits=LIMITS)
    try:
        assert first._sttgym_sandbox.process is None and second._sttgym_sandbox.process is not None
        assert first({}, Clock(START)).divide(n=5) == {"success": True, "data": 20}  # its state was in the parent
        assert first._sttgym_sandbox.starts == 2 and second._sttgym_sandbox.process is None
    finally:
        unload(first)
        unload(second)


@pytest.mark.parametrize("limits", [dict(cpu_s=0), dict(wall_s=-1), dict(output_mb=0), dict(memory_mb=100)])
def test_limits_that_could_not_run_anything_are_refused(limits):
    with pytest.raises(ValueError, match="limits must be positive"):
        Limits(**limits)


def test_load_world_refuses_unsafe_code_and_says_why():
    with pytest.raises(Unsafe) as refused:
        load_world(GARAGE + "\nimport os\n")
    assert refused.value.problems == [f"line {GARAGE.count(chr(10)) + 2}: import os (use `from module import name` "
                                      "of an allowed module) is not allowed"]
    assert isinstance(refused.value, ValueError)


@pytest.mark.parametrize("isolate", [False, True])
def test_load_world_needs_one_world_class_or_a_name(isolate):
    two = GARAGE + "\n\nclass OtherWorld(GarageWorld):\n    domain = \"Other\"\n"
    with pytest.raises(SandboxError, match="exactly one World subclass") as failed:
        load_world(two, isolate=isolate)
    assert failed.value.kind == "error"
    world = load_world(two, class_name="OtherWorld", isolate=isolate)
    assert world.domain == "Other" and "reserve_bay" in tool_specs(world)
    unload(world)


def test_call_function_returns_json_and_reports_failures():
    source = "def score(state: dict, bonus: int = 0) -> dict:\n    return {'held': len(state['bays']) + bonus}\n"
    assert call_function(source, "score", {"state": STATE, "bonus": 2}) == {"held": 5}
    with pytest.raises(SandboxError, match="score raised KeyError") as failed:
        call_function(source, "score", {"state": {}})
    assert failed.value.kind == "error"
    with pytest.raises(SandboxError, match="no top-level function 'missing'"):
        call_function(source, "missing", {})
    with pytest.raises(Unsafe):
        call_function("def f():\n    return open('x').read()\n", "f", {})


def test_the_audit_allows_format_on_literals_whose_fields_read_nothing_and_the_format_builtin():
    source = "def label(n, name):\n    return '{0} {name:>8} {0:{1}}'.format(n, 3, name=name) + format(n, '.1f')\n"
    assert audit(source) == []
    assert call_function(source, "label", {"n": 7, "name": "bay"}) == "7      bay   77.0"


def test_the_package_loads_the_sandbox_only_when_used():
    probe = ("import sys, sttgym.synth as synth\n"
             "assert 'sttgym.synth.sandbox' not in sys.modules\n"
             "assert synth.Limits is __import__('sttgym.synth.sandbox', fromlist=['_']).Limits\n")
    subprocess.run([sys.executable, "-c", probe], check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


def test_restricted_execution_hands_out_only_allowed_names():
    assert not {"open", "eval", "exec", "getattr", "type", "print", "vars"} & set(SAFE_BUILTINS)
    namespace = execute("from sttgym.world import World\nimport math\n")
    assert namespace["World"] is World and namespace["math"].sqrt(4) == 2
    for source, error in (("import os\n", ImportError), ("from sttgym.world import inspect\n", ImportError),
                          ("open('x')\n", NameError), ("eval('1')\n", NameError)):
        with pytest.raises(error):
            execute(source)  # what the builtins stop even without the audit


def _timed_calls(world: World, name: str, arguments: dict, calls: int) -> tuple[float, list]:
    """Microseconds per call of tool ``name``, after one warm-up call, and the results."""
    getattr(world, name)(**arguments)
    began = time.perf_counter()
    results = [getattr(world, name)(**arguments) for _ in range(calls)]
    return (time.perf_counter() - began) / calls * 1e6, results


def test_per_call_overhead_of_the_isolated_proxy(local, isolated):
    """Measured, not asserted: ``pytest tests/synth/test_sandbox.py -k overhead -s`` prints the figures, for the
    garage's small state and for a CarRental instance's (the state crosses the pipe both ways on every call)."""
    env = ArenaEnv("CarRental", "T1", "easy")
    env.reset(seed=3)
    first = env.task.oracle[0]
    rental = DOMAINS["CarRental"].world
    proxy = load_world(_module_source("CarRental"), class_name=rental.__name__)
    cases = {"Garage get_bay": (local, isolated, STATE, START, "get_bay", {"bay_id": "B-201"}),
             f"CarRental {first.name}": (rental, proxy, env.task.initial_state, env.task.start_time, first.name,
                                         first.arguments)}
    try:
        for label, (here, there, state, start, name, arguments) in cases.items():
            timings = {}
            for mode, world in (("in-process", here), ("isolated", there)):
                timings[mode], results = _timed_calls(world(json_copy(state), Clock(start)), name, arguments, 200)
                timings[mode, "results"] = results
            assert timings["isolated", "results"] == timings["in-process", "results"]
            size = len(json.dumps(state))
            print(f"\n{label} ({size:,}-byte state): in-process {timings['in-process']:.1f} us per call, "
                  f"isolated {timings['isolated']:.1f} us")
    finally:
        unload(proxy)


# ------------------------------------------------------------------------------------------- the OS sandbox

def test_without_the_os_sandbox_generated_code_is_refused_unless_the_user_opts_in(monkeypatch, tmp_path):
    from sttgym.registry import load_plugins
    from sttgym.synth import checks
    from sttgym.synth.bundle import load_bundle, write_bundle

    monkeypatch.setattr(sandbox, "os_sandbox_problem", lambda: "bubblewrap (bwrap) is not installed")
    monkeypatch.delenv(sandbox.SANDBOX_VARIABLE, raising=False)
    alone = Limits(cpu_s=1.25)  # a worker of its own: no running one is reused
    bundle = write_bundle(tmp_path / "garage", "SynthGarage", GARAGE, "GarageWorld",
                          [{**TASK.model_dump(mode="json"), "conflict": "S1", "difficulty": "easy"}], {}, {})
    for attempt in (lambda: call_function("def f():\n    return 1\n", "f", {}, limits=alone),
                    lambda: load_world(GARAGE, limits=alone), lambda: load_bundle(bundle),
                    lambda: checks.loaded_world(GARAGE)):  # a pipeline stops: it does not reject every candidate
        with pytest.raises(sandbox.SandboxUnavailable) as refused:
            attempt()
        assert refused.value.kind == "unavailable"
        assert "apt-get install bubblewrap" in str(refused.value) and "STTGYM_SANDBOX=process" in str(refused.value)
    monkeypatch.setenv("STTGYM_BUNDLES", str(bundle))
    assert "STTGYM_SANDBOX=process" in load_plugins()[1][str(bundle)]  # `sttgym list` says how, and goes on
    monkeypatch.setenv(sandbox.SANDBOX_VARIABLE, "sideways")
    with pytest.raises(sandbox.SandboxUnavailable, match="leave it unset"):
        call_function("def f():\n    return 1\n", "f", {}, limits=alone)
    monkeypatch.setenv(sandbox.SANDBOX_VARIABLE, "process")  # the explicit opt-in: a plain worker process
    try:
        assert call_function("def f():\n    return 1\n", "f", {}, limits=alone) == 1
        worker = sandbox._FUNCTION_WORKERS[alone]
        assert worker.process.args[0] == sys.executable and worker.sandbox == {}
    finally:
        sandbox._FUNCTION_WORKERS.pop(alone).close()


def test_workers_and_bundles_run_inside_bubblewrap(os_sandbox, tmp_path, monkeypatch):
    from sttgym.registry import load_plugins
    from sttgym.synth.bundle import write_bundle

    bundle = write_bundle(tmp_path / "garage", "SynthGarage", GARAGE, "GarageWorld",
                          [{**TASK.model_dump(mode="json"), "conflict": "S1", "difficulty": "easy"}], {}, {})
    monkeypatch.setenv("STTGYM_BUNDLES", str(bundle))
    loaded, failed = load_plugins()
    assert "SynthGarage" in loaded and not failed
    world = DOMAINS["SynthGarage"].world
    try:
        assert world(json_copy(STATE), Clock(START)).get_bay(bay_id="B-201")["success"]
        worker = world._sttgym_sandbox
        assert os.path.basename(worker.process.args[0]) == "bwrap" and worker.sandbox["pid-namespace"]
        assert worker.seccomp or not REQUIRED  # the system-call filter, wherever pyseccomp is (CI has it)
    finally:
        unload(world)
        DOMAINS.pop("SynthGarage")


# ------------------------------------------------------------------------------------------- the audit reads all

# Every place an expression can stand in a module: each is replaced in turn by `().__class__`, which must be refused.
EVERY_FORM = '''from __future__ import annotations

from typing import Literal, Optional

from sttgym.tools import ok, tool
from sttgym.world import World, predicate


def helper(a: int, /, b: str = "x", *rest: float, c: Optional[int] = None, **more: dict) -> list[str]:
    total = [b * a for _ in range(a) if a > 0 and not b]
    pairs = {k: v for k, v in more.items()}
    first, *others = rest or (1.0, 2.0)
    seen = {a, c} | set(others)
    label = f"{a!r:>{len(b)}} and {b=}"
    value = (a if a else -a) + abs(a) ** 2 // 3 % 4
    picked = total[1:2:1] + [pairs.get("k", label)]
    assert value >= 0, "negative"
    try:
        picked.append(str(seen))
    except (KeyError, TypeError) as error:
        raise ValueError("bad") from error
    match value:
        case 1 | 2:
            pass
        case [x, *_] if x:
            pass
        case {"k": y}:
            pass
        case int(real=z):
            pass
    if (n := len(picked)) > 3:
        del picked[0]
    picked += [n]
    square = lambda q=1, *, r=2: q * r
    return sorted(picked, key=lambda item: str(item), reverse=bool(square()))


class Board(World):
    domain = "Board"
    limits: dict[str, int] = {"size": 3}

    @tool(mutates=True, cost=2)
    def post(self, text: str, pin: Literal["top", "bottom"] = "top", tags: list[str] | None = None) -> dict:
        """Post a note."""
        self.state.setdefault("notes", []).append({"text": text, "pin": pin, "tags": tags or []})
        return ok(message=text, data={"count": len(self.state["notes"])})

    @predicate
    def posted(self, count: int = 1) -> bool:
        return len(self.state.get("notes", [])) >= count
'''


def _with_expression_replaced(tree: ast.Module, index: int) -> str | None:
    """The module's source with its ``index``-th expression (in visiting order) replaced by ``().__class__``;
    None where that expression cannot be replaced by another and still parse."""
    import ast as syntax

    class Replace(syntax.NodeTransformer):
        seen = 0

        def visit(self, node):
            if isinstance(node, syntax.expr):
                if Replace.seen == index:
                    Replace.seen += 1
                    return syntax.parse("().__class__", mode="eval").body
                Replace.seen += 1
            return self.generic_visit(node)

    try:
        source = syntax.unparse(syntax.fix_missing_locations(Replace().visit(copy.deepcopy(tree))))
        syntax.parse(source)
    except (SyntaxError, ValueError, TypeError, AttributeError):  # an f-string's text, a pattern's value
        return None
    return source


@pytest.mark.parametrize("source", [GARAGE, EVERY_FORM], ids=["garage", "every_form"])
def test_the_audit_reads_every_expression_wherever_it_stands(source):
    tree = ast.parse(source)
    assert audit(source) == []
    expressions = sum(isinstance(n, ast.expr) for n in ast.walk(tree))
    missed, tried = [], 0
    for index in range(expressions):
        mutated = _with_expression_replaced(tree, index)
        if mutated is None:
            continue
        tried += 1
        if not any(".__class__" in problem for problem in audit(mutated)):
            missed.append(index)
    assert missed == [] and tried > 0.9 * expressions, (missed[:5], tried, expressions)


def test_annotations_are_read_never_evaluated():
    from sttgym.tools import type_hints

    calls = []
    namespace = {"spy": lambda: calls.append(1) or str, "Cabin": typing.Literal["economy", "business"]}
    exec("def tool_like(self, a, b, c, d):\n    pass\n", namespace)
    namespace["tool_like"].__annotations__ = {"a": "spy()", "b": "Literal['x', 'y'] | None", "c": "Cabin",
                                              "d": "list[str]"}
    with pytest.raises(TypeError, match="spy()"):
        type_hints(namespace["tool_like"])
    assert calls == []  # the call in the annotation never ran
    namespace["tool_like"].__annotations__["a"] = "int"
    assert type_hints(namespace["tool_like"]) == {"a": int, "b": typing.Optional[typing.Literal["x", "y"]],
                                                  "c": typing.Literal["economy", "business"], "d": list[str]}
    for text in ("__import__('os').system('true')", "().__class__", "[c for c in ()]", "os.system", "x[0]"):
        with pytest.raises(TypeError):
            read_annotation(text)
    # Executed code keeps only the future flags it states: without one, annotations are types, evaluated as code
    # the audit read; with it, text that type_hints reads.
    assert execute("def f(x: int):\n    pass\n")["f"].__annotations__ == {"x": int}
    stated = execute("from __future__ import annotations\ndef f(x: int):\n    pass\n")["f"]
    assert stated.__annotations__ == {"x": "int"} and type_hints(stated) == {"x": int}
