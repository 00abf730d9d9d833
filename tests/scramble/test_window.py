"""TemporalWindow: countdown after the trigger, expiry that resets and regenerates, timeouts not counted."""

from __future__ import annotations

import re

import gymnasium as gym

import sttgym  # noqa: F401  (registers the ScrambleTool ids)
from sttgym.envs.scramble.templates import parse_goal
from sttgym.wrappers import StochasticFailure, TemporalWindow

from tests.scramble.scripted import env_caller, run_procedure

NOISE = {"name": "list_dir", "arguments": {"path": "/nowhere"}}


def _window(k: int = 10, inner=None):
    env = TemporalWindow(inner or gym.make("ScrambleTool/Unscrambled"), k=k)
    observation, info = env.reset(seed=6)
    return env, observation, info


def _trigger(info) -> dict:
    """The current task's first step, with its real arguments."""
    template, given = parse_goal(info["task"]["goal"])
    name, arguments = next(template.procedure(given))
    return {"name": name, "arguments": arguments}


def _left(observation: str) -> int | None:
    found = re.search(r"(\d+) actions left", observation)
    return int(found.group(1)) if found else None


def test_submitting_before_the_trigger_is_refused_and_counted():
    env, observation, info = _window()
    assert "execution window" in observation
    answer = env.unwrapped.current.template.truth(env.unwrapped.machine.state, env.unwrapped.current.slots)
    observation, _, _, _, step = env.step({"name": "submit_solution", "arguments": {"solution": answer}})
    assert "No execution window is open" in observation and not step["result"]["success"]
    assert env.unwrapped.current.actions == 1 and not step["window"]["open"]


def test_the_countdown_runs_from_the_trigger_and_a_task_solved_in_time_closes_the_window():
    env, _, info = _window()
    lefts = []

    def call(name: str, arguments: dict) -> dict:
        observation, *_, step = env.step({"name": name, "arguments": arguments})
        lefts.append(_left(observation))
        return step["result"]

    answer, _ = run_procedure(info["task"]["goal"], call)
    observation, _, _, _, step = env.step({"name": "submit_solution", "arguments": {"solution": answer}})
    assert lefts == [10, 9, 8, 7] and step["events"][0]["outcome"] == "solved" and not step["window"]["open"]
    assert "execution window" in observation.split("Task 2 of 5")[1]


def test_expiry_resets_the_task_and_regenerates_its_answer():
    env, _, info = _window(k=4)
    task = env.unwrapped.current
    truth = task.template.truth(env.unwrapped.machine.state, task.slots)
    env.step(_trigger(info))
    for left in (3, 2, 1):
        assert _left(env.step(NOISE)[0]) == left
    observation, *_, step = env.step(NOISE)
    assert "expired" in observation and {"type": "window_expired"} in step["events"] and not step["window"]["open"]
    assert task.template.truth(env.unwrapped.machine.state, task.slots) != truth
    assert _left(env.step(NOISE)[0]) is None  # closed until the trigger runs again
    answer, _ = run_procedure(info["task"]["goal"], env_caller(env))  # its first step reopens the window
    assert env.step({"name": "submit_solution", "arguments": {"solution": answer}})[4]["events"][0] == {
        "type": "task_end", "task": env.unwrapped.tasks.index(task), "outcome": "solved"}


def test_timed_out_calls_do_not_count_against_the_window():
    env, _, info = _window(k=5, inner=StochasticFailure(gym.make("ScrambleTool/Unscrambled"), p=0.5))
    while not env.step(_trigger(info))[4]["window"]["open"]:
        pass
    remaining, timeouts = 5, 0
    while remaining > 1:
        *_, step = env.step({"name": "list_cron_jobs", "arguments": {}})
        timed_out = {"type": "timeout"} in step["events"]
        timeouts += timed_out
        remaining -= not timed_out
        assert step["window"]["remaining"] == remaining
    assert timeouts > 0


def test_windows_on_arena_worlds_restore_the_world_on_expiry(toy_ids):
    env = TemporalWindow(gym.make(toy_ids[0]), k=2)
    observation, _ = env.reset(seed=3)
    task = env.unwrapped.task
    a, b = task.oracle[0].arguments["locker_id"], task.oracle[-2].arguments["locker_id"]
    parcel = task.oracle[-1].arguments["parcel_id"]
    observation, *_, step = env.step({"name": "get_locker", "arguments": {"locker_id": a}})
    assert not step["window"]["open"]  # a read never fires the trigger, so no window opens
    reserve_a = {"name": "reserve_locker", "arguments": {"locker_id": a, "parcel_id": parcel}}
    observation, *_, step = env.step(reserve_a)  # the write meets the change: the window opens
    assert step["window"]["open"] and _left(observation) == 2
    env.step({"name": "reserve_locker", "arguments": {"locker_id": b, "parcel_id": parcel}})
    assert env.unwrapped.world.state["lockers"][b]["parcel"] == parcel
    observation, *_, step = env.step({"name": "get_locker", "arguments": {"locker_id": b}})
    assert "expired" in observation and env.unwrapped.world.state["lockers"][b]["parcel"] is None
    assert env.unwrapped.world.state["lockers"][a]["status"] == "taken"  # the trigger's change stays
    assert env.step(reserve_a)[4]["window"]["open"]
