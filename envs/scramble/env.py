"""The ScrambleTool curriculum: one terminal, five tasks in a row, a budget per task.

This env is the *unscrambled* terminal: function names, parameters and results are
plaintext. Obfuscation and the dynamics (drift, failures, windows) are wrappers from
:mod:`sttgym.wrappers`; the registered conditions stack them (see ``__init__.py``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from sttgym.actions import Reply, parse_action
from sttgym.clock import Clock
from sttgym.core import ToolEnv
from sttgym.tools import collect_tools, fail, ok, tool

from sttgym.envs.scramble.machine import Machine
from sttgym.envs.scramble.templates import TEMPLATES, Template
from sttgym.envs.scramble.terminal import FUNCTIONS, Terminal

__all__ = ["ScrambleEnv", "META_COMMANDS"]

META_COMMANDS = ("submit_solution", "skip_task", "end_episode")
START_TIME = "2025-03-14T09:00"


@dataclass
class _Task:
    template: Template
    slots: dict[str, str]
    goal: str
    actions: int = 0
    outcome: str = ""  # "" while pending, then "solved", "budget" or "ended"


class _MetaCommands:
    """The three plaintext commands that steer the curriculum; the env reads what was asked."""

    def __init__(self, env: "ScrambleEnv"):
        self.env = env

    @tool
    def submit_solution(self, solution: str) -> dict:
        """Evaluates whether the proposed solution string matches the correct task solution (exact match).

        Args:
            solution: The answer to the current task.
        """
        task = self.env.current
        if solution != task.template.truth(self.env.machine.state, task.slots):
            return fail("Incorrect solution.")
        self.env.outcome = "solved"
        return ok(message=f"Correct: task {self.env.position(task)} solved.")

    @tool
    def skip_task(self) -> dict:
        """Allows the agent to intentionally skip the current task and move to the next one (it returns later)."""
        self.env.outcome = "skipped"
        task = self.env.current
        return ok(message=f"Task {self.env.position(task)} skipped; it returns at the end of the queue with "
                          f"{task.actions} of its {self.env.budget} actions used.")

    @tool
    def end_episode(self) -> dict:
        """Allows the agent to intentionally terminate the entire episode early."""
        self.env.outcome = "ended"
        return ok(message="Episode ended at your request.")


class ScrambleEnv(ToolEnv):
    """A five-task curriculum on one seeded terminal.

    Each task is drawn from a different template and planted into the same machine at
    reset, so state continues from task to task. Every action (a call, a meta-command, a
    malformed action, a reply) spends one of the current task's ``budget`` actions; the
    count is kept across a ``skip_task`` and the task's return at the end of the queue. A
    task fails when its budget is spent, and the curriculum moves on. The episode ends
    when every task is solved or failed, or on ``end_episode``; the reward is then the
    fraction of tasks solved (0 before).

    Observations are the rendered result, followed by curriculum notices (the next task's
    goal). ``info["events"]`` holds ``task_end``/``task_start`` events; the final ``info``
    holds ``tasks`` (per task in curriculum order: template, solved, actions, outcome, and
    the number of functions its procedure needs),
    ``attempts`` and ``mappings`` (identifier -> function at the start of each attempt,
    here the identity; obfuscation wrappers rewrite it) and ``schemas`` (per function, its
    parameters and their types).

    Args:
        tasks: tasks per episode, drawn without replacement.
        budget: actions per task.
        templates: names of the templates to draw from (default: all 20).
        render_mode: ``"ansi"`` for the last observation with a status line.
    """

    meta_commands = META_COMMANDS
    native_windows = True

    def __init__(self, tasks: int = 5, budget: int = 100, templates: tuple[str, ...] | None = None,
                 render_mode: str | None = None):
        self.pool = [TEMPLATES[name] for name in (templates or tuple(TEMPLATES))]
        if not 0 < tasks <= len(self.pool):
            raise ValueError(f"tasks must be in 1..{len(self.pool)}, got {tasks}")
        if budget < 1:
            raise ValueError("budget must be at least 1")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"unsupported render_mode {render_mode!r}")
        self.n_tasks, self.budget, self.render_mode = tasks, budget, render_mode
        self._set_tools(collect_tools(Terminal({}, Clock(START_TIME))) | collect_tools(_MetaCommands(self)),
                        type(self))
        self.machine: Machine | None = None

    # ------------------------------------------------------------------ episode

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        super().reset(seed=seed)
        self.machine = Machine(self.np_random)
        self.machine.populate()
        chosen = self.np_random.choice(len(self.pool), self.n_tasks, replace=False)
        self.tasks = []
        for index in chosen:
            template = self.pool[int(index)]
            slots = template.instantiate(self.machine)
            self.tasks.append(_Task(template, slots, template.text(slots)))
        self.clock = Clock(START_TIME)
        self.world = Terminal(self.machine.state, self.clock)
        self.tools = collect_tools(self.world) | collect_tools(_MetaCommands(self))
        self.call_log = []
        self.queue = list(range(self.n_tasks))
        self.attempts: list[dict] = []
        self.mappings: list[dict[str, str]] = []
        self.done, self.outcome, self.last = False, None, ""
        observation = (f"You are at a Linux terminal. Solve {self.n_tasks} tasks in order; each allows "
                       f"{self.budget} actions. Submit each answer, exactly, with submit_solution; skip_task defers "
                       f"a task and end_episode stops.{self._start(events=[])}")
        self.last = observation
        return observation, {"tools": self.tool_listing(), "task": self._task_info(), "events": []}

    @property
    def current(self) -> _Task:
        return self.tasks[self.queue[0]]

    def position(self, task: _Task) -> int:
        """The task's 1-based place in the curriculum."""
        return self.tasks.index(task) + 1

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict]:
        if self.machine is None:
            raise RuntimeError("call reset() before step()")
        if self.done:
            return self.ended()
        task, events = self.current, []
        task.actions += 1
        self.outcome = None
        parsed = parse_action(action)
        if isinstance(parsed, Reply):
            parsed = fail("This terminal takes function calls only; submit answers with submit_solution.")
        observation, result = self.perform(parsed)
        if self.outcome in (None, "skipped") and task.actions >= self.budget:
            self.outcome = "budget"
        if self.outcome is not None:
            observation += self._finish(task, self.outcome, events)
        info: dict[str, Any] = {"result": result, "events": events, **self.status()}
        reward = 0.0
        if self.done:
            reward, end = self.conclude()
            info.update(end)
        self.last = observation
        return observation, reward, self.done, False, info

    def _finish(self, task: _Task, outcome: str, events: list[dict]) -> str:
        """Close the current attempt with ``outcome``; start the next one; the notice to append."""
        events.append({"type": "task_end", "task": self.queue[0], "outcome": outcome})
        self.attempts[-1]["outcome"] = outcome
        notice = ""
        if outcome == "skipped":
            self.queue.append(self.queue.pop(0))
        else:
            task.outcome = outcome if outcome != "ended" else ""
            self.queue.pop(0)
            if outcome == "budget":
                notice = f"\n\nTask {self.position(task)} failed: its {self.budget} actions are spent."
        if outcome == "ended" or not self.queue:
            self.done = True
            solved = sum(t.outcome == "solved" for t in self.tasks)
            return notice + f"\n\nEpisode over: {solved} of {self.n_tasks} tasks solved."
        return notice + self._start(events)

    def _start(self, events: list[dict]) -> str:
        task = self.current
        if self.attempts:
            events.append({"type": "task_start", "task": self.queue[0], "template": task.template.name})
        self.attempts.append({"task": self.queue[0], "template": task.template.name, "outcome": ""})
        self.mappings.append({name: name for name in FUNCTIONS})
        again = f" (resumed: {task.actions} of {self.budget} actions used)" if task.actions else ""
        return f"\n\nTask {self.position(task)} of {self.n_tasks}{again}: {task.goal}"

    def status(self) -> dict:
        return {"task": self._task_info()}

    def score(self) -> tuple[float, list[dict]]:
        solved = [t.outcome == "solved" for t in self.tasks]
        return sum(solved) / self.n_tasks, [{"template": t.template.name, "solved": s} for t, s in zip(self.tasks, solved)]

    def conclude(self) -> tuple[float, dict]:
        self.done = True
        return self.score()[0], self._summary()

    def _task_info(self) -> dict:
        if self.done:
            return {}
        task = self.current
        return {"index": self.queue[0], "template": task.template.name, "goal": task.goal, "actions": task.actions,
                "budget": self.budget}

    def _summary(self) -> dict:
        schemas = {name: {p: s.get("type", "any") for p, s in self.tools[name].parameters["properties"].items()}
                   for name in FUNCTIONS}
        return {"tasks": [{"template": t.template.name, "solved": t.outcome == "solved", "actions": t.actions,
                           "outcome": t.outcome or "unfinished", "functions": len(t.template.requires)}
                          for t in self.tasks],
                "attempts": copy.deepcopy(self.attempts), "mappings": copy.deepcopy(self.mappings),
                "schemas": schemas, "ended_early": self.outcome == "ended"}

    @property
    def functions_per_task(self) -> int:
        """Functions a task's procedure calls (4 for every template of the paper)."""
        return max(len(t.requires) for t in self.pool)

    # ------------------------------------------------- execution-window hooks

    @property
    def window_trigger(self) -> str | None:
        """The function whose call opens the current task's execution window (None once the episode is over)."""
        return None if self.done else self.current.template.trigger

    def reset_window(self) -> None:
        """An execution window expired: regenerate the current task's intermediate values."""
        if not self.done:
            task = self.current
            task.template.regenerate(self.machine, task.slots)

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.machine is None:
            return None
        solved = sum(t.outcome == "solved" for t in self.tasks)
        status = "done" if self.done else f"task {self.position(self.current)}, {self.current.actions}/{self.budget}"
        return f"[ScrambleTool {solved}/{self.n_tasks} solved, {status}]\n{self.last}"
