"""pass@k and pass^k over each task's attempts, estimated without bias.

With ``n`` attempts of which ``c`` succeeded, drawing ``k`` of them without replacement
misses every success with probability ``C(n-c, k) / C(n, k)``; pass@k, the chance that at
least one of k attempts succeeds, is one minus that, averaged over tasks (Chen et al., 2021).
pass^k, the chance that all k attempts succeed (tau-bench's reliability measure), is
``C(c, k) / C(n, k)``. The product forms below avoid huge binomials.
"""

from __future__ import annotations

from typing import Iterable

__all__ = ["pass_at_k", "mean_pass_at_k", "pass_hat_k", "mean_pass_hat_k"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task with ``c`` successes among ``n`` attempts (``1 <= k <= n``)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:  # every k-subset holds a success
        return 1.0
    miss = 1.0
    for i in range(n - c + 1, n + 1):
        miss *= 1.0 - k / i
    return 1.0 - miss


def mean_pass_at_k(outcomes: Iterable[Iterable[bool]], k: int) -> float:
    """pass@k averaged over tasks; each task gives its attempts' successes (at least ``k`` of them)."""
    values = [pass_at_k(len(attempts), sum(attempts), k) for attempts in map(list, outcomes)]
    return sum(values) / len(values) if values else 0.0


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k for one task: the chance that ``k`` attempts drawn from the ``n`` all succeeded."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    hit = 1.0
    for i in range(k):
        hit *= (c - i) / (n - i)
    return max(hit, 0.0)


def mean_pass_hat_k(outcomes: Iterable[Iterable[bool]], k: int) -> float:
    """pass^k averaged over tasks; each task gives its attempts' successes (at least ``k`` of them)."""
    values = [pass_hat_k(len(attempts), sum(attempts), k) for attempts in map(list, outcomes)]
    return sum(values) / len(values) if values else 0.0
