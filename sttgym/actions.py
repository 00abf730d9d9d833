"""Reading an agent's action and rendering a tool's result: shared by every env of the suite.

Both ends are bounded and encodable. An action's arguments are refused whole beyond the limits below; text that
UTF-8 cannot carry (lone surrogates, which any Python string may hold) is replaced by U+FFFD where it enters, in
an action's arguments and reply; a rendered result is always UTF-8-encodable and at most :data:`MAX_OBSERVATION`
characters, a longer one replaced by a result that says it was cut and shows its beginning.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable

from sttgym.tools import ToolSpec, fail, validate_arguments

__all__ = ["ToolCall", "Reply", "parse_action", "render_result", "observe", "read_result", "check_call", "brief",
           "encodable", "encodable_value", "map_strings", "MAX_OBSERVATION"]

MAX_TEXT = 20_000  # longer replies are cut, longer argument strings refused, before anything reads them
MAX_KEY = 200  # characters of an argument's name: tools' parameters are a few words, and errors echo the name
MAX_ARGUMENTS = 100_000  # one call's arguments in all: every value and key counts one, every character one more
MAX_OBSERVATION = 100_000  # characters of a rendered tool result; a longer one is cut, saying so (see observe)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _unencodable(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def encodable(text: str) -> str:
    """``text`` as UTF-8 can carry it: each lone surrogate replaced by U+FFFD (the rest unchanged)."""
    return _SURROGATE.sub("\ufffd", text) if _unencodable(text) else text


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """A JSON-like value (a new one) with ``change`` applied to every string in it, dict keys included."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {change(k) if isinstance(k, str) else k: map_strings(v, change) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [map_strings(v, change) for v in value]
    return value


def encodable_value(value: Any) -> Any:
    """A JSON-like value with every string, keys included, :func:`encodable`."""
    return map_strings(value, encodable)


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
        problem, unencodable = _not_json(arguments)
        if problem:
            return fail(f"the arguments of {name[:80]!r} {problem}")
        if unencodable:
            arguments = encodable_value(arguments)
        return _unexpected_fields(action, {"name", "arguments"}) or ToolCall(encodable(name[:200]), arguments)
    if "content" in action:
        if not isinstance(action["content"], str):
            return fail("a reply's content must be a string")
        # A half-formed call that carries "content" is not a reply: it would end the episode.
        return _unexpected_fields(action, {"content"}) or Reply(encodable(action["content"][:MAX_TEXT]))
    return fail('an action must be {"name": ..., "arguments": {...}} or {"content": ...}')


MAX_DEPTH = 32  # nesting of argument values; no tool takes more than a few levels
MAX_DIGITS = 100  # digits of an integer argument; longer ones cannot even be printed by default


def _not_json(value: Any) -> tuple[str | None, bool]:
    """Why ``value`` is not a plain JSON value of reasonable shape and size (None when it is), and whether any of
    its text, keys included, holds what UTF-8 cannot carry. Iterative, so depth cannot overflow."""
    stack, size, unencodable = [(value, 0)], 0, False
    while stack:
        node, depth = stack.pop()
        size += 1
        if depth > MAX_DEPTH:
            return f"nest deeper than {MAX_DEPTH} levels", unencodable
        if isinstance(node, dict):
            if not all(isinstance(k, str) for k in node):
                return "have a key that is not a string", unencodable
            if any(len(k) > MAX_KEY for k in node):
                return f"have a key longer than {MAX_KEY} characters", unencodable
            size += sum(map(len, node))
            unencodable = unencodable or any(map(_unencodable, node))
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
        elif isinstance(node, int) and not isinstance(node, bool):
            if node.bit_length() > MAX_DIGITS * 3.33:
                return f"hold an integer longer than {MAX_DIGITS} digits", unencodable
        elif isinstance(node, str):
            if len(node) > MAX_TEXT:
                return f"hold a string longer than {MAX_TEXT:,} characters", unencodable
            size += len(node)
            unencodable = unencodable or _unencodable(node)
        elif not (node is None or isinstance(node, (float, bool))):
            return f"hold a {type(node).__name__}, which is not a JSON value", unencodable
        if size > MAX_ARGUMENTS:
            return f"are larger than {MAX_ARGUMENTS:,} values and characters in all", unencodable
    return None, unencodable


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
    """A tool result as the agent reads it: compact JSON, always UTF-8-encodable (:func:`encodable`)."""
    return encodable(_ENCODER.encode(result))


def observe(result: dict) -> str:
    """:func:`render_result`, at most :data:`MAX_OBSERVATION` characters: a longer result becomes one that says so,
    ``{"success", "truncated": "...", "text": <the rendering's beginning>}``, still JSON, so an agent reading it knows
    it saw only part (and ``info["result"]``, read back from it, says the same)."""
    text = full = render_result(result)
    shown = MAX_OBSERVATION - 300
    while len(text) > MAX_OBSERVATION:  # escaping can lengthen the excerpt: cut until the whole fits
        text = render_result({"success": result.get("success") is True,
                              "truncated": f"this result is {len(full):,} characters; the first {shown:,} are shown "
                                           f"(results are cut at {MAX_OBSERVATION:,})",
                              "text": full[:shown]})
        shown = shown * 3 // 4
    return text


def read_result(observation: str) -> Any:
    """A rendered result read back, as a new value: pydantic-core's JSON parser, about twice as fast as the
    standard library's (a step reads each result twice), and the standard library's for what it refuses (a
    lone surrogate, nesting past its depth limit)."""
    from pydantic_core import from_json  # imported with the first step, not with sttgym

    try:
        return from_json(observation)
    except (ValueError, TypeError):
        return json.loads(observation)
