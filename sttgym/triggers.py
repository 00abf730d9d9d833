"""Triggers: the world changing by itself mid-task.

A trigger follows the STT-Arena blueprint, as data:

- ``when``: a predicate of the world over the state and the call being made (simulated time,
  the agent's own writes, world state);
- ``effect``: operations of the world; the engine diffs the state around them and records
  every field's old and new value;
- ``mode``: ``always_once`` fires the first time ``when`` holds; ``conditional_guarded``
  re-applies its effect whenever ``when`` holds until the ``recovery`` guard does;
- ``activation``: the tools during whose calls ``when`` is checked (empty: every call);
- ``observable``: the read (tool and arguments) the story expects an agent to see the change
  through, the blueprint's *observable operation*. It documents the story and guides the
  oracle; it is not how noticing is scored. Reading is how a change becomes visible, never
  what causes it, so ``activation`` may name only tools that change the world (checked when
  the task is built).

Whether the agent *was shown* a change is derived, not declared: :class:`Firing` replays
each call made after a trigger fired on a copy of the world with that trigger's changes
undone, and when the result differs from what the agent actually got (a read, a listing, a
failed write's error) the change was shown. That is recorded in the log's ``revealed``, which
the ``noticed`` predicate and the impossible-task judge read.

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

from sttgym.actions import render_result
from sttgym.clock import Clock
from sttgym.schema import Op, Pred, Schema
from sttgym.tools import fail, tool_names
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
    activation: list[str] = Field(default_factory=list)
    mode: Literal["always_once", "conditional_guarded"] = "always_once"
    recovery: Pred | None = None
    timing: Literal["before", "after"] = "before"  # checked before the activating call runs, or after

    @model_validator(mode="after")
    def _guarded_needs_recovery(self) -> "Trigger":
        if self.mode == "conditional_guarded" and self.recovery is None:
            raise ValueError(f"trigger {self.name!r}: conditional_guarded needs a recovery guard")
        return self

    def describe(self) -> dict:
        return {"name": self.name, "description": self.description, "mode": self.mode,
                "activation": list(self.activation), "observable_via": self.observable.tool}

    def fire(self, world: Any, ctx: Context, timing: str, fired: int, log: Any = None) -> tuple[dict, list] | None:
        """Apply the effect if this trigger fires now (``fired``: times it already did): the event and the changes
        as ``(keys, old, new)`` (``ABSENT`` for a field that did not or does not exist), or None."""
        if timing != self.timing or (self.activation and ctx.tool not in self.activation):
            return None
        if self.mode == "always_once" and fired:
            return None
        if self.mode == "conditional_guarded" and world.holds(self.recovery, ctx, log):
            return None
        if not world.holds(self.when, ctx, log):
            return None
        changes = self._apply(world, ctx)
        if fired and not changes:
            return None  # a guarded re-fire that finds the world still as it left it
        event = {"trigger": self.name, "at": ctx.now, "during": ctx.tool, "mode": self.mode,
                 "changes": [_record(keys, old, new) for keys, old, new in changes],
                 "observable_via": self.observable.tool, "observable_args": dict(self.observable.args)}
        return event, changes

    def _apply(self, world: Any, ctx: Context) -> list[tuple]:
        """Run the effect and return what it changed, as ``(keys, old, new)``."""
        if all(op.name == "set_field" for op in self.effect):  # the usual case: the paths say where to look
            changes = []
            for op in self.effect:
                keys = tuple(op.args["path"])
                old = _at(world.state, keys)
                old = old if old is ABSENT else json_copy(old)  # a later op of the effect may change it in place
                world.apply(op, ctx)
                new = _at(world.state, keys)
                if old != new:
                    changes.append((keys, old, json_copy(new)))
            return changes
        before = json_copy(world.state)  # a domain operation may touch anything: compare the whole state
        for op in self.effect:
            world.apply(op, ctx)
        return list(_changes(before, world.state, ()))


class Firing:
    """An episode's triggers at work (the env's, or an authoring dry run's): fires them around each call,
    counts how often each fired, records every event in ``log`` (an ``EpisodeLog``) and works out which call
    first showed the agent each change (``log.revealed``).

    A change is shown by a call whose result would have been different had the change not happened: after a
    trigger fired and until a call shows it, each call's tool is run again on a copy of the world as it was
    when the call began, with the trigger's changes undone (those the agent has not overwritten since), and
    the two results are compared. Any route counts (a read, a listing, the error of a write that the change
    made fail); the check costs one more run of the tool, and only while a change is still unseen.
    """

    def __init__(self, triggers: list[Trigger], log: Any):
        self.log, self.fired = log, {}
        # Sorted by timing once: most calls activate no trigger, and then cost no Context at all.
        self.timed = {timing: [t for t in triggers if t.timing == timing] for timing in ("before", "after")}
        self.unseen: dict[str, list[tuple]] = {}  # trigger -> its changes, until a call shows one of them
        self.written: dict[tuple, list] = {}  # field -> every value triggers set it to
        self.began: tuple[dict, int] | None = None  # the state and clock minutes when the current call began

    def forked(self, log: Any) -> "Firing":
        """The same triggers, each counted as fired as often as here, recording from now on into ``log``."""
        twin = copy.copy(self)
        twin.log, twin.fired = log, dict(self.fired)
        twin.unseen = {name: list(changes) for name, changes in self.unseen.items()}
        twin.written = {keys: list(values) for keys, values in self.written.items()}
        return twin

    def __call__(self, world: Any, tool: str, arguments: dict, timing: str) -> list[dict]:
        """Fire the triggers due ``timing`` the call of ``tool``; their events (each with its ``call_index``).
        Around the call, also work out whether its result showed a change not seen before."""
        if timing == "after" and self.began is not None:
            self._reveal(world, tool, arguments)
        events = []
        due = [t for t in self.timed[timing] if not t.activation or tool in t.activation]
        if due:
            ctx = Context(world.clock.iso(), world.clock.minutes, tool, arguments)
            for trigger in due:
                fired = trigger.fire(world, ctx, timing, self.fired.get(trigger.name, 0), self.log)
                if fired is None:
                    continue
                event, changes = fired
                self.fired[trigger.name] = self.fired.get(trigger.name, 0) + 1
                event["call_index"] = len(self.log.calls)  # calls from here on saw the change
                self.log.events.append(event)
                events.append(event)
                for keys, _, new in changes:
                    self.written.setdefault(keys, []).append(new)
                if trigger.name not in self.log.revealed:
                    self.unseen.setdefault(trigger.name, []).extend(changes)
        if timing == "before":
            self.began = (json_copy(world.state), world.clock.minutes) if self.unseen else None
        return events

    def _reveal(self, world: Any, tool: str, arguments: dict) -> None:
        """Mark every unseen change that the call just made (the log's last) showed the agent."""
        state, minutes = self.began
        self.began = None
        if tool not in tool_names(type(world)):  # chat_with_user: the user does not read the world
            return
        got = render_result(self.log.calls[-1]["result"])
        for name, changes in list(self.unseen.items()):
            without = json_copy(state)
            if not _undo(without, changes, self.written):
                continue  # the agent has overwritten every field the change set: there is nothing left to show
            clock = Clock(world.clock.start)
            clock.advance(minutes)
            try:
                result = getattr(type(world)(without, clock), tool)(**arguments)
            except Exception as exc:  # as the env's own call would have reported it
                result = fail(f"internal error in {tool}: {type(exc).__name__}", internal_error=True)
            if not isinstance(result, dict) or render_result(result) != got:
                self.log.revealed[name] = len(self.log.calls) - 1
                del self.unseen[name]


class _Absent:
    """A field that does not exist (before a change created it, or after one removed it)."""

    def __repr__(self) -> str:
        return "ABSENT"

    def __deepcopy__(self, memo: dict) -> "_Absent":
        return self


ABSENT = _Absent()


def _at(state: dict, keys: tuple) -> Any:
    node: Any = state
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return ABSENT
        node = node[key]
    return node


def _undo(state: dict, changes: list[tuple], written: dict[tuple, list]) -> bool:
    """Put back the old value of every change whose field still holds a value triggers set (this change's, or a
    later trigger's that built on it), not one the agent wrote since; whether any was put back."""
    undone = False
    for keys, old, new in reversed(changes):  # the latest first, so a field changed twice gets its first value
        parent = _at(state, keys[:-1])
        if not isinstance(parent, dict) or _at(state, keys) not in written.get(keys, [new]):
            continue
        if old is ABSENT:
            del parent[keys[-1]]
        else:
            parent[keys[-1]] = json_copy(old)
        undone = True
    return undone


def _changes(before: Any, after: Any, keys: tuple):
    """Field-level changes from ``before`` to ``after`` as ``(keys, old, new)``."""
    if before == after:  # compared in C: unchanged containers cost almost nothing
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after), key=str):
            yield from _changes(before.get(key, ABSENT), after.get(key, ABSENT), (*keys, key))
        return
    yield keys, json_copy(before), json_copy(after)


def _record(keys: tuple, old: Any, new: Any) -> dict:
    """A change as events show it: the path joined by dots, a missing field as None."""
    return {"path": ".".join(map(str, keys)), "old": None if old is ABSENT else old,
            "new": None if new is ABSENT else new}


def diff(before: Any, after: Any) -> list[dict]:
    """Field-level changes from ``before`` to ``after``: ``{"path", "old", "new"}``, dict keys joined by dots."""
    return [_record(*change) for change in _changes(before, after, ())]
