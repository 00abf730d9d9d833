"""StochasticFailure: valid calls time out at rate p, run nothing, cost nothing; meta-commands never fail."""

from __future__ import annotations

import math

import gymnasium as gym
import pytest

import sttgym  # noqa: F401  (registers the ScrambleTool ids)
from sttgym.agents import OracleAgent
from sttgym.rollout import rollout
from sttgym.wrappers import StochasticFailure

CALL = {"name": "list_cron_jobs", "arguments": {}}


@pytest.mark.parametrize("p", [0.1, 0.35])
def test_the_timeout_rate_matches_p(p):
    env = StochasticFailure(gym.make("ScrambleTool/Unscrambled", budget=10**6), p=p)
    env.reset(seed=4)
    n = 3000
    timeouts = sum(any(e["type"] == "timeout" for e in env.step(CALL)[4]["events"]) for _ in range(n))
    assert abs(timeouts / n - p) < 4 * math.sqrt(p * (1 - p) / n)


def test_a_timeout_runs_nothing_and_costs_no_budget():
    env = StochasticFailure(gym.make("ScrambleTool/Unscrambled"), p=0.5)
    env.reset(seed=0)
    seen = set()
    for _ in range(40):
        spent = env.unwrapped.current.actions
        observation, reward, terminated, truncated, info = env.step(CALL)
        timed_out = info["events"] == [{"type": "timeout"}]
        seen.add(timed_out)
        assert env.unwrapped.current.actions == spent + (0 if timed_out else 1)
        if timed_out:
            assert info["result"]["retryable"] and "Timeout" in observation and not terminated
            assert info["task"] == {**info["task"], "actions": spent, "budget": env.unwrapped.budget}
    assert seen == {True, False}


def test_meta_commands_replies_and_invalid_calls_never_time_out():
    env = StochasticFailure(gym.make("ScrambleTool/Unscrambled"), p=0.99)
    env.reset(seed=0)
    for action in ({"name": "submit_solution", "arguments": {"solution": "x"}}, {"content": "hi"},
                   {"name": "list_cron_jobs", "arguments": {"x": 1}}, {"name": "nope", "arguments": {}},
                   {"name": "skip_task", "arguments": {}}):
        assert env.step(action)[4]["events"] != [{"type": "timeout"}]


def test_failures_apply_to_arena_worlds_and_a_retrying_agent_still_succeeds(toy_ids):
    env = StochasticFailure(gym.make(toy_ids[0]), p=0.3)
    results = [rollout(env, OracleAgent(), seed=seed) for seed in range(6)]
    assert all(t.reward == 1.0 for t in results)
    assert any(e.get("type") == "timeout" for t in results for s in t.steps for e in s["events"])
    with pytest.raises(ValueError):
        StochasticFailure(env, p=1.0)


def test_a_timeout_reports_the_moment_as_the_env_would(toy_ids):
    env = StochasticFailure(gym.make(toy_ids[0]), p=0.9)
    _, info = env.reset(seed=0)
    call = {"name": "get_locker", "arguments": {"locker_id": "L-404"}}  # a valid call (the locker need not exist)
    keys = None
    for _ in range(30):
        clock = env.unwrapped.clock.iso()
        _, _, _, _, info = env.step(call)
        if info["events"] == [{"type": "timeout"}]:
            assert info["clock"] == clock and info["turn"] == env.unwrapped.turn
            keys = set(info)
        elif keys is not None:
            assert set(info) == keys  # a timeout's info has the same fields as a step's
            return
    pytest.fail("no timeout followed by a normal step")
