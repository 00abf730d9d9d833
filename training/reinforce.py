"""REINFORCE++ advantages, token by token (Hu et al., 2025), for multi-turn episodes.

Shapes: every tensor is ``(B, T)`` over the completion part of B episodes; ``mask`` is 1 on
tokens the policy generated and 0 on environment tokens and padding.

REINFORCE++ has no critic. Each policy token gets a reward: the episode's rewards sit on the
last token of the turn that earned them, and with the KL *in the reward* every policy token
also pays ``-coef * KL_t`` against the frozen reference. The advantage of a token is its
return (the sum of the rewards from that token on, discounted per policy token by
``gamma``), then whitened over the whole batch. REINFORCE++-baseline first subtracts the mean
episode return of the rollouts of the same task (no division by their spread), which suits
outcome rewards; its KL usually goes in the loss instead.
"""

from __future__ import annotations

from typing import Callable, Literal

import torch

__all__ = ["KL_ESTIMATORS", "kl_estimate", "place_rewards", "discounted_returns", "group_baseline", "whiten",
           "reinforce_pp_advantages"]

KL_ESTIMATORS = ("k1", "k2", "k3")
Estimator = Literal["k1", "k2", "k3"]
Reduce = Callable[[torch.Tensor], torch.Tensor]


def kl_estimate(logprobs: torch.Tensor, ref_logprobs: torch.Tensor, estimator: Estimator = "k1") -> torch.Tensor:
    """Per-token estimate of KL(policy || reference) from tokens sampled by the policy.

    With ``d = log p - log p_ref``: ``k1 = d`` (unbiased, can be negative), ``k2 = d**2 / 2``
    (biased, low variance), ``k3 = exp(-d) - 1 + d`` (unbiased and non-negative).
    """
    d = logprobs - ref_logprobs
    if estimator == "k1":
        return d
    if estimator == "k2":
        return 0.5 * d.square()
    if estimator == "k3":
        return torch.expm1(-d) + d
    raise ValueError(f"unknown KL estimator {estimator!r}; use one of {KL_ESTIMATORS}")


def place_rewards(rewards: list[list[float]], positions: list[list[int]], length: int) -> torch.Tensor:
    """A ``(B, length)`` tensor holding ``rewards[b][k]`` at column ``positions[b][k]``, zero elsewhere."""
    out = torch.zeros(len(rewards), length)
    for row, (values, columns) in enumerate(zip(rewards, positions, strict=True)):
        for value, column in zip(values, columns, strict=True):
            out[row, column] += value
    return out


def discounted_returns(rewards: torch.Tensor, mask: torch.Tensor, gamma: float = 1.0) -> torch.Tensor:
    """Return of every policy token: its reward plus ``gamma`` times the next policy token's return.

    Environment tokens are skipped (they neither earn nor discount) and get 0.
    """
    returns = torch.zeros_like(rewards)
    running = torch.zeros(rewards.size(0), dtype=rewards.dtype)
    for t in range(rewards.size(1) - 1, -1, -1):
        on = mask[:, t].bool()
        running = torch.where(on, rewards[:, t] + gamma * running, running)
        returns[:, t] = torch.where(on, running, torch.zeros_like(running))
    return returns


def group_baseline(scores: torch.Tensor, group_size: int) -> torch.Tensor:
    """The mean score of each episode's group: consecutive runs of ``group_size`` rollouts of one task."""
    if scores.numel() % group_size:
        raise ValueError(f"{scores.numel()} episodes do not split into groups of {group_size}")
    return scores.view(-1, group_size).mean(dim=1).repeat_interleave(group_size)


def whiten(values: torch.Tensor, mask: torch.Tensor, reduce: Reduce | None = None, eps: float = 1e-8) -> torch.Tensor:
    """``(values - mean) / std`` over the masked entries, zero elsewhere.

    The moments are over the whole batch; ``reduce`` sums a tensor across processes so the
    whole batch is the global one (``accelerator.reduce(..., "sum")``).
    """
    mask = mask.to(values.dtype)
    moments = torch.stack([(values * mask).sum(), (values.square() * mask).sum(), mask.sum()])
    if reduce is not None:
        moments = reduce(moments)
    total, squares, count = moments.unbind()
    count = count.clamp(min=1.0)
    mean = total / count
    variance = (squares / count - mean.square()).clamp(min=0.0)
    return (values - mean) * torch.rsqrt(variance + eps) * mask


def reinforce_pp_advantages(rewards: torch.Tensor, mask: torch.Tensor, *, logprobs: torch.Tensor | None = None,
                            ref_logprobs: torch.Tensor | None = None, kl_coef: float = 0.0,
                            estimator: Estimator = "k1", gamma: float = 1.0, baseline: torch.Tensor | None = None,
                            reduce: Reduce | None = None) -> tuple[torch.Tensor, dict[str, float]]:
    """Whitened REINFORCE++ advantages, and statistics worth logging.

    Args:
        rewards: the episodes' rewards placed on their policy tokens (:func:`place_rewards`).
        mask: 1 on policy tokens.
        logprobs, ref_logprobs: the sampling policy's and the reference's log-probabilities of
            the tokens; needed when ``kl_coef`` is not 0 (the KL goes in the reward).
        kl_coef, estimator: weight and estimator of the token-level KL penalty.
        gamma: discount per policy token.
        baseline: one value per episode subtracted from its returns (REINFORCE++-baseline passes
            :func:`group_baseline` of the episode returns).
        reduce: sums across processes, for whitening over the global batch.
    """
    mask = mask.to(rewards.dtype)
    penalised = rewards
    stats: dict[str, float] = {}
    if kl_coef:
        kl = kl_estimate(logprobs, ref_logprobs, estimator) * mask
        penalised = rewards - kl_coef * kl
        stats["kl"] = float(kl.sum() / mask.sum().clamp(min=1.0))
    returns = discounted_returns(penalised, mask, gamma)
    if baseline is not None:
        returns = returns - baseline.unsqueeze(1) * mask
    advantages = whiten(returns, mask, reduce)
    stats["return_mean"] = float((returns * mask).sum() / mask.sum().clamp(min=1.0))
    return advantages, stats
