"""Raw model text as the action: the env reads a tool call out of what the model wrote."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from sttgym.actions import MAX_TEXT
from sttgym.spaces import AnyText
from sttgym.tools import fail
from sttgym.wrappers.base import REJECTED, ToolWrapper, with_result

__all__ = ["TextActions"]


class TextActions(ToolWrapper):
    """Accept a model's raw output as the action, as GEM's and tau2's gym interfaces do.

    A string is read with the parsers the LLM agents use (``<think>`` reasoning, Qwen/Hermes
    ``<tool_call>`` blocks): one well-formed call is that tool call; text without a call is a
    final reply; more than one call, or a call block that cannot be read, is refused with an
    error result and costs the turn (the env is stepped with an action it rejects). A dict
    action passes through unchanged, so scripted agents still work.
    """

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self.action_space = AnyText(max_length=MAX_TEXT)

    def inward(self, action: Any) -> Any:
        return self._read(action)[0]

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.require_reset()
        inner, problem = self._read(action)
        observation, reward, terminated, truncated, info = self.env.step(inner)
        if problem is not None:
            result = fail(problem)
            observation, info = with_result(observation, info.get("result"), result), {**info, "result": result}
        return observation, reward, terminated, truncated, info

    @staticmethod
    def _read(action: Any) -> tuple[Any, str | None]:
        """The action the env gets for ``action``, and why the text was refused (None when it was not)."""
        if not isinstance(action, str):
            return action, None
        from sttgym.models.parsing import has_malformed_call, parse_assistant_text  # text parsing past the core

        content, calls, _ = parse_assistant_text(action[:MAX_TEXT])
        if len(calls) > 1:
            return REJECTED, f"{len(calls)} tool calls in one turn and none was run; make exactly one per turn"
        if calls:
            return calls[0], None
        if has_malformed_call(content):
            return REJECTED, ('the tool call could not be read; write it as <tool_call>{"name": "<tool>", '
                              '"arguments": {...}}</tool_call> with valid JSON')
        return {"content": content}, None
