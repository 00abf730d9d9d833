"""Checks for stories with a fact only the user knows: the oracle asks before it commits, and an agent that
recovers the same way without asking (taking any alternative, the right one included) does not pass."""

from __future__ import annotations

import json
from typing import Callable

import gymnasium as gym

from sttgym.agents import OracleAgent, PlanAgent
from sttgym.rollout import rollout
from sttgym.task import Call
from sttgym.user import USER_TOOL, words


def question(task) -> Call:
    """The oracle's question: its chat that names a withheld fact's keyword."""
    keys = {k.lower() for answer in task.profile.withheld for k in answer.keywords}
    return next(c for c in task.oracle if c.name == USER_TOOL and keys & words(c.arguments["message"]))


def assert_oracle_asks_first(env_id: str, seed: int) -> gym.Env:
    """The oracle scores 1.0, and the withheld fact shows only in the user's reply to its question: nowhere in the
    query, the initial state or any tool result. Returns the env, after the episode."""
    env = gym.make(env_id)
    traj = rollout(env, OracleAgent(), seed=seed)
    assert traj.reward == 1.0, (env_id, seed, traj.info.get("checklist"))
    task = env.unwrapped.task
    (fact,) = [a.text for a in task.profile.withheld]
    assert fact not in task.query and fact not in json.dumps(task.initial_state)
    shown = [s["action"] for s in traj.steps if fact in str(s["observation"])]
    assert shown == [{"name": USER_TOOL, "arguments": question(task).arguments}], (env_id, seed, shown)
    return env


def without_asking(env_id: str, seed: int, swap: dict[str, str]) -> dict:
    """The oracle's recovery without its question, every argument named in ``swap`` replaced (another
    alternative's ids; empty: the user's own alternative, taken by luck). The final info."""
    env = gym.make(env_id)
    env.reset(seed=seed)
    task = env.unwrapped.task
    asked = question(task)
    plan = [c.model_copy(update={"arguments": {k: swap.get(v, v) if isinstance(v, str) else v
                                               for k, v in c.arguments.items()}})
            for c in task.oracle if c is not asked]
    return rollout(env, PlanAgent(plan), seed=seed).info


def passed(info: dict, name: str) -> bool:
    return next(c["passed"] for c in info["checklist"] if c["name"] == name)


def assert_guessing_fails(env_id: str, seed: int, others: list[dict[str, str]]) -> None:
    """Each other alternative taken without asking scores at most 0.75; the user's own, taken without asking, meets
    every check but the question's, so no guess passes."""
    assert others, (env_id, seed)
    for swap in others:
        info = without_asking(env_id, seed, swap)
        assert info["score"] <= 0.75 and not passed(info, "asked_user"), (env_id, seed, swap, info["checklist"])
    lucky = without_asking(env_id, seed, {})
    missed = [c["name"] for c in lucky["checklist"] if not c["passed"]]
    assert lucky["score"] < 1.0 and missed == ["asked_user"], (env_id, seed, missed)


def assert_unpredictable(env_id: str, cues: Callable[..., dict[str, bool]], seeds: range = range(16)) -> None:
    """Every cue (a guess from what the tools show: listing order, distance, likeness to the planned choice;
    ``cues(task)`` says whether each guess is the user's alternative) is right on some seeds and wrong on others."""
    seen: dict[str, set[bool]] = {}
    for seed in seeds:
        env = gym.make(env_id)
        env.reset(seed=seed)
        for cue, right in cues(env.unwrapped.task).items():
            seen.setdefault(cue, set()).add(right)
    assert seen and all(v == {True, False} for v in seen.values()), (env_id, seen)
