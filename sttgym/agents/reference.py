"""Reference agents: the yardsticks every task is validated against.

``OracleAgent`` and ``NominalAgent`` are privileged: they execute a plan stored in the task
(the oracle solution, or the conflict-free plan a model would follow if nothing changed).
``NoopAgent`` replies at once and ``RandomAgent`` issues seeded random calls.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from sttgym.agents.base import Agent
from sttgym.spaces import ToolCallSpace
from sttgym.task import Call, resolve

__all__ = ["PlanAgent", "OracleAgent", "NominalAgent", "NoopAgent", "RandomAgent"]

MAX_RETRIES = 5  # per call, on results that say the failure was transient


class PlanAgent(Agent):
    """Executes a list of :class:`~sttgym.task.Call`, resolving references to earlier results.

    A call whose result is marked ``retryable`` (a simulated timeout) is sent again, up to
    ``MAX_RETRIES`` times. After the plan, it replies with the task's final reply.
    """

    def __init__(self, plan: list[Call] | None = None, final_reply: str = "Task Completed"):
        self.plan, self.final_reply = list(plan or []), final_reply

    def _plan_for(self, env: gym.Env) -> tuple[list[Call], str]:
        return self.plan, self.final_reply

    def reset(self, observation: str, info: dict, env: gym.Env | None = None, seed: int | None = None) -> None:
        self.steps, self.reply = self._plan_for(env)
        self.index, self.saved, self.retries, self.pending = 0, {}, 0, None

    def act(self, observation: str, info: dict) -> dict[str, Any]:
        if self.pending is not None:
            result = info.get("result") or {}
            if result.get("retryable") and self.retries < MAX_RETRIES:
                self.retries += 1
                return self.pending[1]
            call = self.pending[0]
            if call.save_as:
                self.saved[call.save_as] = result
            self.pending, self.retries = None, 0
        if self.index >= len(self.steps):
            return {"content": self.reply}
        call = self.steps[self.index]
        self.index += 1
        action = {"name": call.name, "arguments": resolve(call.arguments, self.saved)}
        self.pending = (call, action)
        return action


class OracleAgent(PlanAgent):
    """Executes the task's oracle solution (privileged: reads the task from the env)."""

    def _plan_for(self, env: gym.Env) -> tuple[list[Call], str]:
        task = env.unwrapped.task
        return task.oracle, task.final_reply


class NominalAgent(PlanAgent):
    """Executes the conflict-free nominal plan, blind to any change in the world."""

    def _plan_for(self, env: gym.Env) -> tuple[list[Call], str]:
        task = env.unwrapped.task
        return task.nominal_plan, task.final_reply


class NoopAgent(Agent):
    """Ends every episode at once: the floor of every task."""

    def act(self, observation: str, info: dict) -> dict[str, Any]:
        return {"content": "Task Completed"}


class RandomAgent(Agent):
    """Seeded random calls shaped by the tools' schemas, ending after ``max_calls``."""

    def __init__(self, max_calls: int = 20):
        self.max_calls = max_calls

    def reset(self, observation: str, info: dict, env: gym.Env | None = None, seed: int | None = None) -> None:
        self.space = ToolCallSpace(info.get("tools", []), reply_probability=0.0,
                                   seed=0 if seed is None else seed)
        self.calls = 0

    def act(self, observation: str, info: dict) -> dict[str, Any]:
        self.calls += 1
        if self.calls > self.max_calls or not self.space.names:
            return {"content": "Task Completed"}
        return self.space.sample()
