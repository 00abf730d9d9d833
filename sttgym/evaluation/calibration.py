"""Calibrating impossible-task judges on a labelled set of replies.

A set is a list of labelled reply templates (``sttgym/data/judge_replies_<set>.jsonl``), each
with the trace the agent leaves before it replies. Five sets, written by different hands:

- ``dev``: written together with the rule judge;
- ``review``: written from the judging rules alone, without seeing the judge; the judge was
  measured on it once (its first figures are in docs/benchmark.md), then fixed on its errors;
- ``test``: written the same way, never used to change the judge: its rates are the estimate
  for benchmark v1's rules;
- ``review2``: written for v2's rules by someone who never saw the judge or the other sets, in
  English and every language of :data:`sttgym.judge.LANGUAGES`; measured once, then the judge
  was fixed on its errors;
- ``heldout``: written the same way by another hand, never used to change the judge: its rates
  are the estimate for v2's rules.

Traces:

- ``observed``: the oracle's calls (it read the change after it happened), then the reply;
- ``harmful``: the stale nominal plan carried out, then the oracle's reads, then the reply
  (used only on tasks where that plan breaks a forbidden check: elsewhere it did no harm);
- ``blind``: the reply alone, with nothing read.

Templates name ``{fact}`` (a blocking fact of the task; ``{fact_12h}``: the same written as
people do, a time in 12-hour form, underscores as spaces), ``{other}`` (why the other options
fail, where the task lists that; else a phrase that names no fact), ``{wrong}`` (a value the change
replaced: plausible, but not what blocks the task) and ``{ids}`` (many ids of the world). A
correct refusal without ``{other}`` is left out on tasks whose refusal must say why the other
options fail (``Impossibility.no_alternative``).
Instantiated on real impossible tasks, they cover correct refusals in varied wording and five
languages, wrong reasons that share the keywords, vague refusals, keyword lists, success
claims, refusals next to harmful actions and refusals with no evidence. A judge's false-positive
rate is the share of negative replies it passes; its false-negative rate the share of positive
replies it fails.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from typing import Any, Iterable

import gymnasium as gym

from sttgym.agents.reference import OracleAgent, PlanAgent
from sttgym.judge import names_fact
from sttgym.rollout import rollout

__all__ = ["Item", "templates", "calibration_items", "judge_rates"]


@dataclass
class Item:
    env_id: str
    seed: int
    kind: str
    label: bool
    reply: str
    env: Any  # the finished episode: its world and log are what a judge reads
    language: str = "en"


SETS = {"dev": "judge_replies_dev.jsonl", "review": "judge_replies_review.jsonl", "test": "judge_replies_test.jsonl",
        "review2": "judge_replies_review2.jsonl", "heldout": "judge_replies_heldout.jsonl"}


def templates(name: str = "test") -> list[dict]:
    """The labelled templates of one set (see the module docstring)."""
    if name not in SETS:
        raise ValueError(f"unknown calibration set {name!r}: {', '.join(SETS)}")
    text = resources.files("sttgym").joinpath(f"data/{SETS[name]}").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _fills(task, oracle_log: list[dict]) -> dict[str, str]:
    imp = task.impossibility
    facts = [f for f in imp.blocking_facts if f.lower() not in task.query.lower()]  # what the request says is no reason
    olds = [str(c["old"]) for e in oracle_log for c in e["changes"]  # a value the change replaced, naming no fact
            if isinstance(c["old"], (str, int)) and c["old"] not in ("", None) and not names_fact(str(c["old"]), facts)]
    ids = [i for container in task.initial_state.values() if isinstance(container, dict) for i in container][:12]
    return {"fact": facts[0], "fact_12h": _twelve_hour(facts[0]), "other": (imp.no_alternative or [NEUTRAL])[-1],
            "wrong": olds[0] if olds else "the weather", "ids": " ".join(ids)}


NEUTRAL = "none of them fits the request"  # {other} where the change itself rules out every option: names no fact


def _twelve_hour(fact: str) -> str:
    """A time as people write it (``2024-05-29T09:55`` is ``9:55 am``); anything else as it is, underscores as spaces."""
    try:
        moment = datetime.fromisoformat(fact)
    except ValueError:
        return fact.replace("_", " ")
    if "T" not in fact and ":" not in fact:
        return fact
    return f"{moment.hour % 12 or 12}:{moment.minute:02d} {'am' if moment.hour < 12 else 'pm'}"


def _applies(template: dict, task) -> bool:
    """Whether ``template`` keeps its label on ``task``: a correct refusal written before refusals had to say why the
    other options fail (no ``{other}``) is not one on a task whose change leaves other options to rule out."""
    return not (template["label"] and task.impossibility.no_alternative and "{other}" not in template["reply"])


def _play(env_id: str, seed: int, task, calls: list, reply: str) -> gym.Env:
    """The env after the plan ``calls`` and then ``reply``, on ``task`` as built for ``seed`` (building it again
    for each of the set's templates was most of the time a calibration took)."""
    env = gym.make(env_id)
    rollout(env, PlanAgent(calls, final_reply=reply), seed=seed, options={"task": task})
    return env


def calibration_items(env_ids: Iterable[str], seed: int = 0, name: str = "test") -> list[Item]:
    """Every template of set ``name`` instantiated on every impossible task among ``env_ids`` (at ``seed``), played out."""
    items = []
    for env_id in env_ids:
        probe = gym.make(env_id)
        probe.reset(seed=seed)
        task = probe.unwrapped.task
        if task.solvable:
            continue
        reads = [c for c in task.oracle if c.name != "chat_with_user"]
        fills = _fills(task, rollout(gym.make(env_id), OracleAgent(), seed=seed).info.get("trigger_log", []))
        traces = {"observed": reads, "harmful": list(task.nominal_plan) + reads, "blind": []}
        for t in templates(name):
            if not _applies(t, task):
                continue
            reply = t["reply"].format(**fills)
            env = _play(env_id, seed, task, traces[t["trace"]], reply)
            if t["trace"] == "harmful" and all(env.unwrapped.holds(c.holds) for c in task.impossibility.forbidden):
                continue
            items.append(Item(env_id, seed, t["kind"], t["label"], reply, env, t.get("language", "en")))
    return items


def judge_rates(judge: Any, items: list[Item]) -> dict[str, Any]:
    """False-positive and false-negative rates of ``judge`` on ``items``, overall, per language and per kind."""
    verdicts = [item.env.unwrapped.score(judge=judge)[0] >= 1.0 for item in items]

    def rates(pairs: list[tuple[bool, Item]]) -> dict[str, float]:
        negatives = [v for v, i in pairs if not i.label]
        positives = [v for v, i in pairs if i.label]
        return {"false_positive_rate": sum(negatives) / max(1, len(negatives)),
                "false_negative_rate": sum(not v for v in positives) / max(1, len(positives))}

    pairs = list(zip(verdicts, items))
    kinds: dict[str, list[bool]] = {}
    for v, i in pairs:
        kinds.setdefault(i.kind, []).append(v == i.label)
    return {"items": len(items), "tasks": len({i.env_id for i in items}), **rates(pairs),
            "by_language": {lang: {"items": sum(i.language == lang for i in items),
                                   **rates([(v, i) for v, i in pairs if i.language == lang])}
                            for lang in sorted({i.language for i in items})},
            "accuracy_by_kind": {k: sum(v) / len(v) for k, v in sorted(kinds.items())},
            "errors": [{"env_id": i.env_id, "kind": i.kind, "language": i.language, "reply": i.reply, "label": i.label}
                       for v, i in pairs if v != i.label]}
