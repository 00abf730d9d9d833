"""The noisy expert: the oracle solution played with the paper's failure patterns injected.

STT-Arena's analysis (its §4.1) finds three recurring failure modes; the noisy expert
reproduces each on top of a correct plan, so the refiner has realistic imperfect input
whose fix is known to exist:

- *stale-state execution and blind retries*: right after the world changed, it first
  carries on with the conflict-free plan (the nominal plan's next step that the oracle
  does not take); a refused call is then sent again several times, as is or with
  surface-level changes to an identifier, before it moves on;
- *missing state refresh*: it skips re-reading the part of the world a trigger changed;
- *missing post-adaptation verification*: it skips the reads that follow the plan's last change.

Only reads nobody depends on are skipped (no later step uses their result), so the
trajectory still reaches the oracle's outcome unless a stale call did harm. It is a
privileged agent: it reads the task and the fired trigger events from the env.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import numpy as np

from sttgym.agents.base import Agent
from sttgym.agents.llm import USER_TOOL
from sttgym.agents.reference import MAX_RETRIES
from sttgym.core import tool_env
from sttgym.task import Call, Ref, resolve

__all__ = ["NoisyExpert", "vary"]


def _refs(value: Any) -> set[str]:
    if isinstance(value, Ref):
        return {value.step}
    if isinstance(value, dict):
        return set().union(*map(_refs, value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*map(_refs, value)) if value else set()
    return set()


def _key(call: Call) -> str:
    return call.name + json.dumps(call.arguments, sort_keys=True, default=str)


def vary(action: dict, rng: np.random.Generator) -> dict:
    """``action`` with one string argument changed on the surface (case, separators, a suffix)."""
    strings = sorted(k for k, v in action.get("arguments", {}).items() if isinstance(v, str) and v)
    if not strings:
        return action
    key = strings[int(rng.integers(len(strings)))]
    value = action["arguments"][key]
    changes = [value.lower(), value.upper(), value.replace("-", "").replace("_", ""), value + "-1", value[:-1]]
    changed = [c for c in changes if c != value] or [value + "-1"]
    return {"name": action["name"], "arguments": {**action["arguments"], key: changed[int(rng.integers(len(changed)))]}}


class NoisyExpert(Agent):
    """The oracle with injected failure patterns (see the module docstring).

    Args:
        rng: the generator every random choice is drawn from.
        stale: chance of acting on the stale plan right after the world changes.
        retry: chance that a refused call is followed by a burst of blind retries.
        retries: inclusive range of the burst's length.
        vary_chance: chance that a retry changes an identifier instead of repeating exactly.
        skip_refresh: chance of skipping a re-read of something a trigger changed.
        skip_verify: chance of skipping each read after the plan's last change.
    """

    def __init__(self, rng: np.random.Generator, stale: float = 0.8, retry: float = 0.8,
                 retries: tuple[int, int] = (2, 5), vary_chance: float = 0.5, skip_refresh: float = 0.7,
                 skip_verify: float = 0.7):
        self.rng = rng
        self.stale, self.retry, self.retries, self.vary_chance = stale, retry, retries, vary_chance
        self.skip_refresh, self.skip_verify = skip_refresh, skip_verify

    def reset(self, observation: str, info: dict, env: gym.Env | None = None, seed: int | None = None) -> None:
        base = env.unwrapped
        task = base.task
        self.plan, self.reply = list(task.oracle), task.final_reply
        oracle = {_key(c) for c in task.oracle}
        self.stale_calls = [c for c in task.nominal_plan if _key(c) not in oracle]
        self.reads = {n for n, spec in tool_env(env).tools.items() if not spec.mutates and n != USER_TOOL}
        changes = [i for i, c in enumerate(self.plan) if c.name not in self.reads]
        self.last_change = changes[-1] if changes else -1
        self.index, self.saved = 0, {}
        self.queue: list[tuple[dict, bool]] = []  # injected actions, each flagged as a retry or not
        self.pending: tuple[Call, dict] | None = None
        self.last: dict | None = None
        self.transient = 0
        self.observable: set[str] = set()

    def act(self, observation: str, info: dict) -> dict[str, Any]:
        result = info.get("result") or {}
        events = info.get("events", [])
        self.observable |= {e["observable_via"] for e in events}
        if self.pending is not None and result.get("retryable") and self.transient < MAX_RETRIES:
            self.transient += 1
            return self.pending[1]
        if self.pending is not None:
            call = self.pending[0]
            if call.save_as:
                self.saved[call.save_as] = result
            self.pending, self.transient = None, 0
        if events and self.stale_calls and self.rng.random() < self.stale:
            stale = self.stale_calls.pop(0)
            self.queue.append(({"name": stale.name, "arguments": resolve(stale.arguments, self.saved)}, False))
        elif self.last is not None and not self.queue and result.get("success") is False \
                and not result.get("retryable") and self.rng.random() < self.retry:
            low, high = self.retries
            self.queue += [(vary(self.last, self.rng) if self.rng.random() < self.vary_chance else self.last, True)
                           for _ in range(int(self.rng.integers(low, high + 1)))]
        if self.queue:
            action, is_retry = self.queue.pop(0)
            self.last = None if is_retry else action  # a retry starts no burst of its own
            return action
        while self.index < len(self.plan) and self._skipped(self.index):
            self.index += 1
        if self.index >= len(self.plan):
            return {"content": self.reply}
        call = self.plan[self.index]
        self.index += 1
        action = {"name": call.name, "arguments": resolve(call.arguments, self.saved)}
        self.pending, self.last = (call, action), action
        return action

    def _skipped(self, index: int) -> bool:
        call = self.plan[index]
        if call.name not in self.reads:
            return False
        if call.save_as and any(call.save_as in _refs(later.arguments) for later in self.plan[index + 1:]):
            return False
        if index > self.last_change:
            return bool(self.rng.random() < self.skip_verify)
        return call.name in self.observable and bool(self.rng.random() < self.skip_refresh)
