"""Spaces for text agents: any string observed, a tool call or a reply as the action."""

from __future__ import annotations

import string
from typing import Any, Sequence

import numpy as np
from gymnasium import spaces

__all__ = ["AnyText", "ToolCallSpace"]

_SAMPLE_CHARS = string.ascii_letters + string.digits + " -_:.{}\"'é\n"


class AnyText(spaces.Text):
    """A text space that contains every Python string, of any length or alphabet.

    Gymnasium's ``Text`` accepts only its charset (alphanumeric by default) and a bounded
    length; tool results and user replies are neither.
    """

    def __init__(self, max_length: int = 4096, seed: int | np.random.Generator | None = None):
        super().__init__(max_length=max_length, min_length=0, charset=_SAMPLE_CHARS, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str)

    def __repr__(self) -> str:
        return "AnyText()"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, AnyText)


class ToolCallSpace(spaces.Space):
    """Actions of a tool-using agent.

    An element is either a tool call ``{"name": str, "arguments": dict}`` naming one of the
    space's tools, or a reply ``{"content": str}``. Whether the arguments fit the tool is the
    env's business (a bad call is answered with an error observation); ``sample`` draws calls
    whose arguments follow each tool's JSON schema, and now and then a reply.
    """

    def __init__(self, tools: Sequence[dict], reply_probability: float = 0.05,
                 seed: int | np.random.Generator | None = None):
        self.tools = [t["function"] if "function" in t else t for t in tools]
        self.names = tuple(t["name"] for t in self.tools)
        self.reply_probability = reply_probability
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        if not isinstance(x, dict):
            return False
        if set(x) == {"content"}:
            return isinstance(x["content"], str)
        return set(x) == {"name", "arguments"} and x["name"] in self.names and isinstance(x["arguments"], dict)

    def sample(self, mask: Any = None, probability: Any = None) -> dict:
        rng = self.np_random
        if not self.names or rng.random() < self.reply_probability:
            return {"content": _random_string(rng)}
        fn = self.tools[int(rng.integers(len(self.tools)))]
        props = fn.get("parameters", {}).get("properties", {})
        return {"name": fn["name"], "arguments": {k: _sample_value(rng, s) for k, s in props.items()}}

    def __repr__(self) -> str:
        return f"ToolCallSpace({len(self.names)} tools)"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ToolCallSpace) and other.tools == self.tools


def _random_string(rng: np.random.Generator, longest: int = 12) -> str:
    n = int(rng.integers(0, longest + 1))
    return "".join(_SAMPLE_CHARS[int(i)] for i in rng.integers(len(_SAMPLE_CHARS), size=n))


def _sample_value(rng: np.random.Generator, schema: dict) -> Any:
    if "enum" in schema:
        return schema["enum"][int(rng.integers(len(schema["enum"])))]
    if "anyOf" in schema:
        return _sample_value(rng, schema["anyOf"][int(rng.integers(len(schema["anyOf"])))])
    kind = schema.get("type")
    if kind == "integer":
        return int(rng.integers(-5, 1000))
    if kind == "number":
        return float(np.round(rng.uniform(-5, 1000), 2))
    if kind == "boolean":
        return bool(rng.integers(2))
    if kind == "array":
        return [_sample_value(rng, schema.get("items", {"type": "string"})) for _ in range(int(rng.integers(3)))]
    if kind == "object":
        return {}
    return _random_string(rng)
