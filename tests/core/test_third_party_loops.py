"""The envs in the loops third-party code runs (TRL, RLlib, CleanRL, vector trainers, Hugging Face datasets), driven
by that code itself: gymnasium's time limit, gymnasium's own vector envs, and exported tasks read by ``datasets``."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers import TimeLimit
from typer.testing import CliRunner

import sttgym
from sttgym.agents import OracleAgent, RandomAgent
from sttgym.cli import app

ID = "STTArena/ColdChain-T2-medium"
CUT = 20  # the oracle's first 20 of 23 actions earn 0.6 of its seed-0 instance: a cut scored 0 would show


def plain_loop(env: gym.Env, seed: int = 0) -> tuple[list, list[float], bool, bool, dict]:
    """The step loop trainers run: act, step, stop at the end; nothing sttgym-specific."""
    observation, info = env.reset(seed=seed)
    agent = OracleAgent()
    agent.reset(observation, info, env=env, seed=seed)
    actions, rewards = [], []
    while True:
        actions.append(agent.act(observation, info))
        observation, reward, terminated, truncated, info = env.step(actions[-1])
        rewards.append(reward)
        if terminated or truncated:
            return actions, rewards, terminated, truncated, info


@pytest.mark.parametrize("limit", ["gym.make", "by hand"])
def test_a_time_limit_s_cut_is_scored_by_the_env_in_a_plain_loop(limit):
    env = gym.make(ID, max_episode_steps=CUT) if limit == "gym.make" else TimeLimit(gym.make(ID), CUT)
    actions, rewards, terminated, truncated, info = plain_loop(env)
    assert truncated and not terminated and len(actions) == CUT
    assert rewards[:-1] == [0.0] * (CUT - 1) and rewards[-1] == info["score"] == pytest.approx(0.6)
    assert [c["name"] for c in info["checklist"]] and info["task"]["difficulty"] == "medium"
    assert "result" in info and info["turn"] == CUT  # the step's own info, with the end added
    traj = sttgym.rollout(gym.make(ID, max_episode_steps=CUT), OracleAgent(), seed=0)
    own = sttgym.rollout(gym.make(ID, max_turns=CUT), OracleAgent(), seed=0)  # the env's own turn limit
    assert [s["action"] for s in traj.steps] == actions
    assert rewards[-1] == traj.reward == own.reward and info["checklist"] == traj.info["checklist"] == own.info["checklist"]
    assert env.step(actions[-1])[1:3] == (0.0, True)  # concluded once: a step past the end scores nothing more


def test_a_cut_scramble_episode_is_scored_too_and_other_envs_steps_are_untouched():
    env = gym.make("ScrambleTool/Base", max_episode_steps=3)
    observation, info = env.reset(seed=0)
    agent = RandomAgent()
    agent.reset(observation, info, env=env, seed=0)
    for _ in range(3):
        observation, reward, terminated, truncated, info = env.step(agent.act(observation, info))
    assert truncated and len(info["tasks"]) == 5 and reward == 0.0
    cart = gym.make("CartPole-v1", max_episode_steps=2)
    cart.reset(seed=0)
    cart.step(0)
    _, reward, _, truncated, info = cart.step(0)
    assert truncated and reward == 1.0 and info == {}


# Sub-env 0 reads the lots and replies at its second step (a result of None, the end's checklist), is reset by the
# vector env at its third and keeps reading; sub-env 1 meanwhile lists sites, chats, makes a call missing its
# arguments (no data at all) and replies at its sixth: infos of different shapes at every step.
LOTS, REPLY = {"name": "list_lots", "arguments": {}}, {"content": "Task Completed"}
ACTIONS = ([LOTS, REPLY, LOTS, LOTS, LOTS, LOTS],
           [{"name": "list_sites", "arguments": {}}, {"name": "chat_with_user", "arguments": {"message": "Which lot?"}},
            LOTS, {"name": "get_travel_time", "arguments": {}}, LOTS, REPLY])


def _gymnasium_vector_env(how: str) -> gym.vector.VectorEnv:
    fns = [lambda: gym.make(ID) for _ in range(2)]
    return {"make_vec sync": lambda: gym.make_vec(ID, num_envs=2, vectorization_mode="sync"),
            "make_vec async": lambda: gym.make_vec(ID, num_envs=2, vectorization_mode="async",
                                                   vector_kwargs={"shared_memory": False}),
            "SyncVectorEnv": lambda: gym.vector.SyncVectorEnv(fns),
            "AsyncVectorEnv": lambda: gym.vector.AsyncVectorEnv(fns, shared_memory=False)}[how]()


@pytest.mark.parametrize("how", ["make_vec sync", "make_vec async", "SyncVectorEnv", "AsyncVectorEnv"])
def test_gymnasium_s_own_vector_envs_step_diverging_sub_envs_to_the_end(how):
    alone = []  # each sub-env's episode played on its own, up to its reply
    for seed, actions in enumerate(ACTIONS):
        env = gym.make(ID)
        env.reset(seed=seed)
        end = actions.index(REPLY) + 1
        alone.append([env.step(a) for a in actions[:end]])
    vec = _gymnasium_vector_env(how)
    try:
        assert type(vec) in (gym.vector.SyncVectorEnv, gym.vector.AsyncVectorEnv)  # gymnasium's, not sttgym's
        observations, info = vec.reset(seed=[0, 1])
        assert list(info["task"][0]) == ["domain", "conflict", "conflict_name", "start_time"]
        for t in range(6):
            observations, rewards, terminated, truncated, info = vec.step((ACTIONS[0][t], ACTIONS[1][t]))
            for i in range(2):
                if t < len(alone[i]):
                    observation, reward, done, _, own = alone[i][t]
                    assert observations[i] == observation and rewards[i] == reward and terminated[i] == done
                    assert info["result"][i] == own["result"] and info["_result"][i]
                    assert (info["checklist"][i] == own["checklist"]) if done else not info.get("_checklist", [0, 0])[i]
            if t == 2:  # sub-env 0 was reset: its reset info beside sub-env 1's step info
                assert info["_tools"].tolist() == [True, False] and info["_result"].tolist() == [False, True]
        assert terminated[1] and rewards[1] == alone[1][-1][1] and not truncated.any()
    finally:
        vec.close()


def test_other_envs_infos_still_merge_the_gymnasium_way():
    class Counter(gym.Env):
        observation_space, action_space = gym.spaces.Discrete(2), gym.spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            return 0, {"nested": {"count": 0}}

        def step(self, action):
            return 0, 1.0, False, False, {"nested": {"count": int(action)}}

    vec = gym.vector.SyncVectorEnv([Counter, Counter])
    vec.reset()
    _, _, _, _, info = vec.step(np.array([0, 1]))
    assert info["nested"]["count"].tolist() == [0, 1] and info["_nested"].tolist() == [True, True]


def test_an_exported_file_loaded_by_datasets_replays_each_episode_exactly(tmp_path):
    datasets = pytest.importorskip("datasets")
    result = CliRunner().invoke(app, ["export", "--out", str(tmp_path / "x"), "--no-hf", "--manifest", "live",
                                      "--domain", "ColdChain"])
    assert result.exit_code == 0, result.output
    path = tmp_path / "x" / "live.jsonl"
    rows = datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path / "cache"))
    assert len(rows) == 108 and rows.features["task"].dtype == "string"
    for row in (rows[0], rows[len(rows) // 2 + 1]):
        live = sttgym.rollout(gym.make(row["env_id"]), OracleAgent(), seed=row["seed"])
        stored = sttgym.rollout(gym.make(row["env_id"]), OracleAgent(), seed=123, options={"task": row["task"]})
        assert stored.messages == live.messages and stored.reward == live.reward == 1.0
        assert stored.info["checklist"] == live.info["checklist"] and stored.info["trigger_log"] == live.info["trigger_log"]

    # A row holding its task as an object (as earlier releases wrote them) comes back from datasets with datetimes:
    # refused, saying why, rather than replayed as a different task.
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps({**json.loads(path.read_text().splitlines()[0]),
                               "task": json.loads(rows[0]["task"])}) + "\n")
    (row,) = datasets.load_dataset("json", data_files=str(old), split="train", cache_dir=str(tmp_path / "cache"))
    with pytest.raises(ValueError, match=r"datetime.*load_dataset\('json'\)"):
        gym.make(row["env_id"]).reset(options={"task": row["task"]})
