"""The STT-Arena environment: a domain world, a task with triggers, a checklist reward."""

from __future__ import annotations

import zlib
from typing import Any, Callable

import numpy as np

from sttgym.actions import Reply, ToolCall, brief, parse_action
from sttgym.authoring import Author, tool_specs
from sttgym.checklist import EpisodeLog, evaluate
from sttgym.clock import Clock
from sttgym.core import ToolEnv
from sttgym.footprint import RULE, TRUTH, collateral_check, footprint
from sttgym.manifests import is_training_seed
from sttgym.judge import REFUSAL, RuleJudge, truthful_check
from sttgym.registry import DOMAINS
from sttgym.task import Task
from sttgym.tools import TIMING, collect_tools
from sttgym.triggers import Firing
from sttgym.user import RuleUser, UserChannel, UserProfile
from sttgym.world import json_copy, named_problems

__all__ = ["ArenaEnv"]

MAX_TURNS = 50


class ArenaEnv(ToolEnv):
    """One STT-Arena scenario as a gymnasium environment.

    Observations are strings (the user's query at reset, then each tool result or user
    reply); actions are tool calls ``{"name", "arguments"}`` or a final reply
    ``{"content"}``, which ends the episode. The reward is 0 until the end, then the
    fraction of checklist milestones that hold, 0 when a gate fails (impossible tasks: the
    judge's 1 or 0).

    ``reset(seed=s)`` builds the scenario's instance for ``s`` (seeds from the training range
    draw names from the training half of every name pool); ``reset(options={"task": t})``
    replays a stored task instead (a :class:`~sttgym.task.Task`, its JSON dict, or its JSON text, the ``task`` of a
    row ``sttgym export`` writes).

    Args:
        domain: the domain's name (set by the registered id, as are the next two).
        conflict: the conflict type, e.g. ``"T2"``.
        difficulty: the level: easy, medium, hard or impossible.
        dynamics: False removes the triggers and scores against the static checklist.
        max_turns: actions before the episode is truncated (and scored).
        user: ``"rule"`` (default), ``"none"`` (no ``chat_with_user`` tool), or a factory
            ``profile -> object with .reply(message) -> str``.
        judge: ``"rule"`` or an object with ``.verdict(impossibility, world, log)``.
        render_mode: ``"ansi"`` for a readable transcript.

    Seams beyond :class:`~sttgym.core.ToolEnv`'s: ``task`` (the :class:`~sttgym.task.Task`
    being played), ``dynamics``, :meth:`evaluate` (any checklist against the world as it
    stands) and :meth:`holds` (one predicate), and :meth:`score` with a stand-in judge.
    """

    def __init__(self, domain: str, conflict: str, difficulty: str, dynamics: bool = True,
                 max_turns: int = MAX_TURNS, user: str | Callable[[UserProfile], Any] = "rule",
                 judge: str | Any = "rule", render_mode: str | None = None):
        if domain not in DOMAINS:
            raise ValueError(f"unknown domain {domain!r}; known: {', '.join(sorted(DOMAINS))}")
        self.domain = DOMAINS[domain]
        if (conflict, difficulty) not in self.domain.scenarios:
            raise ValueError(f"{domain} has no scenario {conflict}-{difficulty}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"unsupported render_mode {render_mode!r}")
        self.conflict, self.difficulty = conflict, difficulty
        self.scenario = self.domain.scenarios[(conflict, difficulty)]
        self.dynamics, self.max_turns, self.render_mode = dynamics, max_turns, render_mode
        self.user_factory = RuleUser if user == "rule" else (None if user == "none" else user)
        self.judge = RuleJudge() if judge == "rule" else judge
        self.task: Task | None = None
        self.world = None
        self.split = "benchmark"
        # Schemas depend only on the classes, so the spaces exist before the first reset.
        probe = dict(tool_specs(self.domain.world))
        if self.user_factory is None:
            del probe["chat_with_user"]
        self._set_tools(probe, self.domain.world)

    # ------------------------------------------------------------------ episode

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        super().reset(seed=seed)
        stored = (options or {}).get("task")
        if stored is not None:
            task = (stored if isinstance(stored, Task) else Task.model_validate_json(stored) if isinstance(stored, str)
                    else Task.model_validate(stored))
            made_for = (task.domain, task.conflict, task.difficulty)
            if task.domain and made_for != (self.domain.name, self.conflict, self.difficulty):
                raise ValueError(f"this task is an instance of {'-'.join(made_for)}; replay it in "
                                 f"STTArena/{'-'.join(made_for)}, not {self.domain.name}-{self.conflict}-{self.difficulty}")
            # A stored task names predicates and operations; a wrong one would otherwise just never hold.
            problems = named_problems(self.domain.world, *task.named())
            if problems:
                raise ValueError(f"the stored task does not fit {self.domain.world.__name__}: {'; '.join(problems[:5])}")
        else:
            if seed is not None:
                self.split = "train" if is_training_seed(seed) else "benchmark"
            # Each scenario draws its own instance from the seed: ids that share a seed share no base world.
            key = zlib.crc32(f"{self.domain.name}-{self.conflict}-{self.difficulty}".encode())
            rng = np.random.default_rng([int(self.np_random.integers(2**63)), key])
            task = self.scenario(Author(self.domain.world, rng, self.split))
        self.task = task.model_copy(update={"domain": self.domain.name, "conflict": self.conflict,
                                            "difficulty": self.difficulty})
        self.clock = Clock(self.task.start_time)
        self.world = self.domain.world(json_copy(self.task.initial_state), self.clock)
        self.log = EpisodeLog(request=self.task.query)
        self.call_log = self.log.calls  # the checklist's evidence is the core's record of accepted calls
        self.firing = Firing(self.task.triggers if self.dynamics else [], self.log)
        self.tools = collect_tools(self.world)
        if self.user_factory is not None:
            profile = self.task.profile.model_copy(update={"request": self.task.query})
            self.tools.update(collect_tools(UserChannel(self.user_factory(profile), self.log)))
        self.turn, self.done, self.reward = 0, False, 0.0
        self.footprint = None  # what the task's own plans change: worked out when the episode is scored
        self.transcript = [("user", self.task.query)]
        info = {"tools": self.tool_listing(), "task": self.task.summary(), "clock": self.clock.iso(),
                "world": self.briefing()}
        return self.task.query, info

    def briefing(self) -> str:
        """The world description an episode starts with: the domain's, how time runs and how long the episode may
        last (playtesters missed both), then the rules every task is scored by."""
        return (f"{self.world.description} {TIMING} The episode ends after {self.max_turns} actions. {RULE} "
                f"{REFUSAL}")

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict]:
        if self.task is None:
            raise RuntimeError("call reset() before step()")
        if self.done:
            return self.ended()
        self.turn += 1
        parsed = parse_action(action)
        self.events: list[dict] = []
        if isinstance(parsed, Reply):
            self.log.said.append(parsed.content)
            obs, result, terminated = "The conversation has ended.", None, True
            self._transcribe(("assistant", parsed.content))
        else:
            obs, result = self.perform(parsed)
            terminated = False
            if self.render_mode == "ansi":  # only render() reads it; formatting it is a good part of a cheap step
                self._transcribe(("call", f"{parsed.name}({brief(parsed.arguments)})" if isinstance(parsed, ToolCall)
                                  else brief(action)), ("tool", obs))
        truncated = not terminated and self.turn >= self.max_turns
        info: dict[str, Any] = {"result": result, "events": self.events, **self.status()}
        reward = 0.0
        if terminated or truncated:
            reward, end = self.conclude()
            info.update(end)
        return obs, reward, terminated, truncated, info

    def conclude(self) -> tuple[float, dict]:
        self.done = True
        self.reward, breakdown = self.score()
        return self.reward, {"checklist": breakdown, "score": self.reward, "trigger_log": list(self.log.events),
                             "task": self.task.harness()}

    def _transcribe(self, *lines: tuple[str, str]) -> None:
        if self.render_mode == "ansi":
            self.transcript += lines

    def before_call(self, call: ToolCall) -> None:
        self.events += self.firing(self.world, call.name, call.arguments, "before")

    def after_call(self, call: ToolCall) -> None:
        self.events += self.firing(self.world, call.name, call.arguments, "after")

    def status(self) -> dict:
        return {"clock": self.clock.iso(), "turn": self.turn}

    # ------------------------------------------------------------------ arena seams

    def score(self, judge: Any = None) -> tuple[float, list[dict]]:
        """The reward the episode would get if it ended now, and its per-check breakdown; ``judge``
        (an object with ``.verdict``) stands in for the env's own on impossible tasks."""
        task, gates = self.task, [self.collateral()]
        if not self.dynamics or task.solvable:  # a done request reported as refused is not done
            gates.append(truthful_check(self.log, TRUTH))
            return self.evaluate(task.static_checklist if not self.dynamics else task.checklist, gates)
        score, breakdown = (judge or self.judge).verdict(task.impossibility, self.world, self.log)
        gates = [{**g, "judge": "rule"} for g in gates]  # beside a judge's verdict: checked exactly, by rule
        return (score if all(g["passed"] for g in gates) else 0.0), breakdown + gates

    def evaluate(self, checks: list, gates: list[dict] = ()) -> tuple[float, list[dict]]:
        """Any checklist scored against the world as it stands, with this episode's calls as evidence (and
        ``gates``, verdicts worked out apart, such as :meth:`collateral`'s)."""
        return evaluate(checks, self.world, self.log, gates)

    def collateral(self) -> dict:
        """The ``no_collateral_change`` gate on the world as it stands (see :mod:`sttgym.footprint`)."""
        if self.footprint is None:
            self.footprint = footprint(self.task, self.domain.world, self.dynamics)
        return collateral_check(self.footprint, self.task.initial_state, self.world, self.log.events)

    def holds(self, pred: Any) -> bool:
        """Whether one of the world's predicates holds now, with this episode's calls as evidence."""
        return self.world.holds(pred, log=self.log)

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.task is None:
            return None
        lines = [f"[{self.task.scenario_id}] t={self.clock.iso()} turn {self.turn}/{self.max_turns}"]
        lines += [f"{role:>9}: {text}" for role, text in self.transcript]
        if self.done:
            lines.append(f"   reward: {self.reward:.3f}")
        return "\n".join(lines)
