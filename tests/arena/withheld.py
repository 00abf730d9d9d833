"""Checks for stories with a fact only the user knows: the oracle asks before it commits, and an agent that
recovers the same way without asking (taking any alternative, the right one included) does not pass."""

from __future__ import annotations

import json
from typing import Callable

import gymnasium as gym

from sttgym.agents import OracleAgent, PlanAgent
from sttgym.checklist import evaluate
from sttgym.rollout import rollout
from sttgym.task import Call
from sttgym.user import USER_TOOL, RuleUser, words


def question(task) -> Call:
    """The oracle's question: its chat that names a withheld fact's keyword."""
    keys = {k.lower() for answer in task.profile.withheld for k in answer.keywords}
    return next(c for c in task.oracle if c.name == USER_TOOL and keys & words(c.arguments["message"]))


def assert_oracle_asks_first(env_id: str, seed: int) -> gym.Env:
    """The oracle scores 1.0, and the withheld fact shows only in the user's reply to its question: nowhere in the
    query, the initial state or any tool result. Returns the env, after the episode."""
    env = gym.make(env_id)
    traj = rollout(env, OracleAgent(), seed=seed)
    assert traj.reward == 1.0, (env_id, seed, traj.info.get("checklist"))
    task = env.unwrapped.task
    (fact,) = [a.text for a in task.profile.withheld]
    assert fact not in task.query and fact not in json.dumps(task.initial_state)
    shown = [s["action"] for s in traj.steps if fact in str(s["observation"])]
    assert shown == [{"name": USER_TOOL, "arguments": question(task).arguments}], (env_id, seed, shown)
    return env


def without_asking(env_id: str, seed: int, swap: dict[str, str]) -> dict:
    """The oracle's recovery without its question, every argument named in ``swap`` replaced (another
    alternative's ids; empty: the user's own alternative, taken by luck). The final info."""
    env = gym.make(env_id)
    env.reset(seed=seed)
    task = env.unwrapped.task
    asked = question(task)
    plan = [c.model_copy(update={"arguments": {k: swap.get(v, v) if isinstance(v, str) else v
                                               for k, v in c.arguments.items()}})
            for c in task.oracle if c is not asked]
    return rollout(env, PlanAgent(plan), seed=seed).info


def passed(info: dict, name: str) -> bool:
    return next(c["passed"] for c in info["checklist"] if c["name"] == name)


def assert_guessing_fails(env_id: str, seed: int, others: list[dict[str, str]]) -> None:
    """Each other alternative taken without asking scores at most 0.75; the user's own, taken without asking, meets
    every check but the question's, so no guess passes."""
    assert others, (env_id, seed)
    for swap in others:
        info = without_asking(env_id, seed, swap)
        assert info["score"] <= 0.75 and not passed(info, "asked_user"), (env_id, seed, swap, info["checklist"])
    lucky = without_asking(env_id, seed, {})
    missed = [c["name"] for c in lucky["checklist"] if not c["passed"]]
    assert lucky["score"] < 1.0 and missed == ["asked_user"], (env_id, seed, missed)


def assert_unpredictable(env_id: str, cues: Callable[..., dict[str, bool]], seeds: range = range(16)) -> None:
    """Every cue (a guess from what the tools show: listing order, distance, likeness to the planned choice;
    ``cues(task)`` says whether each guess is the user's alternative) is right on some seeds and wrong on others."""
    seen: dict[str, set[bool]] = {}
    for seed in seeds:
        env = gym.make(env_id)
        env.reset(seed=seed)
        for cue, right in cues(env.unwrapped.task).items():
            seen.setdefault(cue, set()).add(right)
    assert seen and all(v == {True, False} for v in seen.values()), (env_id, seen)


def _asks(call: Call, keywords: list[str]) -> bool:
    return call.name == USER_TOOL and bool({k.lower() for k in keywords} & words(call.arguments.get("message", "")))


def oracle_learns_it_by_asking(env, seed: int) -> None:
    """The oracle scores 1.0; the withheld text shows nowhere (request, initial world, any tool result) but in the
    user's answer to a question naming one of its keywords."""
    traj = rollout(env, OracleAgent(), seed=seed)
    assert traj.reward == 1.0, (seed, traj.info["checklist"])
    task = env.unwrapped.task
    (answer,) = task.profile.withheld
    assert answer.text not in task.query and answer.text not in json.dumps(task.initial_state)
    told = [s for s in traj.steps if answer.text in str(s["observation"])]
    assert told, "the oracle never learnt the withheld fact"
    for step in told:
        action = Call(name=step["action"]["name"], arguments=step["action"]["arguments"])
        assert _asks(action, answer.keywords), action


def the_user_points_to_the_question(task, offer: str) -> None:
    """Offered an alternative in words that do not name the fact, the user keeps it back but names a word to ask
    about; asked with that word, they tell it."""
    user, (answer,) = RuleUser(task.profile), task.profile.withheld
    hint = user.reply(offer)
    named = sorted(words(hint) & {k.lower() for k in answer.keywords})
    assert answer.text not in hint and named, hint
    assert user.reply(f"Before I book it, what is the {named[0]}?") == answer.text


def skipping_the_question(env, seed: int, swap: dict[str, str]) -> tuple[float, dict[str, bool], bool]:
    """The oracle's calls without its question, every id in ``swap`` replaced by its value (another alternative):
    the score, each check's outcome, and whether what it took serves the request as the tools show it (the static
    checklist holds: the alternative is genuinely workable)."""
    env.reset(seed=seed)
    task = env.unwrapped.task
    keywords = task.profile.withheld[0].keywords

    def swapped(value):
        if isinstance(value, str):
            return swap.get(value, value)
        if isinstance(value, list):
            return [swapped(v) for v in value]
        if isinstance(value, dict):
            return {k: swapped(v) for k, v in value.items()}
        return value

    plan = [Call(name=c.name, arguments=swapped(c.arguments), save_as=c.save_as) for c in task.oracle
            if not _asks(c, keywords)]
    traj = rollout(env, PlanAgent(plan), seed=seed)
    base = env.unwrapped
    static, _ = evaluate(task.static_checklist, base.world, base.log)
    return traj.reward, {c["name"]: c["passed"] for c in traj.info["checklist"]}, static == 1.0


def assert_asking_is_needed(env, seed: int, right: list[str], others: list[list[str]], asked: str) -> None:
    """``right``: the ids of the user's alternative as the oracle commits them; ``others``: each other alternative's
    ids in the same order. Each other one is workable, and taking it without asking scores at most 0.75; taking the
    right one by luck without asking fails the question's milestone ``asked`` and nothing else."""
    for other in others:
        score, checks, workable = skipping_the_question(env, seed, dict(zip(right, other)))
        assert workable, (seed, other, "the alternative does not serve the request")
        assert score <= 0.75 and checks[asked] is False, (seed, other, score, checks)
    score, checks, workable = skipping_the_question(env, seed, {})
    assert workable and 0 < score < 1.0, (seed, checks)
    assert [name for name, passed in checks.items() if not passed] == [asked], (seed, checks)


def assert_withheld_story(env_id: str, offer: str, asked: str,
                          alternatives: Callable[..., tuple[list[str], list[list[str]]]], seeds=range(3)) -> None:
    """Every check above on ``env_id`` over ``seeds``. ``offer``: an alternative offered without naming the fact;
    ``asked``: the question's milestone; ``alternatives(env, seed)``, after the oracle's run: the ids of the user's
    alternative and of the one or two others."""
    env = gym.make(env_id)
    for seed in seeds:
        oracle_learns_it_by_asking(env, seed)
        the_user_points_to_the_question(env.unwrapped.task, offer)
        right, others = alternatives(env, seed)
        assert 1 <= len(others) <= 2, (seed, others)
        assert_asking_is_needed(env, seed, right, others, asked)
