"""Triggers: the world changing by itself mid-task.

A trigger follows the STT-Arena blueprint: a *condition* over the state, the simulated
context and the call being made; an *effect* given as field-level mutations with the old
and new value of each field; a *mode* (``always_once`` fires the first time the condition
holds; ``conditional_guarded`` re-applies its effect whenever the condition holds until
the *recovery guard* is satisfied); the *activation operations* during which the condition
is checked; and the operation through which the change is *observable*.

Conditions and guards are plain functions, so a scenario states them in the domain's own
terms::

    Trigger(
        name="clinic_hours_cut",
        activation=["list_operational_hours"],
        condition=lambda s, ctx: s["vehicles"][vid]["status"] == "in_transit",
        mutations=[Mutation(("clinics", cid, "closes"), "17:00", "12:00")],
        observable_via="list_operational_hours",
    )
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal

__all__ = ["Mutation", "Trigger", "Context", "get_path", "set_path"]

_ABSENT = object()


def get_path(state: dict, path: tuple) -> Any:
    """The value at ``path`` in ``state``, or None when any step is missing."""
    node: Any = state
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def set_path(state: dict, path: tuple, value: Any) -> None:
    """Set the value at ``path``, creating intermediate dicts as needed."""
    node = state
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value


@dataclass(frozen=True)
class Mutation:
    """One field-level change: ``path`` goes from ``old`` to ``new`` (None: absent)."""

    path: tuple
    old: Any
    new: Any

    def as_dict(self) -> dict:
        return {"path": ".".join(map(str, self.path)), "old": self.old, "new": self.new}


@dataclass(frozen=True)
class Context:
    """What a condition may look at besides the state: the simulated time and the call."""

    now: str  # ISO time of the call
    minutes: int  # simulated minutes since the episode started
    tool: str  # name of the tool being called
    arguments: dict  # its (validated) arguments


Condition = Callable[[dict, Context], bool]


@dataclass
class Trigger:
    """A change the world makes by itself; see the module docstring."""

    name: str
    description: str
    condition: Condition
    mutations: list[Mutation]
    observable_via: str
    activation: list[str] = field(default_factory=list)  # empty: checked on every call
    mode: Literal["always_once", "conditional_guarded"] = "always_once"
    recovery: Condition | None = None  # conditional_guarded only: once true, stop firing
    timing: Literal["before", "after"] = "before"  # check before the activating call runs, or after

    def __post_init__(self) -> None:
        if self.mode == "conditional_guarded" and self.recovery is None:
            raise ValueError(f"trigger {self.name!r}: conditional_guarded needs a recovery guard")
        self.mutations = [m if isinstance(m, Mutation) else Mutation(*m) for m in self.mutations]
        self.fired = 0  # how many times the effect was applied in this episode

    def describe(self) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "mode": self.mode,
            "activation": list(self.activation),
            "observable_via": self.observable_via,
            "mutations": [m.as_dict() for m in self.mutations],
        }

    def check(self, state: dict, ctx: Context, timing: str) -> dict | None:
        """Apply the effect if this trigger fires now; return the event, or None."""
        if timing != self.timing or (self.activation and ctx.tool not in self.activation):
            return None
        if self.mode == "always_once" and self.fired:
            return None
        try:
            if self.mode == "conditional_guarded" and self.recovery(state, ctx):
                return None
            if not self.condition(state, ctx):
                return None
        except (KeyError, TypeError, IndexError):
            # A condition reading a field the agent's actions removed simply does not hold.
            return None
        changes, consistent = [], True
        for m in self.mutations:
            current = get_path(state, m.path)
            if current == m.new and self.fired:
                continue  # guarded re-fire: this field is still as the trigger left it
            if not self.fired and current != m.old:
                consistent = False
            set_path(state, m.path, _copy(m.new))
            changes.append({"path": ".".join(map(str, m.path)), "old": current, "new": m.new})
        if self.fired and not changes:
            return None
        self.fired += 1
        return {
            "trigger": self.name,
            "at": ctx.now,
            "during": ctx.tool,
            "mode": self.mode,
            "changes": changes,
            "consistent": consistent,
            "observable_via": self.observable_via,
        }


def _copy(value: Any) -> Any:
    # Mutation values are JSON-like; copy containers so state never aliases the task.
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
