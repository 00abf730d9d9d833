"""Tasks: one instance of a scenario, built from a seeded generator.

A scenario is a function ``scenario(rng) -> Task``. Everything that varies between
instances (ids, times, quantities, which alternative exists) is drawn from ``rng``, so one
seed fixes the instance and one scenario yields many distinct instances.

Plans (the conflict-free nominal plan and the oracle solution) are lists of :class:`Call`.
A call can refer to the result of an earlier one with :class:`Ref` (a shipment id the world
created), which is how the oracle reads what it needs from the env.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sttgym.checklist import Check
from sttgym.judge import Impossibility
from sttgym.triggers import Trigger
from sttgym.user import UserProfile

__all__ = ["CONFLICTS", "LEVELS", "Ref", "Call", "Task", "resolve"]

CONFLICTS: dict[str, str] = {
    "T1": "Window Expiry",
    "T2": "Priority Reorder",
    "T3": "Quota Reset",
    "S1": "Site Mismatch",
    "S2": "Dependency Block",
    "S3": "Route Restriction",
    "ST1": "Resource Shift",
    "ST2": "Failure Cascade",
    "ST3": "Handoff Failure",
}
LEVELS: tuple[str, ...] = ("easy", "medium", "hard", "impossible")


class Ref(BaseModel):
    """A value taken from the result of an earlier plan step saved as ``step``."""

    step: str
    path: tuple = ()  # keys into that step's result, e.g. ("data", "shipment_id")


class Call(BaseModel):
    """One tool call of a plan; ``save_as`` names its result for later :class:`Ref` s."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    save_as: str | None = None


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


class Task(BaseModel):
    """Everything one episode needs; see DESIGN.md §4."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    query: str
    profile: UserProfile
    start_time: str  # ISO time at which the episode starts
    initial_state: dict
    triggers: list[Trigger]
    checklist: list[Check]  # with dynamics: what must hold at the end
    static_checklist: list[Check]  # without dynamics (the nominal plan must pass it)
    nominal_plan: list[Call]  # the conflict-free plan; must be disrupted by the triggers
    oracle: list[Call]  # a solution that scores 1.0 with the triggers
    solvable: bool = True
    impossibility: Impossibility | None = None  # impossible tasks: what the judge checks
    final_reply: str = "Task Completed"
    # Filled in by the env from the registered id:
    domain: str = ""
    conflict: Literal["", "T1", "T2", "T3", "S1", "S2", "S3", "ST1", "ST2", "ST3"] = ""
    difficulty: Literal["", "easy", "medium", "hard", "impossible"] = ""

    @property
    def scenario_id(self) -> str:
        return f"{self.domain}__{self.conflict}__{self.difficulty}"

    def summary(self) -> dict:
        """What an agent may know about the task (``info["task"]``)."""
        return {
            "scenario_id": self.scenario_id,
            "domain": self.domain,
            "conflict": self.conflict,
            "conflict_name": CONFLICTS.get(self.conflict, ""),
            "difficulty": self.difficulty,
            "solvable": self.solvable,
            "start_time": self.start_time,
        }
