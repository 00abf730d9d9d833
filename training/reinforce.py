"""REINFORCE++ advantages, token by token (Hu et al., 2025), for multi-turn episodes.

Shapes: every tensor is ``(B, T)`` over the completion part of B episodes; ``mask`` is 1 on
tokens the policy generated and 0 on environment tokens and padding.

REINFORCE++ has no critic. Each policy token gets a reward: the episode's rewards sit on the
last token of the turn that earned them, and with the KL *in the reward* every policy token
also pays ``-coef * KL_t`` against the frozen reference. The advantage of a token is its
return (the sum of the rewards from that token on, discounted per policy token by
``gamma``), then whitened over the whole batch.

REINFORCE++-baseline first subtracts a baseline taken from the other rollouts of the same
task, then divides by the batch's spread without re-centring, so rollouts that all did the
same get exactly zero advantage. The baseline is per turn index (:func:`turn_baseline`):
the tokens of turn ``k`` are compared with what the group's rollouts earned from their own
turn ``k`` on. With one outcome reward that is the group's mean return; with rewards per turn
it keeps a turn's position from becoming advantage (an early token's return holds more
turns' rewards than a late one's). Discounting would mix the two again, so the baseline
variant takes ``gamma = 1`` (as OpenRLHF's does).
"""

from __future__ import annotations

from itertools import accumulate
from typing import Callable, Literal

import torch

__all__ = ["KL_ESTIMATORS", "KL_CLAMP", "kl_estimate", "place_rewards", "spread_over_turns", "discounted_returns",
           "turn_baseline", "zero_spread_groups", "whiten", "importance_ratio", "reinforce_pp_advantages"]

KL_ESTIMATORS = ("k1", "k2", "k3")
Estimator = Literal["k1", "k2", "k3"]
Reduce = Callable[[torch.Tensor], torch.Tensor]
KL_CLAMP = 10.0  # per-token KL estimates are clipped to +-this: one token off the reference's support cannot swamp a batch


def kl_estimate(logprobs: torch.Tensor, ref_logprobs: torch.Tensor, estimator: Estimator = "k1") -> torch.Tensor:
    """Per-token estimate of KL(policy || reference) from tokens sampled by the policy.

    With ``d = log p - log p_ref``: ``k1 = d`` (unbiased, can be negative), ``k2 = d**2 / 2``
    (biased, low variance), ``k3 = exp(-d) - 1 + d`` (unbiased and non-negative). ``d`` is
    clipped to ``+-KL_CLAMP`` first.
    """
    d = (logprobs - ref_logprobs).clamp(-KL_CLAMP, KL_CLAMP)
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


def spread_over_turns(values: list[list[float]], turn_ends: list[list[int]], mask: torch.Tensor) -> torch.Tensor:
    """A ``mask``-shaped tensor holding ``values[b][k]`` on every policy token of episode ``b``'s turn ``k``.

    Turn ``k`` runs from the token after turn ``k - 1``'s last (``turn_ends[b][k - 1]``) to its own last.
    """
    out = torch.zeros(mask.shape, dtype=torch.float32)
    for row, (row_values, ends) in enumerate(zip(values, turn_ends, strict=True)):
        start = 0
        for value, end in zip(row_values, ends, strict=True):
            out[row, start:end + 1] = value
            start = end + 1
    return out * mask.to(out.dtype)


def turn_baseline(turn_rewards: list[list[float]], group_size: int) -> list[list[float]]:
    """For each episode and turn ``k``: the mean reward earned from turn ``k`` on, over the episodes of its group
    (consecutive runs of ``group_size`` rollouts of one task) that reached turn ``k``."""
    if len(turn_rewards) % group_size:
        raise ValueError(f"{len(turn_rewards)} episodes do not split into groups of {group_size}")
    out = []
    for start in range(0, len(turn_rewards), group_size):
        to_go = [list(accumulate(reversed(rewards)))[::-1] for rewards in turn_rewards[start:start + group_size]]
        means = [sum(g[k] for g in to_go if len(g) > k) / sum(len(g) > k for g in to_go)
                 for k in range(max(map(len, to_go), default=0))]
        out += [means[:len(g)] for g in to_go]
    return out


def zero_spread_groups(returns: torch.Tensor, group_size: int) -> float:
    """The share of groups whose rollouts all got the same return: with a group baseline they teach nothing."""
    groups = returns.view(-1, group_size)
    return float((groups.max(dim=1).values == groups.min(dim=1).values).float().mean())


def whiten(values: torch.Tensor, mask: torch.Tensor, reduce: Reduce | None = None, eps: float = 1e-8,
           center: bool = True) -> torch.Tensor:
    """``(values - mean) / std`` over the masked entries (``values / std`` without ``center``), zero elsewhere.

    The moments are over the whole batch; ``reduce`` sums a tensor across processes so the
    whole batch is the global one (``accelerator.reduce(..., "sum")``). The variance is taken
    in two passes (mean first, then squared deviations), which stays exact when the values
    sit far from zero.
    """
    mask = mask.to(values.dtype)
    reduce = reduce or (lambda t: t)
    total, count = reduce(torch.stack([(values * mask).sum(), mask.sum()])).unbind()
    count = count.clamp(min=1.0)
    mean = total / count
    variance = reduce(((values - mean).square() * mask).sum()) / count
    return (values - (mean if center else 0.0)) * torch.rsqrt(variance + eps) * mask


def importance_ratio(logprobs: torch.Tensor, sampling_logprobs: torch.Tensor, mask: torch.Tensor, *,
                     mode: str = "token_truncate", clip_min: float | None = 0.0,
                     clip_max: float = 3.0) -> torch.Tensor:
    """The correction for tokens sampled by another engine (vLLM) than the one trained: ``p_train / p_sampler``.

    Per token, or per sequence (the product over its policy tokens), as ``mode`` says
    (``token_truncate``, ``token_mask``, ``sequence_truncate``, ``sequence_mask``): truncating
    clips the ratio at ``clip_max``; masking zeroes ratios outside ``[clip_min, clip_max]``.
    Tokens whose sampling log-probability is unknown (NaN) get a ratio of 1.
    """
    level, _, action = mode.partition("_")
    if level not in ("token", "sequence") or action not in ("truncate", "mask"):
        raise ValueError(f"unknown importance sampling mode {mode!r}")
    difference = torch.nan_to_num((logprobs - sampling_logprobs) * mask, nan=0.0)
    if level == "sequence":
        difference = difference.sum(dim=-1, keepdim=True)
    ratio = torch.exp(difference.clamp(max=20.0))
    if action == "truncate":
        return ratio.clamp(max=clip_max)
    low = 0.0 if clip_min is None else clip_min
    return ratio.masked_fill((ratio < low) | (ratio > clip_max), 0.0)


def reinforce_pp_advantages(rewards: torch.Tensor, mask: torch.Tensor, *, logprobs: torch.Tensor | None = None,
                            ref_logprobs: torch.Tensor | None = None, kl_coef: float = 0.0,
                            estimator: Estimator = "k1", gamma: float = 1.0, baseline: torch.Tensor | None = None,
                            reduce: Reduce | None = None) -> tuple[torch.Tensor, dict[str, float]]:
    """Whitened REINFORCE++ advantages, and statistics worth logging.

    Args:
        rewards: the episodes' rewards placed on their policy tokens (:func:`place_rewards`).
        mask: 1 on policy tokens.
        logprobs, ref_logprobs: the sampling policy's and the reference's log-probabilities of
            the tokens; needed when ``kl_coef`` is not 0 (the KL goes in the reward). When both
            are given, the mean k1 and k3 estimates are reported either way.
        kl_coef, estimator: weight and estimator of the token-level KL penalty.
        gamma: discount per policy token.
        baseline: a value per token subtracted from its return (REINFORCE++-baseline passes
            :func:`turn_baseline` spread over the turns); the result is then scaled, not re-centred.
        reduce: sums across processes, for whitening over the global batch.
    """
    mask = mask.to(rewards.dtype)
    if baseline is not None and gamma != 1.0:
        raise ValueError("the group baseline compares undiscounted returns; use gamma 1 with it")
    tokens = mask.sum().clamp(min=1.0)
    penalised = rewards
    stats: dict[str, float] = {}
    if logprobs is not None and ref_logprobs is not None:
        for name in ("k1", "k3"):
            stats[f"kl_{name}"] = float((kl_estimate(logprobs, ref_logprobs, name) * mask).sum() / tokens)
    if kl_coef:
        penalised = rewards - kl_coef * kl_estimate(logprobs, ref_logprobs, estimator) * mask
    returns = discounted_returns(penalised, mask, gamma)
    if baseline is not None:
        returns = returns - baseline * mask
    advantages = whiten(returns, mask, reduce, center=baseline is None)
    stats["return_mean"] = float((returns * mask).sum() / tokens)
    stats["mean"] = float((advantages * mask).sum() / tokens)
    stats["std"] = float(((advantages - stats["mean"]).square() * mask).sum().div(tokens).sqrt())
    return advantages, stats
