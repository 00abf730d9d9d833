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
    revealed: dict[str, int] = field(default_factory=dict)  # trigger -> index of the first call that showed its change
    request: str = ""  # what the user asked, word for word

    def called(self, name: str, succeeded: bool = True) -> list[dict]:
        """The calls of tool ``name`` (by default only those that succeeded)."""
        return [c for c in self.calls if c["name"] == name and (not succeeded or c["result"].get("success"))]

    def noticed(self, trigger: str) -> bool:
        """Whether, after ``trigger`` fired, some result the agent got showed what it changed (by any route:
        the engine works it out, see :class:`~sttgym.triggers.Firing`)."""
        return trigger in self.revealed


class Check(Schema):
    """One checklist item: the predicate ``holds`` must be true at the end of the episode.

    ``stated`` quotes where the agent is told the rule the check enforces (words of the request, the world
    description, a tool's description or an observation): ``sttgym validate`` finds the quote in what the
    oracle's episode shows, so no check enforces a rule only the source states.
    """

    name: str
    description: str
    holds: Pred
    gate: bool = False
    stated: str = ""


def evaluate(checks: list[Check], world: Any, log: EpisodeLog, gates: list[dict] = ()) -> tuple[float, list[dict]]:
    """The score of ``checks`` on the final ``world``, and the per-check breakdown; ``gates`` are gate verdicts
    the engine worked out itself (the collateral gate), added to the breakdown."""
    breakdown = [{"name": c.name, "description": c.description, "gate": c.gate, "stated": c.stated,
                  "passed": world.holds(c.holds, log=log)} for c in checks] + list(gates)
    milestones = [b["passed"] for b in breakdown if not b["gate"]]
    if not milestones or not all(b["passed"] for b in breakdown if b["gate"]):
        return 0.0, breakdown
    return sum(milestones) / len(milestones), breakdown
