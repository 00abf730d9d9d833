"""Checks for stories with a fact only the user knows (docs/writing-a-domain.md, "Facts only the user knows").

A domain's test names the env, the phrase of its query that asks to be consulted, the question's milestone and
the plans that take each other workable alternative without asking (most are :func:`unasked` with the other
alternative's ids swapped in); :func:`assert_withheld_story` then checks that

- the oracle scores 1.0 and learns the fact only from the user's reply to its question;
- each other alternative, taken without asking, is workable yet scores at most 0.75, failing the question's
  milestone and a goal milestone;
- the user's own alternative, taken without asking (by luck), fails the question's milestone alone.

:func:`assert_unpredictable` checks that no cue the tools show picks the user's alternative over seeds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable, Iterable

import gymnasium as gym

from sttgym.agents import OracleAgent, PlanAgent
from sttgym.checklist import evaluate
from sttgym.rollout import rollout
from sttgym.task import Call
from sttgym.user import USER_TOOL, RuleUser, words


def question(task) -> Call:
    """The oracle's question: its chat naming a keyword of the withheld fact."""
    (fact,) = task.profile.withheld
    return next(c for c in task.oracle if c.name == USER_TOOL and fact.hits(words(c.arguments["message"])))


def assert_told_only_when_asked(env: gym.Env, seed: int, consult: str) -> None:
    """The query carries ``consult`` (the user's wish to be asked) but not the fact; the oracle scores 1.0 and the
    fact shows in nothing but the user's reply to its question (not in the initial state or another tool result).
    Leaves ``env`` after the oracle's episode."""
    traj = rollout(env, OracleAgent(), seed=seed)
    task = env.unwrapped.task
    assert traj.reward == 1.0, (env.spec.id, seed, traj.info["checklist"])
    (fact,) = task.profile.withheld
    assert consult in task.query and fact.text not in task.query, task.query
    assert fact.text not in json.dumps(task.initial_state)
    shown = [s["action"] for s in traj.steps if fact.text in str(s["observation"])]
    assert shown == [{"name": USER_TOOL, "arguments": question(task).arguments}], (env.spec.id, seed, shown)


def unasked(task, swap: dict[str, str]) -> list[Call]:
    """The oracle's calls without its question, every id in ``swap`` (at any depth of the arguments) replaced by
    its value: another alternative's ids, or none for the user's own alternative taken by luck."""
    def swapped(value):
        if isinstance(value, str):
            return swap.get(value, value)
        if isinstance(value, list):
            return [swapped(v) for v in value]
        if isinstance(value, dict):
            return {k: swapped(v) for k, v in value.items()}
        return value

    asked = question(task)
    return [c.model_copy(update={"arguments": swapped(c.arguments)}) for c in task.oracle if c is not asked]


@dataclass
class Outcome:
    """A plan's episode: its score, each check's outcome, whether the static checklist (the goal without
    dynamics) holds after it, and whether each of its writes succeeded."""

    score: float
    checks: dict[str, bool]
    static: bool
    writes: list[bool]

    @property
    def failed(self) -> set[str]:
        return {name for name, passed in self.checks.items() if not passed}


def play(env: gym.Env, seed: int, plan: list[Call]) -> Outcome:
    """``plan`` played from ``seed``, then "Task Completed"."""
    traj = rollout(env, PlanAgent(plan), seed=seed)
    arena = env.unwrapped
    writes = [json.loads(s["observation"])["success"] for s in traj.steps
              if s["action"].get("name") in arena.tools and arena.tools[s["action"]["name"]].mutates]
    static, _ = evaluate(arena.task.static_checklist, arena.world, arena.log)
    return Outcome(traj.reward, {c["name"]: c["passed"] for c in traj.info["checklist"]}, static == 1.0, writes)


def assert_asking_is_needed(env: gym.Env, seed: int, asked: str, others: list[list[Call]]) -> list[Outcome]:
    """``others``: plans taking each other alternative without asking. The user's own alternative taken without
    asking meets the static goal and fails ``asked`` (the question's milestone) alone. Each other one is workable
    (the static goal holds, or its writes succeed as the user's own alternative's do where the static goal names
    the user's pick), scores at most 0.75 and fails ``asked`` and a goal milestone. Returns the others' outcomes,
    for a domain's further checks."""
    assert others, (env.spec.id, seed, "the change leaves no other alternative")
    env.reset(seed=seed)
    lucky = play(env, seed, unasked(env.unwrapped.task, {}))
    assert lucky.static and lucky.score < 1.0 and lucky.failed == {asked}, (env.spec.id, seed, lucky.checks)
    outcomes = [play(env, seed, plan) for plan in others]
    for plan, run in zip(others, outcomes):
        assert run.static or run.writes == lucky.writes, (env.spec.id, seed, plan, "the alternative is not workable")
        assert run.score <= 0.75 and asked in run.failed and len(run.failed) > 1, (env.spec.id, seed, run.checks)
    return outcomes


def assert_user_points_to_the_question(task, offer: str) -> None:
    """Offered an alternative in words that do not name the fact, the user keeps it back but names a word to ask
    about; asked with that word, they tell it."""
    user, (fact,) = RuleUser(task.profile), task.profile.withheld
    hint = user.reply(offer)
    named = sorted(words(hint) & {k.lower() for k in fact.keywords})
    assert fact.text not in hint and named, hint
    assert user.reply(f"Before I book it, what is the {named[0]}?") == fact.text


def assert_withheld_story(env_id: str, consult: str, asked: str,
                          others: Callable[[gym.Env, int], list[list[Call]]], seeds: Iterable[int] = range(3),
                          offer: str | None = None) -> list[Outcome]:
    """Every check above on ``env_id`` over ``seeds``. ``others(env, seed)``, called after the oracle's episode:
    the plans taking each other alternative without asking; ``offer``: an alternative offered in words that do not
    name the fact, where the domain's user points to the question. Returns every other alternative's outcome."""
    env, outcomes = gym.make(env_id), []
    for seed in seeds:
        assert_told_only_when_asked(env, seed, consult)
        if offer is not None:
            assert_user_points_to_the_question(env.unwrapped.task, offer)
        outcomes += assert_asking_is_needed(env, seed, asked, others(env, seed))
    return outcomes


def assert_unpredictable(env_id: str, cues: Callable[..., dict[str, bool]], seeds: Iterable[int] = range(16)) -> None:
    """Every cue (a guess from what the tools show: listing order, distance, likeness to the planned choice;
    ``cues(env, seed)``, after the reset, says whether each guess is the user's alternative) is right on some seeds
    and wrong on others."""
    env, seen = gym.make(env_id), {}
    for seed in seeds:
        env.reset(seed=seed)
        for cue, right in cues(env, seed).items():
            seen.setdefault(cue, set()).add(right)
    assert seen and all(v == {True, False} for v in seen.values()), (env_id, seen)


def assert_answers_alike(domain: str, withholding: Iterable[str], seeds: Iterable[int] = range(3)) -> None:
    """validate's attacker on the user's answers to its panel of questions: the hard constraints answer a proposed
    change at every level, and ``withholding`` (ids without the domain, ``"S1-medium"``) are exactly the ids whose
    user holds a fact back; no single word of the answers tells impossible instances apart."""
    import sttgym
    from sttgym.manifests import task_of
    from sttgym.validation import panel_answers, solvability_accuracy

    withholding = set(withholding)
    answers = []
    for env_id in sttgym.arena_ids(domain):
        for seed in seeds:
            task = task_of(env_id, seed)
            assert task.profile.insist and bool(task.profile.withheld) == (env_id.split("-", 1)[1] in withholding)
            answers.append((task.solvable, panel_answers(env_id, seed)))
    assert solvability_accuracy(answers) <= 0.55
