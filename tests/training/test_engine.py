"""The rollout engine's caps, its generator's determinism, and greedy evaluation."""

from __future__ import annotations

import numpy as np
import pytest
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
    assert set(scores) == {"episodes", "rewards", "reward", "success", "readable_turns", "valid_calls",
                           "accepted_calls", "tool_calls", "repeated_calls", "replied", "refusals_on_feasible",
                           "reads_before_refusal"}
    assert len(scores["rewards"]) == 2 and sum(scores["rewards"]) / 2 == scores["reward"]
    assert 0.0 <= scores["readable_turns"] <= 1.0 and 0.0 <= scores["reward"] <= 1.0


def test_a_sampled_evaluation_plays_each_instance_several_times_and_keeps_one_reward_each(tiny_path, toy_ids):
    instances = [(toy_ids[0], SEED), (toy_ids[1], SEED)]
    caps = {"max_turns": 2, "max_turn_tokens": 8}
    scores = evaluate_policy(str(tiny_path), instances, samples=3, temperature=1.0, seed=5, **caps)
    assert scores["episodes"] == 6 and len(scores["rewards"]) == 2  # paired per instance, whatever the samples
    assert abs(sum(scores["rewards"]) / 2 - scores["reward"]) < 1e-12
    assert scores == evaluate_policy(str(tiny_path), instances, samples=3, temperature=1.0, seed=5, **caps)
    with pytest.raises(ValueError, match="greedy"):
        evaluate_policy(str(tiny_path), instances, samples=3, **caps)


def test_a_finished_process_keeps_generating_while_others_play(tiny, toy_ids):
    tokenizer = tiny[0]
    calls = []

    def generate(prompts, max_new_tokens):
        calls.append((len(prompts), max_new_tokens))
        return [[tokenizer.convert_tokens_to_ids("a")] * max_new_tokens for _ in prompts]

    others = iter([[3, 9], [2, 9], [1, 5], [0, 1]])  # another process plays three more rounds after this one's first
    engine = RolloutEngine(tokenizer, generate, max_turns=1, max_turn_tokens=2,
                           agree=lambda mine: [max(a, b) for a, b in zip(mine, next(others))])
    (episode,) = engine.run([(toy_ids[0], SEED)])
    assert calls == [(3, 9), (2, 9), (1, 5)] and len(episode.actions) == 1
    assert sum(episode.policy_mask) == 2  # this episode's own turn budget, not the agreed one


def test_processes_with_unequal_episode_counts_keep_their_own_tokens(tiny, toy_ids):
    """Two processes whose generation is gathered and split evenly, as TRL does with vLLM's server mode."""
    import threading

    from sttgym.training.render import render
    from tests.training.test_render import _oracle_transcripts, _replaying_policy

    tokenizer = tiny[0]
    transcripts = _oracle_transcripts(toy_ids)
    policy = _replaying_policy([render(tokenizer, t.messages, t.tools) for t in transcripts])
    shares = {0: transcripts[:1], 1: transcripts[1:]}  # one episode against several
    barrier, board = threading.Barrier(2), {}

    def exchange(rank, value):
        board[rank] = value
        barrier.wait()
        both = [board[0], board[1]]
        barrier.wait()
        return both

    def process(rank, results):
        def agree(local):
            return [max(a, b) for a, b in zip(*exchange(rank, local))]

        def generate(prompts, max_new_tokens):
            everyone = [p for share in exchange(rank, prompts) for p in share]
            outputs = policy(everyone, max_new_tokens)
            return outputs[rank * len(prompts):(rank + 1) * len(prompts)]  # an even split, like TRL's

        engine = RolloutEngine(tokenizer, generate, agree=agree)
        results[rank] = engine.run([(t.env_id, t.seed) for t in shares[rank]])

    results = {}
    threads = [threading.Thread(target=process, args=(rank, results)) for rank in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for rank in (0, 1):
        assert [e.actions for e in results[rank]] == [t.actions for t in shares[rank]]
        assert all(e.reward == 1.0 for e in results[rank])


class _ScriptedModel:
    """Stands in for a causal LM: records the stop ids it is given and returns a fixed continuation."""

    def __init__(self, continuation):
        self.continuation, self.device, self.stops = continuation, torch.device("cpu"), None

    def generate(self, input_ids, eos_token_id, **kwargs):
        self.stops = eos_token_id
        tail = torch.tensor([self.continuation] * input_ids.size(0))
        return torch.cat([input_ids, tail], dim=1)


def test_generation_stops_at_the_end_of_turn_of_a_base_checkpoint(tiny):
    from tests.training.test_render import _qwen3_base_tokenizer

    tokenizer = _qwen3_base_tokenizer(tiny[0])
    end, eos = tokenizer.convert_tokens_to_ids("<|im_end|>"), tokenizer.eos_token_id
    assert end != eos
    word = tokenizer.convert_tokens_to_ids("a")
    model = _ScriptedModel([word, end, word, eos])
    assert HFGenerator(model, tokenizer)([[5, 6]], 4) == [[word, end]]
    assert end in model.stops and eos in model.stops


def test_an_instance_row_naming_a_module_is_refused_before_anything_is_imported(tiny, toy_ids):
    import sys

    import pytest

    engine = RolloutEngine(tiny[0], _babbler(0), max_turns=1, max_turn_tokens=1)
    with pytest.raises(ValueError, match="names a module to import"):
        engine.run([("sttgym_no_such_module:" + toy_ids[0], SEED)])
    assert "sttgym_no_such_module" not in sys.modules


def test_refusals_on_feasible_tasks_are_counted_with_the_reads_before_them(toy_ids):
    from sttgym.training.engine import Episode, refusals

    def episode(actions, solvable=True):
        return Episode(toy_ids[0], SEED, [], actions=actions, info={"task": {"solvable": solvable}})

    give_up = {"name": "chat_with_user", "arguments": {"message": "Sorry, I cannot book that: the slot is gone."}}
    reads = [{"name": "get_locker", "arguments": {"locker_id": "L1"}}] * 2
    scores = refusals([episode([*reads, give_up, {"content": "Task Completed"}]),
                       episode([{"content": "Task Completed"}]),
                       episode([give_up], solvable=False)])  # refusing an impossible task is right
    assert scores == {"refusals_on_feasible": 0.5, "reads_before_refusal": 2.0}


def test_an_episode_counts_its_repeated_calls_and_whether_it_replied(toy_ids):
    from sttgym.training.engine import Episode

    read = {"name": "get_locker", "arguments": {"locker_id": "L1", "fresh": True}}
    same = {"arguments": {"fresh": True, "locker_id": "L1"}, "name": "get_locker"}  # key order does not matter
    other = {"name": "get_locker", "arguments": {"locker_id": "L2", "fresh": True}}
    looping = Episode(toy_ids[0], SEED, [], actions=[read, other, same, read])
    assert looping.repeated_calls == 2 and not looping.replied  # cut off by the turn cap
    finished = Episode(toy_ids[0], SEED, [], actions=[read, other, {"content": "Task Completed"}])
    assert finished.repeated_calls == 0 and finished.replied


def test_rl_readiness_samples_each_instance_and_measures_spread(tiny_path, toy_ids):
    from sttgym.training.engine import rl_readiness

    instances = [(toy_ids[0], SEED), (toy_ids[1], SEED)]
    ready = rl_readiness(str(tiny_path), instances, samples=3, max_turns=2, max_turn_tokens=8)
    assert ready["samples"] == 3 and 0.0 <= ready["spread"] <= 1.0
    assert ready["pass@3"] >= ready["sampled_success"]
    # greedy samples of one instance are one episode played three times: nothing for RL to compare
    greedy = rl_readiness(str(tiny_path), instances, samples=3, temperature=0.0, max_turns=2, max_turn_tokens=8)
    assert greedy["spread"] == 0.0 and greedy["pass@3"] == greedy["sampled_success"]
