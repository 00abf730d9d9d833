"""Reward terms: the default equals the env's reward; shaping terms do what they say."""

from __future__ import annotations

import gymnasium as gym
import pytest

from sttgym.agents import NominalAgent, NoopAgent, OracleAgent
from sttgym.rewards import (CallCost, Checklist, FormatValidity, ImpossibleJudge, Progress, ShapedReward,
                            build_reward, default_reward)
from sttgym.rollout import rollout


def _episode_sum(traj) -> float:
    return sum(step["reward"] for step in traj.steps)


@pytest.mark.parametrize("agent", [OracleAgent, NominalAgent, NoopAgent])
def test_default_reward_is_the_env_reward(toy_ids, agent):
    for env_id in toy_ids:
        for seed in (1_000_000, 1_000_001):
            plain = rollout(gym.make(env_id), agent(), seed=seed)
            shaped = rollout(ShapedReward(gym.make(env_id)), agent(), seed=seed)
            assert _episode_sum(shaped) == pytest.approx(plain.reward)
            assert shaped.info["env_reward"] == plain.reward


def test_checklist_and_judge_split_feasible_and_impossible(toy_ids):
    easy, impossible = toy_ids
    easy_run = rollout(ShapedReward(gym.make(easy)), OracleAgent(), seed=1_000_000)
    assert easy_run.info["reward_terms"] == {"checklist": 1.0, "impossible_judge": 0.0}
    hard_run = rollout(ShapedReward(gym.make(impossible)), OracleAgent(), seed=1_000_000)
    assert hard_run.info["reward_terms"] == {"checklist": 0.0, "impossible_judge": 1.0}


def test_a_custom_judge_replaces_the_envs(toy_ids):
    class Harsh:
        def verdict(self, impossibility, state, log):
            return 0.0, []

    run = rollout(ShapedReward(gym.make(toy_ids[1]), ImpossibleJudge(Harsh())), OracleAgent(), seed=1_000_000)
    assert run.reward == 0.0 and run.info["env_reward"] == 1.0


def test_progress_is_dense_and_telescopes(toy_ids):
    traj = rollout(ShapedReward(gym.make("STTArena/Airline-T1-easy"), Progress()), OracleAgent(), seed=1)
    rewards = [step["reward"] for step in traj.steps]
    assert sum(r > 0 for r in rewards) >= 2  # each milestone pays on the step that makes it hold
    assert min(rewards) >= 0 and sum(rewards) == pytest.approx(1.0)
    assert rollout(ShapedReward(gym.make(toy_ids[1]), Progress()), OracleAgent(), seed=1_000_003).reward == 0.0


def test_call_cost_and_weights_compose(toy_ids):
    term = Checklist() + 2 * CallCost(0.05)
    traj = rollout(ShapedReward(gym.make(toy_ids[0]), term), OracleAgent(), seed=1_000_000)
    calls = traj.tool_calls
    assert _episode_sum(traj) == pytest.approx(1.0 - 0.1 * calls)
    assert set(traj.info["reward_terms"]) == {"checklist", "call_cost"}


def test_format_validity_penalises_malformed_actions_only(toy_ids):
    env = ShapedReward(gym.make(toy_ids[0]), FormatValidity(0.5))
    env.reset(seed=1_000_000)
    locker = env.unwrapped.task.nominal_plan[0].arguments["locker_id"]
    assert env.step({"name": "get_locker", "arguments": {"locker_id": locker}})[1] == 0.0
    assert env.step({"name": "get_locker", "arguments": {"locker_id": "nope"}})[1] == 0.0  # the world refuses
    assert env.step({"name": "no_such_tool", "arguments": {}})[1] == -0.5
    assert env.step({"name": "get_locker", "arguments": {"locker": locker}})[1] == -0.5
    assert env.step({"violation": "two calls"})[1] == -0.5
    assert env.step({"content": "Task Completed"})[1] == 0.0


def test_build_reward_from_config():
    assert repr(build_reward(None)) == repr(default_reward())
    term = build_reward([{"term": "checklist"}, {"term": "call_cost", "per_call": 0.02, "weight": 3}])
    assert repr(term) == "Checklist() + 3 * CallCost(0.02)"
    with pytest.raises(ValueError, match="unknown reward term"):
        build_reward([{"term": "bonus"}])
    with pytest.raises(ValueError, match="call_cost"):
        build_reward([{"term": "call_cost", "cost": 1}])
