"""The tool-environment core: the call cycle every sttgym environment shares, and its seams.

An action crosses one cycle: it is parsed (a tool call, a final reply, or something
malformed), a call is checked against the tool's schema, run between the env's
:meth:`ToolEnv.before_call` and :meth:`ToolEnv.after_call` hooks with a guard that turns a
tool's exception into a failed result, the simulated clock advances by the tool's cost, and
the result is rendered as the observation (a copy, so nothing the agent holds aliases the
world). The arena env adds triggers and checklist scoring through the hooks; the ScrambleTool
env adds budgets and its curriculum around the cycle.

Wrappers, reward terms, runners and trainers use only the seams documented on
:class:`ToolEnv` (reach them with :func:`tool_env`), never other attributes: ``tools``, ``done``,
``call_log``, ``status()``, ``snapshot()``/``restore()``, ``score()``, ``conclude()``, and for envs that
own their execution windows ``native_windows``/``window_trigger``/``reset_window()``.
"""

from __future__ import annotations

from typing import TypedDict

import gymnasium as gym

from sttgym.actions import ToolCall, check_call, observe, read_result, render_result
from sttgym.clock import Clock
from sttgym.spaces import AnyText, ToolCallSpace
from sttgym.tools import ToolSpec, fail, per_class
from sttgym.world import World, json_copy

__all__ = ["ToolEnv", "tool_env", "CallRecord", "ResetInfo", "StepInfo", "EndInfo"]


class CallRecord(TypedDict):
    """One accepted tool call, as ``call_log`` keeps it."""

    name: str
    arguments: dict
    result: dict  # the result as the agent read it
    at: str  # the simulated time after the call


class ResetInfo(TypedDict, total=False):
    """``info`` from ``reset``: what an agent may see."""

    tools: list[dict]  # OpenAI-style function schemas
    task: dict  # arena: domain, conflict type, start time (never level or solvability); ScrambleTool: the task
    clock: str  # arena: the simulated time
    world: str  # arena: the world's description
    events: list[dict]  # ScrambleTool: curriculum events (none at reset)
    window: dict  # under TemporalWindow: {"open", "remaining"}


class StepInfo(TypedDict, total=False):
    """``info`` from ``step``: the agent-facing part (the end of an episode adds :class:`EndInfo`)."""

    result: dict | None  # the tool's result as a dict (None for the final reply)
    events: list[dict]  # triggers that fired, timeouts, drift, windows, task starts and ends
    clock: str  # the simulated time after the action
    turn: int  # arena: actions so far
    task: dict  # ScrambleTool: the current task (goal, actions, budget)
    window: dict  # under TemporalWindow


class EndInfo(TypedDict, total=False):
    """What the final step's ``info`` adds for harnesses (runners, reports, trainers), never shown earlier."""

    checklist: list[dict]  # arena: each check's verdict
    score: float  # arena: the episode's reward
    trigger_log: list[dict]  # arena: every trigger that fired and what it changed
    task: dict  # arena: the task's harness facts (level, solvability, scenario id)
    tasks: list[dict]  # ScrambleTool: per task, solved, actions, outcome
    attempts: list[dict]  # ScrambleTool
    mappings: list[dict]  # ScrambleTool: identifier -> function per attempt (obfuscation rewrites it)
    schemas: dict  # ScrambleTool
    ended_early: bool  # ScrambleTool


class ToolEnv(gym.Env):
    """Base of every sttgym environment: a world behind tools, a simulated clock, text observations.

    A subclass sets, in ``reset``, ``self.world`` (a :class:`~sttgym.world.World`),
    ``self.clock``, ``self.tools`` (name -> :class:`~sttgym.tools.ToolSpec`), ``self.call_log``
    (empty) and ``self.done``; its ``step`` hands tool calls and malformed actions to
    :meth:`perform` and decides what a reply, the end and the reward are.

    Seams (the public surface wrappers, rewards, runners and trainers rely on):

    - ``tools``: the tools the env accepts now, with cost, whether they change the world, schema;
    - ``done``: whether the episode is over; ``meta_commands``: tools that steer the episode
      (ScrambleTool's submit/skip/end) rather than act on the world;
    - ``call_log``: every accepted call of the episode (:class:`CallRecord`);
    - :meth:`status`: the step-info fields that describe the present moment (a wrapper that
      answers an action itself, such as a timeout, reports them unchanged);
    - :meth:`snapshot` / :meth:`restore`: the world's state, copied out and put back;
    - :meth:`score`: the reward the episode would get if it ended now, with its breakdown;
    - :meth:`conclude`: end and score the episode now (after a wrapper truncated it);
    - ``native_windows``: True when the env defines its own execution windows, through
      ``window_trigger`` (the call that opens the current one) and :meth:`reset_window`.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}
    native_windows = False
    meta_commands: tuple[str, ...] = ()  # tools that steer the episode rather than act on the world

    world: World | None = None
    clock: Clock
    tools: dict[str, ToolSpec]
    call_log: list[CallRecord]
    done: bool = False

    def _set_tools(self, specs: dict[str, ToolSpec], owner: type) -> None:
        """The action space of these tools' schemas. Schemas depend only on classes, so they are known before
        any reset, and their JSON is built once per ``owner`` (the class the tools come from)."""
        schemas, self._listing = per_class(owner, "listing:" + ",".join(sorted(specs)), lambda: _listing(specs))
        self.tool_schemas = json_copy(schemas)  # its own, sharing the strings: as small as a copy can be
        self.action_space = ToolCallSpace(self.tool_schemas)
        self.observation_space = AnyText()

    def tool_listing(self) -> list[dict]:
        """The tool schemas for ``info["tools"]``, as a new copy at each reset (read back from their JSON,
        about twice as fast as copying them)."""
        return read_result(self._listing)

    # ------------------------------------------------------------------ the cycle

    def perform(self, parsed: ToolCall | dict) -> tuple[str, dict]:
        """The observation and result of a parsed tool call (or of a malformed action's error result)."""
        if isinstance(parsed, ToolCall):
            problem = check_call(self.tools, parsed)
            observation = observe(problem) if problem else self._call(parsed)
        else:
            observation = observe(parsed)
        return observation, read_result(observation)  # a copy: nothing the agent holds aliases the world

    def _call(self, call: ToolCall) -> str:
        spec = self.tools[call.name]
        self.before_call(call)
        try:
            result = spec.func(**call.arguments)
        except Exception as exc:  # a domain bug must not kill a training run; the fuzz tests hunt these
            result = fail(f"internal error in {call.name}: {type(exc).__name__}", internal_error=True)
        if not isinstance(result, dict):
            result = fail(f"{call.name} returned no result", internal_error=True)
        self.clock.advance(spec.cost)
        # Rendered now: results may point into the state, which after_call may be about to change. Bounded and
        # encodable (sttgym.actions.observe): a tool may echo what it was given, or hold a long listing.
        observation = observe(result)
        self.call_log.append({"name": call.name, "arguments": json_copy(call.arguments),
                              "result": read_result(observation), "at": self.clock.iso()})
        self.after_call(call)
        return observation

    def before_call(self, call: ToolCall) -> None:
        """Runs before an accepted call's tool (arena: triggers timed ``before``)."""

    def after_call(self, call: ToolCall) -> None:
        """Runs after an accepted call's tool and clock advance (arena: triggers timed ``after``)."""

    def ended(self) -> tuple[str, float, bool, bool, dict]:
        """The step of an episode that is already over: nothing runs."""
        result = fail("the episode has ended; call reset()")
        return render_result(result), 0.0, True, False, {**self.status(), "result": result, "events": []}

    # ------------------------------------------------------------------ seams

    def status(self) -> dict:
        """The step-info fields that describe the present moment (not the action's result or events)."""
        return {"clock": self.clock.iso()}

    def snapshot(self) -> dict:
        """A copy of the world's state."""
        return json_copy(self.world.state)

    def restore(self, snapshot: dict) -> None:
        """Put back a state taken by :meth:`snapshot` (the world keeps its identity; tools see the new state)."""
        self.world.state.clear()
        self.world.state.update(json_copy(snapshot))

    def score(self) -> tuple[float, list[dict]]:
        """The reward the episode would get if it ended now, and its breakdown."""
        raise NotImplementedError

    def conclude(self) -> tuple[float, dict]:
        """End the episode now: its reward, and what the final ``info`` adds (:class:`EndInfo`).

        The env calls it at its own end; a harness calls it when a wrapper (a time limit) cut the
        episode short, so a truncated episode is scored like one the env ended itself.
        """
        raise NotImplementedError

    @property
    def window_trigger(self) -> str | None:
        """With ``native_windows``: the call that opens the current execution window."""
        return None

    def reset_window(self) -> None:
        """With ``native_windows``: an execution window expired (the env decides what resets)."""
        raise NotImplementedError(f"{type(self).__name__} has no execution windows of its own")


def _listing(specs: dict[str, ToolSpec]) -> tuple[list[dict], str]:
    """The tools' schemas by name, and their JSON."""
    schemas = [specs[name].schema for name in sorted(specs)]
    return schemas, render_result(schemas)


def tool_env(env: gym.Env) -> ToolEnv:
    """The :class:`ToolEnv` under any wrapper stack (a clear error for an env that is not one)."""
    base = env.unwrapped
    if not isinstance(base, ToolEnv):
        raise TypeError(f"{type(base).__name__} is not an sttgym tool environment")
    return base
