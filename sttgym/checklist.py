"""Checklists: the reward of a feasible task is the fraction of its checks that hold at the end.

A check is a named predicate over the final state and the episode log. Checks state
outcomes ("the receipt is registered before the *new* deadline"), not that a tool was
called; the log is there for the few outcomes only a history shows (what the user was told).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Check", "EpisodeLog", "evaluate"]


@dataclass
class EpisodeLog:
    """What happened in an episode, as checks and judges see it."""

    calls: list[dict] = field(default_factory=list)  # {"name", "arguments", "result", "at"} of accepted calls
    said: list[str] = field(default_factory=list)  # everything the agent told the user, final reply last
    events: list[dict] = field(default_factory=list)  # fired trigger events, in order

    def called(self, name: str, succeeded: bool = True) -> list[dict]:
        """The calls of tool ``name`` (by default only those that succeeded)."""
        return [c for c in self.calls if c["name"] == name and (not succeeded or c["result"].get("success"))]


@dataclass(frozen=True)
class Check:
    """One checklist item: ``predicate(state, log)`` must be true at the end of the episode."""

    name: str
    description: str
    predicate: Callable[[dict, EpisodeLog], Any]

    def holds(self, state: dict, log: EpisodeLog) -> bool:
        try:
            return bool(self.predicate(state, log))
        except (KeyError, TypeError, IndexError, ValueError, AttributeError):
            # A predicate that cannot even read its fields (the entity was never created) fails.
            return False


def evaluate(checks: list[Check], state: dict, log: EpisodeLog) -> tuple[float, list[dict]]:
    """The fraction of ``checks`` that hold, and the per-check breakdown."""
    breakdown = [{"name": c.name, "description": c.description, "passed": c.holds(state, log)} for c in checks]
    score = sum(b["passed"] for b in breakdown) / len(breakdown) if breakdown else 0.0
    return score, breakdown
