"""The rollout engine's caps, its generator's determinism, and greedy evaluation."""

from __future__ import annotations

import numpy as np
import torch

from sttgym.training.engine import HFGenerator, RolloutEngine, evaluate_policy

SEED = 1_000_000


def _babbler(token: int):
    """A policy that never ends its turn."""
    return lambda prompts, max_new_tokens: [[token] * max_new_tokens for _ in prompts]


def test_turn_and_turn_count_caps(tiny, toy_ids):
    tokenizer = tiny[0]
    word = tokenizer.convert_tokens_to_ids("a")
    engine = RolloutEngine(tokenizer, _babbler(word), max_turns=3, max_turn_tokens=5)
    (episode,) = engine.run([(toy_ids[0], SEED)])
    assert episode.truncated and not episode.terminated
    assert len(episode.actions) == 3 and episode.violations == 3 and episode.runnable == [False] * 3
    assert sum(episode.policy_mask) == 15  # three turns of five tokens
    eos = tokenizer.eos_token_id
    after_turns = [episode.completion_ids[end + 1] for end in episode.turn_ends[:-1]]
    assert after_turns == [eos, eos]  # a cut turn is closed as the template would close it
    assert all(episode.policy_mask[end + 1] == 0 for end in episode.turn_ends[:-1])


def test_episode_token_cap(tiny, toy_ids):
    tokenizer = tiny[0]
    word = tokenizer.convert_tokens_to_ids("a")
    probe = RolloutEngine(tokenizer, _babbler(word), max_turns=1, max_turn_tokens=1).run([(toy_ids[0], SEED)])[0]
    cap = len(probe.prompt_ids) + 40
    (episode,) = RolloutEngine(tokenizer, _babbler(word), max_turn_tokens=30, max_episode_tokens=cap).run(
        [(toy_ids[0], SEED)])
    assert episode.truncated and episode.length <= cap
    (starved,) = RolloutEngine(tokenizer, _babbler(word), max_episode_tokens=10).run([(toy_ids[0], SEED)])
    assert starved.truncated and starved.completion_ids == [] and starved.reward == 0.0


def test_generator_is_seeded_and_leaves_the_global_rng_alone(tiny):
    tokenizer, model = tiny
    prompts = [[5, 6, 7, 8], [9, 10]]
    state = torch.random.get_rng_state()
    first = HFGenerator(model, tokenizer, rng=np.random.default_rng(3))(prompts, 6)
    assert torch.equal(state, torch.random.get_rng_state())
    assert first == HFGenerator(model, tokenizer, rng=np.random.default_rng(3))(prompts, 6)
    assert all(1 <= len(ids) <= 6 for ids in first)


def test_evaluate_policy_summarises_greedy_episodes(tiny_path, toy_ids):
    scores = evaluate_policy(str(tiny_path), [(toy_ids[0], 0), (toy_ids[1], 0)], max_turns=2, max_turn_tokens=8)
    assert scores["episodes"] == 2
    assert set(scores) == {"episodes", "reward", "success", "readable_turns", "valid_calls", "accepted_calls",
                           "tool_calls"}
    assert 0.0 <= scores["readable_turns"] <= 1.0 and 0.0 <= scores["reward"] <= 1.0


def test_a_finished_process_keeps_generating_while_others_play(tiny, toy_ids):
    tokenizer = tiny[0]
    calls = []

    def generate(prompts, max_new_tokens):
        calls.append(len(prompts))
        return [[tokenizer.convert_tokens_to_ids("a")] * max_new_tokens for _ in prompts]

    others = iter([True, True, True, False])  # another process needs three more rounds after this one's first
    engine = RolloutEngine(tokenizer, generate, max_turns=1, max_turn_tokens=2,
                           any_running=lambda mine: mine or next(others))
    (episode,) = engine.run([(toy_ids[0], SEED)])
    assert calls == [1, 1, 1, 1] and len(episode.actions) == 1


def test_an_instance_row_naming_a_module_is_refused_before_anything_is_imported(tiny, toy_ids):
    import sys

    import pytest

    engine = RolloutEngine(tiny[0], _babbler(0), max_turns=1, max_turn_tokens=1)
    with pytest.raises(ValueError, match="names a module to import"):
        engine.run([("sttgym_no_such_module:" + toy_ids[0], SEED)])
    assert "sttgym_no_such_module" not in sys.modules
