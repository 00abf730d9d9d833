"""Validation of every task: the STT-Arena paper's dual-agent check, made exact and adversarial.

Per instance (``validate_task``), with a message naming the id and seed for each failure:

- the oracle scores 1.0 and every trigger fires in its run; stopping after any prefix of its
  plan scores at least as much as stopping after a shorter one, and some prefix earns
  partial credit (milestones reward progress, they are not one all-or-nothing check);
- the task survives a JSON round trip: the stored task replays the oracle's run exactly;
- triggers fire from time, writes or world state: the nominal plan *with its reads removed*
  still meets every trigger and is disrupted (< 1.0), as is the full nominal plan;
- without dynamics the nominal plan scores 1.0; the no-op scores 0;
- impossible tasks: neither nominal run, nor a spray of random writes over the ids the
  observations show, reaches the original goal (the static checklist);
- every id, time and quantity the oracle passes is discoverable: it appears in the request,
  in a result the oracle saw earlier, or in a user's answer;
- a fact the user withholds on a feasible task is needed: the oracle's questions draw it out,
  and the oracle's plan without its questions does not pass (the checklist checks the question,
  ``asked_user``: the plan holds the answer, an agent that did not ask would have to guess it);
- nothing shown at reset reveals solvability.

Across instances of one id: different seeds give different worlds, and the oracle's tool
sequence, entity counts and road graph vary. Across ids (``validate``): the probe panel's
exploits average at most ``EXPLOIT_CEILING`` per domain, the re-reading heuristic stays far
below the oracle, oracle effort grows from easy to hard, and no probe's score rises with the level.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from typing import Callable, Iterable

import gymnasium as gym

from sttgym.agents import NominalAgent, NoopAgent, OracleAgent
from sttgym.agents.probes import PROBES
from sttgym.manifests import task_of
from sttgym.registry import parse_arena_id
from sttgym.rollout import Trajectory, rollout

__all__ = ["TaskReport", "validate_task", "validate", "level_call_medians", "EXPLOIT_CEILING", "REREAD_CEILING"]

EXPLOIT_CEILING = 0.1  # mean score of each exploit probe over a domain
REREAD_CEILING = 0.35  # mean score of re-reading (and asking) then following the stale plan
_EXPLOITS = ("always-refuse", "keyword-stuffer", "blind-writer", "mutation-spammer")
_REVEALING = ("solvable", "difficulty", "scenario_id", "impossible")


@dataclass
class TaskReport:
    env_id: str
    seeds: list[int]
    problems: list[str] = field(default_factory=list)
    oracle_calls: list[int] = field(default_factory=list)
    probes: dict[str, list[float]] = field(default_factory=dict)
    prefix_scores: list[float] = field(default_factory=list)  # stopping after each prefix of the first seed's oracle
    scores: dict[str, list[float]] = field(default_factory=dict)  # the yardsticks per seed: oracle, nominal, no-op

    @property
    def ok(self) -> bool:
        return not self.problems


def _run(env_id: str, agent, seed: int, dynamics: bool = True) -> tuple[Trajectory, gym.Env]:
    env = gym.make(env_id, dynamics=dynamics)
    return rollout(env, agent, seed=seed), env


def _replayed(env_id: str, task, seed: int) -> Trajectory:
    """The oracle's run on the task rebuilt from its JSON."""
    return rollout(gym.make(env_id), OracleAgent(), seed=seed, options={"task": json.loads(task.model_dump_json())})


def _undiscoverable(task, traj: Trajectory, tools: dict) -> list[str]:
    """Argument values of the oracle's calls that nothing before the call showed (a tool's own enum choices aside)."""
    seen = task.query
    missing = []
    for step in traj.steps:
        action = step["action"]
        if "name" in action:
            props = tools[action["name"]].parameters["properties"] if action["name"] in tools else {}
            for key, value in action.get("arguments", {}).items():
                if "enum" in props.get(key, {}):
                    continue
                values = value if isinstance(value, list) else [value]
                for v in values:
                    if isinstance(v, (str, int)) and not isinstance(v, bool) and str(v) not in seen \
                            and action["name"] != "chat_with_user":
                        missing.append(f"{action['name']}.{key}={v}")
        seen += "\n" + step["observation"]
    return missing


def _withheld_problems(env_id: str, seed: int, task, oracle: Trajectory) -> list[str]:
    """Why the task's withheld facts are not needed, if they are not (feasible tasks only: an impossible task's
    user may know things that change nothing)."""
    from sttgym.agents import PlanAgent
    from sttgym.user import USER_TOOL

    if not task.solvable or not task.profile.withheld:
        return []
    replies = {json.loads(s["observation"]).get("data", {}).get("reply") for s in oracle.steps
               if s["action"].get("name") == USER_TOOL}
    problems = [f"the oracle never draws out the withheld fact {a.text!r}" for a in task.profile.withheld
                if a.text not in replies]
    unasked = [c for c in task.oracle if c.name != USER_TOOL]
    if rollout(gym.make(env_id), PlanAgent(unasked), seed=seed, options={"task": task}).reward >= 1.0:
        problems.append("the oracle's plan passes without asking the user: the withheld facts are not needed")
    return problems


def _shape(task) -> tuple:
    state = task.initial_state
    counts = tuple(sorted((k, len(v)) for k, v in state.items() if isinstance(v, dict)))
    roads = tuple(sorted((r.get("minutes"), len(state.get("roads", {}))) for r in state.get("roads", {}).values()))
    return counts, roads


def validate_task(env_id: str, seeds: Iterable[int]) -> TaskReport:
    """Check the invariants of one scenario over ``seeds``; problems are listed, never raised."""
    seeds = list(seeds)
    report = TaskReport(env_id, seeds, probes={name: [] for name in PROBES},
                        scores={name: [] for name in ("oracle", "nominal", "no-op")})
    level = parse_arena_id(env_id)[2]
    instances, sequences, shapes, topologies = set(), set(), set(), set()
    for seed in seeds:
        where = f"{env_id} seed {seed}"
        try:
            oracle, env = _run(env_id, OracleAgent(), seed)
            task = env.unwrapped.task
            replay = _replayed(env_id, task, seed)
            nominal, nominal_env = _run(env_id, NominalAgent(), seed)
            static, _ = _run(env_id, NominalAgent(), seed, dynamics=False)
            noop, _ = _run(env_id, NoopAgent(), seed)
            probes = {name: _run(env_id, probe(), seed) for name, probe in PROBES.items()}
            for name, (traj, _) in probes.items():
                report.probes[name].append(traj.reward)
            blind = probes["blind-writer"][0]
            reset_info = env.unwrapped.task.summary()
        except Exception as exc:  # a scenario that cannot even run is the first thing to report
            report.problems.append(f"{where}: raised {type(exc).__name__}: {exc}")
            continue
        instances.add(json.dumps(task.initial_state, sort_keys=True, default=str) + task.query)
        sequences.add(tuple(s["action"].get("name", "") for s in oracle.steps))
        counts, roads = _shape(task)
        shapes.add(counts)
        topologies.add(roads)
        report.oracle_calls.append(oracle.tool_calls)
        for name, traj in (("oracle", oracle), ("nominal", nominal), ("no-op", noop)):
            report.scores[name].append(traj.reward)
        failed = [c["name"] for c in oracle.info.get("checklist", []) if not c["passed"]]
        if oracle.reward != 1.0:
            report.problems.append(f"{where}: oracle scored {oracle.reward:.3f} (failed: {failed})")
        if [s["observation"] for s in replay.steps] != [s["observation"] for s in oracle.steps] \
                or replay.reward != oracle.reward:
            report.problems.append(f"{where}: the task loaded back from JSON does not replay the oracle's run")
        for name, traj in (("nominal plan", nominal), ("nominal plan without its reads", blind)):
            if traj.reward >= 1.0:
                report.problems.append(f"{where}: the {name} is not disrupted by the triggers")
            fired = {e["trigger"] for e in traj.info.get("trigger_log", [])}
            missing = [t.name for t in task.triggers if t.name not in fired]
            if missing and task.solvable:
                report.problems.append(f"{where}: triggers {missing} never fire in the {name}'s run")
        fired = {e["trigger"] for e in oracle.info.get("trigger_log", [])}
        if [t.name for t in task.triggers if t.name not in fired]:
            report.problems.append(f"{where}: some triggers never fire in the oracle's run")
        if static.reward != 1.0:
            failed = [c["name"] for c in static.info.get("checklist", []) if not c["passed"]]
            report.problems.append(f"{where}: nominal plan scored {static.reward:.3f} without dynamics ({failed})")
        if noop.reward > 0.0:
            report.problems.append(f"{where}: the no-op scored {noop.reward:.3f} > 0")
        if not task.solvable:
            for name, finished in (("nominal plan", nominal_env), ("nominal plan without its reads",
                                    probes["blind-writer"][1]), ("mutation spammer", probes["mutation-spammer"][1])):
                if _reaches_original_goal(finished):
                    report.problems.append(f"{where}: the {name} still reaches the original goal")
        hidden = [k for k in _REVEALING if k in json.dumps(reset_info).lower()]
        if hidden:
            report.problems.append(f"{where}: info['task'] at reset reveals {hidden}")
        report.problems += [f"{where}: {p}" for p in _withheld_problems(env_id, seed, task, oracle)]
        missing = _undiscoverable(task, oracle, env.unwrapped.tools)
        if missing:
            report.problems.append(f"{where}: oracle uses values nothing showed it: {missing[:4]}")
        bugs = [s["action"].get("name") for t in (oracle, nominal) for s in t.steps
                if '"internal_error"' in s["observation"]]
        if bugs:
            report.problems.append(f"{where}: tools raised internally: {bugs}")
        if task.solvable != (level != "impossible"):
            report.problems.append(f"{where}: solvable={task.solvable} contradicts level {level}")
        if task.solvable and seed == seeds[0]:  # quadratic in the plan's length: one seed says enough
            profile = report.prefix_scores = prefix_scores(env_id, seed)
            if any(b < a for a, b in zip(profile, profile[1:])) or not any(0 < p < 1 for p in profile):
                report.problems.append(f"{where}: stopping part-way along the oracle's plan must earn partial credit "
                                       f"that never falls; prefix scores: {' '.join(f'{p:.2f}' for p in profile)}")
    if len(seeds) > 1:
        for what, found in (("instance", instances), ("oracle tool sequence", sequences),
                            ("entity counts", shapes), ("road graph", topologies)):
            if len(found) < 2 and found != {()}:  # a world without roads has no road graph to vary
                report.problems.append(f"{env_id}: every seed gave the same {what}")
    return report


def prefix_scores(env_id: str, seed: int) -> list[float]:
    """The score of stopping after each prefix of the oracle's plan (0 calls, 1 call, ... all of them)."""
    from sttgym.agents import PlanAgent

    plan = list(task_of(env_id, seed).oracle)
    return [rollout(gym.make(env_id), PlanAgent(plan[:k]), seed=seed).reward for k in range(len(plan) + 1)]


def _reaches_original_goal(finished: gym.Env) -> bool:
    """Whether a finished episode left a world where the original goal (the static checklist) holds."""
    arena = finished.unwrapped
    return arena.evaluate(arena.task.static_checklist)[0] >= 1.0


def level_call_medians(reports: Iterable[TaskReport]) -> dict[str, float]:
    """Median oracle tool calls per level over ``reports``."""
    by_level: dict[str, list[int]] = {}
    for r in reports:
        by_level.setdefault(parse_arena_id(r.env_id)[2], []).extend(r.oracle_calls)
    return {lvl: statistics.median(v) for lvl, v in by_level.items() if v}


def domain_table(reports: Iterable[TaskReport]) -> dict[str, dict[str, float]]:
    """Per domain: ids valid, mean score of the oracle, nominal plan, no-op and each probe, and the
    median oracle calls per level."""
    by_domain: dict[str, list[TaskReport]] = {}
    for r in reports:
        by_domain.setdefault(parse_arena_id(r.env_id)[0], []).append(r)
    table = {}
    for domain, rows in sorted(by_domain.items()):
        means = {name: statistics.fmean(v) for name in (*rows[0].scores, *rows[0].probes)
                 if (v := [x for r in rows for x in {**r.scores, **r.probes}.get(name, [])])}
        table[domain] = {"valid": sum(r.ok for r in rows), "ids": len(rows), **means,
                         **{f"calls {lvl}": v for lvl, v in level_call_medians(rows).items()}}
    return table


def probe_table(reports: Iterable[TaskReport]) -> dict[str, dict[str, float]]:
    """Mean score of each probe per level, and ``"overall"``."""
    table: dict[str, dict[str, list[float]]] = {}
    for r in reports:
        level = parse_arena_id(r.env_id)[2]
        for name, scores in r.probes.items():
            row = table.setdefault(name, {})
            row.setdefault(level, []).extend(scores)
            row.setdefault("overall", []).extend(scores)
    return {name: {k: statistics.fmean(v) for k, v in row.items() if v} for name, row in table.items()}


def validate(env_ids: Iterable[str], seeds: Iterable[int],
             progress: Callable[[TaskReport], None] | None = None) -> tuple[list[TaskReport], list[str]]:
    """Validate every id, then the rules over whole domains (probe panel, level honesty)."""
    seeds = list(seeds)
    reports = []
    for env_id in env_ids:
        report = validate_task(env_id, seeds)
        reports.append(report)
        if progress:
            progress(report)
    problems = []
    for domain in sorted({parse_arena_id(r.env_id)[0] for r in reports}):
        mine = [r for r in reports if parse_arena_id(r.env_id)[0] == domain]
        medians = level_call_medians(mine)
        chain = [medians[lvl] for lvl in ("easy", "medium", "hard") if lvl in medians]
        if len(chain) == 3 and not (chain[0] < chain[1] < chain[2]):
            problems.append(f"{domain}: median oracle calls do not grow with level: {medians}")
        table = probe_table(mine)
        for name, row in table.items():
            ceiling = EXPLOIT_CEILING if name in _EXPLOITS else REREAD_CEILING
            if row.get("overall", 0.0) > ceiling:
                problems.append(f"{domain}: probe {name} averages {row['overall']:.3f} > {ceiling}")
            levels = [row[lvl] for lvl in ("easy", "medium", "hard") if lvl in row]
            if len(levels) == 3 and levels[2] > levels[0] + 0.05:
                problems.append(f"{domain}: probe {name} scores higher on hard ({levels[2]:.2f}) than easy "
                                f"({levels[0]:.2f})")
    return reports, problems
