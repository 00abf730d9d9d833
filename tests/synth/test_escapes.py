"""The escape corpus: attempts generated code could make to get out of the sandbox, each of which must be refused
by the audit or contained at run time, with the parent unaffected.

Two parts. :data:`CORPUS` goes through the whole sandbox: each attempt is refused by the audit, or passes it and is
contained by the worker's limits. :data:`BEYOND_THE_AUDIT` assumes the audit has a hole: the audit is switched off,
each attempt reaches ``os`` and the real builtins through ``().__class__.__base__.__subclasses__()`` (as the
annotation escape of issue 32 did) and tries to read the host's secrets and files, write and delete them, reach the
network, start processes that outlive the worker, kill or hang the host, or lift its limits; the OS sandbox
(bubblewrap's namespaces, the system-call filter, rlimits) must hold, judged on the host.

``python -m tests.synth.test_escapes`` runs both and prints their figures as ``docs/synthesis-safety.md`` reports
them.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import secrets
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import pytest

from sttgym.clock import Clock
from sttgym.synth import sandbox
from tests.synth.conftest import REQUIRED
from sttgym.synth.sandbox import (Limits, SandboxError, audit, call_function, load_world, os_sandbox_problem,
                                  shutdown, unload)

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
    refused("import_in_annotation", "def f(x: __import__('os')):\n    pass\n", "the name __import__"),
    refused("import_in_default", "def f(x=__import__('os')):\n    pass\n", "the name __import__"),
    refused("import_in_decorator", "@__import__('os').system\ndef f():\n    pass\n", "the name __import__"),
    refused("import_in_function_body", "def f():\n    import os\n    return os\n", "import os"),
    refused("import_never_run", "if False:\n    import subprocess\n", "import subprocess"),
    refused("import_in_except", "try:\n    pass\nexcept ImportError:\n    from os import system\n", "import from os"),
    refused("importlib_by_name", "from importlib import import_module\n", "import from importlib"),
    refused("allowed_module_helper", "from sttgym.tools import inspect\n", "from sttgym.tools import inspect"),
    refused("json_submodule", "from json import decoder\n", "from json import decoder"),
    refused("typing_cast_escape", "from typing import TYPE_CHECKING\n", "from typing import TYPE_CHECKING"),
    refused("operator_attrgetter", "from operator import attrgetter\n", "import from operator"),
    refused("sys_modules_walk", "from sys import modules\n", "import from sys"),
    refused("builtins_module", "import builtins\n", "import builtins"),
    refused("ctypes_module", "from ctypes import CDLL\n", "import from ctypes"),
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
    refused("comprehension_walk", "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close']\n",
            "the attribute .__class__"),
    refused("bound_method_self", "from sttgym.tools import ok\nok.__self__\n", "the attribute .__self__"),
    refused("property_getter_globals", "p = property(abs)\np.fget.__globals__\n", "the attribute .__globals__"),
    refused("static_method_function", "s = staticmethod(abs)\ns.__func__\n", "the attribute .__func__"),
    refused("super_this_class", "from sttgym.world import World\n\n\nclass W(World):\n    def f(self):\n"
                                "        return super().__thisclass__\n", "the attribute .__thisclass__"),
    refused("walrus_walk", "(c := ().__class__)\n", "the attribute .__class__"),
    refused("lambda_walk", "f = lambda: ().__class__.__base__\n", "the attribute .__class__"),
    refused("exception_class_walk", "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.__class__.__mro__\n",
            "the attribute .__class__"),
    # ------------------------------------------------------------------ frames, generators, tracebacks
    refused("generator_frame", "g = (x for x in [1])\ng.gi_frame.f_back.f_globals\n", "the attribute .gi_frame"),
    refused("yield_frame", "def f():\n    yield 1\n", "yield is not allowed"),
    refused("exception_traceback", "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.__traceback__.tb_frame\n",
            "the attribute .__traceback__"),
    refused("traceback_frame", "def f(tb):\n    return tb.tb_frame.f_globals\n", "the attribute .tb_frame"),
    refused("with_traceback", "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.with_traceback(None)\n",
            "the attribute .with_traceback"),
    refused("async_frames", "async def f():\n    pass\n", "async def is not allowed"),
    refused("generator_code", "g = (x for x in [1])\ng.gi_code.co_consts\n", "the attribute .gi_code"),
    refused("frame_locals", "def f(frame):\n    return frame.f_locals\n", "the attribute .f_locals"),
    refused("frame_builtins", "def f(frame):\n    return frame.f_builtins\n", "the attribute .f_builtins"),
    refused("yield_from_frame", "def f():\n    yield from [1]\n", "yield from is not allowed"),
    refused("await_frame", "def f(x):\n    return [await x]\n", "await"),
    refused("generator_send", "def f():\n    x = yield\n", "yield is not allowed"),
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
    refused("fstring_spec_dunder", "f'{1:{().__class__}}'\n", "the attribute .__class__"),
    refused("fstring_conversion_dunder", "from sttgym.tools import ok\nf'{ok.__globals__!r:>8}'\n",
            "the attribute .__globals__"),
    refused("format_field_in_conversion", "'{0!r:{1.__class__}}'.format(1, 2)\n",
            "a format field that reads an attribute"),
    refused("format_in_fstring", "x = f\"{'{0.__class__}'.format(1)}\"\n", "a format field that reads an attribute"),
    refused("format_bound_to_name", "f = 'x'.format\n", "the attribute .format"),
    refused("format_spec_method", "from sttgym.tools import ok\n'{0.__globals__}'.__format__('')\n",
            "the attribute .__format__"),
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
    # A constructor handing on to World's is allowed (Freight's world has one); __init__ reached any other way is not.
    refused("dunder_init_rerun", "from sttgym.world import World\n\n\nclass W(World):\n"
                                 "    def reset(self):\n        self.__init__({}, self.clock)\n",
            "the attribute .__init__"),
    refused("dunder_init_of_a_named_base", "from sttgym.world import World\n\n\nclass W(World):\n"
                                           "    def __init__(self, state, clock):\n"
                                           "        World.__init__(self, state, clock)\n", "the attribute .__init__"),
    refused("dunder_init_outside_a_class", "def __init__():\n    pass\n", "the name __init__"),
    refused("match_class_dunder", "match 1:\n    case int(__class__=c):\n        pass\n",
            "matching the attribute __class__"),
    refused("match_format_method", "from sttgym.tools import ok\nmatch '{0.__globals__}':\n    case str(format=f):\n"
                                   "        f(ok)\n", "matching the attribute format"),
    refused("match_wall_clock", "from datetime import datetime\nmatch datetime(2024, 1, 1):\n"
                                "    case datetime(now=n):\n        n()\n", "matching the attribute now"),
    refused("quoted_annotation", "def f(x: \"__import__('os')\"):\n    pass\n", "a quoted annotation"),
    refused("quoted_forward_ref", "def f(x: list['os.system']):\n    pass\n", "a quoted annotation"),
    refused("system_exit", "raise SystemExit(0)\n", "SystemExit is not allowed"),
    refused("sorted_key_getattr", "sorted([1], key=getattr)\n", "getattr is not allowed"),
    refused("map_vars", "list(map(vars, [abs]))\n", "vars is not allowed"),
    refused("getattr_decoded_name", "from sttgym.tools import ok\ngetattr(ok, b'__globals__'.decode())\n",
            "getattr is not allowed"),
    refused("exec_in_lambda_default", "f = lambda x=exec('1'): x\n", "exec is not allowed"),
    refused("eval_as_decorator_argument", "from sttgym.world import predicate\n@predicate(eval('1'))\ndef f():\n"
                                          "    pass\n", "eval is not allowed"),
    refused("keyboard_interrupt", "raise KeyboardInterrupt\n", "KeyboardInterrupt is not allowed"),
    refused("base_exception_catch", "try:\n    pass\nexcept BaseException:\n    pass\n",
            "BaseException is not allowed"),
    # ------------------------------------------------------------------ annotations: audited as code, never evaluated
    refused("annotation_escape_of_issue_32",
            "from sttgym.tools import tool, ok\nfrom sttgym.world import World\nclass W(World):\n    @tool\n"
            "    def t(self, x: [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "
            "b\"_wrap_close\".decode()][0].__init__.__globals__[b\"system\".decode()](b\"id >&2\".decode())) "
            "-> dict:\n        return ok()\n", "the attribute .__globals__"),
    refused("annotation_future_text", "from __future__ import annotations\ndef f(x: ().__class__.__base__):\n"
                                      "    pass\n", "the attribute .__class__"),
    refused("annotation_positional_only", "def f(x: ().__class__, /):\n    pass\n", "the attribute .__class__"),
    refused("annotation_keyword_only", "def f(*, x: ().__class__):\n    pass\n", "the attribute .__class__"),
    refused("annotation_star_args", "def f(*args: ().__class__):\n    pass\n", "the attribute .__class__"),
    refused("annotation_star_kwargs", "def f(**kwargs: ().__class__):\n    pass\n", "the attribute .__class__"),
    refused("annotation_return", "def f() -> ().__class__.__base__:\n    pass\n", "the attribute .__class__"),
    refused("annotation_variable", "x: ().__class__ = 1\n", "the attribute .__class__"),
    refused("annotation_class_field", "from sttgym.world import World\n\n\nclass W(World):\n"
                                      "    limit: ().__class__.__base__\n", "the attribute .__class__"),
    refused("annotation_call", "def f(x: exec('1')):\n    pass\n", "exec is not allowed"),
    refused("annotation_subscript", "from typing import Literal\ndef f(x: Literal[().__class__]):\n    pass\n",
            "the attribute .__class__"),
    refused("annotation_lambda", "def f(x: (lambda: ().__class__)()):\n    pass\n", "the attribute .__class__"),
    # ------------------------------------------------------------------ defaults, decorators, keyword values
    refused("default_walk", "def f(x=().__class__.__base__.__subclasses__()):\n    pass\n",
            "the attribute .__class__"),
    refused("keyword_only_default_walk", "def f(*, x=().__class__):\n    pass\n", "the attribute .__class__"),
    refused("lambda_default_walk", "f = lambda x=().__class__: x\n", "the attribute .__class__"),
    refused("method_default_walk", "from sttgym.world import World\n\n\nclass W(World):\n"
                                   "    def f(self, x=().__class__):\n        return x\n", "the attribute .__class__"),
    refused("decorator_walk", "@(lambda f: ().__class__)\ndef f():\n    pass\n", "the attribute .__class__"),
    refused("decorator_attribute", "from sttgym.tools import ok\n@ok.__globals__.get\ndef f():\n    pass\n",
            "the attribute .__globals__"),
    refused("class_decorator_walk", "@(lambda c: c.__subclasses__)\nclass C:\n    pass\n",
            "the attribute .__subclasses__"),
    refused("tool_keyword_walk", "from sttgym.tools import tool\n@tool(cost=().__class__)\ndef f(self):\n"
                                 "    pass\n", "the attribute .__class__"),
    refused("call_keyword_walk", "from sttgym.tools import ok\nok(data=().__class__.__base__)\n",
            "the attribute .__class__"),
    refused("double_star_keyword_walk", "from sttgym.tools import ok\nok(**{'data': ().__class__})\n",
            "the attribute .__class__"),
    # ------------------------------------------------------------------ metaclasses and class hooks
    refused("metaclass_of_a_world", "from sttgym.world import World\n\n\nclass W(World, metaclass=type):\n"
                                    "    pass\n", "a class keyword"),
    refused("class_keyword_hook", "from sttgym.world import World\n\n\nclass W(World, hook=print):\n    pass\n",
            "a class keyword"),
    refused("init_subclass_hook", "from sttgym.world import World\n\n\nclass W(World):\n"
                                  "    def __init_subclass__(cls):\n        pass\n", "the name __init_subclass__"),
    refused("class_getitem_hook", "class C:\n    def __class_getitem__(cls, item):\n        pass\n",
            "the name __class_getitem__"),
    refused("set_name_hook", "class D:\n    def __set_name__(self, owner, name):\n        pass\n",
            "the name __set_name__"),
    refused("instance_check_hook", "class M:\n    def __instancecheck__(self, other):\n        return True\n",
            "the name __instancecheck__"),
    refused("getattr_hook", "class G:\n    def __getattr__(self, name):\n        return name\n",
            "the name __getattr__"),
    refused("class_base_walk", "class C(().__class__.__base__):\n    pass\n", "the attribute .__class__"),
    refused("type_as_base", "class C(type):\n    pass\n", "type is not allowed"),
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
    refused("open_in_annotation", "def f(x: open('/etc/passwd')):\n    pass\n", "open is not allowed"),
    refused("input_blocks", "input()\n", "input is not allowed"),
    refused("help_pager", "help(abs)\n", "help is not allowed"),
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
    function("format_width_bomb", "return len(format('x', '>' + str(10**10)))", "memory"),
    function("fstring_width_bomb", "width = 10**10\nreturn len(f'{1:>{width}}')", "memory"),
    function("json_indent_bomb", "from json import dumps\nreturn len(dumps([[1]], indent=10**9))", "memory"),
    function("repeat_bomb", "from itertools import repeat\nreturn len(list(repeat(1, 10**10)))", "memory"),
    function("product_bomb", "from itertools import product\nreturn len(list(product(range(10**4), repeat=4)))",
             "memory|cpu|timeout"),
    function("counter_bomb", "from collections import Counter\nreturn len(Counter(range(10**9)))",
             "memory|cpu|timeout"),
    function("regex_substitution_bomb", "from re import sub\nreturn len(sub('', 'x' * 10**4, 'y' * 10**5))", "memory"),
    function("factorial_bomb", "from math import factorial\nreturn factorial(10**8) > 0", "cpu|timeout"),
    function("integer_to_text_bomb", "return len(str(10**100000))", "error"),
    function("recursive_default_factory", "from collections import defaultdict\nd = defaultdict(lambda: d[0])\n"
                                          "return d[1]", "error"),
    function("default_allocation", "def inner(x=[0] * 10**10):\n    return x\nreturn len(inner())", "memory"),
    Attempt("annotation_allocation", "def attack(x: [0] * 10**10):\n    return 1\n", "memory", "load"),
    Attempt("decorator_busy_loop", "def spin(f):\n    while True:\n        pass\n\n\n@spin\ndef attack():\n"
                                   "    return 1\n", "cpu|timeout", "load"),
    Attempt("class_body_allocation", "from sttgym.world import World\n\n\nclass W(World):\n"
                                     "    table = [0] * 10**10\n", "memory", "load"),
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


# ---------------------------------------------------------------------------------------- beyond the audit

BREAKOUT_LIMITS = Limits(cpu_s=1, wall_s=3, memory_mb=512, output_mb=1)
# What code that got past the audit holds: os, the real builtins and __import__, reached as issue 32's annotation did.
PRELUDE = """    found = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0].__init__.__globals__
    real = found['sys'].modules['builtins'].__dict__
    os, imp, open_ = found['sys'].modules['os'], real['__import__'], real['open']
"""


@dataclass
class Host:
    """What the host holds that no attempt may reach, and how to tell whether one did."""

    token: str  # a secret: in a file outside the sandbox's view, and in the environment of a host process
    secret_file: Path
    holder: subprocess.Popen  # a host process with the token in its environment, as a parent holds API keys
    tcp: socket.socket  # listeners on the host: none may be reached
    udp: socket.socket
    unix: socket.socket
    unix_path: Path
    marker: Path  # host paths no attempt may create
    tmp_marker: Path
    canary: Path  # a file in sttgym's package, which the sandbox shows read-only: none may change or delete it
    checkout: Path  # the repository around the package, which the sandbox hides

    def args(self) -> dict:
        return {"pid": self.holder.pid, "secret_file": str(self.secret_file), "tcp": self.tcp.getsockname()[1],
                "udp": self.udp.getsockname()[1], "unix": str(self.unix_path), "marker": str(self.marker),
                "tmp_marker": str(self.tmp_marker), "canary": str(self.canary), "checkout": str(self.checkout)}


Judge = Callable[[Host, str], "str | None"]


def reveals_the_token(host: Host, said: str) -> str | None:
    return "the host's secret came back" if host.token in said else None


def creates(where: str) -> Judge:
    return lambda host, said: f"{getattr(host, where)} was created" if getattr(host, where).exists() else None


def spares(where: str) -> Judge:
    def judge(host: Host, said: str) -> str | None:
        path = getattr(host, where)
        return None if path.exists() and path.read_text() == host.token and path.stat().st_mode & 0o777 == 0o600 \
            else f"{path} was changed or deleted"
    return judge


def reaches(where: str) -> Judge:
    def judge(host: Host, said: str) -> str | None:
        listener = getattr(host, where)
        listener.setblocking(False)
        try:
            listener.accept() if listener.type == socket.SOCK_STREAM else listener.recv(1)
        except (BlockingIOError, OSError):
            return None
        return f"the host's {where} listener was reached"
    return judge


def shows(*names: str) -> Judge:
    return lambda host, said: f"saw {names}" if any(n in said for n in names) else None


def the_holder_lives(host: Host, said: str) -> str | None:
    return None if host.holder.poll() is None else "a host process was killed"


def says(word: str) -> Judge:
    return lambda host, said: f"it could: {said[:200]}" if word in said else None


@dataclass(frozen=True)
class Breakout:
    """An attempt run with the audit switched off. ``body`` sets ``out`` (its text comes back), holding ``os``,
    ``imp`` (the real ``__import__``), ``open_`` (the real ``open``) and ``host`` (:meth:`Host.args`); ``judges``
    say, from the host, what got out (the reply or the sandbox's error is ``said``)."""

    name: str
    body: str
    judges: tuple[Judge, ...]
    via: str = "function"  # or "load": the body runs in a tool's annotation while the world loads, as in issue 32

    def source(self, host: Host) -> str:
        body = "".join(f"        {line}\n" for line in self.body.splitlines())
        attack = (f"def attack(host):\n{PRELUDE}    try:\n{body}    except real['BaseException'] as exc:\n"
                  f"        out = 'raised ' + repr(exc)\n    return str(out)\n")
        if self.via == "function":
            return attack
        return (f"from sttgym.tools import tool, ok\nfrom sttgym.world import World\n\n{attack}\n\n"
                f"class W(World):\n    @tool\n    def t(self, x: attack({host.args()!r})) -> dict:\n"
                f"        return ok()\n")


def breakout(name: str, body: str, *judges: Judge, via: str = "function") -> Breakout:
    return Breakout(name, body, judges, via)


BEYOND_THE_AUDIT = [
    # ------------------------------------------------------------------ the host's environment and memory
    breakout("environ_of_a_host_process", "out = open_('/proc/%d/environ' % host['pid']).read()", reveals_the_token),
    breakout("environ_of_every_process", "out = [open_('/proc/' + p + '/environ').read() for p in os.listdir('/proc') "
                                         "if p.isdigit()]", reveals_the_token),
    breakout("environ_of_the_parent", "out = open_('/proc/%d/environ' % os.getppid()).read()", reveals_the_token),
    breakout("own_environment", "out = dict(os.environ)", reveals_the_token),
    breakout("memory_of_a_host_process", "f = open_('/proc/%d/mem' % host['pid'], 'rb')\nout = f.read(10**6)",
             reveals_the_token),
    breakout("process_list", "out = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())",
             lambda host, said: f"sees host processes: {said[:100]}"
             if {host.holder.pid, os.getpid()} & {int(n) for n in re.findall(r"\d+", said)} else None),
    breakout("command_lines_of_every_process", "out = [open_('/proc/' + p + '/cmdline').read() for p in "
                                               "os.listdir('/proc') if p.isdigit()]", reveals_the_token),
    breakout("root_of_process_one", "out = open_('/proc/1/root' + host['secret_file']).read()", reveals_the_token),
    breakout("inherited_descriptors", "out = []\nfor fd in os.listdir('/proc/self/fd'):\n    try:\n"
                                      "        os.set_blocking(int(fd), False)\n        out.append(os.read(int(fd), 10**6))\n"
                                      "    except real['OSError'] as exc:\n        out.append(repr(exc))",
             reveals_the_token),
    # ------------------------------------------------------------------ the host's files
    breakout("read_a_host_file", "out = open_(host['secret_file']).read()", reveals_the_token),
    breakout("read_the_password_file", "out = open_('/etc/passwd').read() + open_('/etc/shadow').read()",
             shows("root:x:0:0", "root:*:", "root:!")),
    breakout("list_the_checkout", "out = os.listdir(host['checkout'])", shows("README.md", "pyproject.toml", "tests")),
    breakout("list_the_home", "out = os.listdir(os.path.expanduser('~')) + os.listdir('/root')",
             shows(".bashrc", ".profile", ".cache")),
    breakout("write_a_host_file", "f = open_(host['marker'], 'w')\nf.write('x')\nf.close()\nout = 'wrote'",
             creates("marker")),
    breakout("write_the_host_tmp", "f = open_(host['tmp_marker'], 'w')\nf.write('x')\nf.close()\nout = 'wrote'",
             creates("tmp_marker")),
    breakout("delete_a_host_file", "os.remove(host['secret_file'])\nout = 'deleted'", spares("secret_file")),
    breakout("overwrite_the_package", "f = open_(host['canary'], 'w')\nf.write('pwned')\nf.close()\nout = 'wrote'",
             spares("canary")),
    breakout("delete_from_the_package", "os.remove(host['canary'])\nout = 'deleted'", spares("canary")),
    breakout("chmod_the_package", "os.chmod(host['canary'], 0o777)\nout = 'changed'", spares("canary")),
    breakout("rename_in_the_package", "os.rename(host['canary'], host['canary'] + '.moved')\nout = 'moved'",
             spares("canary")),
    # ------------------------------------------------------------------ the network
    breakout("tcp_to_the_host", "s = imp('socket').create_connection(('127.0.0.1', host['tcp']), timeout=2)\n"
                                "out = 'connected'", reaches("tcp"), says("connected")),
    breakout("udp_to_the_host", "m = imp('socket')\ns = m.socket(m.AF_INET, m.SOCK_DGRAM)\n"
                                "s.sendto(b'x', ('127.0.0.1', host['udp']))\nout = 'sent'", reaches("udp")),
    breakout("unix_socket_of_the_host", "m = imp('socket')\ns = m.socket(m.AF_UNIX)\ns.connect(host['unix'])\n"
                                        "out = 'connected'", reaches("unix"), says("connected")),
    breakout("the_internet", "s = imp('socket').create_connection(('1.1.1.1', 443), timeout=2)\nout = 'connected'",
             says("connected")),
    breakout("name_lookup", "out = 'resolved ' + repr(imp('socket').getaddrinfo('pypi.org', 443))", says("resolved")),
    # ------------------------------------------------------------------ processes
    breakout("shell_command", "out = os.system('touch ' + host['tmp_marker'])", creates("tmp_marker")),
    breakout("subprocess_run", "out = imp('subprocess').run(['touch', host['tmp_marker']]).returncode",
             creates("tmp_marker")),
    breakout("exec_replaces_the_worker", "os.execv('/usr/bin/touch', ['touch', host['tmp_marker']])",
             creates("tmp_marker")),
    breakout("spawn_a_process", "out = os.posix_spawn('/usr/bin/sleep', ['sleep', '30'], {})"),
    breakout("fork_a_daemon", "pid = os.fork()\nif pid == 0:\n    os.setsid()\n    imp('time').sleep(60)\n"
                              "out = 'forked %d' % pid"),
    breakout("fork_bomb", "n = 0\nwhile n < 10000:\n    os.fork()\n    n += 1\nout = 'forked'"),
    breakout("kill_a_host_process", "os.kill(host['pid'], 9)\nout = 'killed'", the_holder_lives),
    breakout("kill_every_process", "os.kill(-1, 9)\nout = 'killed'", the_holder_lives),
    breakout("kill_the_parent", "os.kill(os.getppid(), 9)\nout = 'killed'", the_holder_lives),
    breakout("trace_a_host_process", "out = 'traced %d' % imp('ctypes').CDLL(None).ptrace(16, host['pid'], 0, 0)",
             says("traced 0")),
    breakout("remount_to_reach_the_host", "libc = imp('ctypes').CDLL(None)\nlibc.unshare(0x10000000 | 0x20000)\n"
                                          "libc.mount(b'/', b'/tmp', None, 4096 | 16384, None)\n"
                                          "out = os.listdir('/tmp') + [open_('/tmp' + host['secret_file']).read()]",
             reveals_the_token, shows("README.md")),
    breakout("chroot_breakout", "os.mkdir('/tmp/jail')\nos.chroot('/tmp/jail')\nfor _ in range(20):\n"
                                "    os.chdir('..')\nos.chroot('.')\nout = open_(host['secret_file']).read()",
             reveals_the_token),
    # ------------------------------------------------------------------ limits and hangs
    breakout("lift_the_memory_limit", "r = imp('resource')\nr.setrlimit(r.RLIMIT_AS, (r.RLIM_INFINITY, "
                                      "r.RLIM_INFINITY))\nout = 'lifted'", says("lifted")),
    breakout("lift_the_cpu_limit_and_spin", "r = imp('resource')\nr.setrlimit(r.RLIMIT_CPU, (r.RLIM_INFINITY, "
                                            "r.RLIM_INFINITY))\nwhile True:\n    pass", says("raised")),
    breakout("ignore_signals_and_sleep", "s = imp('signal')\nfor n in (s.SIGTERM, s.SIGINT, s.SIGHUP):\n"
                                         "    s.signal(n, s.SIG_IGN)\nimp('time').sleep(600)", says("raised")),
    breakout("stop_itself", "os.kill(os.getpid(), imp('signal').SIGSTOP)\nout = 'resumed'", says("resumed")),
    breakout("close_the_pipe_and_spin", "os.close(int(found['sys'].argv[1]))\nwhile True:\n    pass",
             says("raised")),
    breakout("thread_bomb", "t = imp('threading')\nfor _ in range(100000):\n    t.Thread(target=imp('time').sleep, "
                            "args=(60,)).start()\nout = 'started'", says("started")),
    # ------------------------------------------------------------------ issue 32's own route: an annotation at load
    breakout("annotation_runs_a_shell_at_load", "out = os.system('touch ' + host['tmp_marker'] + '; id >&2')",
             creates("tmp_marker"), via="load"),
    breakout("annotation_reads_the_parent_at_load",
             "f = open_(host['marker'], 'w')\nf.write(open_('/proc/%d/environ' % os.getppid()).read())\nout = 1",
             creates("marker"), via="load"),
]




def _members(namespace: str) -> list[int]:
    """Host processes still in ``namespace``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and os.readlink(entry / "ns" / "pid") == namespace:
                found.append(int(entry.name))
        except OSError:  # ended meanwhile, or not ours to read
            pass
    return found


def breakout_outcome(attempt: Breakout, host: Host) -> tuple[str, str]:
    """``("contained", what the attempt got)`` or ``("escaped", what got out)``, judged on the host."""
    namespace = None
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sandbox, "_audited", lambda source: None)  # the hole this part of the corpus assumes
        try:
            if attempt.via == "function":
                assert call_function(HEALTHY, "attack", {}, limits=BREAKOUT_LIMITS) == 42  # the worker, started
                namespace = f"pid:[{sandbox._FUNCTION_WORKERS[BREAKOUT_LIMITS].sandbox['pid-namespace']}]"
                said = str(call_function(attempt.source(host), "attack", {"host": host.args()},
                                         limits=BREAKOUT_LIMITS))
            else:
                unload(load_world(attempt.source(host), limits=BREAKOUT_LIMITS))
                said = "loaded"
        except SandboxError as exc:
            said = f"{exc.kind}: {exc}"
        finally:
            shutdown()
    survivors = _members(namespace) if namespace else []
    found = [f"processes outlived the worker: {survivors}"] if survivors else []
    found += [what for judge in attempt.judges if (what := judge(host, said))]
    return ("escaped", "; ".join(found)) if found else ("contained", said[:300])


@contextlib.contextmanager
def hosted(folder: Path) -> Iterator[Host]:
    """A :class:`Host` set up in ``folder`` (and in sttgym's package, the canary), taken down afterwards."""
    import sys

    import sttgym

    token = "sttgym-escape-" + secrets.token_hex(16)
    secret_file = folder / "secret.txt"
    secret_file.write_text(token)
    secret_file.chmod(0o600)
    canary = Path(sttgym.__file__).parent / f".escape-canary-{secrets.token_hex(4)}"
    canary.write_text(token)
    canary.chmod(0o600)
    holder = subprocess.Popen([sys.executable, "-c", f"import time; secret = {token!r}; time.sleep(3600)"],
                              env={**os.environ, "STTGYM_ESCAPE_SECRET": token})
    tcp = socket.create_server(("127.0.0.1", 0))
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    unix_path = folder / "host.sock"
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(unix_path))
    unix.listen()
    found = Host(token, secret_file, holder, tcp, udp, unix, unix_path, folder / "created",
                 Path("/tmp") / f"sttgym-escape-{secrets.token_hex(8)}", canary, Path(sttgym.__file__).parents[1])
    try:
        yield found
    finally:
        holder.kill()
        holder.wait()
        for closing in (tcp, udp, unix):
            closing.close()
        canary.unlink(missing_ok=True)
        found.tmp_marker.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    with hosted(tmp_path_factory.mktemp("host")) as found:
        yield found


def figures(host: Host) -> dict[str, int]:
    """The corpus's figures, as docs/synthesis-safety.md reports them (the OS part only where bwrap runs)."""
    verdicts = [outcome(attempt)[0] for attempt in CORPUS]
    beyond = [breakout_outcome(attempt, host)[0] for attempt in BEYOND_THE_AUDIT] if os_sandbox_problem() is None \
        else []
    return {"attempts": len(CORPUS) + len(beyond), "rejected by the audit": verdicts.count("rejected"),
            "contained at run time": verdicts.count("contained"),
            "contained by the OS sandbox, audit off": beyond.count("contained"),
            "escaped": verdicts.count("escaped") + beyond.count("escaped"),
            "host processes killed": int(host.holder.poll() is not None)}


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
    assert len(CORPUS) + len(BEYOND_THE_AUDIT) >= 130 and len({a.name for a in CORPUS + BEYOND_THE_AUDIT}) == \
        len(CORPUS) + len(BEYOND_THE_AUDIT)
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


@pytest.mark.parametrize("attempt", BEYOND_THE_AUDIT, ids=lambda a: a.name)
def test_the_os_sandbox_holds_where_the_audit_would_not(attempt, host, os_sandbox):
    assert audit(attempt.source(host))  # every one of them is refused when the audit is on
    verdict, detail = breakout_outcome(attempt, host)  # the next one's sandbox starts afresh
    assert verdict == "contained", detail
    assert the_holder_lives(host, "") is None  # the host's processes live on


def test_the_worker_filters_its_system_calls(os_sandbox):
    """The seccomp layer is in place wherever pyseccomp and libseccomp are (CI has both)."""
    call_function(HEALTHY, "attack", {}, limits=LIMITS)
    filtered = sandbox._FUNCTION_WORKERS[LIMITS].seccomp
    if not filtered and not REQUIRED:
        pytest.skip("pyseccomp or libseccomp is missing: the worker runs without its system-call filter")
    assert filtered


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as folder, hosted(Path(folder)) as found:
        table = figures(found)
    print("| " + " | ".join(table) + " |\n|" + "---|" * len(table))
    print("| " + " | ".join(map(str, table.values())) + " |")
    shutdown()
