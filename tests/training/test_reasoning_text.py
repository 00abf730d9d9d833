"""Reasoning text beside the assistant's calls: what it says where, what it may draw on, and that it
survives refinement, rendering and the agent's parsing."""

from __future__ import annotations

import dataclasses
import re

import gymnasium as gym
import numpy as np
import pytest

from sttgym.agents.llm import LLMAgent
from sttgym.models.base import ChatResponse
from sttgym.models.parsing import parse_assistant_text
from sttgym.rollout import rollout
from sttgym.training.noisy import NoisyExpert
from sttgym.training.reasoning import REFRESH, REFUSED, REPLAN, RETRY_SAME, RETRY_VARIED, VERIFY, narrate, notes
from sttgym.training.refine import RuleRefiner
from sttgym.training.transcripts import Step, failed, from_trajectory, is_call

RETRIES = RETRY_SAME + RETRY_VARIED


def _played(env_id, k):
    """The noisy expert's transcript of training instance ``k``, with reasoning text."""
    traj = rollout(gym.make(env_id), NoisyExpert(np.random.default_rng([7, k])), seed=1_000_000 + k)
    return narrate(from_trajectory(traj))


def _says(text, phrasings):
    """Whether ``text`` is one of ``phrasings`` with its fields filled in."""
    return any(re.fullmatch(re.sub(r"\\\{\w+\\\}", ".+", re.escape(p)), text) for p in phrasings)


def _blind_retries(t):
    return [i for i in range(1, len(t.steps)) if failed(t.steps[i - 1]) and is_call(t.steps[i])
            and t.steps[i].action["name"] == t.steps[i - 1].action["name"]]


def test_blind_retries_misread_the_refusal_and_leave_with_their_text(toy_ids):
    played = [_played(toy_ids[0], k) for k in range(6)]
    assert any(_blind_retries(t) for t in played)
    for t in played:
        assert all(_says(t.texts[i], RETRIES) for i in _blind_retries(t))
        refined = RuleRefiner().refine(t).refined
        assert refined.reasoning and not _blind_retries(refined)
        assert not any(_says(text, RETRIES) for text in refined.texts)
        for i, step in enumerate(refined.steps[:-1]):
            if failed(step):  # the turn after a refusal now interprets it, quoting what the world said
                assert step.result["error"] in refined.texts[i + 1] and _says(refined.texts[i + 1], REFUSED)


def test_refresh_and_verification_reads_say_what_they_check(toy_ids):
    refinement = next(r for r in (RuleRefiner().refine(_played(toy_ids[0], k)) for k in range(30))
                      if {"refresh", "verify"} <= {stage for stage, _ in r.operations})
    t = refinement.refined
    calls = [s.action for s in t.steps]
    rereads = [i for i in range(len(t.steps) - 2) if is_call(t.steps[i]) and calls[i] in calls[:i]
               and not failed(t.steps[i - 1])]
    assert rereads and all(_says(t.texts[i], REFRESH) for i in rereads)
    # the turn after the re-read names the value that moved, read off the two results
    assert any("status is now taken (was free)" in t.texts[i + 1] for i in rereads)
    assert _says(t.texts[-2], VERIFY) and calls[-2]["arguments"]["locker_id"] in t.texts[-2]
    assert t.texts[-1] == "Task Completed"


def test_the_change_that_read_a_new_value_gives_its_reason(toy_ids):
    refined = [RuleRefiner().refine(_played(toy_ids[0], k)).refined for k in range(6)]
    replans = [(t, i) for t in refined for i, text in enumerate(t.texts) if _says(text, REPLAN)]
    assert replans
    for t, i in replans:  # a change, after reads that followed the one that showed the new value, names it
        assert t.mutates(t.steps[i]) and "showing status taken" in t.texts[i]
        assert any("status is now taken (was free)" in text for text in t.texts[:i])


def _blinded(t, start):
    """``t`` with every trigger event gone, the end-of-episode info gone, and nothing seen from step ``start`` on."""
    steps = [Step(s.action, s.observation, s.result) if i < start else Step(s.action, "", None)
             for i, s in enumerate(t.steps)]
    return dataclasses.replace(t, steps=steps, info={})


@pytest.mark.parametrize("which", [0, 1])
def test_text_draws_only_on_what_the_agent_had_seen(toy_ids, which):
    for k in range(4):
        t = _played(toy_ids[which], k)
        written = notes(t)
        assert notes(_blinded(t, len(t.steps))) == written  # no trigger log, no task harness
        for i in range(len(t.steps)):
            assert notes(_blinded(t, i))[:i + 1] == written[:i + 1]  # turn i sees results of turns before it only
        assert not any(word in text for text in written
                       for word in ("locker_taken", "trigger", "impossible", "solvable", "easy"))


def test_wording_varies_between_instances_and_repeats_for_one(toy_ids):
    texts = [text for k in range(12) for text in _played(toy_ids[0], k).texts]
    assert sum(len({text for text in texts if _says(text, (p,))}) > 0 for p in RETRIES) >= 3
    assert _played(toy_ids[0], 3).messages == _played(toy_ids[0], 3).messages


def test_the_agent_reads_a_call_beside_text():
    text = ('The locker is taken; reading L9 again.\n'
            '<tool_call>{"name": "get_locker", "arguments": {"locker_id": "L9"}}</tool_call>')
    content, calls, _ = parse_assistant_text(text)
    assert content == "The locker is taken; reading L9 again." and calls == [{"name": "get_locker",
                                                                              "arguments": {"locker_id": "L9"}}]
    agent = LLMAgent(model=None)
    agent.reset("Reserve a locker.", {"tools": [{"type": "function", "function": {"name": "get_locker"}}]})
    assert agent.finish(ChatResponse(content=content, tool_calls=calls)) == calls[0]
    assert agent.messages[-1]["content"] == content and agent.violation is None


@pytest.mark.parametrize("template", ["tiny", "qwen3-training"])
def test_text_is_rendered_trained_on_and_read_back_by_the_engine(tiny, toy_ids, template):
    from sttgym.training.engine import RolloutEngine
    from sttgym.training.render import render
    from tests.training.test_render import _qwen3_training_tokenizer, _replaying_policy

    tokenizer = tiny[0] if template == "tiny" else _qwen3_training_tokenizer(tiny[0])
    transcripts = [RuleRefiner().refine(_played(env_id, k)).refined for env_id in toy_ids for k in range(3)]
    rendered = [render(tokenizer, t.messages, t.tools) for t in transcripts]
    for t, (ids, mask) in zip(transcripts, rendered):
        trained = tokenizer.decode([token for token, m in zip(ids, mask) if m])
        position = 0
        for text in filter(None, t.texts):  # every note is in the loss, in order
            position = trained.index(text, position) + len(text)
    assert sum(bool(text) for t in transcripts for text in t.texts[:-1]) >= len(transcripts)
    episodes = RolloutEngine(tokenizer, _replaying_policy(rendered)).run([(t.env_id, t.seed) for t in transcripts])
    for t, episode in zip(transcripts, episodes):
        assert episode.actions == t.actions and episode.messages == t.messages and episode.reward == t.reward


def test_the_llm_refiner_reads_each_block_with_its_text(toy_ids):
    from sttgym.training.refine import describe

    t = next(t for t in (_played(toy_ids[0], k) for k in range(6)) if _blind_retries(t))
    i = _blind_retries(t)[0]
    assert f"[{i}] note: {t.texts[i]}\n[{i}] call {t.steps[i].action['name']}" in describe(t)
