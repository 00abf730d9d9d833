"""Reward shaping: terms that make up an episode's reward, composed like modules.

A :class:`RewardTerm` looks at every step (the env, the action, the env's own reward and
info) and returns its share of the reward for that step. Terms add and scale like
``nn.Module`` pieces of a loss::

    reward = Checklist() + ImpossibleJudge() + 0.5 * Progress() + CallCost(0.01)
    env = ShapedReward(gym.make("STTArena/ColdChain-T2-medium"), reward)

or come from a config (:func:`build_reward`)::

    [{"term": "checklist"}, {"term": "impossible_judge"}, {"term": "call_cost", "per_call": 0.01}]

The default, ``Checklist() + ImpossibleJudge()``, is exactly the env's own reward: the
checklist fraction at the end of a feasible task, the judge's verdict at the end of an
impossible one. The other terms are shaping for experiments: dense per-check progress
(potential-based, so it adds up to the final fraction minus the starting one), a cost per
tool call, and a penalty for actions that are neither a valid call nor a reply.
"""

from __future__ import annotations

from typing import Any, Iterator

import gymnasium as gym

from sttgym.actions import ToolCall, check_call, parse_action
from sttgym.core import ToolEnv, tool_env
from sttgym.env import ArenaEnv

__all__ = ["RewardTerm", "Sum", "Scaled", "Checklist", "ImpossibleJudge", "Progress", "CallCost", "FormatValidity",
           "ShapedReward", "TERMS", "build_reward", "default_reward", "well_formed"]


class RewardTerm:
    """One part of the reward.

    Subclasses implement :meth:`step` (and :meth:`reset` when they keep episode state).
    Calling a term records the value in :attr:`last`, which :class:`ShapedReward` reports
    per term in ``info["reward_terms"]``.
    """

    name = "term"
    last = 0.0

    def reset(self, env: gym.Env, info: dict) -> None:
        """Start an episode; ``info`` is what ``env.reset`` returned."""

    def step(self, env: gym.Env, action: Any, reward: float, info: dict, done: bool) -> float:
        """This term's reward for one step; ``reward`` is the env's own, ``done`` that the episode ended."""
        raise NotImplementedError

    def __call__(self, env: gym.Env, action: Any, reward: float, info: dict, done: bool) -> float:
        self.last = float(self.step(env, action, reward, info, done))
        return self.last

    def named(self, prefix: str = "") -> Iterator[tuple[str, RewardTerm]]:
        """The leaf terms, each with a unique dotted name."""
        yield prefix or self.name, self

    def __add__(self, other: RewardTerm) -> Sum:
        return Sum([*_parts(self), *_parts(other)])

    def __mul__(self, weight: float) -> Scaled:
        return Scaled(self, weight)

    __rmul__ = __mul__


def _parts(term: RewardTerm) -> list[RewardTerm]:
    return list(term.terms) if isinstance(term, Sum) else [term]


class Sum(RewardTerm):
    """The sum of several terms."""

    name = "sum"

    def __init__(self, terms: list[RewardTerm]):
        self.terms = list(terms)

    def reset(self, env: gym.Env, info: dict) -> None:
        for term in self.terms:
            term.reset(env, info)

    def step(self, env: gym.Env, action: Any, reward: float, info: dict, done: bool) -> float:
        return sum(term(env, action, reward, info, done) for term in self.terms)

    def named(self, prefix: str = "") -> Iterator[tuple[str, RewardTerm]]:
        seen: dict[str, int] = {}
        for term in self.terms:
            base = f"{prefix}.{term.name}" if prefix else term.name
            seen[base] = seen.get(base, 0) + 1
            yield from term.named(base if seen[base] == 1 else f"{base}{seen[base]}")

    def __repr__(self) -> str:
        return " + ".join(map(repr, self.terms))


class Scaled(RewardTerm):
    """A term times a constant weight."""

    def __init__(self, term: RewardTerm, weight: float):
        self.term, self.weight = term, float(weight)
        self.name = term.name

    def reset(self, env: gym.Env, info: dict) -> None:
        self.term.reset(env, info)

    def step(self, env: gym.Env, action: Any, reward: float, info: dict, done: bool) -> float:
        return self.weight * self.term(env, action, reward, info, done)

    def __repr__(self) -> str:
        return f"{self.weight:g} * {self.term!r}"


def _arena(env: gym.Env) -> ArenaEnv | None:
    return env.unwrapped if isinstance(env.unwrapped, ArenaEnv) else None


def _solvable(env: gym.Env) -> bool:
    """Whether the episode is scored by a checklist (every non-arena env counts as feasible)."""
    arena = _arena(env)
    return arena is None or arena.task.solvable or not arena.dynamics


class Checklist(RewardTerm):
    """At the end of a feasible task: the fraction of checks that hold (the env's own reward)."""

    name = "checklist"

    def step(self, env: gym.Env, action: Any, reward: float, info: dict, done: bool) -> float:
        return reward if done and _solvable(env) else 0.0

    def __repr__(self) -> str:
        return "Checklist()"


class ImpossibleJudge(RewardTerm):
    """At the end of an impossible task: 1.0 when the judge passes the episode, else 0.0.

    Args:
        judge: an object with ``.verdict(impossibility, world, log) -> (score, breakdown)``
            (an LLM judge, say); None keeps the env's own judge.
    """

    name = "impossible_judge"

    def __init__(self, judge: Any = None):
        self.judge = judge

    def step(self, env: gym.Env, action: Any, reward: float, info: dict, done: bool) -> float:
        if not done or _solvable(env):
            return 0.0
        if self.judge is None:
            return reward
        return float(_arena(env).score(judge=self.judge)[0])

    def __repr__(self) -> str:
        return f"ImpossibleJudge({'' if self.judge is None else type(self.judge).__name__})"


class Progress(RewardTerm):
    """Dense progress on feasible arena tasks: the change in the checklist score (milestones, gated).

    Potential-based: over an episode it sums to the final fraction minus the fraction that
    held at reset, so it speeds learning without changing which behaviour is best.
    """

    name = "progress"

    def _fraction(self, env: gym.Env) -> float:
        return _arena(env).score()[0]  # active only where the score is the checklist's

    def reset(self, env: gym.Env, info: dict) -> None:
        self.active = _arena(env) is not None and _solvable(env)
        self.potential = self._fraction(env) if self.active else 0.0

    def step(self, env: gym.Env, action: Any, reward: float, info: dict, done: bool) -> float:
        if not self.active:
            return 0.0
        now = self._fraction(env)
        delta, self.potential = now - self.potential, now
        return delta

    def __repr__(self) -> str:
        return "Progress()"


class CallCost(RewardTerm):
    """A cost for every tool call, valid or not: ``-per_call``."""

    name = "call_cost"

    def __init__(self, per_call: float = 0.01):
        self.per_call = float(per_call)

    def step(self, env: gym.Env, action: Any, reward: float, info: dict, done: bool) -> float:
        return -self.per_call if isinstance(action, dict) and "name" in action else 0.0

    def __repr__(self) -> str:
        return f"CallCost({self.per_call:g})"


class FormatValidity(RewardTerm):
    """``-penalty`` for an action that is neither a reply nor a call the env could run as written.

    A call to an unknown tool, with arguments that do not fit its schema, or that is not
    even an action counts; a well-formed call the world then refuses does not.
    """

    name = "format"

    def __init__(self, penalty: float = 0.1):
        self.penalty = float(penalty)

    def step(self, env: gym.Env, action: Any, reward: float, info: dict, done: bool) -> float:
        return 0.0 if well_formed(env, action) else -self.penalty

    def __repr__(self) -> str:
        return f"FormatValidity({self.penalty:g})"


def well_formed(env: gym.Env, action: Any) -> bool:
    """Whether ``action`` is a reply, or a call ``env`` could run as written (known tool, arguments fit)."""
    parsed = parse_action(action)
    if isinstance(parsed, dict):
        return False
    if not isinstance(parsed, ToolCall) or not isinstance(env.unwrapped, ToolEnv):
        return True
    return check_call(tool_env(env).tools, parsed) is None


class ShapedReward(gym.Wrapper):
    """Replaces an env's reward with ``term``'s.

    The env's own reward stays in ``info["env_reward"]`` and each leaf term's value for the
    step in ``info["reward_terms"]``.
    """

    def __init__(self, env: gym.Env, term: RewardTerm | None = None):
        super().__init__(env)
        self.term = term if term is not None else default_reward()

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        observation, info = self.env.reset(**kwargs)
        self.term.reset(self.env, info)
        return observation, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        shaped = self.term(self.env, action, reward, info, terminated or truncated)
        info = {**info, "env_reward": reward, "reward_terms": {n: t.last for n, t in self.term.named()}}
        return observation, shaped, terminated, truncated, info


TERMS: dict[str, type[RewardTerm]] = {cls.name: cls for cls in
                                      (Checklist, ImpossibleJudge, Progress, CallCost, FormatValidity)}


def default_reward() -> RewardTerm:
    """The benchmark's reward: checklist fraction on feasible tasks, the judge on impossible ones."""
    return Checklist() + ImpossibleJudge()


def build_reward(spec: list[dict] | None) -> RewardTerm:
    """A reward from a config: a list of ``{"term": name, "weight": w, **arguments}``; None: the default.

    Names are the keys of :data:`TERMS`; unknown names and arguments raise ``ValueError``.
    """
    if not spec:
        return default_reward()
    terms: list[RewardTerm] = []
    for entry in spec:
        entry = dict(entry)
        name, weight = entry.pop("term", None), float(entry.pop("weight", 1.0))
        if name not in TERMS:
            raise ValueError(f"unknown reward term {name!r}; known: {', '.join(TERMS)}")
        try:
            term = TERMS[name](**entry)
        except TypeError as exc:
            raise ValueError(f"reward term {name!r}: {exc}") from None
        terms.append(term if weight == 1.0 else weight * term)
    return terms[0] if len(terms) == 1 else Sum(terms)
