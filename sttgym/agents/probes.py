"""The adversarial probe panel: cheap policies that must not score well on a good task.

Each probe stands for a way to collect reward without understanding the change. A task on
which one of them scores well measures the exploit, not the skill; ``sttgym validate``
reports their scores and fails a domain where any exploit averages above 0.1.

- :class:`AlwaysRefuse`: tells the user the request cannot be done, at once.
- :class:`KeywordStuffer`: reads every entity it can find, then replies with every refusal
  phrase and every id and time it saw.
- :class:`BlindWriter`: performs the request's writes (the nominal plan without its reads),
  never looking at the world. It is given the nominal plan, so it is the strongest agent of
  its kind.
- :class:`MutationSpammer`: calls every tool that changes the world with ids it has seen.
- :class:`RereadNominal`: makes the nominal plan's reads twice, then the whole nominal plan:
  looking without reacting.
- :class:`AskingReread`: the same, with one question to the user before the first write that
  names every fact the user withholds (it is handed their keywords): asking without acting.

The panel also holds the observation-only adversaries of :mod:`sttgym.agents.adversaries` (writes then
reads everything, re-reads after a failed write, asks one question then acts or refuses, explores then
refuses naming what changed, refuses feasible tasks), each held to 0.05 overall with the paper's weights.
"""

from __future__ import annotations

import re
from typing import Any

import gymnasium as gym
import numpy as np

from sttgym.agents.base import Agent
from sttgym.agents.reference import PlanAgent
from sttgym.core import tool_env
from sttgym.task import Call

__all__ = ["PROBES", "AlwaysRefuse", "KeywordStuffer", "BlindWriter", "MutationSpammer", "RereadNominal",
           "AskingReread"]

_ID = re.compile(r'"([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)"')
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}|\b\d{2}:\d{2}\b")
_STUFFING = ("cannot", "unable", "impossible", "not possible", "infeasible", "blocked", "closed", "expired",
             "lapsed", "unavailable", "earlier", "moved", "cancelled", "outage")


def _mutates(env: gym.Env) -> dict[str, bool]:
    return {name: spec.mutates for name, spec in tool_env(env).tools.items()}


class AlwaysRefuse(Agent):
    """Refuses every request, politely and at once."""

    def act(self, observation: str, info: dict) -> dict[str, Any]:
        return {"content": "I'm sorry, but this request cannot be completed as asked: it is not possible."}


class _Harvester(Agent):
    """Collects the ids and times that observations show."""

    def reset(self, observation: str, info: dict, env: gym.Env | None = None, seed: int | None = None) -> None:
        self.ids: list[str] = []
        self.times: list[str] = []
        self.tools = {t["function"]["name"]: t["function"] for t in info.get("tools", [])}
        self.rng = np.random.default_rng(0 if seed is None else seed)
        self.mutates = _mutates(env) if env is not None else {}  # which tools change the world
        self.calls = 0
        self._harvest(observation)

    def _harvest(self, text: str) -> None:
        for found in _ID.findall(text) + re.findall(r"\b[A-Z]+(?:-[A-Z0-9]+)+\b", text):
            if found not in self.ids:
                self.ids.append(found)
        for found in _TIME.findall(text):
            if found not in self.times:
                self.times.append(found)

    def _string_params(self, name: str) -> list[str]:
        props = self.tools[name].get("parameters", {}).get("properties", {})
        return [p for p, s in props.items() if s.get("type") == "string" and "enum" not in s]


class KeywordStuffer(_Harvester):
    """Reads every one-id read tool on every id it has seen (a bounded sweep), then stuffs a refusal."""

    def __init__(self, max_reads: int = 40):
        self.max_reads = max_reads

    def reset(self, observation: str, info: dict, env: gym.Env | None = None, seed: int | None = None) -> None:
        super().reset(observation, info, env, seed)
        self.reads = [n for n in sorted(self.tools) if not self.mutates.get(n, True)
                      and len(self._string_params(n)) == 1
                      and len(self.tools[n].get("parameters", {}).get("required", [])) == 1]
        self.done: set[tuple[str, str]] = set()
        self.told = False

    def act(self, observation: str, info: dict) -> dict[str, Any]:
        self._harvest(observation)
        if self.calls < self.max_reads:
            for name in self.reads:
                param = self._string_params(name)[0]
                for entity in self.ids:
                    if (name, entity) not in self.done:
                        self.done.add((name, entity))
                        self.calls += 1
                        return {"name": name, "arguments": {param: entity}}
        stuffed = "; ".join([*_STUFFING, *self.ids, *self.times])
        if not self.told and "chat_with_user" in self.tools:
            self.told = True
            return {"name": "chat_with_user", "arguments": {"message": stuffed}}
        return {"content": stuffed}


class MutationSpammer(_Harvester):
    """Calls every world-changing tool, again and again, with ids seen so far and random choices."""

    def __init__(self, max_calls: int = 30):
        self.max_calls = max_calls

    def reset(self, observation: str, info: dict, env: gym.Env | None = None, seed: int | None = None) -> None:
        super().reset(observation, info, env, seed)
        self.writes = [n for n in sorted(self.tools) if self.mutates.get(n, False)]

    def _value(self, schema: dict) -> Any:
        if "enum" in schema:
            return schema["enum"][int(self.rng.integers(len(schema["enum"])))]
        kind = schema.get("type")
        if kind == "integer":
            return int(self.rng.integers(1, 1000))
        if kind == "number":
            return float(self.rng.integers(1, 1000))
        if kind == "boolean":
            return bool(self.rng.integers(2))
        if kind == "array":
            return [self._value(schema.get("items", {"type": "string"})) for _ in range(int(self.rng.integers(1, 3)))]
        pool = self.ids + self.times
        return pool[int(self.rng.integers(len(pool)))] if pool else "X"

    def act(self, observation: str, info: dict) -> dict[str, Any]:
        self._harvest(observation)
        if self.calls >= self.max_calls or not self.writes:
            return {"content": "Task Completed"}
        name = self.writes[self.calls % len(self.writes)]
        self.calls += 1
        params = self.tools[name].get("parameters", {})
        return {"name": name, "arguments": {p: self._value(s) for p, s in params.get("properties", {}).items()
                                            if p in params.get("required", []) or self.rng.random() < 0.3}}


class BlindWriter(PlanAgent):
    """The nominal plan with every read removed (privileged: it is handed the plan's writes)."""

    def _plan_for(self, env: gym.Env):
        task, mutates = env.unwrapped.task, _mutates(env)
        return [c for c in task.nominal_plan if mutates.get(c.name, True)], task.final_reply


class RereadNominal(PlanAgent):
    """The nominal plan's reads, then the whole nominal plan: every change is seen, none is acted on."""

    def _plan_for(self, env: gym.Env):
        task, mutates = env.unwrapped.task, _mutates(env)
        reads = [c.model_copy(update={"save_as": None}) for c in task.nominal_plan if not mutates.get(c.name, True)]
        return reads + list(task.nominal_plan), task.final_reply


class AskingReread(RereadNominal):
    """Re-reads, asks the user about every withheld fact before its first write, then follows the stale plan."""

    def _plan_for(self, env: gym.Env):
        plan, reply = super()._plan_for(env)
        topics = [k for answer in env.unwrapped.task.profile.withheld for k in answer.keywords]
        if not topics or "chat_with_user" not in tool_env(env).tools:
            return plan, reply
        mutates = _mutates(env)
        first = next((i for i, c in enumerate(plan) if mutates.get(c.name, True)), len(plan))
        question = f"Before I go on: any requirement about {', '.join(topics)}?"
        ask = Call(name="chat_with_user", arguments={"message": question})
        return plan[:first] + [ask] + plan[first:], reply


from sttgym.agents.adversaries import ADVERSARIES  # noqa: E402 (the observation-only adversaries join the panel)

PROBES: dict[str, type[Agent]] = {"always-refuse": AlwaysRefuse, "keyword-stuffer": KeywordStuffer,
                                  "blind-writer": BlindWriter, "mutation-spammer": MutationSpammer,
                                  "reread-nominal": RereadNominal, "asking-reread": AskingReread, **ADVERSARIES}
