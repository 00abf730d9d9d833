"""Failure-mode labels for arena trajectories, from the calls and the trigger log alone.

The STT-Arena paper (section 4.1) names three ways agents fail under dynamics. Each is
read here as a rule over the episode record the runner writes (its ``steps``, the final
``info["trigger_log"]``, the env's ``mutating_tools`` and each trigger's ``timing``).
Let *F* be the step at which the first trigger fired and *R* the first later step that
calls a tool through which a fired change is observable (the firing step itself counts
when the trigger fired before that call ran, so its result already showed the change).

- ``stale_state``: between *F* and *R* the agent changes the world, or repeats a call it
  made before the change, or it never makes *R* at all: it acts (or stops) on the state it
  read before the world moved.
- ``misdiagnosis``: after *F* a call fails and the agent answers by calling the same tool
  again, which fails again (it took the change for a wrong parameter or a transient
  glitch); or, on an impossible task, it saw the change (*R* exists) and still went on
  changing the world (it took a hard block for a recoverable obstacle).
- ``missing_verification``: after *R* (it had seen the change) the agent adapted, changing
  the world successfully, and then finished (a reply, not the turn cap) without any
  successful read afterwards.

Labels are not exclusive; a failed trajectory in which no trigger fired gets none. Only
failed trajectories (reward below 1) are labelled.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Iterable

from sttgym.user import USER_TOOL

__all__ = ["MODES", "diagnose", "count_modes"]

MODES: dict[str, str] = {
    "stale_state": "Stale-state execution",
    "misdiagnosis": "Misdiagnosis of the trigger",
    "missing_verification": "Missing post-adaptation verification",
}


def _calls(record: dict) -> list[tuple[int, str, str, bool]]:
    """``(step, tool, arguments as canonical JSON, succeeded)`` of every tool call in the record."""
    calls = []
    for index, step in enumerate(record.get("steps", [])):
        action = step.get("action")
        if not isinstance(action, dict) or "name" not in action:
            continue
        try:
            result = json.loads(step.get("observation") or "{}")
        except (json.JSONDecodeError, TypeError):
            result = {}
        succeeded = isinstance(result, dict) and result.get("success") is True
        arguments = json.dumps(action.get("arguments"), sort_keys=True, default=str)
        calls.append((index, str(action["name"]), arguments, succeeded))
    return calls


def diagnose(record: dict) -> list[str]:
    """The failure modes of one episode record (empty for a success or when nothing fired)."""
    if record.get("reward", 0.0) >= 1.0:
        return []
    steps = record.get("steps", [])
    fired = [i for i, s in enumerate(steps) if s.get("events")]
    if not fired:
        return []
    first = fired[0]
    events = [e for s in steps for e in s.get("events", [])]
    observable = {e.get("observable_via") for e in events}
    timing = record.get("trigger_timing", {})
    seen_at_first = any(timing.get(e.get("trigger")) == "before" for e in steps[first]["events"])
    mutating = set(record.get("mutating_tools", []))
    calls = _calls(record)

    reveal = next((i for i, name, _, _ in calls if name in observable and (i > first or (i == first and seen_at_first))),
                  len(steps))
    labels = []

    before = {(name, args) for i, name, args, _ in calls if i <= first}
    if reveal == len(steps) or any(first < i < reveal and (name in mutating or (name, args) in before)
                                   for i, name, args, _ in calls):
        labels.append("stale_state")

    after = [c for c in calls if c[0] > first]
    retried = any(not ok and nxt[1] == name and not nxt[3] for (_, name, _, ok), nxt in zip(after, after[1:]))
    pressed_on = (record.get("solvable") is False and reveal < len(steps)
                  and any(i > reveal and name in mutating and ok for i, name, _, ok in calls))
    if retried or pressed_on:
        labels.append("misdiagnosis")

    changes = [i for i, name, _, ok in calls if i > reveal and ok and name in mutating]
    ended_by_reply = bool(record.get("terminated"))
    if changes and ended_by_reply and not any(
            i > changes[-1] and ok and name not in mutating and name != USER_TOOL for i, name, _, ok in calls):
        labels.append("missing_verification")
    return labels


def count_modes(records: Iterable[dict]) -> dict[str, int]:
    """How many failed records carry each mode, plus ``failed`` and ``unlabelled`` totals."""
    counts: Counter = Counter({mode: 0 for mode in MODES})
    failed = unlabelled = 0
    for record in records:
        if record.get("reward", 0.0) >= 1.0:
            continue
        failed += 1
        labels = diagnose(record)
        counts.update(labels)
        unlabelled += not labels
    return {**counts, "failed": failed, "unlabelled": unlabelled}
