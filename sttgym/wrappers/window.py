"""Temporal execution windows: after a trigger, finish within k actions or the state resets."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from sttgym.core import tool_env
from sttgym.tools import fail
from sttgym.wrappers.base import REJECTED, ToolWrapper, valid_call, with_result

__all__ = ["TemporalWindow", "EXPIRED", "NOT_OPEN"]

EXPIRED = "execution window expired"  # the notice that the state was reset (agents read it)
NOT_OPEN = "No execution window is open"  # the refusal of a submission outside a window


class TemporalWindow(ToolWrapper):
    """Once a task's trigger command runs, the task must be finished within ``k`` actions (ScrambleToolBench §2.4).

    The window opens on the step that runs the trigger command, and each later action
    counts against it, except calls that timed out (a ``timeout`` event: an uncontrollable
    delay). Every observation while the window is open ends with the remaining count. If
    the ``k``-th counted action does not end the task, the window expires: the state is
    reset, and the window opens again only when the trigger runs again.

    On ScrambleTool (an env with ``native_windows``: its ``window_trigger`` and ``reset_window``), the trigger is
    the current task's first step, expiry regenerates the task's intermediate values, a
    task ending (solved, skipped, failed) closes the window, and ``submit_solution`` is
    refused while no window is open. On any other env (arena worlds) the wrapper brings its
    own hook: the window opens on the step where a trigger first fires (and, after an
    expiry, when the tool during which it fired is called again), and expiry restores the
    world to its ``snapshot()`` from the step the window opened; the episode's final
    reply plays the part of the submission.

    ``info["window"]`` holds ``{"open", "remaining"}``; ``window_open`` and
    ``window_expired`` events are added to ``info["events"]``.

    Args:
        k: the actions allowed after the trigger, submission included.
    """

    def __init__(self, env: gym.Env, k: int = 10):
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        super().__init__(env, k=k)
        self.k = k

    def on_reset(self, observation: Any, info: dict) -> tuple[Any, dict]:
        self.base = tool_env(self.env)
        self.native = self.base.native_windows
        self.remaining: int | None = None  # None: no window open
        self.snapshot: dict | None = None
        self.trigger_tool: str | None = None  # arena worlds: the tool during which the trigger fired
        if self.native:
            observation += "\n" + self._rule()
        return observation, {**info, "window": self._status()}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.require_reset()
        call = valid_call(self.env, action)
        name = call.name if call else None
        refused = self.native and self.remaining is None and name == "submit_solution"
        opens = self.remaining is None and name is not None and name == (
            self.base.window_trigger if self.native else self.trigger_tool)
        observation, reward, terminated, truncated, info = self.env.step(REJECTED if refused else action)
        events = list(info.get("events", []))
        notices: list[str] = []
        if refused:
            result = fail(f"{NOT_OPEN}: the task's trigger command opens one, and the answer must be submitted "
                          f"within {self.k} actions of it.")
            observation, info = with_result(observation, info.get("result"), result), {**info, "result": result}
        if terminated or truncated:
            self.remaining = None
        elif any(e.get("type") == "timeout" for e in events):
            notices.append(self._countdown())
        elif any(e.get("type") == "task_end" for e in events):
            self.remaining = None
            notices.append(self._rule())
        elif self.remaining is not None:
            self.remaining -= 1
            notices.append(self._expire(events) if self.remaining == 0 else self._countdown())
        elif opens or (not self.native and self._fired(events)):
            self.remaining = self.k
            self.snapshot = None if self.native else self.base.snapshot()
            events.append({"type": "window_open", "k": self.k})
            notices.append(f"[execution window open: {self.k} actions left to finish and submit]")
        observation = "\n".join([observation, *filter(None, notices)])
        return observation, reward, terminated, truncated, {**info, "events": events, "window": self._status()}

    def _fired(self, events: list[dict]) -> bool:
        fired = [e for e in events if "trigger" in e]
        if fired and self.trigger_tool is None:
            self.trigger_tool = fired[0].get("during")
        return bool(fired)

    def _expire(self, events: list[dict]) -> str:
        self.remaining = None
        if self.native:
            self.base.reset_window()
        else:
            self.base.restore(self.snapshot)
        events.append({"type": "window_expired"})
        return f"[{EXPIRED}: the state was reset and intermediate values regenerated; run the trigger command again]"

    def _countdown(self) -> str:
        return "" if self.remaining is None else f"[execution window: {self.remaining} actions left]"

    def _rule(self) -> str:
        if not self.native or self.base.window_trigger is None:
            return ""
        return f"[this task runs under an execution window: once its first step runs, {self.k} actions remain to " \
               f"finish it and submit]"

    def _status(self) -> dict:
        return {"open": self.remaining is not None, "remaining": self.remaining}
