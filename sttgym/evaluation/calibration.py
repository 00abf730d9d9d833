"""Calibrating impossible-task judges on a labelled set of replies.

A set is a list of labelled reply templates (``sttgym/data/judge_replies_<set>.jsonl``), each
with the trace the agent leaves before it replies. Three sets, written by different hands:

- ``dev``: written together with the rule judge;
- ``review``: written from the judging rules alone, without seeing the judge; the judge was
  measured on it once (its first figures are in docs/benchmark.md), then fixed on its errors;
- ``test``: written the same way, never used to change the judge: its rates are the estimate.

Traces:

- ``observed``: the oracle's calls (it read the change after it happened), then the reply;
- ``harmful``: the stale nominal plan carried out, then the oracle's reads, then the reply
  (used only on tasks where that plan breaks a forbidden check: elsewhere it did no harm);
- ``blind``: the reply alone, with nothing read.

Templates name ``{fact}`` (a blocking fact of the task), ``{wrong}`` (a value the change
replaced: plausible, but not what blocks the task) and ``{ids}`` (many ids of the world).
Instantiated on real impossible tasks, they cover correct refusals in varied wording and five
languages, wrong reasons that share the keywords, vague refusals, keyword lists, success
claims, refusals next to harmful actions and refusals with no evidence. A judge's false-positive
rate is the share of negative replies it passes; its false-negative rate the share of positive
replies it fails.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, Iterable

import gymnasium as gym

from sttgym.agents.reference import OracleAgent, PlanAgent
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


SETS = {"dev": "judge_replies_dev.jsonl", "review": "judge_replies_review.jsonl", "test": "judge_replies_test.jsonl"}


def templates(name: str = "test") -> list[dict]:
    """The labelled templates of one set (see the module docstring)."""
    if name not in SETS:
        raise ValueError(f"unknown calibration set {name!r}: {', '.join(SETS)}")
    text = resources.files("sttgym").joinpath(f"data/{SETS[name]}").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _fills(task, oracle_log: list[dict]) -> dict[str, str]:
    facts = task.impossibility.blocking_facts
    olds = [str(c["old"]) for e in oracle_log for c in e["changes"]
            if isinstance(c["old"], (str, int)) and str(c["old"]) not in facts and c["old"] not in ("", None)]
    ids = [i for container in task.initial_state.values() if isinstance(container, dict) for i in container][:12]
    return {"fact": facts[0], "wrong": olds[0] if olds else "the weather", "ids": " ".join(ids)}


def _play(env_id: str, seed: int, calls: list, reply: str) -> gym.Env:
    """The env after the plan ``calls`` and then ``reply``."""
    env = gym.make(env_id)
    rollout(env, PlanAgent(calls, final_reply=reply), seed=seed)
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
            reply = t["reply"].format(**fills)
            env = _play(env_id, seed, traces[t["trace"]], reply)
            if t["trace"] == "harmful" and all(env.unwrapped.holds(c.holds) for c in task.impossibility.forbidden):
                continue
            items.append(Item(env_id, seed, t["kind"], t["label"], reply, env))
    return items


def judge_rates(judge: Any, items: list[Item]) -> dict[str, Any]:
    """False-positive and false-negative rates of ``judge`` on ``items``, overall and per kind."""
    verdicts = []
    for item in items:
        verdicts.append(item.env.unwrapped.score(judge=judge)[0] >= 1.0)
    negatives = [v for v, i in zip(verdicts, items) if not i.label]
    positives = [v for v, i in zip(verdicts, items) if i.label]
    kinds: dict[str, list[bool]] = {}
    for v, i in zip(verdicts, items):
        kinds.setdefault(i.kind, []).append(v == i.label)
    return {"items": len(items), "tasks": len({i.env_id for i in items}),
            "false_positive_rate": sum(negatives) / max(1, len(negatives)),
            "false_negative_rate": sum(not v for v in positives) / max(1, len(positives)),
            "accuracy_by_kind": {k: sum(v) / len(v) for k, v in sorted(kinds.items())},
            "errors": [{"env_id": i.env_id, "kind": i.kind, "reply": i.reply, "label": i.label}
                       for v, i in zip(verdicts, items) if v != i.label]}
