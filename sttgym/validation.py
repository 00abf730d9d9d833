"""Exact dual-agent validation of every task (the STT-Arena paper's stage 3, made mechanical).

For each registered arena id and seed: the oracle scores 1.0; the nominal plan is disrupted
by the triggers (< 1.0) and scores 1.0 without them; the no-op agent stays at the floor;
every trigger fires in the oracle and nominal runs, with old values matching the state;
different seeds give different instances. Across levels, the oracle's median call count
grows from easy to medium to hard.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from typing import Callable, Iterable

import gymnasium as gym

from sttgym.agents import NominalAgent, NoopAgent, OracleAgent
from sttgym.registry import parse_arena_id
from sttgym.rollout import Trajectory, rollout

__all__ = ["TaskReport", "validate_task", "validate", "level_call_medians"]

NOOP_CEILING = 0.25


@dataclass
class TaskReport:
    env_id: str
    seeds: list[int]
    problems: list[str] = field(default_factory=list)
    oracle_calls: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _run(env_id: str, agent, seed: int, dynamics: bool = True) -> tuple[Trajectory, gym.Env]:
    env = gym.make(env_id, dynamics=dynamics)
    return rollout(env, agent, seed=seed), env


def validate_task(env_id: str, seeds: Iterable[int]) -> TaskReport:
    """Check the invariants of one scenario over ``seeds``; problems are listed, never raised."""
    seeds = list(seeds)
    report = TaskReport(env_id, seeds)
    level = parse_arena_id(env_id)[2]
    instances = set()
    for seed in seeds:
        where = f"seed {seed}"
        try:
            oracle, env = _run(env_id, OracleAgent(), seed)
            task = env.unwrapped.task
            instances.add(json.dumps(task.initial_state, sort_keys=True, default=str) + task.query)
            nominal, _ = _run(env_id, NominalAgent(), seed)
            static, _ = _run(env_id, NominalAgent(), seed, dynamics=False)
            noop, _ = _run(env_id, NoopAgent(), seed)
        except Exception as exc:  # a scenario that cannot even run is the first thing to report
            report.problems.append(f"{where}: raised {type(exc).__name__}: {exc}")
            continue
        report.oracle_calls.append(oracle.tool_calls)
        failed = [c["name"] for c in oracle.info.get("checklist", []) if not c["passed"]]
        if oracle.reward != 1.0:
            report.problems.append(f"{where}: oracle scored {oracle.reward:.3f} (failed: {failed})")
        if nominal.reward >= 1.0:
            report.problems.append(f"{where}: nominal plan not disrupted by the triggers")
        if static.reward != 1.0:
            failed = [c["name"] for c in static.info.get("checklist", []) if not c["passed"]]
            report.problems.append(f"{where}: nominal plan scored {static.reward:.3f} without dynamics ({failed})")
        ceiling = NOOP_CEILING if task.solvable else 0.0
        if noop.reward > ceiling:
            report.problems.append(f"{where}: no-op agent scored {noop.reward:.3f} > {ceiling}")
        for name, traj in (("oracle", oracle), ("nominal", nominal)):
            log = traj.info.get("trigger_log", [])
            fired = {e["trigger"] for e in log}
            missing = [t.name for t in task.triggers if t.name not in fired]
            if missing:
                report.problems.append(f"{where}: triggers {missing} never fired in the {name} run")
            stale = [e["trigger"] for e in log if not e["consistent"]]
            if stale:
                report.problems.append(f"{where}: mutation old values did not match the state in {name} run: {stale}")
            bugs = [s["action"].get("name") for s in traj.steps if '"internal_error"' in s["observation"]]
            if bugs:
                report.problems.append(f"{where}: tool raised internally in the {name} run: {bugs}")
        if task.solvable != (level != "impossible"):
            report.problems.append(f"{where}: solvable={task.solvable} contradicts level {level}")
    if len(seeds) > 1 and len(instances) < 2:
        report.problems.append("every seed gave the same instance")
    return report


def level_call_medians(reports: Iterable[TaskReport]) -> dict[str, float]:
    """Median oracle tool calls per level over ``reports``."""
    by_level: dict[str, list[int]] = {}
    for r in reports:
        by_level.setdefault(parse_arena_id(r.env_id)[2], []).extend(r.oracle_calls)
    return {lvl: statistics.median(v) for lvl, v in by_level.items() if v}


def validate(env_ids: Iterable[str], seeds: Iterable[int],
             progress: Callable[[TaskReport], None] | None = None) -> tuple[list[TaskReport], list[str]]:
    """Validate every id; also check that oracle effort grows with the level within each domain."""
    seeds = list(seeds)
    reports = []
    for env_id in env_ids:
        report = validate_task(env_id, seeds)
        reports.append(report)
        if progress:
            progress(report)
    problems = []
    domains = sorted({parse_arena_id(r.env_id)[0] for r in reports})
    for domain in domains:
        medians = level_call_medians(r for r in reports if parse_arena_id(r.env_id)[0] == domain)
        chain = [medians[lvl] for lvl in ("easy", "medium", "hard") if lvl in medians]
        if len(chain) == 3 and not (chain[0] < chain[1] < chain[2]):
            problems.append(f"{domain}: median oracle calls do not grow with level: {medians}")
    return reports, problems
