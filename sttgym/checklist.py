"""Checklists: the reward of a feasible task.

A check names a predicate of the world (with arguments) that must hold at the end of the
episode. Checks come in two kinds, as in the STT-Arena paper's checklists:

- **milestones**, the progress a correct recovery makes (the changed entity re-read after the
  change, the stale plan unwound, the alternative secured, the goal met);
- **gates**, the constraints no outcome may break (a spoiled or late delivery, a booking
  over a closed road): a failed gate zeroes the reward however many milestones hold.

The reward is the fraction of milestones that hold, or 0 when a gate fails. Doing nothing
therefore scores 0 (no milestone holds in the initial world), and each milestone a correct
plan reaches raises the score.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


from sttgym.schema import Pred, Schema

__all__ = ["Check", "EpisodeLog", "evaluate"]


@dataclass
class EpisodeLog:
    """What happened in an episode, as checks and judges see it."""

    calls: list[dict] = field(default_factory=list)  # {"name", "arguments", "result", "at"} of accepted calls
    said: list[str] = field(default_factory=list)  # everything the agent told the user, final reply last
    events: list[dict] = field(default_factory=list)  # fired trigger events, in order, each with its "call_index"
    observables: dict[str, list] = field(default_factory=dict)  # trigger name -> the Observables that show it

    def called(self, name: str, succeeded: bool = True) -> list[dict]:
        """The calls of tool ``name`` (by default only those that succeeded)."""
        return [c for c in self.calls if c["name"] == name and (not succeeded or c["result"].get("success"))]

    def noticed(self, trigger: str) -> bool:
        """Whether a successful call of a read that shows ``trigger``'s change came after it first fired."""
        first = next((e["call_index"] for e in self.events if e["trigger"] == trigger), None)
        if first is None:
            return False
        return any(c["result"].get("success") and any(o.matches(c["name"], c["arguments"])
                                                      for o in self.observables.get(trigger, ()))
                   for c in self.calls[first:])


class Check(Schema):
    """One checklist item: the predicate ``holds`` must be true at the end of the episode."""

    name: str
    description: str
    holds: Pred
    gate: bool = False


def evaluate(checks: list[Check], world: Any, log: EpisodeLog) -> tuple[float, list[dict]]:
    """The score of ``checks`` on the final ``world``, and the per-check breakdown."""
    breakdown = [{"name": c.name, "description": c.description, "gate": c.gate,
                  "passed": world.holds(c.holds, log=log)} for c in checks]
    milestones = [b["passed"] for b in breakdown if not b["gate"]]
    if not milestones or not all(b["passed"] for b in breakdown if b["gate"]):
        return 0.0, breakdown
    return sum(milestones) / len(milestones), breakdown
