"""Reading a model's raw text: ``<think>`` blocks, Qwen/Hermes ``<tool_call>`` blocks and JSON objects.

Qwen-family (and Hermes-style) chat models write a tool call as a JSON object between
``<tool_call>`` and ``</tool_call>``, and their reasoning between ``<think>`` and
``</think>``. This module turns such text into the parts of a
:class:`~sttgym.models.base.ChatResponse` without importing any model library.

A block that cannot be read as a call stays in the content verbatim: the agent then
sees a ``<tool_call>`` marker in the content and tells the model its call was malformed
(see :func:`has_malformed_call`).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["split_reasoning", "parse_tool_calls", "parse_assistant_text", "has_malformed_call",
           "extract_json_object", "TOOL_CALL_OPEN"]

TOOL_CALL_OPEN = "<tool_call>"
TOOL_CALL_CLOSE = "</tool_call>"
MAX_JSON_STARTS = 64  # candidate "{" positions extract_json_object tries; each try may scan to the end


def split_reasoning(text: str) -> tuple[str, str]:
    """``(reasoning, rest)`` of ``text``.

    Everything before the first ``</think>`` is reasoning (a leading ``<think>`` is
    dropped: some templates open the block in the prompt). Text with an opening
    ``<think>`` but no closing tag was cut off mid-thought: all of it is reasoning.
    """
    if "</think>" in text:
        head, rest = text.split("</think>", 1)
        return head.replace("<think>", "", 1).strip(), rest.strip()
    stripped = text.lstrip()
    if stripped.startswith("<think>"):
        return stripped[len("<think>"):].strip(), ""
    return "", text.strip()


def _as_call(body: str) -> dict[str, Any] | None:
    """``{"name", "arguments"}`` from one tool-call block's JSON, or None when it is not a call."""
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not data["name"]:
        return None
    arguments = data.get("arguments", data.get("parameters", {}))
    if isinstance(arguments, str):  # some models double-encode the arguments
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (json.JSONDecodeError, RecursionError):
            return None
    if not isinstance(arguments, dict):
        return None
    return {"name": data["name"], "arguments": arguments}


def parse_tool_calls(text: str) -> tuple[list[dict[str, Any]], str]:
    """The well-formed ``<tool_call>`` blocks of ``text`` as calls, and the text without them.

    Malformed blocks are left in the returned text; an unterminated last block (the model
    stopped before ``</tool_call>``) counts when its JSON is complete.
    """
    calls: list[dict[str, Any]] = []
    kept: list[str] = []
    position = start = 0
    # Plain scanning, not a regex: a lazy pattern with whitespace on both sides backtracks
    # quadratically on long runs of spaces, and one reply must not stall every worker.
    while (start := text.find(TOOL_CALL_OPEN, start)) != -1:
        body_start = start + len(TOOL_CALL_OPEN)
        close = text.find(TOOL_CALL_CLOSE, body_start)
        end = len(text) if close == -1 else close + len(TOOL_CALL_CLOSE)
        call = _as_call(text[body_start:len(text) if close == -1 else close].strip())
        if call is not None:
            calls.append(call)
            kept.append(text[position:start])
            position = end
        start = end
    kept.append(text[position:])
    return calls, "".join(kept).strip()


def parse_assistant_text(text: str) -> tuple[str, list[dict[str, Any]], str]:
    """``(content, tool_calls, reasoning)`` of one generated assistant turn."""
    reasoning, rest = split_reasoning(text)
    calls, content = parse_tool_calls(rest)
    return content, calls, reasoning


def has_malformed_call(content: str) -> bool:
    """Whether ``content`` still holds a tool-call block that could not be parsed."""
    return TOOL_CALL_OPEN in content


def extract_json_object(text: str) -> dict | None:
    """The first top-level JSON object in ``text`` (fenced in a code block or bare), or None.

    Only the first ``MAX_JSON_STARTS`` opening braces are tried as starts.
    """
    decoder = json.JSONDecoder()
    starts = (m.start() for m in re.finditer(r"\{", text))
    for _, start in zip(range(MAX_JSON_STARTS), starts):  # bounded: nested prefixes made this O(n x depth)
        try:
            value, _ = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None
