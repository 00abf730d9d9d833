"""Recorded trajectories: engine work (speed-ups, refactors) must not change a single episode.

Every library arena id is played by the oracle, the nominal plan and a seeded random agent,
one id per domain also under the full wrapper stack, and every ScrambleTool condition by a
random and the cycle-tracing agent; each episode is reduced to a hash of everything an agent
or a harness sees (observations, rewards, end flags, infos). The hashes live in
``tests/data/trajectories.json``. A change that is meant to alter episodes (a new domain, a
reworked scenario) records them anew:

    python -m tests.core.test_trajectories
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import gymnasium as gym
import pytest

import sttgym
from sttgym.agents import CycleTracingAgent, NominalAgent, OracleAgent, RandomAgent
from sttgym.fuzz import _stacks
from sttgym.registry import DOMAINS

RECORD = Path(__file__).parent.parent / "data" / "trajectories.json"
LIBRARY = sorted(d for d, dom in DOMAINS.items() if dom.world.__module__.startswith("sttgym.envs."))
SCRAMBLE = sorted(i for i in gym.registry if i.startswith("ScrambleTool/") and "Vector" not in i)


def episodes() -> dict[str, tuple]:
    """Every recorded episode by name: (env id, agent factory, seed, wrapper stack)."""
    plays: dict[str, tuple] = {}
    for domain in LIBRARY:
        for env_id in sttgym.arena_ids(domain):
            for name, agent in (("oracle", OracleAgent), ("nominal", NominalAgent),
                                ("random", lambda: RandomAgent(max_calls=12))):
                plays[f"{env_id}|{name}"] = (env_id, agent, 0, "plain")
        first = sttgym.arena_ids(domain)[0]
        plays[f"{first}|oracle|all"] = (first, OracleAgent, 1, "all")
    for env_id in SCRAMBLE:
        plays[f"{env_id}|random"] = (env_id, lambda: RandomAgent(max_calls=60), 0, "plain")
        plays[f"{env_id}|cycle-tracing"] = (env_id, CycleTracingAgent, 0, "plain")
    return plays


def play(env_id: str, make_agent, seed: int, stack: str) -> str:
    env = _stacks()[stack](gym.make(env_id))
    digest = hashlib.sha256()

    def add(*parts) -> None:
        digest.update(json.dumps(parts, sort_keys=True, default=repr).encode())

    observation, info = env.reset(seed=seed)
    add(observation, info)
    agent = make_agent()
    agent.reset(observation, info, env=env, seed=seed)
    for _ in range(600):
        action = agent.act(observation, info)
        observation, reward, terminated, truncated, info = env.step(action)
        add(action, observation, reward, terminated, truncated, info)
        if terminated or truncated:
            break
    return digest.hexdigest()[:16]


def recorded() -> dict[str, str]:
    return json.loads(RECORD.read_text()) if RECORD.exists() else {}


def test_every_library_episode_is_recorded():
    missing = sorted(set(episodes()) - set(recorded()))
    assert not missing, f"{len(missing)} episodes unrecorded (e.g. {missing[:3]}): python -m tests.core.test_trajectories"


@pytest.mark.parametrize("name", sorted(recorded()))
def test_an_episode_plays_exactly_as_recorded(name):
    plays = episodes()
    if name not in plays:
        pytest.fail(f"{name} is recorded but no longer played: python -m tests.core.test_trajectories")
    assert play(*plays[name]) == recorded()[name]


if __name__ == "__main__":
    RECORD.parent.mkdir(exist_ok=True)
    RECORD.write_text(json.dumps({name: play(*spec) for name, spec in sorted(episodes().items())}, indent=1) + "\n")
    print(f"recorded {len(episodes())} episodes in {RECORD}")
