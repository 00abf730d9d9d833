"""Headline figures of an evaluation, computed from its episode records.

Arena: per level, the mean reward (the paper's Pass@1: checklist fraction on feasible
tasks, the judge's 0/1 on impossible ones), per run, then mean and sample standard
deviation over runs. ``overall`` weights each level by its share of the suite's instances,
as the paper weights by 71/227, 67/227, 59/227 and 30/227. Also: the rate of fully solved
episodes, average tool calls (Table 2), per-conflict results, pass@k over the runs, the
failure-mode counts, and the same level figures for the static and no-user conditions.

Scramble: per condition, the episode completion rate (all tasks solved) and the average
tasks solved per episode (ScrambleToolBench Table 2), and the behavioural metrics of
:func:`sttgym.evaluation.scramble_metrics.scramble_metrics` where that module exists.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from typing import Callable, Iterable

import numpy as np

from sttgym.evaluation.diagnostics import count_modes
from sttgym.evaluation.passk import mean_pass_at_k, mean_pass_hat_k
from sttgym.rollout import Trajectory
from sttgym.task import CONFLICTS, LEVELS

__all__ = ["summarise", "arena_summary", "scramble_summary", "mean_std", "wilson", "bootstrap"]


def mean_std(values: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for a single value)."""
    if not values:
        return 0.0, 0.0
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return statistics.fmean(values) if values else None


def level_counts(records: list[dict]) -> dict[str, int]:
    """Distinct instances (env id, seed) per level."""
    return {lvl: len({(r["env_id"], r["seed"]) for r in records if r.get("difficulty") == lvl}) for lvl in LEVELS}


# STT-Arena's overall Pass@1 weights the levels by its 227 tasks: 71 easy, 67 medium, 59 hard, 30 impossible.
PAPER_WEIGHTS = {"easy": 71, "medium": 67, "hard": 59, "impossible": 30}
WEIGHTS = ("paper", "suite")


def passed(record: dict) -> float:
    """Pass@1 of one episode: 1 when it fully succeeded (every milestone, no failed gate; on an impossible task,
    the judge's pass), else 0."""
    return float(record["reward"] >= 1.0)


def _by_run(records: list[dict], value: Callable[[dict], float], weights: str = "paper") -> dict[str, dict]:
    """Per level and ``overall``: mean and std over runs of each run's mean ``value``.

    A run's overall weights the level means by the paper's task counts (``weights="paper"``) or
    by the levels' instance counts in these records (``"suite"``), over the levels present; a run
    that misses a level (an interrupted evaluation) has no overall.
    """
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}, not {weights!r}")
    runs = sorted({r["run"] for r in records})
    counts = level_counts(records)
    levels = [lvl for lvl in LEVELS if counts[lvl]]
    counts = PAPER_WEIGHTS if weights == "paper" else counts
    total = sum(counts[lvl] for lvl in levels)
    table = {run: {lvl: _mean(value(r) for r in records if r["run"] == run and r.get("difficulty") == lvl)
                   for lvl in levels} for run in runs}
    out: dict[str, dict] = {}
    for level in levels:
        values = [table[run][level] for run in runs if table[run][level] is not None]
        out[level] = {"mean": mean_std(values)[0], "std": mean_std(values)[1], "runs": values}
    overall = [sum(counts[lvl] / total * table[run][lvl] for lvl in levels) for run in runs
               if all(table[run][lvl] is not None for lvl in levels)]
    if overall:
        out["overall"] = {"mean": mean_std(overall)[0], "std": mean_std(overall)[1], "runs": overall}
    return out


def arena_summary(records: list[dict], k: int = 1, weights: str = "paper") -> dict:
    """The arena figures. The headline (``easy`` ... ``overall``) is Pass@1 of the dynamic condition:
    the share of episodes fully solved, as the paper counts it; ``score`` is the mean checklist
    score (partial credit), a separate quantity."""
    dynamic = [r for r in records if r["condition"] == "dynamic"]
    levels = _by_run(dynamic, passed, weights)
    scores = _by_run(dynamic, lambda r: r["reward"], weights)
    counts = level_counts(dynamic)
    present = [lvl for lvl in LEVELS if counts[lvl]]
    basis = PAPER_WEIGHTS if weights == "paper" else counts
    summary: dict = {lvl: levels[lvl]["mean"] if lvl in levels else None for lvl in (*LEVELS, "overall")}
    summary.update(
        std={lvl: v["std"] for lvl, v in levels.items()},
        counts=counts,
        weights={"scheme": weights, **{lvl: basis[lvl] / sum(basis[x] for x in present) for lvl in present}},
        score={lvl: v["mean"] for lvl, v in scores.items()},
        score_std={lvl: v["std"] for lvl, v in scores.items()},
        avg_calls=_mean(r["calls"] for r in dynamic),
        usage=usage(dynamic),
        by_conflict=_grouped(dynamic, "conflict", CONFLICTS),
        by_domain=_grouped(dynamic, "domain"),
        pass_at_k=_pass_curve(dynamic, k),
        pass_hat_k=_pass_curve(dynamic, k, mean_pass_hat_k),
        failure_modes=count_modes(dynamic),
        resolution=resolution(dynamic, basis),
    )
    summary["conditions"] = {
        condition: {lvl: v["mean"] for lvl, v in _by_run(rows, passed, weights).items()}
        for condition in sorted({r["condition"] for r in records})
        if (rows := [r for r in records if r["condition"] == condition])}
    return summary


def resolution(records: list[dict], basis: dict[str, int]) -> dict[str, float]:
    """Half the width of Pass@1's 95% interval, per level and ``overall``: what an evaluation of this many instances
    can tell apart. The instance is the unit (its runs' mean pass), each level's interval is Wilson's, and the
    overall one combines the levels' with ``basis``'s weights as independent estimates."""
    per: dict[str, float] = {}
    weights = {}
    for lvl in LEVELS:
        by_instance: dict = {}
        for r in records:
            if r.get("difficulty") == lvl:
                by_instance.setdefault((r["env_id"], r["seed"]), []).append(passed(r))
        if by_instance:
            n, successes = len(by_instance), sum(statistics.fmean(v) for v in by_instance.values())
            low, high = wilson(successes, n)
            per[lvl], weights[lvl] = (high - low) / 2, basis[lvl]
    if per:
        total = sum(weights.values())
        per["overall"] = math.sqrt(sum((weights[lvl] / total * per[lvl]) ** 2 for lvl in weights))
    return per


def usage(records: list[dict]) -> dict | None:
    """Per-episode means of an LLM's tokens and broken turns; None for agents without a model."""
    rows = [r for r in records if "usage" in r]
    if not rows:
        return None
    return {"prompt_tokens": _mean(r["usage"]["prompt_tokens"] for r in rows),
            "completion_tokens": _mean(r["usage"]["completion_tokens"] for r in rows),
            "violations": _mean(r.get("violations", 0) for r in rows)}


def _grouped(records: list[dict], field: str, names: dict[str, str] | None = None) -> dict[str, dict]:
    """Pass@1, mean checklist score and episodes per value of ``field`` (conflict type, domain), with
    Pass@1 per level; ``names`` orders the groups and titles them."""
    keys = list(names) if names else sorted({r[field] for r in records if r.get(field)})
    table: dict[str, dict] = {}
    for key in keys:
        rows = [r for r in records if r.get(field) == key]
        if rows:
            table[key] = {**({"name": names[key]} if names else {}), "pass": _mean(map(passed, rows)),
                          "score": _mean(r["reward"] for r in rows), "episodes": len(rows),
                          **{lvl: _mean(passed(r) for r in rows if r.get("difficulty") == lvl) for lvl in LEVELS}}
    return table


def _pass_curve(records: list[dict], k: int, estimate: Callable = mean_pass_at_k) -> dict[str, dict]:
    """pass@j (or, with ``mean_pass_hat_k``, pass^j) for j = 1..k, overall and per level, over each instance's
    attempts (one per run)."""
    attempts: dict[tuple, list[bool]] = defaultdict(list)
    levels: dict[tuple, str] = {}
    for r in records:
        instance = (r["env_id"], r["seed"])
        attempts[instance].append(r["reward"] >= 1.0)
        levels[instance] = r.get("difficulty", "")
    curve: dict[str, dict] = {}
    for j in range(1, k + 1):
        usable = {i: a for i, a in attempts.items() if len(a) >= j}
        if not usable:
            break
        curve[str(j)] = {"overall": estimate(usable.values(), j),
                         **{lvl: estimate([a for i, a in usable.items() if levels[i] == lvl], j)
                            for lvl in LEVELS if any(levels[i] == lvl for i in usable)}}
    return curve


def _trajectory(record: dict) -> Trajectory:
    return Trajectory(env_id=record["env_id"], seed=record["seed"], reward=record["reward"],
                      steps=record.get("steps", []), messages=record.get("messages", []),
                      info=record.get("info", {}), terminated=record.get("terminated", False),
                      truncated=record.get("truncated", False))


def _tasks_solved(record: dict) -> float:
    tasks = record.get("info", {}).get("tasks")
    if isinstance(tasks, list) and tasks:
        return float(sum(bool(t.get("solved")) for t in tasks))
    return 0.0


BOOTSTRAP = 2000  # resamples of each 95% bootstrap interval


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default); (0, 1) without trials."""
    if not n:
        return 0.0, 1.0
    p = successes / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # The interval always holds p; rounding could put a bound a hair past it (1 - 1e-16 at p = 1), which plots
    # as a negative error bar.
    return max(0.0, min(p, (centre - half) / (1 + z * z / n))), min(1.0, max(p, (centre + half) / (1 + z * z / n)))


def bootstrap(rows: list, statistic: Callable[[list], float | None], seed: int = 0) -> tuple[float, float] | None:
    """The 95% percentile bootstrap interval of ``statistic`` over ``rows`` (resampled with a seeded generator)."""
    rng = np.random.default_rng(seed)
    values = [v for _ in range(BOOTSTRAP) if (v := statistic([rows[i] for i in rng.integers(len(rows), size=len(rows))]))
              is not None] if rows else []
    return (float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))) if values else None


def _tokens_per_solved(rows: list[dict]) -> float | None:
    """Completion tokens of every episode, failed ones included, over the tasks solved (ScrambleToolBench Fig. 2c)."""
    solved = sum(map(_tasks_solved, rows))
    return sum(r["usage"]["completion_tokens"] for r in rows) / solved if solved else None


def _intervals(rows: list[dict]) -> dict:
    """ScrambleToolBench Figure 2 for one condition: T and token cost with bootstrap intervals, C with Wilson's,
    and the failed episodes by cause (the budget ran out, or the agent quit)."""
    failed = [r for r in rows if r["reward"] < 1.0]
    out = {"tasks_solved_ci": bootstrap(rows, lambda rs: statistics.fmean(map(_tasks_solved, rs))),
           "completion_rate_ci": wilson(sum(r["reward"] >= 1.0 for r in rows), len(rows)),
           "failures": {"budget": sum(_quit(r) is False for r in failed), "early_exit": sum(_quit(r) is True for r in failed)}}
    if all("usage" in r for r in rows) and (cost := _tokens_per_solved(rows)) is not None:
        out.update(completion_tokens_per_solved_task=cost, completion_tokens_per_solved_task_ci=bootstrap(
            rows, _tokens_per_solved))
    return out


def _quit(record: dict) -> bool | None:
    """Whether a failed episode ended by the agent's exit (True) or a spent budget (False); None if neither shows."""
    info = record.get("info", {})
    if info.get("ended_early"):
        return True
    return False if any(t.get("outcome") == "budget" for t in info.get("tasks") or []) else None


def scramble_summary(records: list[dict]) -> dict:
    """Per condition (env id): completion rate and average tasks solved, mean ± std over runs."""
    try:
        from sttgym.evaluation.scramble_metrics import scramble_metrics
    except ImportError:  # written by the ScrambleTool side; the headline needs only the records
        scramble_metrics = None
    conditions: dict[str, dict] = {}
    for env_id in dict.fromkeys(r["env_id"] for r in records):
        rows = [r for r in records if r["env_id"] == env_id]
        runs = sorted({r["run"] for r in rows})
        completion = mean_std([statistics.fmean(r["reward"] >= 1.0 for r in rows if r["run"] == run) for run in runs])
        solved = mean_std([statistics.fmean(_tasks_solved(r) for r in rows if r["run"] == run) for run in runs])
        entry = {"completion_rate": completion[0], "completion_rate_std": completion[1],
                 "tasks_solved": solved[0], "tasks_solved_std": solved[1], "episodes": len(rows),
                 "avg_actions": _mean(r["turns"] for r in rows), "usage": usage(rows)}
        entry.update(_intervals(rows))
        if scramble_metrics is not None:
            try:
                entry["metrics"] = scramble_metrics([_trajectory(r) for r in rows])
            except Exception as exc:  # the headline must survive a metric that cannot read these records
                entry["metrics_error"] = f"{type(exc).__name__}: {exc}"
        conditions[env_id.split("/", 1)[-1]] = entry
    return {"conditions": conditions}


def summarise(records: list[dict], suite: str, k: int = 1, label: str = "", weights: str = "paper") -> dict:
    """``summary.json``'s content for one evaluation's records.

    An episode that ended on an error (the model could not be reached, the agent crashed) says
    nothing about the agent: it is counted in ``errors`` and left out of every figure, never
    scored as a failure. One whose conversation outgrew the model's context is the model's own
    limit: it is scored as it ended, like one that ran out of turns, and counted in
    ``context_overflows``."""
    scored = [r for r in records if not r.get("error")]
    body = arena_summary(scored, k, weights) if suite == "arena" else scramble_summary(scored)
    return {"suite": suite, "agent": label, "episodes": len(scored), "runs": len({r["run"] for r in scored}),
            "errors": len(records) - len(scored),
            "context_overflows": sum(bool(r.get("context_overflow")) for r in scored), **body}
