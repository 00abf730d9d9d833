"""Triggers: the world changing by itself mid-task.

A trigger follows the STT-Arena blueprint, as data:

- ``when``: a predicate of the world over the state and the call being made (simulated time,
  the agent's own writes, world state);
- ``effect``: operations of the world; the engine diffs the state around them and records
  every field's old and new value;
- ``mode``: ``always_once`` fires the first time ``when`` holds; ``conditional_guarded``
  re-applies its effect whenever ``when`` holds until the ``recovery`` guard does;
- ``activation``: the tools during whose calls ``when`` is checked (empty: every call);
- ``observable``: the read (tool and the arguments that must match) through which an agent
  sees the change, and ``also_observable`` any other reads that show it. Reading is how a
  change becomes visible, never what causes it, so ``activation`` may name only tools that
  change the world (checked when the task is built).

::

    Trigger(name="receiving_hours_cut", description="an emergency order shortens the clinic's hours",
            when=Pred(name="van_on_road_to", args={"site_id": "CLINIC-MAPLE"}),
            effect=[Op(name="set_field", args={"path": ["clinics", "CLINIC-MAPLE", "hours", "close"], "value": "12:00"})],
            observable=Observable(tool="list_operational_hours", args={"site_id": "CLINIC-MAPLE"}))
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, model_validator

from sttgym.schema import Op, Pred, Schema
from sttgym.world import json_copy

__all__ = ["Trigger", "Observable", "Context", "Firing", "diff"]


@dataclass(frozen=True)
class Context:
    """What a condition may look at besides the state: the simulated time and the call."""

    now: str  # ISO time of the call
    minutes: int  # simulated minutes since the episode started
    tool: str  # name of the tool being called
    arguments: dict  # its (validated) arguments


class Observable(Schema):
    """The read that reveals a change: ``tool`` called with (at least) ``args``."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)

    def matches(self, name: str, arguments: dict) -> bool:
        return name == self.tool and all(arguments.get(k) == v for k, v in self.args.items())


class Trigger(Schema):
    """A change the world makes by itself; see the module docstring."""

    name: str
    description: str
    when: Pred
    effect: list[Op]
    observable: Observable
    also_observable: list[Observable] = Field(default_factory=list)  # other reads that show the same change
    activation: list[str] = Field(default_factory=list)
    mode: Literal["always_once", "conditional_guarded"] = "always_once"
    recovery: Pred | None = None
    timing: Literal["before", "after"] = "before"  # checked before the activating call runs, or after

    @model_validator(mode="after")
    def _guarded_needs_recovery(self) -> "Trigger":
        if self.mode == "conditional_guarded" and self.recovery is None:
            raise ValueError(f"trigger {self.name!r}: conditional_guarded needs a recovery guard")
        return self

    @property
    def observables(self) -> list[Observable]:
        return [self.observable, *self.also_observable]

    def describe(self) -> dict:
        return {"name": self.name, "description": self.description, "mode": self.mode,
                "activation": list(self.activation), "observable_via": self.observable.tool}

    def fire(self, world: Any, ctx: Context, timing: str, fired: int, log: Any = None) -> dict | None:
        """Apply the effect if this trigger fires now (``fired``: times it already did); the event, or None."""
        if timing != self.timing or (self.activation and ctx.tool not in self.activation):
            return None
        if self.mode == "always_once" and fired:
            return None
        if self.mode == "conditional_guarded" and world.holds(self.recovery, ctx, log):
            return None
        if not world.holds(self.when, ctx, log):
            return None
        changes = self._apply(world)
        if fired and not changes:
            return None  # a guarded re-fire that finds the world still as it left it
        return {"trigger": self.name, "at": ctx.now, "during": ctx.tool, "mode": self.mode, "changes": changes,
                "observable_via": self.observable.tool, "observable_args": dict(self.observable.args)}


    def _apply(self, world: Any) -> list[dict]:
        """Run the effect and return what it changed."""
        if all(op.name == "set_field" for op in self.effect):  # the usual case: the paths say where to look
            changes = []
            for op in self.effect:
                path = op.args["path"]
                old = _at(world.state, path)
                world.apply(op)
                new = _at(world.state, path)
                if old != new:
                    changes.append({"path": ".".join(map(str, path)), "old": old, "new": json_copy(new)})
            return changes
        before = json_copy(world.state)  # a domain operation may touch anything: compare the whole state
        for op in self.effect:
            world.apply(op)
        return diff(before, world.state)


class Firing:
    """An episode's triggers at work (the env's, or an authoring dry run's): fires them around each call,
    counts how often each fired and records every event in ``log`` (an ``EpisodeLog``)."""

    def __init__(self, triggers: list[Trigger], log: Any):
        self.log, self.fired = log, {}
        # Sorted by timing once: most calls activate no trigger, and then cost no Context at all.
        self.timed = {timing: [t for t in triggers if t.timing == timing] for timing in ("before", "after")}

    def forked(self, log: Any) -> "Firing":
        """The same triggers, each counted as fired as often as here, recording from now on into ``log``."""
        twin = copy.copy(self)
        twin.log, twin.fired = log, dict(self.fired)
        return twin

    def __call__(self, world: Any, tool: str, arguments: dict, timing: str) -> list[dict]:
        """Fire the triggers due ``timing`` the call of ``tool``; their events (each with its ``call_index``)."""
        due = [t for t in self.timed[timing] if not t.activation or tool in t.activation]
        if not due:
            return []
        ctx, events = Context(world.clock.iso(), world.clock.minutes, tool, arguments), []
        for trigger in due:
            event = trigger.fire(world, ctx, timing, self.fired.get(trigger.name, 0), self.log)
            if event is not None:
                self.fired[trigger.name] = self.fired.get(trigger.name, 0) + 1
                event["call_index"] = len(self.log.calls)  # calls from here on saw the change
                self.log.events.append(event)
                events.append(event)
        return events


def _at(state: dict, path: list) -> Any:
    node: Any = state
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


_ABSENT = "<absent>"


def diff(before: Any, after: Any, path: str = "") -> list[dict]:
    """Field-level changes from ``before`` to ``after``: ``{"path", "old", "new"}``, dict keys joined by dots."""
    if before == after:  # compared in C: unchanged containers cost almost nothing
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        changes = []
        for key in sorted(set(before) | set(after), key=str):
            sub = f"{path}.{key}" if path else str(key)
            changes += diff(before.get(key, _ABSENT), after.get(key, _ABSENT), sub)
        return changes
    return [{"path": path, "old": None if before == _ABSENT else before,
             "new": None if after == _ABSENT else after}]
