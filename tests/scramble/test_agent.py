"""CycleTracingAgent: full discovery from observations, cycle tracing under drift, retries, windows."""

from __future__ import annotations

import gymnasium as gym
import pytest

import sttgym  # noqa: F401  (registers the ScrambleTool ids and the playbook)
from sttgym.agents import CycleTracingAgent
from sttgym.agents.cycle_tracing import playbook_named
from sttgym.envs.scramble.terminal import FUNCTIONS
from sttgym.evaluation.scramble_metrics import scramble_metrics
from sttgym.rollout import Trajectory, rollout
from sttgym.wrappers import MappingDrift, Obfuscate, TemporalWindow

from tests.scramble.scripted import layer


def _play(env, seed: int, agent: CycleTracingAgent | None = None) -> Trajectory:
    """An episode driven by hand: the agent sees observations and the listing; from the env only field names."""
    agent = agent or CycleTracingAgent()
    observation, info = env.reset(seed=seed)
    agent.reset(observation, info, env=env)
    traj = Trajectory(env_id=None, seed=seed)
    terminated = False
    while not terminated:
        action = agent.act(observation, info)
        observation, reward, terminated, truncated, info = env.step(action)
        traj.steps.append({"action": action, "observation": observation, "reward": reward,
                           "events": info.get("events", [])})
    traj.reward, traj.info = reward, info
    return traj


def test_the_playbook_tells_every_function_apart_by_its_probe_answer():
    playbook = playbook_named("ScrambleTool")
    assert sorted(playbook.signatures.values()) == sorted(FUNCTIONS)
    assert playbook.echoed == {"decrypt_payload": "encrypted_text", "read_file_from_archive": "archive_path"}


@pytest.mark.parametrize("seed", range(3))
def test_full_discovery_maps_every_identifier_in_47_calls(seed):
    env = gym.make("ScrambleTool/Base")
    agent = CycleTracingAgent()
    traj = _play(env, seed, agent)
    calls = [s["action"] for s in traj.steps]
    assert [c["arguments"] for c in calls[:28]] == [{}] * 28 and len({c["name"] for c in calls[:28]}) == 28
    assert all(c["arguments"] for c in calls[28:47])
    assert agent.identifier_of == layer(env, Obfuscate).alias
    assert traj.reward == 1.0 and [t["actions"] for t in traj.info["tasks"][1:]] == [5, 5, 5, 5]


def test_tracing_a_whole_cycle_costs_its_length_minus_one():
    env = MappingDrift(gym.make("ScrambleTool/Base"), fraction=1.0)  # one 28-cycle at every boundary
    for seed in range(3):
        traj = _play(env, seed)
        assert traj.reward == 1.0 and [t["actions"] for t in traj.info["tasks"][1:]] == [5 + 27] * 4


@pytest.mark.parametrize("condition", ["Unscrambled", "Base", "Drift", "Failure", "Window", "All"])
def test_the_agent_completes_every_condition(condition):
    env = gym.make(f"ScrambleTool/{condition}")
    metrics = scramble_metrics([rollout(env, CycleTracingAgent(), seed=seed) for seed in range(8)])
    assert metrics["completion_rate"] == 1.0 and metrics["stale_calls_total"] == 0
    if condition == "Unscrambled":
        assert metrics["action_efficiency"] == 25.0
    if condition in ("Drift", "All"):
        assert metrics["chain_follow_rate"] > 0.9 > 3 * metrics["chain_random_rate"]
    if condition in ("Failure", "All"):
        assert metrics["timeouts"] > 0 and metrics["immediate_retry_rate"] == 1.0


def test_inside_windows_only_the_procedure_runs_and_every_answer_is_submitted_in_time():
    env = gym.make("ScrambleTool/Window")
    traj = _play(env, 4)
    assert traj.reward == 1.0
    assert not [s for s in traj.steps if "No execution window" in s["observation"]]
    assert [t["actions"] for t in traj.info["tasks"][1:]] == [5, 5, 5, 5]


def test_after_an_expired_window_the_agent_reruns_the_procedure_from_its_trigger():
    env = TemporalWindow(gym.make("ScrambleTool/Drift"), k=4)  # tracing inside a window cannot fit
    trajectories = [_play(env, seed) for seed in range(6)]
    assert all(t.reward == 1.0 for t in trajectories)
    def expiries_after_task_1(t: Trajectory) -> int:
        start = next(i for i, s in enumerate(t.steps) if any(e["type"] == "task_start" for e in s["events"]))
        return sum(e["type"] == "window_expired" for s in t.steps[start:] for e in s["events"])

    assert sum(map(expiries_after_task_1, trajectories)) > 0
