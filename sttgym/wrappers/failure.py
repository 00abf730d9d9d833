"""Stochastic action failure: a valid call times out now and then, running nothing."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from sttgym.actions import render_result
from sttgym.core import tool_env
from sttgym.tools import fail
from sttgym.wrappers.base import ToolWrapper, valid_call

__all__ = ["StochasticFailure"]


class StochasticFailure(ToolWrapper):
    """Each valid tool call times out with probability ``p`` (ScrambleToolBench §2.4).

    A call is valid when the base env would run it (known tool, arguments that fit, seen
    through every wrapper below). A timed-out call never reaches the env: nothing changes
    and no budget is spent. The agent reads a plaintext timeout result marked
    ``retryable``; ``info["events"]`` holds ``{"type": "timeout"}`` and the rest of ``info`` is the
    env's ``status()`` (clock, turn, current task) as it stands. Meta-commands, replies,
    invalid calls and calls after the episode ended never time out and draw nothing from the
    generator.

    Args:
        p: the timeout probability, in [0, 1).
    """

    def __init__(self, env: gym.Env, p: float = 0.1):
        if not 0.0 <= p < 1.0:
            raise ValueError(f"p must be in [0, 1), got {p}")
        super().__init__(env, p=p)
        self.p = p

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.require_reset()
        call = valid_call(self.env, action)
        base = tool_env(self.env)
        if call is None or call.name in self.meta_commands or base.done or self.rng.random() >= self.p:
            return self.env.step(action)  # after the end, the env itself says the episode is over
        name = action["name"] if isinstance(action, dict) else call.name  # as the agent called it
        result = fail(f"Timeout: {name} did not respond in time; nothing was executed.", retryable=True)
        # Nothing ran: the moment (clock, turn, task) is the env's as it stands.
        return render_result(result), 0.0, False, False, {**base.status(), "result": result,
                                                           "events": [{"type": "timeout"}]}
