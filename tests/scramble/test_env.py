"""The plaintext curriculum env: budgets, skips, early exit, reward and the final info."""

from __future__ import annotations

import gymnasium as gym
import pytest

from sttgym.envs.scramble.env import ScrambleEnv
from sttgym.envs.scramble.terminal import FUNCTIONS

from tests.scramble.scripted import env_caller, run_procedure

NOISE = {"name": "list_dir", "arguments": {"path": "/nowhere"}}
SKIP = {"name": "skip_task", "arguments": {}}


def _solve_current(env, info) -> tuple:
    """Run the current task's procedure and submit its answer; the submission's step."""
    answer, _ = run_procedure(info["task"]["goal"], env_caller(env))
    return env.step({"name": "submit_solution", "arguments": {"solution": answer}})


def test_scripted_solver_completes_the_curriculum_in_25_actions():
    env = gym.make("ScrambleTool/Unscrambled")
    _, info = env.reset(seed=3)
    terminated = False
    while not terminated:
        _, reward, terminated, _, info = _solve_current(env, info)
    tasks = info["tasks"]
    assert reward == 1.0 and [t["actions"] for t in tasks] == [5] * 5 and all(t["solved"] for t in tasks)
    assert len({t["template"] for t in tasks}) == 5
    assert info["mappings"] == [{f: f for f in FUNCTIONS}] * 5 and not info["ended_early"]


def test_wrong_submission_costs_an_action_and_keeps_the_task():
    env = ScrambleEnv()
    _, info = env.reset(seed=0)
    observation, reward, terminated, _, after = env.step({"name": "submit_solution", "arguments": {"solution": "x"}})
    assert not after["result"]["success"] and not terminated and reward == 0.0
    assert after["task"]["index"] == info["task"]["index"] and after["task"]["actions"] == 1


def test_budget_exhaustion_fails_the_task_and_moves_on():
    env = ScrambleEnv(budget=100)
    _, info = env.reset(seed=1)
    for _ in range(99):
        _, _, _, _, step_info = env.step(NOISE)
        assert step_info["task"]["index"] == info["task"]["index"]
    observation, _, terminated, _, step_info = env.step(NOISE)
    assert "failed" in observation and "Task 2 of 5" in observation and not terminated
    assert [e["type"] for e in step_info["events"]] == ["task_end", "task_start"]
    assert step_info["events"][0]["outcome"] == "budget" and step_info["task"]["actions"] == 0


def test_skipped_task_returns_with_its_budget_carried_over():
    env = ScrambleEnv(tasks=2, budget=10)
    _, info = env.reset(seed=2)
    first = info["task"]["index"]
    for _ in range(3):
        env.step(NOISE)
    observation, _, _, _, step_info = env.step(SKIP)  # the 4th action of the first task
    assert step_info["task"]["index"] != first and "Task 2 of 2" in observation
    observation, _, _, _, step_info = env.step(SKIP)  # back to the first task
    assert step_info["task"]["index"] == first and "resumed: 4 of 10" in observation
    for _ in range(5):
        env.step(NOISE)
    _, _, _, _, step_info = env.step(NOISE)  # its 10th action: the budget counted both attempts
    assert step_info["events"][0] == {"type": "task_end", "task": first, "outcome": "budget"}
    _, reward, terminated, _, final = _solve_current(env, step_info)
    assert terminated and reward == 0.5
    assert [a["outcome"] for a in final["attempts"]] == ["skipped", "skipped", "budget", "solved"]
    assert len(final["mappings"]) == 4
    assert {t["outcome"] for t in final["tasks"]} == {"budget", "solved"}


def test_end_episode_stops_early_and_scores_what_was_solved():
    env = ScrambleEnv()
    _, info = env.reset(seed=4)
    _solve_current(env, info)
    observation, reward, terminated, truncated, final = env.step({"name": "end_episode", "arguments": {}})
    assert terminated and not truncated and reward == pytest.approx(0.2) and final["ended_early"]
    assert [t["outcome"] for t in final["tasks"]] == ["solved"] + ["unfinished"] * 4
    after = env.step(NOISE)
    assert after[2] and not after[4]["result"]["success"]


def test_replies_and_malformed_actions_are_rejected_but_counted():
    env = ScrambleEnv()
    env.reset(seed=5)
    for action in ({"content": "the answer is 42"}, {"name": "rm_rf", "arguments": {}}, "oops",
                   {"name": "read_file", "arguments": {"path": 3}}):
        observation, _, terminated, _, info = env.step(action)
        assert isinstance(observation, str) and not info["result"]["success"] and not terminated
    assert info["task"]["actions"] == 4


def test_one_seed_fixes_the_episode():
    def transcript(seed):
        env = ScrambleEnv()
        observation, info = env.reset(seed=seed)
        return [observation] + [env.step(a)[0] for a in (NOISE, {"name": "list_cron_jobs", "arguments": {}}, SKIP)]

    assert transcript(7) == transcript(7) and transcript(7) != transcript(8)


ODD = ["\ud800", "http://[", "https://[::1", "1" * 5000 + ".1.1.1", "1²7.0.0.1", "²", "", "../../", "\x00",
       "http://a:99999999999/"]


@pytest.mark.parametrize("odd", ODD)
def test_odd_text_in_every_argument_never_breaks_a_terminal_tool(odd):
    env = gym.make("ScrambleTool/Unscrambled")
    _, info = env.reset(seed=0)
    for schema in info["tools"]:
        function = schema["function"]
        kinds = {"string": odd, "integer": 10 ** 50, "boolean": True, "array": [odd]}
        arguments = {p: kinds.get(s.get("type"), odd) for p, s in function["parameters"]["properties"].items()}
        observation = env.step({"name": function["name"], "arguments": arguments})[0]
        assert "internal error" not in observation, (function["name"], observation)
        env.reset(seed=0)
