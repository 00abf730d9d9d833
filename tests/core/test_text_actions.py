"""TextActions: a model's raw text as the action, read with the LLM agents' parsers."""

from __future__ import annotations

import gymnasium as gym
from gymnasium.utils.env_checker import check_env

from sttgym.wrappers import TextActions

CALL = ('<think>check the locker first</think>\n'
        '<tool_call>{"name": "get_locker", "arguments": {"locker_id": "L1"}}</tool_call>')


def test_a_call_in_text_runs_like_the_same_dict_action(toy_ids):
    plain, text = gym.make(toy_ids[0]), TextActions(gym.make(toy_ids[0]))
    plain.reset(seed=0), text.reset(seed=0)
    as_dict = plain.step({"name": "get_locker", "arguments": {"locker_id": "L1"}})
    assert text.step(CALL)[0] == as_dict[0]
    assert text.step({"name": "get_locker", "arguments": {"locker_id": "L1"}})[0] == plain.step(
        {"name": "get_locker", "arguments": {"locker_id": "L1"}})[0]  # dicts pass through


def test_two_calls_or_a_broken_call_cost_a_turn_and_plain_text_is_the_final_reply(toy_ids):
    env = TextActions(gym.make(toy_ids[0]))
    env.reset(seed=0)
    _, _, terminated, _, info = env.step(CALL + CALL)
    assert not terminated and not info["result"]["success"] and "2 tool calls" in info["result"]["error"]
    assert info["turn"] == 1
    _, _, terminated, _, info = env.step('<tool_call>{"name": "get_locker", "arguments": {oops}</tool_call>')
    assert not terminated and "could not be read" in info["result"]["error"] and info["turn"] == 2
    _, _, terminated, _, info = env.step("<think>nothing left to do</think>Task Completed")
    assert terminated and "checklist" in info


def test_text_actions_pass_the_gymnasium_checker(toy_ids):
    env = TextActions(gym.make(toy_ids[0]))
    check_env(env, skip_render_check=True)  # sampled actions are random text: replies, never a crash
    assert env.action_space.contains("any text")
