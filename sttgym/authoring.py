"""The authoring kit: what a scenario is written with, so it reads like its story and cannot drift from the world.

A scenario is ``scenario(author) -> Task``. The :class:`Author` it gets holds the instance's
seeded generator and the world class, and offers:

- ``author.call.<tool>(...)``: plan steps, checked against the tool's schema when the task is
  built (a misspelt tool or argument fails there, not in an episode);
- ``author.pred.<predicate>(...)`` and ``author.op.<operation>(...)``: the world's predicates
  and operations by name, checked against their signatures, for triggers and checks;
- :class:`Plan`: a plan in named phases (``plan.upto("load")``), never sliced by position;
- ``author.dry_run(state, start, calls)``: the real tools run on a copy of the world and clock,
  so every timing a scenario needs (when a van arrives, when a hold is loaded) is measured,
  never re-derived by hand; ``run.then(calls)`` goes on from where a run ended (one run of a
  plan shared by several endings, not one per ending: dry runs are most of a reset's cost);
- ``author.pick(pool)``: names from the half of a pool that belongs to this instance's split,
  so training instances never share a name with the benchmark's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from sttgym.checklist import EpisodeLog
from sttgym.clock import Clock, format_time
from sttgym.tools import ToolSpec, argument_problem, collect_tools, per_class, signature_text, tool_names
from sttgym.task import Call, Ref, resolve
from sttgym.triggers import Firing, Trigger
from sttgym.user import UserChannel
from sttgym.schema import Op, Pred
from sttgym.world import World, json_copy, operations_of, predicates_of, signature_problem

__all__ = ["Author", "Plan", "DryRun", "tool_specs"]

SPLITS = ("benchmark", "train")


def tool_specs(world: type[World]) -> dict[str, ToolSpec]:
    """The agent-facing tools of a world class (its own and ``chat_with_user``), by name."""
    return per_class(world, "tool_specs", lambda: {**collect_tools(world({}, Clock("2000-01-01T00:00"))),
                                                   **collect_tools(UserChannel(None, None))})


class _Calls:
    def __init__(self, specs: dict[str, ToolSpec]):
        self._specs = specs

    def __getattr__(self, name: str):
        spec = self._specs.get(name)
        if spec is None:
            raise AttributeError(f"no tool {name!r}; tools: {', '.join(sorted(self._specs))}")

        def build(save_as: str | None = None, **arguments: Any) -> Call:
            problem = _schema_problem(spec, arguments)
            if problem:
                raise ValueError(f"{name}: {problem}")
            return Call(name=name, arguments=arguments, save_as=save_as)

        return build


def _holds_ref(value: Any) -> bool:
    if isinstance(value, Ref):
        return True
    if isinstance(value, dict):
        return any(_holds_ref(v) for v in value.values())
    return isinstance(value, list) and any(_holds_ref(v) for v in value)


def _schema_problem(spec: ToolSpec, arguments: dict) -> str | None:
    # A value taken from an earlier result (a Ref, also inside a list or object) is only known in the episode:
    # any type fits the argument that holds it.
    props = {k: ({} if _holds_ref(arguments.get(k)) else schema) for k, schema in spec.parameters["properties"].items()}
    problem = argument_problem({**spec.parameters, "properties": props}, arguments)
    return None if problem is None else f"{problem}; expected {signature_text(spec)}"


class _Named:
    """``author.pred.<name>(**args)`` / ``author.op.<name>(**args)``, checked against the signature."""

    def __init__(self, kind: type, signatures: dict):
        self._kind, self._signatures = kind, signatures

    def __getattr__(self, name: str):
        signature = self._signatures.get(name)
        if signature is None:
            raise AttributeError(f"no {self._kind.__name__} {name!r}; known: {', '.join(sorted(self._signatures))}")

        def build(**args: Any):
            problem = signature_problem(signature, args)
            if problem:
                raise ValueError(f"{name}: {problem}")
            return self._kind(name=name, args=args)

        return build


class Plan:
    """A plan in named phases, in order: ``Plan(read=[...], load=[...], go=[...])``.

    ``plan.calls`` is the whole plan; ``plan.upto("load")`` the calls through the end of the
    ``load`` phase (``inclusive=False``: up to its start); ``plan.then(fix=[...])`` a longer plan.
    """

    def __init__(self, **phases: Iterable[Call]):
        self.phases: dict[str, list[Call]] = {name: list(calls) for name, calls in phases.items()}

    @property
    def calls(self) -> list[Call]:
        return [c for calls in self.phases.values() for c in calls]

    def __getitem__(self, phase: str) -> list[Call]:
        return self.phases[phase]

    def upto(self, phase: str, inclusive: bool = True) -> list[Call]:
        if phase not in self.phases:
            raise KeyError(f"no phase {phase!r}; phases: {', '.join(self.phases)}")
        out = []
        for name, calls in self.phases.items():
            if name == phase and not inclusive:
                break
            out += calls
            if name == phase:
                break
        return out

    def then(self, **phases: Iterable[Call]) -> "Plan":
        return Plan(**self.phases, **phases)

    def without(self, *names: str) -> "Plan":
        return Plan(**{n: c for n, c in self.phases.items() if n not in names})


@dataclass
class DryRun:
    """What a plan does to a copy of the world: each call's result (a copy, as the agent would read it: a
    result never changes with later calls) and the time after it.

    ``then(calls)`` goes on from where the run ended, on a copy: a scenario that weighs several endings of
    one plan runs the plan once, not once per ending.
    """

    world: World
    results: list[dict] = field(default_factory=list)
    times: list[str] = field(default_factory=list)  # ISO time after each call
    start: str = ""
    firing: Firing | None = field(default=None, repr=False)  # the triggers, and the calls and events so far
    author: "Author | None" = field(default=None, repr=False)
    saved: dict[str, dict] = field(default_factory=dict, repr=False)  # results by save_as

    @property
    def state(self) -> dict:
        return self.world.state

    @property
    def end(self) -> str:
        return self.times[-1] if self.times else self.start

    def at(self, n: int) -> str:
        """The time after the first ``n`` calls."""
        return self.times[n - 1] if n else self.start

    def ok(self) -> bool:
        return all(r.get("success") for r in self.results)

    def then(self, calls: list[Call]) -> "DryRun":
        """This run with ``calls`` after it: the same as one run of both plans (this one stays as it is)."""
        clock = Clock(self.world.clock.start)
        clock.advance(self.world.clock.minutes)
        log = self.firing.log
        run = DryRun(type(self.world)(json_copy(self.world.state), clock), list(self.results), list(self.times),
                     self.start, self.firing.forked(EpisodeLog(list(log.calls), [], list(log.events), dict(log.revealed))),
                     self.author, dict(self.saved))
        run._play(calls)
        return run

    def play(self, calls: list[Call]) -> "DryRun":
        """Go on with ``calls`` from where the run is, in place (``then`` keeps this run as it is); the run."""
        self._play(calls)
        return self

    def _play(self, calls: list[Call]) -> None:
        world, clock, log, specs = self.world, self.world.clock, self.firing.log, self.author.tools
        for call in calls:
            if call.name not in self.author.world_tools:  # chat_with_user: costs its minutes, changes nothing
                clock.advance(specs[call.name].cost)
                self.results.append({"success": True})
                self.times.append(clock.iso())
                continue
            arguments = resolve(call.arguments, self.saved)
            self.firing(world, call.name, arguments, "before")
            result = json_copy(getattr(world, call.name)(**arguments))
            clock.advance(specs[call.name].cost)
            log.calls.append({"name": call.name, "arguments": arguments, "result": result, "at": clock.iso()})
            self.firing(world, call.name, arguments, "after")
            self.results.append(result)
            self.times.append(clock.iso())
            if call.save_as:
                self.saved[call.save_as] = result


class Author:
    """Everything a scenario builds an instance with; see the module docstring."""

    def __init__(self, world: type[World], rng: np.random.Generator, split: str = "benchmark"):
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, not {split!r}")
        self.world, self.rng, self.split = world, rng, split
        self.tools = tool_specs(world)
        self.world_tools = frozenset(tool_names(world))  # the others (chat_with_user) change nothing
        self.call = _Calls(self.tools)
        self.pred = _Named(Pred, predicates_of(world))
        self.op = _Named(Op, operations_of(world))
        self._used: set[int] = set()

    # ------------------------------------------------------------------ drawing

    def pick(self, pool: list, n: int | None = None) -> Any:
        """One item (or ``n`` distinct items) from this split's half of ``pool``."""
        half = pool[SPLITS.index(self.split)::2]
        if n is None:
            return half[int(self.rng.integers(len(half)))]
        return [half[i] for i in self.rng.choice(len(half), size=n, replace=False)]

    def integer(self, lo: int, hi: int) -> int:
        """An integer in ``[lo, hi]``."""
        return int(self.rng.integers(lo, hi + 1))

    def serial(self, lo: int = 1000, hi: int = 9999) -> int:
        """A number no other id of this instance uses."""
        while True:
            n = int(self.rng.integers(lo, hi))
            if n not in self._used:
                self._used.add(n)
                return n

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def alongside(self, story: Iterable[Trigger]) -> tuple[Pred, list[str]]:
        """When and during which calls a second change comes with the first of ``story``'s changes, in the same call
        (the medium level's timing, where the hard level's waits for the recovery): the ``when`` and ``activation``
        of a trigger listed after ``story``'s and checked ``after`` the call."""
        story = list(story)
        activation = [] if any(not t.activation for t in story) else sorted({x for t in story for x in t.activation})
        return self.pred.any_of(preds=[self.pred.fired(trigger=t.name) for t in story]), activation

    # ------------------------------------------------------------------ running

    def dry_run(self, state: dict, start: str, calls: list[Call], triggers: Iterable[Trigger] = ()) -> DryRun:
        """Run ``calls`` with the real tools on a copy of ``state`` from ``start`` (and ``triggers``, if any)."""
        clock = Clock(start)
        triggers = list(triggers)
        log = EpisodeLog()  # for predicates that read it
        run = DryRun(self.world(json_copy(state), clock), start=format_time(clock.now), firing=Firing(triggers, log),
                     author=self)
        run._play(calls)
        return run

    # ------------------------------------------------------------------ checking

    def check_trigger(self, trigger: Trigger) -> Trigger:
        """``trigger`` if it obeys the rules a task is built under, else a ValueError saying why."""
        reads = [t for t in trigger.activation if t in self.tools and not self.tools[t].mutates]
        unknown = [t for t in trigger.activation if t not in self.tools]
        if unknown or reads:
            raise ValueError(f"trigger {trigger.name!r}: activation may name only tools that change the world "
                             f"(reads: {reads}, unknown: {unknown}); reading reveals a change, it never causes one")
        observable = self.tools.get(trigger.observable.tool)
        if observable is None or observable.mutates:
            raise ValueError(f"trigger {trigger.name!r}: observable {trigger.observable.tool!r} must be a read tool")
        return trigger
