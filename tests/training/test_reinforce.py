"""REINFORCE++ pieces against values worked out by hand."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from sttgym.training.reinforce import (discounted_returns, group_baseline, kl_estimate,  # noqa: E402
                                       place_rewards, reinforce_pp_advantages, whiten)

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


def test_group_baseline():
    assert group_baseline(torch.tensor([1.0, 0.0, 0.5, 0.5]), 2).tolist() == [0.5, 0.5, 0.5, 0.5]
    assert group_baseline(torch.tensor([1.0, 0.0, 0.0, 0.0]), 4).tolist() == [0.25] * 4
    with pytest.raises(ValueError):
        group_baseline(torch.ones(3), 2)


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
    assert stats["kl"] == pytest.approx(0.0)  # d + 0 - d + 0 over 4 tokens


def test_reinforce_pp_baseline_subtracts_the_group_mean_before_whitening():
    mask = torch.ones(4, 2)
    rewards = place_rewards([[1.0], [0.0], [1.0], [1.0]], [[1]] * 4, 2)
    advantages, _ = reinforce_pp_advantages(rewards, mask, baseline=group_baseline(rewards.sum(dim=1), 2))
    # group means 0.5 and 1.0 -> centred returns 0.5, -0.5, 0, 0 on both tokens; std over 8 tokens = sqrt(1/8)
    scale = 1 / math.sqrt(1 / 8)
    expected = [0.5 * scale] * 2 + [-0.5 * scale] * 2 + [0.0] * 4
    assert advantages.flatten().tolist() == pytest.approx(expected, abs=1e-5)
