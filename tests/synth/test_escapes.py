"""The escape corpus: attempts generated code could make to get out of the sandbox, each of which must be refused
by the audit or contained at run time, with the parent unaffected.

``python -m tests.synth.test_escapes`` runs the corpus and prints its figures (attempts, rejected by the audit,
contained at run time, escaped) as ``docs/synthesis-safety.md`` reports them.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass

import pytest

from sttgym.clock import Clock
from sttgym.synth.sandbox import Limits, SandboxError, audit, call_function, load_world, shutdown, unload

# Small limits keep the corpus fast: a worker holds about 130 MB before any code runs.
LIMITS = Limits(cpu_s=0.5, wall_s=3, memory_mb=320, output_mb=1)
WALL_ONLY = Limits(cpu_s=30, wall_s=1, memory_mb=320, output_mb=1)  # a loop that the wall clock stops first
HEALTHY = "def attack():\n    return 42\n"


@dataclass(frozen=True)
class Attempt:
    """One escape attempt. ``via``: ``audit`` (must be refused; ``expect`` is a phrase of the refusal) or how it runs
    when the audit passes it: ``function`` (its ``attack()``), ``load`` (its module body), ``tool``/``predicate``
    (the ``attack`` member of its world); ``expect`` is then the SandboxError kinds that may contain it."""

    name: str
    source: str
    expect: str
    via: str = "audit"
    limits: Limits = LIMITS


def refused(name: str, source: str, reason: str) -> Attempt:
    return Attempt(name, source, reason)


def function(name: str, body: str, kinds: str, limits: Limits = LIMITS) -> Attempt:
    return Attempt(name, "def attack():\n" + "".join(f"    {line}\n" for line in body.splitlines()), kinds, "function",
                   limits)


def member(name: str, body: str, kinds: str, kind: str = "tool") -> Attempt:
    decorator = "@tool(mutates=True)" if kind == "tool" else "@predicate"
    lines = "".join(f"        {line}\n" for line in body.splitlines())
    source = ("from sttgym.tools import fail, ok, tool\nfrom sttgym.world import World, predicate\n\n\n"
              "class AttackWorld(World):\n    domain = \"Attack\"\n    description = \"An attempt.\"\n\n"
              f"    {decorator}\n    def attack(self) -> dict:\n        \"\"\"Attack.\"\"\"\n{lines}")
    return Attempt(name, source, kinds, kind)


CORPUS = [
    # ------------------------------------------------------------------ imports and module walks
    refused("dunder_import", "__import__('os').system('id')\n", "the name __import__"),
    refused("import_os", "import os\n", "import os"),
    refused("from_os_import_system", "from os import system\nsystem('id')\n", "import from os"),
    refused("importlib", "import importlib\nimportlib.import_module('os')\n", "import importlib"),
    refused("relative_import", "from . import secrets\n", "import from ."),
    refused("relative_parent_import", "from ..world import World\n", "import from ..world"),
    refused("allowed_module_reexport", "from sttgym.world import inspect\n", "from sttgym.world import inspect"),
    refused("allowed_module_whole", "import sttgym.world\nsttgym.world.inspect.sys.modules['os']\n",
            "import sttgym.world"),
    refused("package_walk", "from sttgym import world\n", "import from sttgym"),
    refused("module_loader", "import math\nmath.__loader__.load_module('os')\n", "the attribute .__loader__"),
    refused("module_attribute_walk", "import re\nre.enum.sys.modules['os'].system('id')\n", "import re"),
    refused("star_import", "from math import *\n", "from math import *"),
    refused("typing_internals", "from typing import get_type_hints\n", "from typing import get_type_hints"),
    refused("collections_abc", "from collections import abc\n", "from collections import abc"),
    refused("future_feature", "from __future__ import barry_as_FLUFL\n", "from __future__ import barry_as_FLUFL"),
    # ------------------------------------------------------------------ object graph walks
    refused("subclasses_walk", "().__class__.__base__.__subclasses__()\n", "the attribute .__class__"),
    refused("object_subclasses", "object.__subclasses__()\n", "object is not allowed"),
    refused("function_globals", "from sttgym.tools import ok\nok.__globals__['__builtins__']\n",
            "the attribute .__globals__"),
    refused("builtins_name", "__builtins__['eval']('1')\n", "the name __builtins__"),
    refused("code_object", "from sttgym.tools import fail\nfail.__code__.co_consts\n", "the attribute .__code__"),
    refused("mro_walk", "int.mro()[-1]\n", "the attribute .mro"),
    refused("instance_dict", "def f(self):\n    return self.__dict__\n", "the attribute .__dict__"),
    refused("private_attribute", "def f(world):\n    return world._schema\n", "private attribute ._schema"),
    refused("engine_cache_forgery", "from sttgym.world import World\n\n\nclass W(World):\n"
                                    "    _sttgym_per_class = {'tools': {}}\n", "the name _sttgym_per_class"),
    refused("pydantic_file_read", "from sttgym.world import World, predicate\n\n\nclass W(World):\n    @predicate\n"
                                  "    def leak(self, log) -> bool:\n        self.state['x'] = log.observables['t'][0]"
                                  ".parse_file('/etc/passwd')\n        return True\n", "the attribute .parse_file"),
    refused("huge_source", "x = 1\n" * 200_000, "source over 1,000,000 characters"),
    refused("parser_depth_bomb", "x = " + "+".join(["1"] * 100_000) + "\n", "nested this deeply"),
    refused("fullwidth_dunder", "(1).__\uff43\uff4c\uff41\uff53\uff53__\n", "the attribute .__class__"),
    refused("fullwidth_exec", "\uff45\uff58\uff45\uff43('1')\n", "exec is not allowed"),
    # ------------------------------------------------------------------ frames, generators, tracebacks
    refused("generator_frame", "g = (x for x in [1])\ng.gi_frame.f_back.f_globals\n", "the attribute .gi_frame"),
    refused("yield_frame", "def f():\n    yield 1\n", "yield is not allowed"),
    refused("exception_traceback", "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.__traceback__.tb_frame\n",
            "the attribute .__traceback__"),
    refused("traceback_frame", "def f(tb):\n    return tb.tb_frame.f_globals\n", "the attribute .tb_frame"),
    refused("with_traceback", "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.with_traceback(None)\n",
            "the attribute .with_traceback"),
    refused("async_frames", "async def f():\n    pass\n", "async def is not allowed"),
    # ------------------------------------------------------------------ format strings
    refused("str_format_fields", "'{0.__class__.__mro__}'.format(1)\n", "a format field that reads an attribute"),
    refused("str_format_item_field", "'{0[x]}'.format({'x': 1})\n", "a format field that reads an attribute or item"),
    refused("nested_format_field", "'{0:{1.__class__}}'.format(1, 2)\n", "a format field that reads an attribute"),
    refused("format_on_a_variable", "template = '{0.__class__}'\ntemplate.format(1)\n",
            "the attribute .format (of anything but a string literal)"),
    refused("format_map_fields", "'{x.__class__}'.format_map({'x': 1})\n", "the attribute .format_map"),
    refused("unbound_format", "from sttgym.tools import ok\nstr.format('{0.__globals__}', ok)\n",
            "the attribute .format"),
    refused("fstring_dunder", "from sttgym.tools import ok\nf'{ok.__globals__}'\n", "the attribute .__globals__"),
    # ------------------------------------------------------------------ reflective builtins and code execution
    refused("getattr_concat", "from sttgym.tools import ok\ngetattr(ok, '__glo' + 'bals__')\n", "getattr"),
    refused("vars_walk", "from sttgym.tools import ok\nvars(ok)\n", "vars is not allowed"),
    refused("hasattr_probe", "hasattr(1, 'x')\n", "hasattr is not allowed"),
    refused("delattr_engine", "from sttgym.world import World\ndelattr(World, 'holds')\n", "delattr is not allowed"),
    refused("type_three_args", "type('X', (), {})\n", "type is not allowed"),
    refused("metaclass", "from sttgym.world import World\n\n\nclass W(World, metaclass=abs):\n    pass\n",
            "a class keyword"),
    refused("exec_decorator", "@exec\ndef f():\n    pass\n", "exec is not allowed"),
    refused("eval_string", "eval('1 + 1')\n", "eval is not allowed"),
    refused("compile_code", "compile('1', 'x', 'eval')\n", "compile is not allowed"),
    refused("globals_write", "globals()['x'] = 1\n", "globals is not allowed"),
    refused("breakpoint_debugger", "breakpoint()\n", "breakpoint is not allowed"),
    refused("memoryview_raw", "memoryview(b'x')\n", "memoryview is not allowed"),
    refused("reduce_pickle", "class P:\n    def __reduce__(self):\n        return (print, ('pwned',))\n",
            "the name __reduce__"),
    refused("dunder_init", "from sttgym.world import World\n\n\nclass W(World):\n"
                           "    def __init__(self, state, clock):\n        super().__init__(state, clock)\n",
            "the name __init__"),
    refused("match_class_dunder", "match 1:\n    case int(__class__=c):\n        pass\n",
            "matching the attribute __class__"),
    refused("match_format_method", "from sttgym.tools import ok\nmatch '{0.__globals__}':\n    case str(format=f):\n"
                                   "        f(ok)\n", "matching the attribute format"),
    refused("match_wall_clock", "from datetime import datetime\nmatch datetime(2024, 1, 1):\n"
                                "    case datetime(now=n):\n        n()\n", "matching the attribute now"),
    refused("quoted_annotation", "def f(x: \"__import__('os')\"):\n    pass\n", "a quoted annotation"),
    refused("quoted_forward_ref", "def f(x: list['os.system']):\n    pass\n", "a quoted annotation"),
    refused("system_exit", "raise SystemExit(0)\n", "SystemExit is not allowed"),
    # ------------------------------------------------------------------ I/O, wall clock, randomness
    refused("open_file", "open('/etc/passwd').read()\n", "open is not allowed"),
    refused("with_open", "with open('x', 'w') as f:\n    pass\n", "with is not allowed"),
    refused("print_output", "print('hi')\n", "print is not allowed"),
    refused("unseeded_random", "import random\n", "import random"),
    refused("random_from", "from random import random\n", "import from random"),
    refused("secrets_token", "from secrets import token_hex\n", "import from secrets"),
    refused("time_module", "import time\n", "import time"),
    refused("datetime_now", "from datetime import datetime\nx = datetime.now()\n", ".now on anything but"),
    refused("now_called_on_the_clock", "def f(self):\n    return self.clock.now()\n",
            "calling .now() (the wall clock)"),
    refused("date_today", "from datetime import date\nx = date.today()\n", "the wall clock (.today)"),
    refused("utcnow", "from datetime import datetime\nx = datetime.utcnow()\n", "the wall clock (.utcnow)"),
    refused("wall_clock_via_simulated", "def f(self):\n    return self.clock.now.now()\n", ".now on anything but"),
    # ------------------------------------------------------------------ patching the engine, hidden state
    refused("patch_engine_class", "from sttgym.world import World\nWorld.holds = lambda *a, **k: True\n",
            "assignment to an attribute"),
    refused("patch_through_default", "from sttgym.world import World\ndef f(self=World):\n    self.apply = None\n",
            "assignment to an attribute"),
    refused("delete_engine_method", "from sttgym.world import World\ndel World.holds\n", "assignment to an attribute"),
    refused("override_holds", "from sttgym.world import World\n\n\nclass W(World):\n    def holds(self, pred):\n"
                               "        return True\n", "redefining holds"),
    refused("global_state", "n = 0\ndef f():\n    global n\n    n += 1\n", "global is not allowed"),
    refused("nonlocal_state", "def f():\n    n = 0\n    def g():\n        nonlocal n\n", "nonlocal is not allowed"),
    refused("syntax_error", "def (:\n", "does not parse"),
    refused("nul_byte", "x = 1\0\n", "does not parse"),
    # ------------------------------------------------------------------ resources, at run time
    function("list_allocation", "return len([0] * 10**10)", "memory"),
    function("string_allocation", "return len('x' * 10**12)", "memory"),
    function("bytes_allocation", "return len(bytes(10**10))", "memory"),
    function("huge_power", "return 10**10**10 > 0", "cpu|memory|timeout"),
    function("busy_loop", "while True:\n    pass", "cpu|timeout"),
    function("wall_clock_loop", "while True:\n    pass", "timeout", WALL_ONLY),
    function("memory_growth", "x = []\nwhile True:\n    x.append('y' * 10**6)", "memory"),
    function("endless_iterator", "from itertools import count\nreturn list(count())", "memory|cpu|timeout"),
    function("huge_sort", "return len(sorted(range(10**9)))", "memory"),
    function("regex_backtracking", "from re import match\nreturn bool(match('(a+)+$', 'a' * 40 + 'b'))", "cpu|timeout"),
    function("deep_recursion", "return attack()", "error"),
    function("output_flood", "return 'x' * (3 * 2**20)", "error"),
    function("non_json_result", "return {1, 2}", "error"),
    function("deeply_nested_result", "x = []\nfor _ in range(100000):\n    x = [x]\nreturn x", "error"),
    function("unprintable_integer", "return 10**100000", "error"),
    function("json_bomb", "from json import loads\nreturn loads('[' * 10**6 + ']' * 10**6)", "error"),
    function("exception_message_flood", "raise ValueError('x' * 10**7)", "error"),
    Attempt("module_body_loop", "while True:\n    pass\n", "cpu|timeout", "load"),
    Attempt("module_body_allocation", "x = [0] * 10**10\n", "memory", "load"),
    member("tool_busy_loop", "while True:\n    pass", "cpu|timeout"),
    member("tool_allocation", "x = 'y' * 10**10\nreturn ok(len(x))", "memory"),
    member("tool_output_flood", "return ok('x' * (3 * 2**20))", "error"),
    member("tool_non_json_state", "self.state['x'] = {1, 2}\nreturn ok()", "error"),
    member("tool_deep_state", "x = []\nfor _ in range(100000):\n    x = [x]\nself.state['x'] = x\nreturn ok()",
           "error"),
    member("tool_clock_overflow", "self.clock.advance(10**12)\nreturn ok()", "error"),
    Attempt("tool_cost_overflow", "from sttgym.tools import ok, tool\nfrom sttgym.world import World\n\n\n"
                                  "class W(World):\n    @tool(cost=10**12)\n    def attack(self) -> dict:\n"
                                  "        \"\"\"Each call would carry the clock past year 9999.\"\"\"\n"
                                  "        return ok()\n", "error", "load"),
    member("predicate_busy_loop", "while True:\n    pass", "cpu|timeout", kind="predicate"),
]


def outcome(attempt: Attempt) -> tuple[str, str]:
    """``("rejected", the audit's problems)``, ``("contained", the SandboxError kind)`` or ``("escaped", what ran)``."""
    problems = audit(attempt.source)
    if problems:
        return "rejected", "; ".join(problems)
    try:
        if attempt.via == "function":
            value = call_function(attempt.source, "attack", {}, limits=attempt.limits)
        else:
            world = load_world(attempt.source, limits=attempt.limits)
            try:
                instance = world({}, Clock("2024-05-01T09:00"))
                value = (instance.attack() if attempt.via == "tool" else
                         instance.holds({"name": "attack", "args": {}}) if attempt.via == "predicate" else world)
            finally:
                unload(world)
    except SandboxError as exc:
        return "contained", exc.kind
    if isinstance(value, dict) and value.get("sandbox"):  # a tool stopped by a limit fails, it never raises
        return "contained", value["sandbox"]
    return "escaped", repr(value)[:200]


def figures(corpus: list[Attempt] = CORPUS) -> dict[str, int]:
    verdicts = [outcome(attempt)[0] for attempt in corpus]
    return {"attempts": len(corpus), "rejected by the audit": verdicts.count("rejected"),
            "contained at run time": verdicts.count("contained"), "escaped": verdicts.count("escaped")}


@pytest.fixture(scope="module", autouse=True)
def _workers_end():
    yield
    shutdown()


def _listings() -> dict[str, set[str]]:
    """What the parent's working directory and the workers' ("/") hold: no attempt may add to either."""
    return {path: set(os.listdir(path)) for path in (os.getcwd(), "/")}


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_the_corpus_is_large_and_its_runtime_attempts_pass_the_audit():
    assert len(CORPUS) >= 50 and len({a.name for a in CORPUS}) == len(CORPUS)
    runtime = [a for a in CORPUS if a.via != "audit"]
    assert {k for a in runtime for k in a.expect.split("|")} == {"cpu", "memory", "timeout", "error"}
    assert [a.name for a in runtime if audit(a.source)] == []  # or they would test the audit, not the limits


@pytest.mark.parametrize("attempt", CORPUS, ids=lambda a: a.name)
def test_every_attempt_is_stopped_and_the_parent_is_unaffected(attempt):
    peak, listings = _peak_mb(), _listings()
    verdict, detail = outcome(attempt)
    if attempt.via == "audit":
        assert verdict == "rejected" and attempt.expect in detail, detail
    else:
        assert verdict == "contained" and detail in attempt.expect.split("|"), (verdict, detail)
    assert _listings() == listings  # nothing written
    assert _peak_mb() - peak < 64  # the parent never held what the code allocated
    assert call_function(HEALTHY, "attack", {}, limits=LIMITS) == 42  # and still runs generated code


if __name__ == "__main__":
    table = figures()
    print("| " + " | ".join(table) + " |\n|" + "---|" * len(table))
    print("| " + " | ".join(map(str, table.values())) + " |")
    shutdown()
