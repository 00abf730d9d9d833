"""Obfuscation: the tools' names, parameters, output fields and status are hidden behind random tokens."""

from __future__ import annotations

from typing import Any, Callable

import gymnasium as gym
import numpy as np

from sttgym.actions import ToolCall, parse_action
from sttgym.spaces import ToolCallSpace
from sttgym.tools import ToolSpec, fail, validate_arguments
from sttgym.wrappers.base import REJECTED, ToolWrapper, resolve, schema_only, with_result

__all__ = ["Obfuscate", "MISMATCH"]

STANDARD_FIELDS = ("success", "data", "message", "error")
MISMATCH = "Schema mismatch"  # how a refusal for ill-shaped arguments begins (agents read it)


class Obfuscate(ToolWrapper):
    """Strips every semantic cue from the wrapped env's tools, per episode (ScrambleToolBench §2.2).

    At each reset, from the wrapper's seeded generator:

    - every tool except the meta-commands gets an alias such as ``fn_3d8a``; ``info["tools"]``
      lists the aliases in shuffled order, with no description and no parameters;
    - each tool's parameters are renamed ``arg_0``, ``arg_1``, ... in a shuffled order; a call
      whose arguments do not fit is refused with a plaintext *schema mismatch* error listing
      the expected keys and their types, and costs an action like any refused call;
    - each top-level result field of each tool gets its own key (``out_c2b``), so the keys of
      a response identify the tool that answered;
    - with ``nested``, every key inside a result (a row's columns, a record's fields, at any
      depth) gets its own key per tool as well (``out_7e1``, drawn when the tool first shows
      it), except in the results of the ``verbatim`` tools, whose payload is content relayed
      as is (a web page's JSON body, like a file's text);
    - success and failure become two random tokens (``val_647``), carried under the tool's
      status key in every response the tool gives, its application errors included.

    Meta-commands, unknown names (answered "Unknown command"), replies and transient
    results marked ``retryable`` (timeouts) stay plaintext. In the final ``info``,
    ``mappings`` and ``schemas`` are rewritten into the aliases and argument keys. Keys follow
    the tool that answered, wherever a drift below moves it.

    Args:
        nested: hide the keys inside results too. The paper names output fields without saying
            how deep; every ScrambleTool condition sets it. Off by default, which keeps the
            episodes of stacks built before it (the arena ablations) unchanged.
        verbatim: tools whose nested keys stay plaintext because their payload is relayed content.
    """

    def __init__(self, env: gym.Env, nested: bool = False, verbatim: tuple[str, ...] = ()):
        super().__init__(env, nested=nested, verbatim=tuple(verbatim))
        self.nested, self.verbatim = nested, frozenset(verbatim)

    def on_reset(self, observation: Any, info: dict) -> tuple[Any, dict]:
        rng = self.rng
        schemas = {t["function"]["name"]: t["function"] for t in info["tools"]}
        functions = [name for name in schemas if name not in self.meta_commands]
        self.alias = dict(zip(functions, _fresh(rng, "fn_", 4, len(functions))))
        self.function_of = {alias: name for name, alias in self.alias.items()}
        self.keys: dict[str, dict[str, str]] = {}  # function -> parameter -> arg key
        self.specs: dict[str, ToolSpec] = {}  # function -> its schema as the agent must guess it
        for name in functions:
            params = schemas[name]["parameters"]
            order = rng.permutation(len(params["properties"]))
            self.keys[name] = {p: f"arg_{int(i)}" for p, i in zip(params["properties"], order)}
            renamed = {self.keys[name][p]: s for p, s in params["properties"].items()}
            # unnamed: under drift the alias it was listed as is not the identifier that answers
            self.specs[name] = ToolSpec("", "", {
                "type": "object", "properties": {k: renamed[k] for k in sorted(renamed)},
                "required": sorted(self.keys[name][p] for p in params.get("required", []))}, False, 0,
                func=schema_only)
        names = _fresh(rng, "out_", 3, len(functions) * len(STANDARD_FIELDS))
        self.outputs = {(f, field): names.pop() for f in functions for field in STANDARD_FIELDS}
        self.inner: dict[tuple[str, str], str] = {}  # (function, key inside a result) -> its key
        self.tokens = dict(zip((True, False), _fresh(rng, "val_", 3, 2)))
        listing = [{"type": "function", "function": {"name": self.alias[functions[int(i)]], "description": "",
                                                     "parameters": {"type": "object", "properties": {}}}}
                   for i in rng.permutation(len(functions))]
        listing += [{"type": "function", "function": schemas[name]} for name in schemas if name in self.meta_commands]
        self.action_space = ToolCallSpace(listing)
        return observation, {**info, "tools": listing}

    def inward(self, action: Any) -> Any:
        call = parse_action(action)
        if not isinstance(call, ToolCall) or call.name in self.meta_commands:
            return action
        name, runs, problem = self._route(call)
        if name is None or problem:
            return REJECTED
        renamed = {key: param for param, key in self.keys[runs].items()}
        return {"name": name, "arguments": {renamed[k]: v for k, v in call.arguments.items()}}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.require_reset()
        call = parse_action(action)
        route = self._route(call) if isinstance(call, ToolCall) and call.name not in self.meta_commands else None
        observation, reward, terminated, truncated, info = self.env.step(self.inward(action))
        if route is not None:
            name, runs, problem = route
            if name is None:
                result = fail(f"Unknown command {call.name[:80]!r}")
            else:
                result = self._disguise(runs, fail(f"{MISMATCH}: {problem}") if problem else info["result"])
            observation, info = with_result(observation, info.get("result"), result), {**info, "result": result}
        if terminated or truncated:
            info = self._reveal(info)
        return observation, reward, terminated, truncated, info

    def _route(self, call: ToolCall) -> tuple[str | None, str | None, str | None]:
        """(the wrapped env's name for the alias, the tool that will actually run, why the arguments do not fit).

        The tool that runs is the one the name reaches through the layers below (a drift
        underneath moves tools between names), so keys and schema always follow the tool.
        """
        name = self.function_of.get(call.name)
        if name is None:
            return None, None, None
        below = parse_action(resolve(self.env, {"name": name, "arguments": {}}))
        runs = below.name if isinstance(below, ToolCall) and below.name in self.keys else name
        return name, runs, self._mismatch(runs, call.arguments)

    def _mismatch(self, function: str, arguments: Any) -> str | None:
        return validate_arguments(self.specs[function], arguments)

    def _disguise(self, function: str, result: Any) -> Any:
        if not isinstance(result, dict) or result.get("retryable"):
            return result  # transport-level news (a timeout) is not the tool's answer
        return {self._key(self.outputs, function, field):
                self.tokens[bool(value)] if field == "success" else self._hide(function, value)
                for field, value in result.items()}

    def _hide(self, function: str, value: Any) -> Any:
        """``value`` with every key inside it replaced by ``function``'s own key for it (when ``nested``)."""
        if not self.nested or function in self.verbatim:
            return value
        return _rekey(value, lambda field: self._key(self.inner, function, str(field)))

    def reveal(self, function: str, value: Any) -> Any:
        """``value`` with ``function``'s inner keys named as the tool names them (what :meth:`_hide` hid)."""
        names = {key: field for (f, field), key in self.inner.items() if f == function}
        return _rekey(value, lambda key: names.get(key, key))

    def _key(self, table: dict[tuple[str, str], str], function: str, field: str) -> str:
        """``function``'s key for ``field``; a field not drawn at reset gets a name no other field has, on first sight."""
        while (function, field) not in table:
            (name,) = _fresh(self.rng, "out_", 3, 1)
            if name not in self.outputs.values() and name not in self.inner.values():
                table[(function, field)] = name
        return table[(function, field)]

    def _reveal(self, info: dict) -> dict:
        """The final info with identifiers and parameter keys as the agent saw them."""
        info = dict(info)
        if "mappings" in info:
            info["mappings"] = [{self.alias.get(i, i): f for i, f in m.items()} for m in info["mappings"]]
        else:
            info["mappings"] = [{alias: name for name, alias in self.alias.items()}]
        if "schemas" in info:
            info["schemas"] = {f: {self.keys[f].get(p, p): t for p, t in params.items()}
                               for f, params in info["schemas"].items() if f in self.keys}
        return info


def _rekey(value: Any, rename: Callable[[Any], str]) -> Any:
    """``value`` with the keys of every dict inside it, at any depth, passed through ``rename``."""
    if isinstance(value, dict):
        return {rename(k): _rekey(v, rename) for k, v in value.items()}
    if isinstance(value, list):
        return [_rekey(v, rename) for v in value]
    return value


def _fresh(rng: np.random.Generator, prefix: str, digits: int, count: int) -> list[str]:
    """``count`` distinct names ``prefix`` + ``digits`` hex digits, in draw order.

    The names still missing are drawn in one call, not one call each (which was most of a reset): a
    generator hands out small integers from one stream whatever the calls' sizes, so the names are the
    same as drawn one by one.
    """
    names: dict[str, None] = {}
    while len(names) < count:
        for row in rng.integers(16, size=(count - len(names), digits)).tolist():
            names[prefix + "".join(_HEX[d] for d in row)] = None
    return list(names)


_HEX = "0123456789abcdef"
