"""The static half of the sandbox: an allow-list filter over generated source, and its restricted execution.

:func:`audit` reads a module's syntax tree and never runs it. It visits every expression wherever it stands
(annotations, defaults, decorators, keyword values, f-string fields). It allows what a world, a check function or
a test configuration needs (classes, functions, arithmetic, containers, comprehensions, ``try``, ``match``) and
refuses everything that reaches past the code's own objects:

- imports outside :data:`ALLOWED_IMPORTS`, and ``import m`` of any module but ``math`` (a module's attributes lead
  to other modules: ``re.enum.sys.modules``), so names come one by one with ``from m import name``;
- every dunder name and attribute (``__class__``, ``__globals__``, ``__builtins__``, ...) but a method ``__init__``
  of a class and ``super().__init__``, a private attribute (``x._y``) on anything but ``self``/``cls``, and the
  attributes that reach frames and code without dunders
  (``gi_frame``, ``f_back``, ``tb_frame``, ``mro``, ...), also in ``match`` class patterns;
- ``.format`` on anything but a string literal whose fields read no attribute or item (``"{0.__class__}".format(x)``
  reads one), ``format_map``, and quoted annotations (text the audit cannot read into);
- builtins that escape or do I/O (``exec``, ``eval``, ``getattr``, ``open``, ``type``, ``vars``, ``print``, ...),
  ``global``/``nonlocal`` (state outside ``self.state`` would not replay), generators' ``yield``, ``async``,
  ``with``, metaclasses and class keywords, assignment to attributes (``World.holds = ...`` would patch the
  engine's own class), and world classes redefining what the engine calls (``holds``, ``apply``, ``state``, ...);
- the wall clock (``.now()``/``today``/``utcnow``/``fromtimestamp``/``timestamp``/``astimezone``): simulated time
  is read as ``self.clock.now``, ``self.now`` or ``ctx.now``, never called. These rules catch a model's mistakes;
  code set on nondeterminism could still alias its way to the wall clock, which the pipeline's replays reveal.

:func:`execute` runs audited source with :data:`SAFE_BUILTINS` (whose ``__import__`` enforces the same import
allow-list at run time, handing out only the allowed names). It bounds neither time nor memory, nor isolates
anything from the operating system: that is the sandboxed worker's job (:mod:`sttgym.synth.sandbox`), which
does not rely on this filter being perfect.
"""

from __future__ import annotations

import ast
import builtins
import string
import types
from typing import Any

__all__ = ["audit", "execute", "ALLOWED_IMPORTS", "SAFE_BUILTINS"]

# module -> the names `from module import name` may take ("*": any public name; such modules have no submodules).
ALLOWED_IMPORTS: dict[str, frozenset[str] | str] = {
    "__future__": frozenset({"annotations"}),
    "math": "*",
    "typing": frozenset({"Any", "Literal", "Optional", "Union"}),
    "datetime": frozenset({"datetime", "timedelta", "date", "time"}),
    "collections": frozenset({"defaultdict", "Counter", "deque", "OrderedDict"}),
    "itertools": frozenset({"chain", "combinations", "permutations", "product", "groupby", "islice", "accumulate",
                            "pairwise", "zip_longest", "repeat", "count"}),
    "functools": frozenset({"reduce", "cmp_to_key"}),
    "heapq": frozenset({"heappush", "heappop", "heapify", "heapreplace", "heappushpop", "nlargest", "nsmallest",
                        "merge"}),
    "bisect": frozenset({"bisect", "bisect_left", "bisect_right", "insort", "insort_left", "insort_right"}),
    "re": frozenset({"compile", "match", "fullmatch", "search", "sub", "findall", "split", "escape", "IGNORECASE"}),
    "json": frozenset({"dumps", "loads"}),
    "sttgym.world": frozenset({"World", "predicate", "operation", "json_copy"}),
    "sttgym.tools": frozenset({"tool", "ok", "fail"}),
    # Clock: what a world's constructor is annotated with (the world already holds its instance as self.clock)
    "sttgym.clock": frozenset({"Clock", "parse_time", "local_time", "format_time", "shift", "minutes_between", "hhmm",
                               "floor_to", "ceil_to"}),
    "sttgym.geo": frozenset({"shortest_route"}),
}
MAX_SOURCE = 1_000_000  # characters; a world is a few hundred lines
WHOLE_MODULES = frozenset({"math"})  # `import math`: a C module whose attributes are functions and numbers

_BUILTIN_NAMES = (
    "abs", "all", "any", "ascii", "bin", "bool", "bytes", "callable", "chr", "classmethod", "dict", "divmod",
    "enumerate", "filter", "float", "format", "frozenset", "hex", "int", "isinstance", "issubclass", "iter", "len",
    "list", "map", "max", "min", "next", "oct", "ord", "pow", "property", "range", "repr", "reversed", "round", "set",
    "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "zip",
    "Exception", "ArithmeticError", "AssertionError", "AttributeError", "IndexError", "KeyError", "LookupError",
    "NotImplementedError", "OverflowError", "RuntimeError", "StopIteration", "TypeError", "ValueError",
    "ZeroDivisionError",
)
# Named so the audit can say why; absent from SAFE_BUILTINS either way.
BLOCKED_NAMES = frozenset({
    "exec", "eval", "compile", "open", "input", "print", "breakpoint", "help", "exit", "quit", "getattr", "setattr",
    "delattr", "hasattr", "globals", "locals", "vars", "dir", "type", "object", "memoryview", "bytearray", "id",
    "hash", "BaseException", "SystemExit", "KeyboardInterrupt", "GeneratorExit", "copyright", "credits", "license",
})
# Attributes that reach frames, code, the class graph or format-string field access without a dunder.
BLOCKED_ATTRIBUTES = frozenset({
    "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await", "cr_origin", "ag_frame", "ag_code",
    "ag_await", "f_back", "f_builtins", "f_code", "f_globals", "f_locals", "f_trace", "tb_frame", "tb_next",
    "co_code", "co_consts", "co_names", "mro", "with_traceback", "format", "format_map", "func_globals",
    "func_code",
    # pydantic models reach generated predicates inside an episode's log: file reads, frame reads, class config
    "parse_file", "parse_raw", "parse_obj", "from_orm", "model_rebuild", "update_forward_refs", "model_config",
    "model_fields", "model_computed_fields", "model_construct", "model_json_schema", "schema_json",
})
WALL_CLOCK = frozenset({"today", "utcnow", "fromtimestamp", "utcfromtimestamp", "timestamp", "astimezone"})
# What the engine reads or calls on a world: a generated class that redefined them would behave differently in
# the worker (where its own version runs) and in the parent (where the proxy keeps World's).
RESERVED_MEMBERS = frozenset({"state", "clock", "now", "holds", "apply", "next_id"})

_FORBIDDEN_NODES: dict[type, str] = {
    ast.Global: "global", ast.Nonlocal: "nonlocal", ast.Yield: "yield", ast.YieldFrom: "yield from",
    ast.Await: "await", ast.AsyncFunctionDef: "async def", ast.AsyncFor: "async for", ast.AsyncWith: "async with",
    ast.With: "with",
}


def _dunder(name: str) -> bool:
    return name.startswith("__")


def _engine_private(name: str) -> bool:
    # The engine keeps its per-class caches under this prefix: a class that defined one would forge its own schemas.
    return name.startswith("_sttgym")


def _plain_fields(template: str) -> bool:
    """Whether every replacement field of a format string (nested ones in format specs too) names an argument only:
    no ``.attribute`` or ``[item]`` for the formatting machinery to read."""
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError:
        return False
    return all(name is None or ("." not in name and "[" not in name) and _plain_fields(spec or "")
               for _, name, spec, _ in fields)


def _super_init(node: ast.Attribute) -> bool:
    """Whether ``node`` is ``super().__init__``: a constructor handing on to its base class's, and nothing else."""
    owner = node.value
    return (node.attr == "__init__" and isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name)
            and owner.func.id == "super" and not owner.args and not owner.keywords)


class _Auditor(ast.NodeVisitor):
    def __init__(self) -> None:
        self.problems: list[str] = []
        self.constructors: set[int] = set()  # ids of the `def __init__` methods of class bodies
        self.plain_formats: set[int] = set()  # ids of `"literal".format` attributes whose fields read nothing

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "now":  # simulated times are read, never called
            self.refuse(node, "calling .now() (the wall clock)")
        if (isinstance(func, ast.Attribute) and func.attr == "format" and isinstance(func.value, ast.Constant)
                and isinstance(func.value.value, str)):
            if _plain_fields(func.value.value):
                self.plain_formats.add(id(func))
            else:
                self.refuse(node, "a format field that reads an attribute or item")
                self.plain_formats.add(id(func))  # said once, not again as an attribute
        self.generic_visit(node)

    def refuse(self, node: ast.AST, what: str) -> None:
        self.problems.append(f"line {getattr(node, 'lineno', 0)}: {what} is not allowed")

    # --------------------------------------------------------------- imports

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name not in WHOLE_MODULES:
                self.refuse(node, f"import {alias.name} (use `from module import name` of an allowed module)")
            self._name(node, alias.asname)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        allowed = ALLOWED_IMPORTS.get(node.module or "")
        if node.level or allowed is None:
            self.refuse(node, f"import from {'.' * node.level}{node.module or ''}")
            return
        for alias in node.names:
            if alias.name == "*" or (allowed != "*" and alias.name not in allowed) or _dunder(alias.name):
                self.refuse(node, f"from {node.module} import {alias.name}")
            self._name(node, alias.asname)

    # --------------------------------------------------------------- names and attributes

    def _name(self, node: ast.AST, name: str | None) -> None:
        if name is None or name == "__all__":  # a module's export list: plain data, and domain modules have one
            return
        if _dunder(name) or _engine_private(name):
            self.refuse(node, f"the name {name}")
        elif name in BLOCKED_NAMES:
            self.refuse(node, f"{name}")

    def visit_Name(self, node: ast.Name) -> None:
        self._name(node, node.id)

    def visit_arg(self, node: ast.arg) -> None:
        self._name(node, node.arg)
        self._annotation(node.annotation)
        self.generic_visit(node)  # the annotation is an expression like any other

    def visit_Attribute(self, node: ast.Attribute) -> None:
        attr, owner = node.attr, node.value
        if _super_init(node):
            pass  # a constructor handing on to its base class's (see visit_ClassDef)
        elif _dunder(attr) or _engine_private(attr):
            self.refuse(node, f"the attribute .{attr}")
        elif attr.startswith("_") and not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")):
            self.refuse(node, f"the private attribute .{attr} of anything but self")
        elif attr in BLOCKED_ATTRIBUTES and id(node) not in self.plain_formats:
            self.refuse(node, f"the attribute .{attr} (of anything but a string literal)" if attr == "format"
                        else f"the attribute .{attr}")
        elif attr in WALL_CLOCK:
            self.refuse(node, f"the wall clock (.{attr})")
        elif attr == "now" and not (isinstance(owner, ast.Name) and owner.id in ("self", "ctx")
                                    or isinstance(owner, ast.Attribute) and owner.attr == "clock"):
            self.refuse(node, ".now on anything but self.clock, self or ctx (the wall clock)")
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.refuse(node, f"assignment to an attribute (.{attr}; keep data in self.state)")
        self.generic_visit(node)

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        for attr in node.kwd_attrs:  # `case str(format=f)` reads the attribute as `x.format` would
            if _dunder(attr) or attr.startswith("_") or attr in BLOCKED_ATTRIBUTES or attr in WALL_CLOCK | {"now"}:
                self.refuse(node, f"matching the attribute {attr}")
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        self._name(node, node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        self._name(node, node.name)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self._name(node, node.name)
        self.generic_visit(node)

    def visit_alias(self, node: ast.alias) -> None:
        pass  # checked by the import visitors

    # --------------------------------------------------------------- definitions

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if id(node) not in self.constructors:
            self._name(node, node.name)
        self._annotation(node.returns)
        self.generic_visit(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._name(node, node.name)
        if node.keywords:
            self.refuse(node, "a class keyword (metaclass=...)")
        for item in node.body:
            # A constructor is the one dunder a class may define (a world that fills in its state, calling
            # super().__init__): it runs as the class's other methods do, and reaches nothing they cannot.
            if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                self.constructors.add(id(item))
            names = [item.name] if isinstance(item, ast.FunctionDef) else [
                t.id for t in (item.targets if isinstance(item, ast.Assign) else [getattr(item, "target", None)])
                if isinstance(t, ast.Name)]
            for name in names:
                if name in RESERVED_MEMBERS:
                    self.refuse(item, f"redefining {name} (the engine relies on World's)")
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._annotation(node.annotation)
        self.generic_visit(node)

    def _annotation(self, node: ast.AST | None) -> None:
        """An annotation is code the audit reads: text (a quoted annotation) would hide what it names from the audit,
        so only Literal[...] may hold strings. (Nothing evaluates annotations: sttgym.tools.type_hints reads them.)"""
        if node is None:
            return
        stack = [node]
        while stack:
            item = stack.pop()
            if isinstance(item, ast.Subscript) and isinstance(item.value, ast.Name) and item.value.id == "Literal":
                continue
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                self.refuse(item, "a quoted annotation")
            stack.extend(ast.iter_child_nodes(item))

    def generic_visit(self, node: ast.AST) -> None:
        what = _FORBIDDEN_NODES.get(type(node))
        if what:
            self.refuse(node, what)
        super().generic_visit(node)


def audit(source: str) -> list[str]:
    """What in ``source`` the sandbox refuses, one ``"line N: <what> is not allowed"`` each; ``[]`` when clean.
    Parses only; never executes anything."""
    if len(source) > MAX_SOURCE:
        return [f"line 0: source over {MAX_SOURCE:,} characters is not allowed"]
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:  # ValueError: a NUL byte in the source
        return [f"line {getattr(exc, 'lineno', 0) or 0}: source that does not parse ({getattr(exc, 'msg', exc)}) "
                "is not allowed"]
    except (RecursionError, MemoryError):  # the parser's own depth limits
        return ["line 0: source nested this deeply is not allowed"]
    auditor = _Auditor()
    try:
        auditor.visit(tree)
    except RecursionError:
        return ["line 0: source nested this deeply is not allowed"]
    return auditor.problems


# What C code running in a generated frame imports through that frame's __import__ (datetime.strftime imports
# time, strptime _strptime, str.encode an encodings module). The audit refuses them as import statements.
_INTERNAL_IMPORTS = ("time", "_strptime", "encodings")


def _restricted_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0):
    """``__import__`` for generated code: only allowed names, handed out in a bare namespace, never the module."""
    if not fromlist and not level and name.split(".")[0] in _INTERNAL_IMPORTS:
        return __import__(name)
    allowed = ALLOWED_IMPORTS.get(name)
    if level or allowed is None or (not fromlist and name not in WHOLE_MODULES):
        raise ImportError(f"import of {name!r} is not allowed")
    module = __import__(name, fromlist=["_"])
    if not fromlist:
        return module
    refused = [n for n in fromlist if _dunder(n) or (allowed != "*" and n not in allowed)]
    if refused:
        raise ImportError(f"from {name} import {', '.join(refused)} is not allowed")
    return types.SimpleNamespace(**{n: getattr(module, n) for n in fromlist})


SAFE_BUILTINS: dict[str, Any] = {name: getattr(builtins, name) for name in _BUILTIN_NAMES}
SAFE_BUILTINS.update(__build_class__=builtins.__build_class__, __import__=_restricted_import)


def execute(source: str, module_name: str = "sttgym_generated") -> dict[str, Any]:
    """Run audited ``source`` as a module with :data:`SAFE_BUILTINS`; its namespace. Call :func:`audit` first:
    this adds no check of its own beyond the builtins and imports it offers."""
    namespace: dict[str, Any] = {"__builtins__": dict(SAFE_BUILTINS), "__name__": module_name}
    # dont_inherit: this module's `from __future__ import annotations` must not turn the code's annotations into text
    # (text a later typing.get_type_hints would evaluate, unaudited); the code keeps only the future flags it states.
    code = compile(source, f"<{module_name}>", "exec", dont_inherit=True)
    exec(code, namespace)  # noqa: S102  (audited, restricted builtins)
    return namespace
