"""LLMAgent and MemoryAgent on the toy domain with scripted models; LLM user and judge through gym.make."""

from __future__ import annotations

import gymnasium as gym
import pytest
from tests.evaluation.evaltoy import register
from tests.evaluation.scripted import ScriptedModel, nominal_policy, text

import sttgym
from sttgym.agents import LLMAgent, MemoryAgent
from sttgym.agents.llm import is_final_reply, merge
from sttgym.judge.llm import LLMJudge
from sttgym.models.base import ChatResponse
from sttgym.user.llm import LLMUser

EASY, IMPOSSIBLE = "STTArena/EvalToy-T1-easy", "STTArena/EvalToy-T1-impossible"


@pytest.fixture(scope="module", autouse=True)
def domain():
    register()


def test_final_reply_must_end_with_the_exact_words():
    assert is_final_reply("Task Completed")
    assert is_final_reply("The locker was taken, so I could not reserve it.\n**Task Completed.**")
    assert not is_final_reply("I completed the task")
    assert not is_final_reply("Task Completed, but let me check one more thing")
    assert not is_final_reply("")


def test_nominal_policy_runs_through_the_env_with_one_call_per_turn():
    model = ScriptedModel(nominal_policy)
    traj = sttgym.rollout(gym.make(EASY), agent := LLMAgent(model), seed=4)
    assert [s["action"].get("name") for s in traj.steps] == ["get_locker", "reserve_locker", None]
    assert traj.terminated and traj.reward == 0.0  # the locker was taken under it: the blind plan fails
    assert agent.usage == {"prompt_tokens": 30, "completion_tokens": 13}
    system, user = agent.messages[:2]
    assert "exactly one tool call" in system["content"] and "chat_with_user" in system["content"]
    assert "Parcel lockers" in system["content"] and user["role"] == "user"
    tool_messages = [m for m in agent.messages if m["role"] == "tool"]
    assert [m["name"] for m in tool_messages] == ["get_locker", "reserve_locker"]
    assert model.calls[0]["tools"] and model.calls[0]["generation"]["temperature"] == 0.7


@pytest.mark.parametrize("bad, rule", [
    (text("Let me think about which locker to use."), "no tool call"),
    (ChatResponse(tool_calls=[{"name": "get_locker", "arguments": {"locker_id": "L1"}}] * 2), "2 tool calls"),
    (text('<tool_call>{"name": "get_locker", "arguments": {locker_id: L1}</tool_call>'), "could not be read"),
])
def test_a_broken_turn_is_an_error_the_model_reads_and_a_turn_that_counts(bad, rule):
    model = ScriptedModel(lambda conversation: bad)
    env = gym.make(EASY, max_turns=6)
    traj = sttgym.rollout(env, agent := LLMAgent(model), seed=1)
    assert traj.truncated and len(traj.steps) == 6 and traj.tool_calls == 0
    assert all(t["violation"] and rule in t["violation"] for t in agent.turns)
    assert env.unwrapped.world.state == env.unwrapped.task.initial_state  # nothing was run
    errors = [m["content"] for m in agent.messages[2:] if m["role"] in ("user", "tool")]
    assert len(errors) == 5 * max(1, len(bad.tool_calls)) and all(e.startswith("Error:") and rule in e for e in errors)
    if bad.tool_calls:  # every call id of the rejected turn gets an answer
        assert all(m["role"] == "tool" for m in agent.messages[3:5])


def test_a_backend_error_ends_the_episode_and_is_kept():
    model = ScriptedModel(lambda c: ChatResponse(error="gave up after 3 attempts: 503"))
    traj = sttgym.rollout(gym.make(EASY), agent := LLMAgent(model), seed=1)
    assert traj.terminated and len(traj.steps) == 1 and agent.error.startswith("gave up")


def test_no_user_ablation_changes_the_rule_and_the_tools():
    model = ScriptedModel(nominal_policy)
    sttgym.rollout(gym.make(EASY, user="none"), agent := LLMAgent(model), seed=1)
    assert "cannot be reached" in agent.messages[0]["content"]
    assert "chat_with_user" not in {t["function"]["name"] for t in model.calls[0]["tools"]}


def test_the_prompt_names_no_dynamics_unless_the_hint_ablation_asks():
    plain, hinted = LLMAgent(ScriptedModel(nominal_policy)), LLMAgent(ScriptedModel(nominal_policy), hint=True)
    for agent in (plain, hinted):
        sttgym.rollout(gym.make(EASY), agent, seed=1)
    assert "Prefer querying" in plain.messages[0]["content"] and "change while you work" not in plain.messages[0]["content"]
    assert "change while you work" in hinted.messages[0]["content"]


def test_thinking_and_seeds_reach_the_model():
    model = ScriptedModel(nominal_policy)
    sttgym.rollout(gym.make(EASY), LLMAgent(model, thinking=True, seed=3), seed=1)
    generations = [c["generation"] for c in model.calls]
    assert all(g["thinking"] is True for g in generations)
    assert len({g["seed"] for g in generations}) == len(generations)


def test_memory_merge_adds_replaces_and_deletes():
    memory = {"Tool_Knowledge": {"fn_a": {"confidence": "low"}, "fn_b": {}}, "Task_Recipes": {}}
    merged = merge(memory, {"Tool_Knowledge": {"fn_a": {"confidence": "high"}, "fn_b": None},
                            "Task_Recipes": {"t1": ["call fn_a"]}})
    assert merged == {"Tool_Knowledge": {"fn_a": {"confidence": "high"}}, "Task_Recipes": {"t1": ["call fn_a"]}}
    assert memory["Tool_Knowledge"]["fn_a"] == {"confidence": "low"}


def test_memory_agent_injects_and_updates_its_memory_each_step():
    def policy(conversation):
        turn = sum(1 for m in conversation if m["role"] == "assistant")
        if turn == 0:
            return text('{"action": {"command": "get_locker", "arguments": {"locker_id": "L1"}}, '
                        '"memory_update": {"Tool_Knowledge": {"get_locker": {"inferred_behavior": "reads a locker"}}}}')
        if turn == 1:
            return text("not json at all")
        return text('{"action": {"reply": "Task Completed"}}')

    model = ScriptedModel(policy)
    traj = sttgym.rollout(gym.make(EASY), agent := MemoryAgent(model), seed=2)
    assert traj.terminated and traj.tool_calls == 1
    assert agent.memory["Tool_Knowledge"] == {"get_locker": {"inferred_behavior": "reads a locker"}}
    assert model.calls[0]["tools"] is None
    assert "reads a locker" not in model.calls[0]["system"]
    assert "reads a locker" in model.calls[1]["system"]  # injected into the next step's system prompt
    assert agent.turns[1]["violation"] and "JSON" in agent.turns[1]["violation"]
    observations = [m["content"] for m in agent.messages if m["role"] == "user"][1:]
    assert observations[0].startswith("Observation:") and observations[1].startswith("Error:")


def test_llm_user_answers_from_the_model_and_falls_back_to_the_rules():
    answers = iter([text("It's parcel P9999, thanks."), ChatResponse(error="timeout")])
    model = ScriptedModel(lambda conversation: next(answers))
    env = gym.make(EASY, user=LLMUser(model))
    env.reset(seed=1)
    first = env.step({"name": "chat_with_user", "arguments": {"message": "Which parcel is it?"}})[4]["result"]
    second = env.step({"name": "chat_with_user", "arguments": {"message": "Which parcel again?"}})[4]["result"]
    assert first["data"]["reply"] == "It's parcel P9999, thanks."
    assert second["data"]["reply"].startswith("P")  # the rule-based answer from the profile
    assert model.calls[0]["generation"]["temperature"] == 0.0
    assert "If asked about parcel" in model.calls[0]["system"] and "a customer" in model.calls[0]["system"]


def _judge_env(verdict: ChatResponse, strict: bool = False, seen: list | None = None):
    def answer(conversation):
        (seen if seen is not None else []).append(conversation)
        return verdict
    env = gym.make(IMPOSSIBLE, judge=LLMJudge(ScriptedModel(answer), strict=strict))
    env.reset(seed=3)
    env.step({"name": "chat_with_user", "arguments": {"message": "Hello"}})
    return env.step({"content": "Task Completed"})


def test_llm_judge_decides_the_paper_s_two_items_and_strict_mode_adds_the_evidence_checks():
    passed = text('{"passed": true, "recognized_impossibility": true, "fed_back_to_user": true, '
                  '"evidence": ["told the user"], "verdict": "fine"}')
    seen: list = []
    _, reward, _, _, info = _judge_env(passed, seen=seen)
    assert reward == 1.0 and [c["judge"] for c in info["checklist"]] == ["llm", "llm", "rule"]  # and collateral
    assert "What blocks the task" not in seen[0][1]["content"]  # the paper's judge is not told the answer
    seen.clear()
    _, reward, _, _, info = _judge_env(passed, strict=True, seen=seen)
    assert reward == 1.0 and [c["judge"] for c in info["checklist"]] == ["llm", "llm", "rule", "rule"]
    assert "What blocks the task" in seen[0][1]["content"] and "does not pass" in seen[0][0]["content"]
    failed = text('```json\n{"passed": false, "recognized_impossibility": true, "fed_back_to_user": false}\n```')
    assert _judge_env(failed)[1] == 0.0


def test_llm_judge_without_a_usable_answer_falls_back_to_the_rule_judge():
    _, reward, _, _, info = _judge_env(text("I think it is fine"))
    assert reward == 0.0  # "Hello" tells the user nothing: the rule judge fails it
    assert all(c["judge"].startswith("rule") for c in info["checklist"])
