"""Validation of every task: the STT-Arena paper's dual-agent check, made exact and adversarial.

Per instance (``validate_task``), with a message naming the id and seed for each failure:

- the oracle scores 1.0 and every trigger fires in its run; stopping after any prefix of its
  plan scores at least as much as stopping after a shorter one (progress is never punished);
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
- nothing shown at reset reveals solvability;
- every check quotes, in ``stated``, where its rule is told to the agent, and the quote is in what
  the oracle's episode shows (the request, the world description, the tools, the results);
- every alternative solution the task lists scores 1.0, and so does the oracle followed by a
  sweep of reads (reading never changes what a score sees);
- on feasible tasks, the oracle followed by one unrelated write (an entity none of its calls
  named) is counted: a domain where more than ``COLLATERAL_CEILING`` of them keep 1.0 fails.

Across instances of one id: different seeds give different worlds, and the oracle's tool
sequence, entity counts and road graph vary. Across ids (``validate``): the probe panel's
exploits average at most ``EXPLOIT_CEILING`` per domain, the re-reading heuristic stays far
below the oracle, oracle effort grows from easy to hard, no probe's score rises with the level,
and the user's answers to a fixed panel of questions do not tell solvable instances from
impossible ones (balanced accuracy at most ``SOLVABILITY_CEILING``).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from typing import Callable, Iterable

import gymnasium as gym

import numpy as np

from sttgym.agents import NominalAgent, NoopAgent, OracleAgent, PlanAgent
from sttgym.agents.adversaries import ADVERSARIES
from sttgym.agents.probes import PROBES
from sttgym.manifests import task_of
from sttgym.registry import parse_arena_id
from sttgym.rollout import Trajectory, rollout

__all__ = ["TaskReport", "validate_task", "validate", "level_call_medians", "solvability_accuracy",
           "weighted_probe_scores", "ADVERSARY_CEILING", "EXPLOIT_CEILING",
           "REREAD_CEILING", "COLLATERAL_CEILING", "SOLVABILITY_CEILING", "PANEL", "panel_answers"]

EXPLOIT_CEILING = 0.1  # mean score of each exploit probe over a domain
REREAD_CEILING = 0.35  # mean score of re-reading (and asking) then following the stale plan
ADVERSARY_CEILING = 0.05  # each observation-only adversary, overall with the paper's level weights
COLLATERAL_CEILING = 0.05  # share of feasible instances still at 1.0 after an unrelated extra write
SOLVABILITY_CEILING = 0.55  # balanced accuracy of telling impossible instances from the user's answers
# Asked at the first turn of every instance: a user whose answers differ with solvability gives it away.
PANEL = ("Would a different option be acceptable if the one you asked for is not available?",
         "Is there a preference or requirement I should keep in mind?",
         "Can I change the plan if I need to?",
         "What should I do if it cannot be done exactly as you asked?",
         "Is there a deadline?",
         "Should I cancel the request?")
_EXPLOITS = ("always-refuse", "keyword-stuffer", "blind-writer", "mutation-spammer", *ADVERSARIES)
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
    collateral: list[float] = field(default_factory=list)  # feasible seeds: the oracle plus an unrelated write
    answers: list[tuple[bool, tuple[str, ...]]] = field(default_factory=list)  # per seed: solvable, panel answers

    @property
    def ok(self) -> bool:
        return not self.problems


def _run(env_id: str, agent, seed: int, dynamics: bool = True, task=None) -> tuple[Trajectory, gym.Env]:
    """``agent``'s episode at ``seed``; on ``task`` when given, the instance the seed built, so the many runs of
    one instance build it once (building is most of a short episode's time; the JSON replay check keeps the
    stored path honest)."""
    env = gym.make(env_id, dynamics=dynamics)
    return rollout(env, agent, seed=seed, options=None if task is None else {"task": task}), env


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


def _normalise(text: str) -> str:
    return " ".join(text.lower().split())


def _stated_problems(task, reset_info: dict, oracle: Trajectory) -> list[str]:
    """Checks whose ``stated`` quote is missing or is nowhere in what the oracle's episode showed."""
    checks = [*task.checklist, *task.static_checklist, *(task.impossibility.forbidden if task.impossibility else [])]
    shown = _normalise(" ".join([task.query, reset_info.get("world", ""), json.dumps(reset_info.get("tools", [])),
                                 *(s["observation"] for s in oracle.steps)]))
    missing = sorted({c.name for c in checks if not c.stated})
    unfound = sorted({c.name for c in checks if c.stated and _normalise(c.stated) not in shown})
    problems = [f"checks {missing} do not say where their rule is stated to the agent"] if missing else []
    return problems + ([f"the rules of checks {unfound} are quoted from nowhere the agent reads"] if unfound else [])


class _ReadingOracle(OracleAgent):
    """The oracle, then every read tool of one argument on every id its episode showed (a bounded sweep)."""

    def reset(self, observation: str, info: dict, env=None, seed=None) -> None:
        from sttgym.agents.probes import KeywordStuffer

        super().reset(observation, info, env, seed)
        self.sweep = KeywordStuffer(max_reads=30)
        self.sweep.reset(observation, info, env, seed)

    def act(self, observation: str, info: dict) -> dict:
        self.sweep._harvest(observation)
        action = super().act(observation, info)
        if "content" not in action:
            return action
        swept = self.sweep.act(observation, info)
        return swept if "name" in swept and swept["name"] != "chat_with_user" else action


def _unrelated_write(env_id: str, seed: int, oracle: Trajectory) -> float | None:
    """The score of the oracle's calls followed by one successful write whose ids none of the oracle's calls named
    (None when no such write succeeds in a few tries)."""
    import copy
    import re

    from sttgym.agents.probes import _ID

    seen = " ".join([oracle.messages[0]["content"], *(s["observation"] for s in oracle.steps)])
    env = gym.make(env_id)
    env.reset(seed=seed)
    tools = env.unwrapped.tools
    # The oracle's own: what its calls named, and what its writes answered with (the holds it made itself).
    written = " ".join(s["observation"] for s in oracle.steps if s["action"].get("name") in tools
                       and tools[s["action"]["name"]].mutates)
    named = {str(v) for s in oracle.steps for v in _values(s["action"].get("arguments", {}))} | set(
        _ID.findall(written))
    ids = list(dict.fromkeys(_ID.findall(seen) + re.findall(r"\b[A-Z]+(?:-[A-Z0-9]+)+\b", seen)))
    unrelated = [i for i in ids if i not in named]
    if not unrelated:
        return None
    for step in oracle.steps:
        if "name" in step["action"]:
            env.step(step["action"])
    rng = np.random.default_rng(seed)
    for name, arguments in _extra_writes(oracle, tools, ids, unrelated, named, rng):
        twin = copy.deepcopy(env)  # the oracle's world, once per try
        _, _, done, _, info = twin.step({"name": name, "arguments": arguments})
        if not done and (info.get("result") or {}).get("success"):
            return twin.step({"content": "Task Completed"})[1]
    return None


def _extra_writes(oracle: Trajectory, tools: dict, ids: list[str], unrelated: list[str], named: set[str], rng):
    """Writes to try after the oracle's plan, each naming an id none of the oracle's calls did: first the oracle's
    own writes redone on another entity of the same kind (an extra shipment from another lot), then random
    writes over the ids the episode showed."""
    kind = lambda value: str(value).split("-")[0]  # noqa: E731 (ids are KIND-...)
    redone = []
    for step in oracle.steps:
        action = step["action"]
        if action.get("name") not in tools or not tools[action["name"]].mutates:
            continue
        for key, value in action.get("arguments", {}).items():
            if isinstance(value, str):
                redone += [(action["name"], {**action["arguments"], key: other}) for other in unrelated
                           if kind(other) == kind(value) and other != value]
    for i in rng.permutation(len(redone))[:20]:
        yield redone[int(i)]
    writes = sorted(n for n, spec in tools.items() if spec.mutates)
    for _ in range(20):
        name = writes[int(rng.integers(len(writes)))]
        arguments, texts = {}, []
        for key, schema in tools[name].parameters["properties"].items():
            if "enum" in schema:
                arguments[key] = schema["enum"][int(rng.integers(len(schema["enum"])))]
            elif schema.get("type") == "integer":
                arguments[key] = int(rng.integers(1, 5))
            elif schema.get("type") in ("string", "array"):
                pick = ids[int(rng.integers(len(ids)))]
                arguments[key] = [pick] if schema.get("type") == "array" else pick
                texts.append(key)
        if texts and not any(set(map(str, _values(arguments[k]))) - named for k in texts):
            key, pick = texts[int(rng.integers(len(texts)))], unrelated[int(rng.integers(len(unrelated)))]
            arguments[key] = [pick] if isinstance(arguments[key], list) else pick
        if texts:
            yield name, arguments


def _values(value) -> list:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _values(v)]
    if isinstance(value, list):
        return [x for v in value for x in _values(v)]
    return [value]


def panel_answers(env_id: str, seed: int, task=None) -> tuple[str, ...]:
    """The user's answers to each of :data:`PANEL`, asked first thing, with ids, times and numbers blanked
    (``task``: the instance ``seed`` builds, if already built)."""
    import re

    out = []
    for question in PANEL:
        env = gym.make(env_id)
        env.reset(seed=seed, options=None if task is None else {"task": task})
        if "chat_with_user" not in env.unwrapped.tools:
            return ()
        _, _, _, _, info = env.step({"name": "chat_with_user", "arguments": {"message": question}})
        reply = str((info["result"].get("data") or {}).get("reply", ""))
        reply = re.sub(r"\b[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+\b|\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2})?|\d+(?:[:.]\d+)?", "#",
                       reply)
        out.append(reply)
    return tuple(out)


def solvability_accuracy(answers: list[tuple[bool, tuple[str, ...]]]) -> float:
    """How well the user's answers tell impossible instances from solvable ones, as an attacker would measure it:
    the best single feature (one question's answer contains a word, or is a given sentence) picked on half the
    instances and scored, as balanced accuracy, on the other half (and the other way round, averaged), so a
    feature that only fits a few instances by chance does not count."""
    import re

    labelled = [(solvable, {f for i, a in enumerate(reply) for f in [(i, "=", a)] + [(i, w) for w in set(
        re.findall(r"[a-z']+", a.lower()))]}) for solvable, reply in answers if reply]
    halves = [labelled[0::2], labelled[1::2]]
    if any(len({s for s, _ in half}) < 2 for half in halves):
        return 0.5

    def balanced(rows: list, feature, sign: bool) -> float:
        rates = []
        for solvable in (True, False):
            group = [features for s, features in rows if s == solvable]
            rates.append(sum(((feature in f) == sign) != solvable for f in group) / len(group))
        return sum(rates) / 2  # the feature (its presence, or absence) stands for "impossible"

    scores = []
    for train, test in (halves, halves[::-1]):
        candidates = sorted({f for _, features in train for f in features}, key=repr)  # ties break the same way
        best = max(((f, sign) for f in candidates for sign in (True, False)), key=lambda c: balanced(train, *c))
        scores.append(balanced(test, *best))
    return sum(scores) / 2


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
            nominal, nominal_env = _run(env_id, NominalAgent(), seed, task=task)
            static, _ = _run(env_id, NominalAgent(), seed, dynamics=False, task=task)
            noop, _ = _run(env_id, NoopAgent(), seed, task=task)
            probes = {name: _run(env_id, probe(), seed, task=task) for name, probe in PROBES.items()}
            for name, (traj, _) in probes.items():
                report.probes[name].append(traj.reward)
            blind = probes["blind-writer"][0]
            reset_info = env.unwrapped.task.summary()
            shown = {"world": env.unwrapped.briefing(), "tools": env.unwrapped.tool_listing()}
            for name, alternative in enumerate(task.alternatives):
                traj = _run(env_id, PlanAgent(alternative), seed, task=task)[0]
                if traj.reward != 1.0:
                    failed = [c["name"] for c in traj.info.get("checklist", []) if not c["passed"]]
                    report.problems.append(f"{where}: alternative solution {name} scored {traj.reward:.3f} ({failed})")
            swept, _ = _run(env_id, _ReadingOracle(), seed, task=task)
            if swept.reward != 1.0:
                failed = [c.get("description") for c in swept.info.get("checklist", []) if not c["passed"]]
                report.problems.append(f"{where}: the oracle scored {swept.reward:.3f} once it also read around: "
                                       f"{failed}")
            if task.solvable:
                extra = _unrelated_write(env_id, seed, oracle)
                if extra is not None:
                    report.collateral.append(extra)
            report.answers.append((task.solvable, panel_answers(env_id, seed, task)))
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
        order = [e["trigger"] for e in oracle.info.get("trigger_log", [])]
        for name, traj in (("nominal plan", nominal), ("nominal plan without its reads", blind)):
            if traj.reward >= 1.0:
                report.problems.append(f"{where}: the {name} is not disrupted by the triggers")
            fired = {e["trigger"] for e in traj.info.get("trigger_log", [])}
            # A trigger the stale plan never meets must be a second change: one the recovery meets, firing in the
            # oracle's run after a change the stale plan did meet.
            missing = [t.name for t in task.triggers if t.name not in fired and not (
                t.name in order and any(f in order[:order.index(t.name)] for f in fired))]
            if missing and task.solvable:
                report.problems.append(f"{where}: triggers {missing} never fire in the {name}'s run, nor after its "
                                       "changes in the oracle's")
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
        report.problems += [f"{where}: {p}" for p in _stated_problems(task, shown, oracle)]
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
            profile = report.prefix_scores = prefix_scores(env_id, seed, task)
            if any(b < a for a, b in zip(profile, profile[1:])):
                report.problems.append(f"{where}: stopping part-way along the oracle's plan must never score less "
                                       f"than stopping earlier; prefix scores: {' '.join(f'{p:.2f}' for p in profile)}")
    if len(seeds) > 1:
        for what, found in (("instance", instances), ("oracle tool sequence", sequences),
                            ("entity counts", shapes), ("road graph", topologies)):
            if len(found) < 2 and found != {()}:  # a world without roads has no road graph to vary
                report.problems.append(f"{env_id}: every seed gave the same {what}")
    return report


def prefix_scores(env_id: str, seed: int, task=None) -> list[float]:
    """The score of stopping after each prefix of the oracle's plan (0 calls, 1 call, ... all of them); ``task``:
    the instance ``seed`` builds, if already built."""
    task = task or task_of(env_id, seed)
    return [_run(env_id, PlanAgent(list(task.oracle)[:k]), seed, task=task)[0].reward
            for k in range(len(task.oracle) + 1)]


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
    """Per domain: ids valid, mean score of the oracle, nominal plan, no-op and each probe, the solvability
    panel's balanced accuracy, the share of feasible instances still at 1.0 after an unrelated extra write, and
    the median oracle calls per level."""
    by_domain: dict[str, list[TaskReport]] = {}
    for r in reports:
        by_domain.setdefault(parse_arena_id(r.env_id)[0], []).append(r)
    table = {}
    for domain, rows in sorted(by_domain.items()):
        means = {name: statistics.fmean(v) for name in (*rows[0].scores, *rows[0].probes)
                 if (v := [x for r in rows for x in {**r.scores, **r.probes}.get(name, [])])}
        kept = [x for r in rows for x in r.collateral]
        table[domain] = {"valid": sum(r.ok for r in rows), "ids": len(rows), **means,
                         "solvability": solvability_accuracy([a for r in rows for a in r.answers if a[1]]),
                         "collateral": sum(x >= 1.0 for x in kept) / len(kept) if kept else 0.0,
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
        kept = [x for r in mine for x in r.collateral]
        if kept and sum(x >= 1.0 for x in kept) > COLLATERAL_CEILING * len(kept):
            problems.append(f"{domain}: {sum(x >= 1.0 for x in kept)} of {len(kept)} feasible instances keep 1.0 after "
                            f"an unrelated extra write (at most {COLLATERAL_CEILING:.0%})")
        accuracy = solvability_accuracy([a for r in mine for a in r.answers if a[1]])
        if accuracy > SOLVABILITY_CEILING:
            problems.append(f"{domain}: the user's answers tell impossible instances apart (balanced accuracy "
                            f"{accuracy:.2f} > {SOLVABILITY_CEILING})")
        table = probe_table(mine)
        for name, row in table.items():
            ceiling = EXPLOIT_CEILING if name in _EXPLOITS else REREAD_CEILING
            if row.get("overall", 0.0) > ceiling:
                problems.append(f"{domain}: probe {name} averages {row['overall']:.3f} > {ceiling}")
            levels = [row[lvl] for lvl in ("easy", "medium", "hard") if lvl in row]
            if len(levels) == 3 and levels[2] > levels[0] + 0.05:
                problems.append(f"{domain}: probe {name} scores higher on hard ({levels[2]:.2f}) than easy "
                                f"({levels[0]:.2f})")
    for name, score in weighted_probe_scores(reports).items():
        if name in ADVERSARIES and score > ADVERSARY_CEILING:
            problems.append(f"probe {name} scores {score:.3f} overall with the paper's weights > {ADVERSARY_CEILING}")
    return reports, problems


def weighted_probe_scores(reports: Iterable[TaskReport]) -> dict[str, float]:
    """Each probe's mean score over ``reports``, its levels weighted as the paper's task counts are."""
    from sttgym.evaluation.summary import PAPER_WEIGHTS

    out = {}
    for name, row in probe_table(reports).items():
        levels = {lvl: row[lvl] for lvl in PAPER_WEIGHTS if lvl in row}
        total = sum(PAPER_WEIGHTS[lvl] for lvl in levels)
        out[name] = sum(PAPER_WEIGHTS[lvl] * v for lvl, v in levels.items()) / total if total else 0.0
    return out
