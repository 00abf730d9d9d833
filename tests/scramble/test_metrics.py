"""scramble_metrics on hand-made trajectories, and the analytic references against direct counting."""

from __future__ import annotations

import itertools
from math import comb

import gymnasium as gym
import pytest

import sttgym  # noqa: F401  (registers the ScrambleTool ids)
from sttgym.evaluation.scramble_metrics import analytic_references, scramble_metrics, scramble_references
from sttgym.rollout import Trajectory
from sttgym.wrappers import MappingDrift

START = {"type": "task_start"}
TIMEOUT = {"type": "timeout"}


def _call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def _traj(steps: list[tuple[dict, list]], tasks: list[tuple[bool, int, str]], mappings=None, schemas=None,
          ended_early: bool = False) -> Trajectory:
    info = {"tasks": [{"template": "t", "solved": s, "actions": a, "outcome": o, "functions": 4} for s, a, o in tasks],
            "mappings": mappings or [{"a": "f", "b": "g", "c": "h"}], "schemas": schemas or {},
            "ended_early": ended_early}
    return Trajectory(None, 0, steps=[{"action": a, "observation": "", "reward": 0.0, "events": e}
                                      for a, e in steps], info=info)


def test_completion_efficiency_and_failure_modes():
    solved = _traj([], [(True, 5, "solved"), (True, 7, "solved")])
    spent = _traj([], [(True, 5, "solved"), (False, 100, "budget")])
    quit_ = _traj([], [(False, 3, "unfinished"), (False, 0, "unfinished")], ended_early=True)
    m = scramble_metrics([solved, spent, quit_])
    assert m["completion_rate"] == pytest.approx(1 / 3) and m["tasks_solved"] == pytest.approx(1.0)
    assert m["action_efficiency"] == 12 and m["budget_exhaustion"] == 0.5 and m["early_exit"] == 0.5
    assert m["per_position"]["actions"] == [5, 53.5] and m["recovery_overhead"] == pytest.approx(48.5)


def test_retry_rates_distinguish_immediate_persistent_and_abandoned_retries():
    a, b = _call("a"), _call("b", arg_0="x")
    steps = [(a, [TIMEOUT]), (a, []),  # retried at once
             (b, [TIMEOUT]), (a, []), (b, []),  # retried later
             (a, [TIMEOUT]), (_call("c"), [])]  # abandoned
    m = scramble_metrics([_traj(steps, [(True, 5, "solved")])])
    assert m["timeouts"] == 3
    assert m["immediate_retry_rate"] == pytest.approx(1 / 3) and m["persistent_retry_rate"] == pytest.approx(2 / 3)


def test_stale_calls_and_chain_following_under_a_drift():
    # before: a->f, b->g, c->h; the drift moves the 3-cycle so a->h, b->f, c->g
    mappings = [{"a": "f", "b": "g", "c": "h"}, {"a": "h", "b": "f", "c": "g"}]
    schemas = {"f": {"arg_0": "string"}, "g": {}, "h": {"arg_0": "integer", "arg_1": "string"}}
    task1 = [(_call("a", arg_0="x"), []), (_call("b"), []), (_call("c", arg_0=1, arg_1="y"), [START])]
    # task 2 wants f: a answers h; h came from c, which the agent calls next (follows the chain);
    # c answers g, which came from b (followed again); then a is called again with f's keys (stale)
    task2 = [(_call("a", arg_0="x"), []), (_call("c", arg_0="x"), []), (_call("b", arg_0="x"), []),
             (_call("a", arg_0="x"), [])]
    m = scramble_metrics([_traj(task1 + task2, [(True, 3, "solved"), (True, 4, "solved")], mappings, schemas)])
    assert m["stale_calls_total"] == 1 and m["stale_calls_per_task"] == 1.0
    assert m["chain_opportunities"] == 2 and m["chain_follow_rate"] == 1.0
    assert m["chain_random_rate"] == pytest.approx(1 - (1 - 1 / 2) ** 3)  # two other used identifiers, three tries


def test_eq2_matches_direct_counting_of_the_drift_sets():
    n, m, r = 12, 4, 3  # small enough to enumerate every set the drift can choose
    hits = sum(bool(set(chosen) & set(range(r))) for chosen in itertools.combinations(range(n), m))
    refs = analytic_references(without_arguments=5, with_arguments=7, per_task=r, moved=m)
    assert refs["drift_hit_probability"] == pytest.approx(hits / comb(n, m))
    assert refs["expected_recovery"] == pytest.approx(hits / comb(n, m) * (m - 1))
    assert refs["full_discovery"] == 5 + 2 * 7 and refs["task1_reference"] == 20


def test_references_are_read_from_the_env():
    drift = scramble_references(gym.make("ScrambleTool/Drift"))
    assert (drift["full_discovery"], drift["task1_reference"], drift["cycle_recovery"]) == (47, 48, 6)
    assert drift["expected_recovery"] == pytest.approx((1 - comb(21, 4) / comb(28, 4)) * 6)  # about 4.25
    assert scramble_references(gym.make("ScrambleTool/Base"))["expected_recovery"] == 0.0
    wide = scramble_references(MappingDrift(gym.make("ScrambleTool/Base"), fraction=0.5))
    assert wide["cycle_recovery"] == 13


def test_coverage_repeats_calls_outside_the_drift_set_and_the_counterfactual():
    mappings = [{"a": "f", "b": "g", "c": "h"}, {"a": "g", "b": "f", "c": "h"}]  # the drift swaps a and b
    schemas = {"f": {"arg_0": "string"}, "g": {}, "h": {"arg_0": "integer"}}
    failed = '{"out_1": "val_bad", "out_2": "File not found: x"}'
    mismatch = '{"out_1": "val_bad", "out_2": "Schema mismatch: expected (arg_0: string)"}'
    steps = [(_call("a"), [], mismatch), (_call("a", arg_0="x"), [], failed), (_call("a", arg_0="x"), [], failed),
             (_call("b"), [], "{}"), (_call("c", arg_0=1), [START], "{}"),
             (_call("c", arg_0=1), [], "{}"), (_call("b", arg_0="x"), [], failed)]
    traj = _traj([(a, e) for a, e, _ in steps], [(True, 5, "solved"), (True, 2, "solved")], mappings, schemas)
    for step, (_, _, observation) in zip(traj.steps, steps):
        step["observation"] = observation
    m = scramble_metrics([traj])
    assert m["task1_coverage"] == 3  # f, g and h each had a correctly shaped call in task 1 (failures count)
    assert m["exact_repeats"] == 1  # the second identical call to a; c again in task 2 repeats task 1's, not its own
    assert m["calls_outside_drift"] == 1  # in task 2, c was not moved; b was
    # f's schema was known after the mismatch: its two failures in task 1 and one in task 2 are free
    assert m["per_position"]["adjusted"] == [3, 1]
    assert m["position_slope"] is None  # one later position only


def test_chain_p_value_is_small_when_the_chain_is_always_followed():
    from sttgym.evaluation.scramble_metrics import _follow_p_value

    assert _follow_p_value([(True, 0.1)] * 30) < 1e-6
    assert _follow_p_value([(True, 0.5), (False, 0.5)]) == pytest.approx(1.0)
    assert _follow_p_value([]) is None
