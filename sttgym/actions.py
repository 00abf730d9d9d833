"""Reading an agent's action and rendering a tool's result: shared by every env of the suite."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sttgym.tools import ToolSpec, fail, validate_arguments

__all__ = ["ToolCall", "Reply", "parse_action", "render_result", "read_result", "check_call", "brief"]

MAX_TEXT = 20_000  # longer replies are cut, longer argument strings refused, before anything reads them


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict


@dataclass(frozen=True)
class Reply:
    content: str


def _unexpected_fields(action: dict, allowed: set[str]) -> dict | None:
    extra = set(action) - allowed
    return fail(f"unexpected action field(s): {', '.join(sorted(map(str, extra)))[:200]}") if extra else None


def parse_action(action: Any) -> ToolCall | Reply | dict:
    """The call or reply ``action`` stands for, or a failed result saying why it is neither.

    Accepts ``{"name", "arguments"}`` (arguments as a dict or as a JSON object string, as
    OpenAI-style APIs send them) and ``{"content"}``.
    """
    if not isinstance(action, dict):
        return fail('an action must be {"name": ..., "arguments": {...}} or {"content": ...}')
    if "name" in action:
        name, arguments = action.get("name"), action.get("arguments", {})
        if not isinstance(name, str) or not name:
            return fail("the tool name must be a non-empty string")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except (json.JSONDecodeError, RecursionError):
                return fail(f"the arguments of {name[:80]!r} are not valid JSON")
        if not isinstance(arguments, dict):
            return fail(f"the arguments of {name[:80]!r} must be a JSON object")
        problem = _not_json(arguments)
        if problem:
            return fail(f"the arguments of {name[:80]!r} {problem}")
        return _unexpected_fields(action, {"name", "arguments"}) or ToolCall(name[:200], arguments)
    if "content" in action:
        if not isinstance(action["content"], str):
            return fail("a reply's content must be a string")
        # A half-formed call that carries "content" is not a reply: it would end the episode.
        return _unexpected_fields(action, {"content"}) or Reply(action["content"][:MAX_TEXT])
    return fail('an action must be {"name": ..., "arguments": {...}} or {"content": ...}')


MAX_DEPTH = 32  # nesting of argument values; no tool takes more than a few levels
MAX_DIGITS = 100  # digits of an integer argument; longer ones cannot even be printed by default


def _not_json(value: Any) -> str | None:
    """Why ``value`` is not a plain JSON value of reasonable shape, or None. Iterative, so depth cannot overflow."""
    stack = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"nest deeper than {MAX_DEPTH} levels"
        if isinstance(node, dict):
            if not all(isinstance(k, str) for k in node):
                return "have a key that is not a string"
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
        elif isinstance(node, int) and not isinstance(node, bool):
            if node.bit_length() > MAX_DIGITS * 3.33:
                return f"hold an integer longer than {MAX_DIGITS} digits"
        elif isinstance(node, str):
            if len(node) > MAX_TEXT:
                return f"hold a string longer than {MAX_TEXT:,} characters"
        elif not (node is None or isinstance(node, (float, bool))):
            return f"hold a {type(node).__name__}, which is not a JSON value"
    return None


def brief(value: Any, limit: int = 500) -> str:
    """At most ``limit`` characters saying what ``value`` is, for transcripts; never raises."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)[:limit]
    except (TypeError, ValueError, RecursionError):
        return f"<{type(value).__name__}>"


def check_call(tools: dict[str, ToolSpec], call: ToolCall) -> dict | None:
    """A failed result if ``call`` cannot run (unknown tool, bad arguments), else None."""
    spec = tools.get(call.name)
    if spec is None:
        return fail(f"unknown tool {call.name[:80]!r}; available tools: {', '.join(sorted(tools))}")
    problem = validate_arguments(spec, call.arguments)
    return fail(problem) if problem else None


_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)  # json.dumps would build one per call


def render_result(result: dict) -> str:
    """A tool result as the agent reads it: compact JSON."""
    return _ENCODER.encode(result)


def read_result(observation: str) -> Any:
    """A rendered result read back, as a new value: pydantic-core's JSON parser, about twice as fast as the
    standard library's (a step reads each result twice), and the standard library's for what it refuses (a
    lone surrogate, nesting past its depth limit)."""
    from pydantic_core import from_json  # imported with the first step, not with sttgym

    try:
        return from_json(observation)
    except (ValueError, TypeError):
        return json.loads(observation)
