"""Hostile actions: hunting for anything an agent can send that breaks an environment.

:func:`fuzz` steps environments (any registered id, under any wrapper stack) with actions
drawn from :func:`hostile_action` and checks, for every one:

- ``step`` does not raise, and the observation is a string in the observation space;
- an action the env refuses (a failed result, no world event that step) leaves the world's
  state exactly as it was;
- the observation stays within ``MAX_OBSERVATION`` characters (:mod:`sttgym.actions` cuts
  longer results, saying so), and it and the step's ``info`` can be encoded as UTF-8 (a lone
  surrogate an agent sent is replaced where it enters); the slowest action is reported.

The categories: values of the wrong type, huge values (long strings, long integers, wide
lists), huge argument names, deep nesting, unicode and lone surrogates (as values, as keys,
and in well-formed calls whose tools echo them), near-miss ids (ids the observations showed,
slightly changed), actions that are not ``{"name", "arguments"}`` / ``{"content"}``, stray
fields, and calls after the episode ended. ``sttgym fuzz`` runs it from the command line.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import gymnasium as gym
import numpy as np

from sttgym.actions import MAX_OBSERVATION, brief
from sttgym.core import tool_env

__all__ = ["CATEGORIES", "STACKS", "MAX_OBSERVATION", "FuzzReport", "hostile_action", "fuzz"]

CATEGORIES = ("wrong_type", "huge", "huge_key", "deep", "unicode", "surrogate_echo", "near_miss", "not_an_action",
              "stray_fields", "valid_shape")
_ODD_TEXT = ["\ud800", "\udfff", "\x00", "\u202e", "𝔘𝔫𝔦", "²", "٣", "' OR 1=1 --", "../../etc/passwd", "{}", "[",
             "http://[", "nan", "-1", "9" * 400, " " * 1000, "\\" * 5000]
_ID = re.compile(r'"([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)"')


def _stacks() -> dict[str, Callable[[gym.Env], gym.Env]]:
    from sttgym.wrappers import MappingDrift, Obfuscate, StochasticFailure, TemporalWindow

    return {
        "plain": lambda env: env,
        "obfuscate": Obfuscate,
        "drift": lambda env: MappingDrift(Obfuscate(env), fraction=0.5),
        "failure": lambda env: StochasticFailure(env, p=0.3),
        "window": lambda env: TemporalWindow(env, k=3),
        "all": lambda env: TemporalWindow(StochasticFailure(MappingDrift(Obfuscate(env), fraction=0.5), p=0.3), k=3),
    }


STACKS = tuple(_stacks())


def _value(rng: np.random.Generator, category: str, seen: list[str]) -> Any:
    pick = lambda items: items[int(rng.integers(len(items)))]  # noqa: E731
    if category == "wrong_type":
        return pick([None, True, 3.5, -7, [], {}, [1, "a"], {"x": 1}, float("inf"), float("nan")])
    if category == "huge":
        return pick(["x" * int(rng.integers(10_000, 40_000)), 10 ** int(rng.integers(50, 5000)),
                     list(range(int(rng.integers(1000, 20_000)))), {str(i): i for i in range(2000)}])
    if category == "deep":
        value: Any = "bottom"
        for _ in range(int(rng.integers(20, 3000))):
            value = [value] if rng.random() < 0.5 else {"k": value}
        return value
    if category == "unicode":
        return pick(_ODD_TEXT)
    if category == "near_miss" and seen:
        base = pick(seen)
        return pick([base.lower(), base + "0", base[:-1], base.replace("-", "_"), " " + base, base + "\n", base * 2])
    return pick(seen) if seen else "X-1"


def hostile_action(rng: np.random.Generator, tools: list[dict], seen: list[str], category: str | None = None) -> Any:
    """One hostile action against an env whose agent-facing tools are ``tools`` (``info["tools"]``)."""
    category = category or CATEGORIES[int(rng.integers(len(CATEGORIES)))]
    names = [t["function"]["name"] for t in tools] or ["x"]
    name = names[int(rng.integers(len(names)))]
    params = next((t["function"]["parameters"] for t in tools if t["function"]["name"] == name), {})
    keys = list(params.get("properties", {})) or ["x"]
    if category == "not_an_action":
        return [None, "call get_status", b"bytes", ("name", "x"), 42, [], {"name": None}, {"arguments": {}},
                {"content": 3}, {"content": ["x"]}, {"name": "", "arguments": {}}, {"name": name, "arguments": "{"},
                {"name": name, "arguments": "[" * 20_000}, {(1, 2): "tuple key"}][int(rng.integers(14))]
    if category == "stray_fields":
        return {"name": name, "arguments": {}, "role": "assistant", "content": ""}
    if category == "valid_shape":
        return {"name": name, "arguments": {k: _value(rng, "near_miss", seen) for k in keys}}
    if category == "huge_key":  # an argument named by megabytes of text, which an error would echo
        return {"name": name, "arguments": {"k" * int(rng.integers(10**5, 10**7)): 1}}
    if category == "surrogate_echo":  # the tool's own parameters, with text a tool may echo and UTF-8 cannot carry
        return {"name": name, "arguments": {k: _value(rng, "near_miss", seen) + "\ud800" for k in keys}}
    arguments = {k: _value(rng, category, seen) for k in keys}
    if rng.random() < 0.3:  # sometimes the hostile value is the key itself, or the tool name
        arguments = {str(_value(rng, "unicode", seen))[:50]: arguments[keys[0]]}
    if rng.random() < 0.1:
        name = str(_value(rng, "unicode", seen))[:200]
    return {"name": name, "arguments": arguments}


@dataclass
class FuzzReport:
    """What a fuzzing run found."""

    actions: int = 0
    exceptions: list[str] = field(default_factory=list)  # "id/stack: ExceptionType: message" per raised step
    state_changes: list[str] = field(default_factory=list)  # refused actions that still changed the world
    oversized: list[str] = field(default_factory=list)  # observations over MAX_OBSERVATION characters
    unencodable: list[str] = field(default_factory=list)  # observations or infos that UTF-8 cannot carry
    slowest_seconds: float = 0.0
    slowest: str = ""
    largest_observation: int = 0
    by_category: dict[str, int] = field(default_factory=dict)

    @property
    def findings(self) -> list[str]:
        return self.exceptions + self.state_changes + self.oversized + self.unencodable

    @property
    def ok(self) -> bool:
        return not self.findings

    def summary(self) -> dict:
        return {"actions": self.actions, "exceptions": len(self.exceptions), "state_changes": len(self.state_changes),
                "oversized_observations": len(self.oversized), "unencodable": len(self.unencodable),
                "slowest_action_seconds": round(self.slowest_seconds, 4),
                "slowest_action": self.slowest, "largest_observation_chars": self.largest_observation,
                "by_category": dict(self.by_category)}


def _state(env: gym.Env) -> Any:
    return tool_env(env).snapshot()


def _encodable(observation: Any, info: dict) -> bool:
    """Whether a step's output can leave the process as UTF-8 (a server's reply, a tokenizer's input)."""
    try:
        json.dumps([observation, info], ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def fuzz(env_ids: Iterable[str], actions_per_env: int, stacks: Iterable[str] = STACKS, seed: int = 0,
         progress: Callable[[int], None] | None = None) -> FuzzReport:
    """Step every id under every stack with ``actions_per_env`` hostile actions; see the module docstring."""
    makers = _stacks()
    report = FuzzReport()
    rng = np.random.default_rng(seed)
    for env_id in env_ids:
        for stack in stacks:
            where = f"{env_id}/{stack}"
            env = makers[stack](gym.make(env_id))
            observation, info = env.reset(seed=int(rng.integers(1000)))
            tools, seen = info.get("tools", []), _ID.findall(observation)
            for _ in range(actions_per_env):
                category = CATEGORIES[int(rng.integers(len(CATEGORIES)))]
                action = hostile_action(rng, tools, seen, category)
                report.by_category[category] = report.by_category.get(category, 0) + 1
                report.actions += 1
                before = _state(env)
                started = time.perf_counter()
                try:
                    observation, _, terminated, truncated, info = env.step(action)
                except Exception as exc:  # the very thing being hunted
                    report.exceptions.append(f"{where}: {type(exc).__name__}: {str(exc)[:200]} ({category})")
                    env.reset(seed=0)
                    continue
                took = time.perf_counter() - started
                if took > report.slowest_seconds:
                    report.slowest_seconds, report.slowest = took, f"{where} ({category})"
                if not isinstance(observation, str) or not env.observation_space.contains(observation):
                    report.exceptions.append(f"{where}: observation outside the space ({category})")
                size = len(observation) if isinstance(observation, str) else 0
                report.largest_observation = max(report.largest_observation, size)
                if size > MAX_OBSERVATION:
                    report.oversized.append(f"{where}: {size} characters ({category})")
                if not _encodable(observation, info):
                    report.unencodable.append(f"{where}: {brief(action, 200)} ({category})")
                result = info.get("result") or {}
                if result.get("success") is False and not info.get("events") and _state(env) != before:
                    report.state_changes.append(f"{where}: {brief(action, 200)}")
                seen += [i for i in _ID.findall(observation) if i not in seen][:20]
                if terminated or truncated:
                    if rng.random() < 0.5:  # half the time, keep calling after the end
                        observation, info = env.reset(seed=int(rng.integers(1000)))
                        tools = info.get("tools", tools)
            env.close()
            if progress:
                progress(actions_per_env)
    return report
