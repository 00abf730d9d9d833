"""REINFORCE++ pieces against values worked out by hand."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from sttgym.training.reinforce import (KL_CLAMP, discounted_returns, importance_ratio,  # noqa: E402
                                       kl_estimate, place_rewards, reinforce_pp_advantages, spread_over_turns,
                                       turn_baseline, whiten, zero_spread_groups)

LOG_HALF, LOG_QUARTER = math.log(0.5), math.log(0.25)


def test_kl_estimators_by_hand():
    p, ref = torch.tensor([LOG_HALF]), torch.tensor([LOG_QUARTER])  # d = log 2
    d = math.log(2)
    assert kl_estimate(p, ref, "k1").item() == pytest.approx(d)
    assert kl_estimate(p, ref, "k2").item() == pytest.approx(d * d / 2)
    assert kl_estimate(p, ref, "k3").item() == pytest.approx(0.5 - 1 + d)  # ref/p - 1 - log(ref/p)
    assert kl_estimate(ref, p, "k3").item() == pytest.approx(2 - 1 - d)
    with pytest.raises(ValueError):
        kl_estimate(p, ref, "k4")


def test_k3_is_never_negative_and_zero_at_equality():
    d = torch.linspace(-3, 3, 13)
    assert (kl_estimate(d, torch.zeros_like(d), "k3") >= 0).all()
    assert kl_estimate(torch.zeros(3), torch.zeros(3), "k3").abs().max().item() == 0.0


def test_place_rewards():
    out = place_rewards([[0.5, 1.0], [2.0]], [[1, 3], [0]], 4)
    assert out.tolist() == [[0.0, 0.5, 0.0, 1.0], [2.0, 0.0, 0.0, 0.0]]


def test_returns_skip_environment_tokens_and_discount_per_policy_token():
    rewards = torch.tensor([[0.0, 1.0, 0.0, 0.0, 2.0]])
    mask = torch.tensor([[1, 1, 0, 0, 1]])
    assert discounted_returns(rewards, mask, 1.0).tolist() == [[3.0, 3.0, 0.0, 0.0, 2.0]]
    # gamma 0.5: G4 = 2, G1 = 1 + 0.5 * 2 = 2, G0 = 0 + 0.5 * 2 = 1 (env tokens 2, 3 do not discount)
    assert discounted_returns(rewards, mask, 0.5).tolist() == [[1.0, 2.0, 0.0, 0.0, 2.0]]


def test_turn_baseline_averages_reward_to_go_per_turn_index_within_groups():
    # group 1: rewards per turn (0.5, 1) and (0, 0, 1) -> to go (1.5, 1) and (1, 1, 1)
    # group 2: a single-turn 1 and a single-turn 0
    baseline = turn_baseline([[0.5, 1.0], [0.0, 0.0, 1.0], [1.0], [0.0]], 2)
    assert baseline == [[1.25, 1.0], [1.25, 1.0, 1.0], [0.5], [0.5]]
    with pytest.raises(ValueError):
        turn_baseline([[1.0]] * 3, 2)


def test_spread_over_turns_fills_each_turns_policy_tokens():
    mask = torch.tensor([[1, 1, 0, 1, 0], [1, 0, 0, 0, 0]])
    out = spread_over_turns([[2.0, 3.0], [7.0]], [[1, 3], [0]], mask)
    assert out.tolist() == [[2.0, 2.0, 0.0, 3.0, 0.0], [7.0, 0.0, 0.0, 0.0, 0.0]]


def test_identical_rollouts_get_zero_advantage_even_with_per_turn_rewards():
    # A group of two identical episodes with rewards on both turns, beside a group that differs: before the
    # per-turn baseline, turn position alone gave the identical episodes advantages of either sign.
    turn_rewards = [[0.5, 0.5], [0.5, 0.5], [1.0, 0.0], [0.0, 0.0]]
    ends = [[1, 3]] * 4
    mask = torch.tensor([[1, 1, 0, 1]] * 4)
    rewards = place_rewards(turn_rewards, ends, 4)
    baseline = spread_over_turns(turn_baseline(turn_rewards, 2), ends, mask)
    advantages, stats = reinforce_pp_advantages(rewards, mask, baseline=baseline)
    assert advantages[:2].abs().max().item() == 0.0
    assert advantages[2:, :2].abs().min().item() > 0.1  # the group that differs on its first turn learns there
    with pytest.raises(ValueError, match="gamma"):
        reinforce_pp_advantages(rewards, mask, baseline=baseline, gamma=0.99)


def test_zero_spread_groups():
    assert zero_spread_groups(torch.tensor([1.0, 1.0, 0.0, 1.0, 0.0, 0.0]), 2) == pytest.approx(2 / 3)


def test_whitening_is_global_over_masked_tokens():
    values = torch.tensor([[1.0, 2.0, 9.0], [3.0, 0.0, 0.0]])
    mask = torch.tensor([[1, 1, 0], [1, 0, 0]])
    # masked values 1, 2, 3: mean 2, population std sqrt(2/3)
    expected = [[-1 / math.sqrt(2 / 3), 0.0, 0.0], [1 / math.sqrt(2 / 3), 0.0, 0.0]]
    assert whiten(values, mask) == pytest.approx(torch.tensor(expected), abs=1e-6)
    # a reducer that doubles every sum (two identical processes) leaves the moments unchanged
    assert whiten(values, mask, reduce=lambda t: 2 * t) == pytest.approx(torch.tensor(expected), abs=1e-6)


def test_reinforce_pp_with_kl_in_the_reward_by_hand():
    # two episodes, three completion tokens; episode 0: policy, env, policy; episode 1: policy, policy, pad
    mask = torch.tensor([[1, 0, 1], [1, 1, 0]])
    rewards = place_rewards([[1.0], [0.0]], [[2], [1]], 3)
    logp = torch.tensor([[LOG_HALF, 0.0, LOG_HALF], [LOG_QUARTER, LOG_HALF, 0.0]])
    ref = torch.tensor([[LOG_QUARTER, 0.0, LOG_HALF], [LOG_HALF, LOG_HALF, 0.0]])
    advantages, stats = reinforce_pp_advantages(rewards, mask, logprobs=logp, ref_logprobs=ref, kl_coef=0.1,
                                                estimator="k1")
    d = math.log(2)
    # k1 per token: ep0 (d, -, 0), ep1 (-d, 0); returns: ep0 (1 - 0.1 d, -, 1), ep1 (0.1 d, 0)
    returns = [1 - 0.1 * d, 1.0, 0.1 * d, 0.0]
    mean = sum(returns) / 4
    std = math.sqrt(sum((r - mean) ** 2 for r in returns) / 4)
    z = [(r - mean) / std for r in returns]
    assert advantages.flatten().tolist() == pytest.approx([z[0], 0.0, z[1], z[2], z[3], 0.0], abs=1e-5)
    assert stats["kl_k1"] == pytest.approx(0.0)  # d + 0 - d + 0 over 4 tokens


def test_reinforce_pp_baseline_subtracts_the_group_mean_and_scales_without_recentring():
    mask = torch.ones(4, 2)
    turn_rewards = [[1.0], [0.0], [1.0], [1.0]]
    rewards = place_rewards(turn_rewards, [[1]] * 4, 2)
    baseline = spread_over_turns(turn_baseline(turn_rewards, 2), [[1]] * 4, mask)
    advantages, stats = reinforce_pp_advantages(rewards, mask, baseline=baseline)
    # group means 0.5 and 1.0 -> centred returns 0.5, -0.5, 0, 0 on both tokens; std over 8 tokens = sqrt(1/8)
    scale = 1 / math.sqrt(1 / 8)
    expected = [0.5 * scale] * 2 + [-0.5 * scale] * 2 + [0.0] * 4
    assert advantages.flatten().tolist() == pytest.approx(expected, abs=1e-5)
    assert stats["mean"] == pytest.approx(0.0, abs=1e-6) and stats["std"] == pytest.approx(1.0, abs=1e-4)


def test_whitening_stays_exact_far_from_zero():
    # one pass (E[x^2] - E[x]^2) in float32 loses the spread of values near 1e4 entirely
    values = torch.tensor([[10000.0, 10000.5, 10001.0]])
    out = whiten(values, torch.ones(1, 3))
    assert out.flatten().tolist() == pytest.approx([-math.sqrt(1.5), 0.0, math.sqrt(1.5)], abs=1e-3)


def test_kl_estimates_are_clamped_and_reported():
    logp, ref = torch.tensor([[0.0, 0.0]]), torch.tensor([[-50.0, 0.0]])  # a token the reference nearly forbids
    assert kl_estimate(logp, ref, "k1").max().item() == KL_CLAMP
    _, stats = reinforce_pp_advantages(torch.zeros(1, 2), torch.ones(1, 2), logprobs=logp, ref_logprobs=ref)
    assert stats["kl_k1"] == pytest.approx(KL_CLAMP / 2) and stats["kl_k3"] > 0


def test_importance_ratio_modes():
    old = torch.tensor([[math.log(0.5), math.log(0.9), 0.0]])
    sampled = torch.tensor([[math.log(0.25), math.log(0.1), float("nan")]])
    mask = torch.tensor([[1.0, 1.0, 1.0]])
    truncated = importance_ratio(old, sampled, mask, mode="token_truncate", clip_max=3.0)
    assert truncated.flatten().tolist() == pytest.approx([2.0, 3.0, 1.0])  # 9 clipped to 3; unknown -> 1
    masked = importance_ratio(old, sampled, mask, mode="token_mask", clip_min=0.5, clip_max=3.0)
    assert masked.flatten().tolist() == pytest.approx([2.0, 0.0, 1.0])
    sequence = importance_ratio(old, sampled, mask, mode="sequence_truncate", clip_max=100.0)
    assert sequence.shape == (1, 1) and sequence.item() == pytest.approx(18.0)
    with pytest.raises(ValueError):
        importance_ratio(old, sampled, mask, mode="word_truncate")
