"""Tools: methods of a world that an agent may call.

One decorator, :func:`tool`, marks a method as callable by the agent, says whether it
reads or mutates the world and how many simulated minutes it costs. The OpenAI-style
JSON schema is derived from the signature's type hints and the docstring's ``Args:``
section, so a tool is documented once, where it is written.

Arguments are validated against the signature *before* the method runs: a call with a
missing, unknown or wrongly typed argument is rejected with an error naming the expected
parameters, and the method never sees it. Tool methods themselves return
``ok(...)``/``fail(...)`` dicts and never raise on bad values.
"""

from __future__ import annotations

import ast
import copy
import inspect
import re
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Optional, Union

__all__ = ["tool", "ToolSpec", "TIMING", "ok", "fail", "collect_tools", "tool_names", "per_class", "validate_arguments",
           "type_hints", "read_annotation"]


def ok(data: Any = None, message: str | None = None) -> dict:
    """A successful tool result: ``data`` for reads, ``message`` for changes."""
    out: dict[str, Any] = {"success": True}
    if data is not None:
        out["data"] = data
    if message is not None:
        out["message"] = message
    return out


def fail(error: str, **extra: Any) -> dict:
    """A failed tool result; the world must be unchanged when this is returned."""
    return {"success": False, "error": error, **extra}


TIMING = ("Time runs on the world's clock: each call a tool runs, one that fails included, moves it on by the "
          "minutes in brackets at the end of the tool's description.")


@dataclass(frozen=True)
class ToolSpec:
    """What the engine knows about one tool."""

    name: str
    description: str
    parameters: dict  # JSON schema of the arguments object
    mutates: bool
    cost: int  # simulated minutes one call takes
    func: Callable[..., dict] = field(repr=False, compare=False)

    @property
    def schema(self) -> dict:
        """The OpenAI function-calling schema of this tool; its description ends with the minutes a call takes, since
        the world's clock runs on them (:data:`TIMING` tells the agent so)."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": f"{self.description} [{self.cost} min]",
                         "parameters": copy.deepcopy(self.parameters)},  # specs share one schema per class
        }


def tool(_func: Callable | None = None, *, mutates: bool = False, cost: int = 1):
    """Mark a world method as an agent tool.

    ``@tool`` for a read, ``@tool(mutates=True, cost=5)`` for a change that takes five
    simulated minutes.
    """

    def mark(func: Callable) -> Callable:
        func.__sttgym_tool__ = {"mutates": mutates, "cost": cost}
        return func

    return mark(_func) if _func is not None else mark


def collect_tools(obj: Any) -> dict[str, ToolSpec]:
    """The tools of ``obj`` (an instance), bound to it, by name."""
    return {name: ToolSpec(name, description, params, marks["mutates"], marks["cost"], getattr(obj, name))
            for name, (description, params, marks) in _described(type(obj)).items()}


def tool_names(cls: type) -> tuple[str, ...]:
    """The names of a class's tools, sorted."""
    return tuple(sorted(_described(cls)))


def per_class(cls: type, key: str, build: Callable[[], Any]) -> Any:
    """``build()``, computed once per class and kept on the class itself (its own, not a parent's).

    The engine's only cache: tool schemas, predicate and operation signatures and an authoring
    kit's tool specs depend on the class alone, and rebuilding them on every reset and ``gym.make``
    was most of their cost.
    """
    cache = cls.__dict__.get("_sttgym_per_class")
    if cache is None:
        cache = {}
        setattr(cls, "_sttgym_per_class", cache)
    if key not in cache:
        cache[key] = build()
    return cache[key]


def _described(cls: type) -> dict[str, tuple[str, dict, dict]]:
    return per_class(cls, "tools", lambda: {
        name: (*_describe(member), member.__sttgym_tool__) for name, member in inspect.getmembers(cls)
        if getattr(member, "__sttgym_tool__", None) is not None})


# --------------------------------------------------------------------------- schema


_ARG_LINE = re.compile(r"^\s{2,}(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its summary and per-argument descriptions."""
    summary_lines: list[str] = []
    arg_docs: dict[str, str] = {}
    section, current = None, None
    for line in inspect.cleandoc(doc or "").splitlines():
        stripped = line.strip()
        if not line.startswith(" ") and stripped.endswith(":") and " " not in stripped:
            section, current = stripped[:-1], None  # a section header: Args:, Returns:, ...
            continue
        if section is None:
            summary_lines.append(stripped)
        elif section in ("Args", "Arguments", "Parameters"):
            m = _ARG_LINE.match(line)
            if m:
                current = m.group(1)
                arg_docs[current] = m.group(2).strip()
            elif stripped and current:
                arg_docs[current] += " " + stripped
    return " ".join(s for s in summary_lines if s), arg_docs


def _type_schema(tp: Any) -> dict:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is str:
        return {"type": "string"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is dict or origin is dict:
        return {"type": "object"}
    if tp is list or origin is list:
        return {"type": "array", "items": _type_schema(args[0])} if args else {"type": "array"}
    if origin is Literal:
        base = _type_schema(type(args[0]))
        return {**base, "enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        non_none = [a for a in args if a is not type(None)]
        if len(non_none) == 1:
            return _type_schema(non_none[0])
        return {"anyOf": [_type_schema(a) for a in non_none]}
    if tp is Any or tp is inspect.Parameter.empty:
        return {}
    raise TypeError(f"tool parameter type {tp!r} has no JSON schema")


# What an annotation may name: the types a schema is derived from (more names can come from the function's module,
# as the aliases ``Cabin = Literal["economy", "business"]`` do), and what may be subscripted.
_TYPE_NAMES: dict[str, Any] = {"str": str, "int": int, "float": float, "bool": bool, "dict": dict, "list": list,
                               "None": None, "Any": Any, "Literal": Literal, "Optional": Optional, "Union": Union,
                               "List": typing.List, "Dict": typing.Dict}
_GENERIC = (list, dict, Optional, Union, typing.List, typing.Dict)


def type_hints(func: Callable) -> dict[str, Any]:
    """``func``'s annotations as types, like ``typing.get_type_hints`` but without evaluating any: one kept as text
    (``from __future__ import annotations``) is read by :func:`read_annotation` in ``func``'s module. Generated
    worlds are described through this, so no annotation of theirs ever runs. A TypeError for one it cannot read."""
    namespace = getattr(func, "__globals__", {})
    return {name: read_annotation(value, namespace) if isinstance(value, str) else value
            for name, value in inspect.get_annotations(func).items()}


def read_annotation(text: str, namespace: dict | None = None) -> Any:
    """The type an annotation's text names, read from its syntax tree, never evaluated: names of
    :data:`_TYPE_NAMES` or of ``namespace`` (looked up, not run), literal constants, subscripts of ``list``, ``dict``,
    ``Optional``, ``Union`` and ``Literal``, and ``|``. A TypeError for anything else."""
    try:
        tree = ast.parse(text, mode="eval").body
        return _read(tree, namespace or {}, text)
    except (SyntaxError, ValueError, RecursionError):
        raise TypeError(f"annotation {text[:80]!r} does not parse or nests too deeply") from None


def _read(node: ast.AST, namespace: dict, text: str) -> Any:
    if isinstance(node, ast.Name):
        if node.id in namespace:
            return namespace[node.id]
        if node.id in _TYPE_NAMES:
            return _TYPE_NAMES[node.id]
    elif isinstance(node, ast.Constant) and node.value is None:
        return None
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return Union[_read(node.left, namespace, text), _read(node.right, namespace, text)]
    elif isinstance(node, ast.Subscript):
        origin = _read(node.value, namespace, text)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if origin is Literal and all(isinstance(i, ast.Constant) for i in items):
            return Literal[tuple(i.value for i in items)]
        if any(origin is g for g in _GENERIC):
            args = tuple(_read(i, namespace, text) for i in items)
            return origin[args if len(args) > 1 else args[0]]
    raise TypeError(f"annotation {text[:80]!r} is not one a tool schema can be derived from")


def _describe(func: Callable) -> tuple[str, dict]:
    hints = type_hints(func)
    summary, arg_docs = _parse_docstring(func.__doc__ or "")
    properties, required = {}, []
    for pname, param in inspect.signature(func).parameters.items():
        if pname == "self":
            continue
        prop = _type_schema(hints.get(pname, Any))
        if pname in arg_docs:
            prop["description"] = arg_docs[pname]
        properties[pname] = prop
        if param.default is inspect.Parameter.empty:
            required.append(pname)
    params = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
    return summary, params


# ----------------------------------------------------------------------- validation


def _matches(value: Any, schema: dict) -> bool:
    if "enum" in schema and value not in schema["enum"]:
        return False
    if "anyOf" in schema:
        return any(_matches(value, s) for s in schema["anyOf"])
    kind = schema.get("type")
    if kind is None:
        return True
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "object":
        return isinstance(value, dict) and all(isinstance(k, str) for k in value)
    if kind == "array":
        items = schema.get("items")
        return isinstance(value, list) and (items is None or all(_matches(v, items) for v in value))
    return False


def _type_name(schema: dict) -> str:
    if "enum" in schema:
        return "one of " + ", ".join(repr(v) for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(_type_name(s) for s in schema["anyOf"])
    if schema.get("type") == "array" and "items" in schema:
        return f"array of {_type_name(schema['items'])}"
    return schema.get("type", "any")


def signature_text(spec: ToolSpec) -> str:
    """``name(a: string, b?: integer)``: how a rejected call is told what was expected."""
    props, req = spec.parameters["properties"], set(spec.parameters["required"])
    parts = [f"{p}{'' if p in req else '?'}: {_type_name(s)}" for p, s in props.items()]
    return f"{spec.name}({', '.join(parts)})"


def validate_arguments(spec: ToolSpec, arguments: Any) -> str | None:
    """Why ``arguments`` cannot be passed to ``spec``'s tool, or None when they can."""
    problem = argument_problem(spec.parameters, arguments)
    return None if problem is None else f"{problem}; expected {signature_text(spec)}"


def argument_problem(parameters: dict, arguments: Any) -> str | None:
    if not isinstance(arguments, dict):
        return "arguments must be a JSON object"
    props, required = parameters["properties"], parameters["required"]
    unknown = [k for k in arguments if k not in props]
    if unknown:
        return f"unknown argument(s) {', '.join(map(repr, map(str, unknown)))}"
    missing = [k for k in required if k not in arguments]
    if missing:
        return f"missing argument(s) {', '.join(map(repr, missing))}"
    for key, value in arguments.items():
        if not _matches(value, props[key]):
            return f"argument {key!r} must be {_type_name(props[key])}"
    return None
