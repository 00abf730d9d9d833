"""pass@k and pass^k against brute-force enumeration of every k-subset of the attempts."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sttgym.evaluation.passk import mean_pass_at_k, mean_pass_hat_k, pass_at_k, pass_hat_k


def brute_force(outcomes: list[bool], k: int, every=any) -> float:
    subsets = list(itertools.combinations(range(len(outcomes)), k))
    return sum(every(outcomes[i] for i in s) for s in subsets) / len(subsets)


@given(st.lists(st.booleans(), min_size=1, max_size=10), st.data())
def test_matches_enumeration_of_all_subsets(outcomes, data):
    k = data.draw(st.integers(1, len(outcomes)))
    assert math.isclose(pass_at_k(len(outcomes), sum(outcomes), k), brute_force(outcomes, k), abs_tol=1e-12)
    assert math.isclose(pass_hat_k(len(outcomes), sum(outcomes), k), brute_force(outcomes, k, all), abs_tol=1e-12)


def test_mean_over_tasks_and_edge_cases():
    assert pass_at_k(5, 0, 3) == 0.0 and pass_at_k(5, 5, 1) == 1.0 and pass_at_k(4, 1, 1) == 0.25
    tasks = [[True, False, False], [False, False, False], [True, True, False]]
    assert math.isclose(mean_pass_at_k(tasks, 2), sum(brute_force(t, 2) for t in tasks) / 3)
    assert math.isclose(mean_pass_hat_k(tasks, 2), (0 + 0 + 1 / 3) / 3) and pass_hat_k(5, 5, 5) == 1.0


@pytest.mark.parametrize("n, c, k", [(3, 4, 1), (3, 1, 0), (3, 1, 4), (2, -1, 1)])
def test_rejects_impossible_counts(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)
