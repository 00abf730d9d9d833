"""Tasks: one instance of a scenario, as data.

A scenario is a function ``scenario(author) -> Task`` (see :mod:`sttgym.authoring`).
Everything that varies between instances (ids, times, quantities, topology, which
alternative exists) is drawn from the author's seeded generator, so one seed fixes the
instance and one scenario yields many distinct instances.

A task is plain data: triggers and checks name the world's operations and predicates with
JSON arguments, so ``Task.model_validate_json(task.model_dump_json())`` is the same task, and
the world class plus the task's JSON replay an episode exactly.

Plans (the conflict-free nominal plan and the oracle solution) are lists of :class:`Call`.
A call can refer to the result of an earlier one with :class:`Ref` (a shipment id the world
created), which is how the oracle reads what it needs from the env.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field, field_validator

from sttgym.checklist import Check
from sttgym.registry import CONFLICTS, LEVELS
from sttgym.judge import Impossibility
from sttgym.triggers import Trigger
from sttgym.user import UserProfile
from sttgym.schema import Schema

__all__ = ["CONFLICTS", "LEVELS", "Ref", "Call", "Task", "resolve"]



class Ref(Schema):
    """A value taken from the result of an earlier plan step saved as ``step``."""

    ref: Literal["result"] = "result"  # the tag that tells a stored Ref from an argument that is a dict
    step: str
    path: tuple = ()  # keys into that step's result, e.g. ("data", "shipment_id")


def _refs_restored(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get("ref") == "result" and set(value) == {"ref", "step", "path"}:
            return Ref.model_validate(value)
        return {k: _refs_restored(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_refs_restored(v) for v in value]
    return value


class Call(Schema):
    """One tool call of a plan; ``save_as`` names its result for later :class:`Ref` s."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    save_as: str | None = None

    @field_validator("arguments", mode="after")
    @classmethod
    def _stored_refs(cls, arguments: dict) -> dict:
        # Loaded from JSON, a Ref is a tagged dict again: make it a Ref, or the plan would pass the dict.
        return _refs_restored(arguments)


def resolve(value: Any, saved: dict[str, dict]) -> Any:
    """``value`` with every :class:`Ref` replaced by what it points to in ``saved`` results."""
    if isinstance(value, Ref):
        node: Any = saved.get(value.step, {})
        for key in value.path:
            node = node[key] if isinstance(node, dict) and key in node else (
                node[key] if isinstance(node, list) and isinstance(key, int) and key < len(node) else None)
        return node
    if isinstance(value, dict):
        return {k: resolve(v, saved) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, saved) for v in value]
    return value


class Task(Schema):
    """Everything one episode needs: the request, the world, its triggers, the checklist and the plans."""

    query: str
    profile: UserProfile
    start_time: str  # ISO time at which the episode starts
    initial_state: dict
    triggers: list[Trigger]
    checklist: list[Check]  # with dynamics: milestones and gates on the final world
    static_checklist: list[Check]  # the original goal, without dynamics (the nominal plan must pass it)
    nominal_plan: list[Call]  # the conflict-free plan; must be disrupted by the triggers
    oracle: list[Call]  # a solution that scores 1.0 with the triggers
    alternatives: list[list[Call]] = Field(default_factory=list)  # other solutions (every equivalent first choice)
    solvable: bool = True
    impossibility: Impossibility | None = None  # impossible tasks: what the judge checks
    final_reply: str = "Task Completed"
    # Filled in by the env from the registered id:
    domain: str = ""
    conflict: str = ""
    difficulty: str = ""

    @field_validator("start_time", mode="before")
    @classmethod
    def _iso_text(cls, value: Any) -> Any:
        # A loader that parsed this time parsed the task's other times too, not always reversibly ("2024-08-15" and
        # "2024-08-15T00:00" read back alike): say so rather than replay a task that differs from the stored one.
        if isinstance(value, datetime):
            raise ValueError("is a datetime, not the ISO text sttgym wrote: the task was read by a loader that parses "
                             "times (datasets.load_dataset('json') does, from a row that holds the task as an object); "
                             "read the file with json, or export it again (sttgym export writes each task as JSON text)")
        return value

    @property
    def scenario_id(self) -> str:
        return f"{self.domain}__{self.conflict}__{self.difficulty}"

    def named(self) -> tuple[list, list]:
        """Every predicate and operation the task names: ``(preds, ops)``."""
        checks = [*self.checklist, *self.static_checklist, *(self.impossibility.forbidden if self.impossibility else [])]
        preds = [c.holds for c in checks] + [p for t in self.triggers for p in (t.when, t.recovery) if p is not None]
        return preds, [op for t in self.triggers for op in t.effect]

    def summary(self) -> dict:
        """What an agent may know about the task (``info["task"]``): never the level, so never whether it is solvable."""
        return {"domain": self.domain, "conflict": self.conflict, "conflict_name": CONFLICTS.get(self.conflict, ""),
                "start_time": self.start_time}

    def harness(self) -> dict:
        """Facts for runners and reports only (the final step's ``info``, run records), never shown at reset."""
        return {**self.summary(), "scenario_id": self.scenario_id, "difficulty": self.difficulty,
                "solvable": self.solvable}
