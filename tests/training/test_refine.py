"""Refinement: the block operators, the three rule stages, the LLM refiner, and replay verification."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

from sttgym.models.base import ChatResponse
from sttgym.rollout import rollout
from sttgym.training.noisy import NoisyExpert, vary
from sttgym.training.refine import (Delete, Insert, LLMRefiner, Modify, Refiner, Reorder, RuleRefiner,
                                    apply_operations, parse_operations)
from sttgym.training.transcripts import failed, from_trajectory, replay

A, B, C = ({"name": n, "arguments": {}} for n in "abc")
REPLY = {"content": "Task Completed"}


def _noisy(env_id, k):
    traj = rollout(gym.make(env_id), NoisyExpert(np.random.default_rng([7, k])), seed=1_000_000 + k)
    return from_trajectory(traj)


def test_operators_use_original_indices_and_protect_the_reply():
    actions = [A, B, C, REPLY]
    assert apply_operations(actions, [Delete(0), Delete(1)]) == [C, REPLY]
    assert apply_operations(actions, [Reorder(2, 0)]) == [C, A, B, REPLY]
    assert apply_operations(actions, [Insert(3, C), Modify(0, B)]) == [B, B, C, C, REPLY]
    assert apply_operations(actions, [Delete(1), Reorder(0, 1)]) == [A, C, REPLY]  # target gone: skipped
    assert apply_operations(actions, [Delete(3), Reorder(3, 0), Modify(1, REPLY)]) == actions
    assert apply_operations(actions, [Modify(3, {"content": "Cannot be done. Task Completed"})])[-1]["content"] \
        .startswith("Cannot")


def test_noisy_expert_is_deterministic_and_injects_failures(toy_ids):
    first = [_noisy(toy_ids[0], k).actions for k in range(6)]
    assert first == [_noisy(toy_ids[0], k).actions for k in range(6)]
    transcripts = [_noisy(toy_ids[0], k) for k in range(6)]
    assert any(sum(map(failed, t.steps)) >= 2 for t in transcripts)  # blind retries happen
    # The oracle's writes still get there, and the score follows the outcome: refused retries cost nothing.
    assert {t.reward for t in transcripts} == {1.0}


def test_vary_changes_one_string_argument():
    rng = np.random.default_rng(0)
    action = {"name": "get", "arguments": {"id": "AB-12", "n": 3}}
    varied = vary(action, rng)
    assert varied["arguments"]["n"] == 3 and varied["arguments"]["id"] != "AB-12"
    assert vary({"name": "get", "arguments": {"n": 3}}, rng) == {"name": "get", "arguments": {"n": 3}}


@pytest.mark.parametrize("level", [0, 1])
def test_rule_refiner_removes_blind_retries_and_never_lowers_the_reward(toy_ids, level):
    for k in range(8):
        original = _noisy(toy_ids[level], k)
        refinement = RuleRefiner().refine(original)
        refined = refinement.refined
        assert refined.reward >= original.reward
        assert refined.tool_calls <= original.tool_calls + 2  # at most a refresh and a verification read are added
        refused = [s.action["name"] for s in refined.steps if failed(s)]
        assert len(refused) == len(set(refused))
        assert replay(refined.env_id, refined.seed, refined.actions).reward == refined.reward
        if sum(map(failed, original.steps)) >= 2:
            assert sum(map(failed, refined.steps)) < sum(map(failed, original.steps))


def test_all_three_stages_fire_on_a_noisy_transcript(toy_ids):
    refinement = next(r for r in (RuleRefiner().refine(_noisy(toy_ids[0], k)) for k in range(30))
                      if {"diagnose", "refresh", "verify"} <= {stage for stage, _ in r.operations})
    refined = refinement.refined
    changed_at = next(i for i, s in enumerate(refined.steps) if s.events)
    assert refined.steps[changed_at + 1].action["name"] == "get_locker"  # re-read right after the change
    assert refined.steps[-2].action["name"] == "get_locker"  # read back before finishing


class _Saboteur(Refiner):
    """Proposes deleting the one call that makes the task succeed."""

    def propose(self, stage, transcript):
        return [Delete(i) for i, s in enumerate(transcript.steps) if s.action.get("name") == "reserve_locker"]


def test_replay_verification_rejects_edits_that_lower_the_reward(toy_ids):
    original = _noisy(toy_ids[0], 1)
    refinement = _Saboteur().refine(original)
    assert not refinement.changed and refinement.refined is original


class _CannedModel:
    def __init__(self, answers):
        self.answers, self.seen = list(answers), []

    def chat(self, conversations, tools=None, **generation):
        self.seen.append(conversations[0][-1]["content"])
        return [ChatResponse(content=self.answers.pop(0))]


def test_llm_refiner_applies_verified_operations(toy_ids):
    original = next(t for t in (_noisy(toy_ids[0], k) for k in range(30)) if sum(map(failed, t.steps)) >= 2)
    retries = [i for i, s in enumerate(original.steps) if failed(s)][1:]
    answers = [json.dumps({"operations": [{"op": "delete", "block": i} for i in retries]}),
               "I would rather not.",  # unreadable: the stage changes nothing
               json.dumps({"operations": [{"op": "delete", "block": len(original.steps) - 2}]})]
    model = _CannedModel(answers)
    refinement = LLMRefiner(model, temperature=0.0).refine(original)
    assert [stage for stage, _ in refinement.operations] == ["diagnose"] * len(retries)
    assert refinement.refined.tool_calls == original.tool_calls - len(retries)
    assert "blind retries" in model.seen[0] and "[0] call get_locker" in model.seen[0]
    assert "! locker_taken" in model.seen[0]


def test_parse_operations_keeps_only_well_formed_items():
    text = ('Here: {"operations": [{"op": "delete", "block": 2}, {"op": "move", "block": 3, "before": 1}, '
            '{"op": "insert", "before": 4, "call": {"name": "get", "arguments": {"id": "X"}}}, '
            '{"op": "modify", "block": 1, "call": {"name": 5}}, {"op": "explode"}, "junk"]}')
    assert parse_operations(text) == [Delete(2), Reorder(3, 1), Insert(4, {"name": "get", "arguments": {"id": "X"}})]
    assert parse_operations("no json at all") == []
