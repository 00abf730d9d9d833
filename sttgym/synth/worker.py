"""The sandbox's worker process: runs audited generated code under resource limits, speaks JSON over a pipe.

The parent (:mod:`sttgym.synth.sandbox`) starts it as ``python -m sttgym.synth.worker FD LIMITS`` (a fresh
interpreter; FD is its end of a socket pair, framed by :class:`multiprocessing.connection.Connection`) and sends one
JSON request at a time; the worker answers each with one JSON reply. Nothing crosses the pipe as a pickle, so a
reply is data the parent reads with ``json.loads``, never objects the generated code chose.

Requests:

- ``{"op": "load", "source", "class_name"}``: run the module and describe its World subclass
  (:func:`describe`): reply ``{"value": description}``;
- ``{"op": "call", "method", "start", "minutes", "state", "args", "kwargs"}``: a fresh instance of the loaded
  class over ``state`` (absent: the state the last call left, which the parent knows it holds) and a clock at
  ``start`` + ``minutes`` runs one method the generated classes define: reply ``{"value",
  "minutes", "state"}`` (``state`` null when unchanged) or, when the method raised, ``{"raised": {"type",
  "builtin", "message"}, "minutes", "state"}``;
- ``{"op": "function", "source", "name", "args"}``: run one top-level function of a fresh module.

A reply ``{"failure": {"kind", "message"}}`` is the sandbox's, not the code's: ``memory`` (the worker then exits,
since an allocation failure can leave it half-built) or ``error`` (non-JSON state or result, a reply over the
size limit, a load that fails). Limits the worker cannot report (CPU time, a crash) end the process, and the
parent reads the exit status.
"""

from __future__ import annotations

import builtins
import errno
import hashlib
import inspect
import json
import math
import resource
import signal
import sys
from typing import Any

from sttgym.clock import Clock
from sttgym.synth.audit import ALLOWED_IMPORTS, execute
from sttgym.tools import _described, type_hints
from sttgym.world import World

__all__ = ["main", "find_world", "describe", "module_name", "MARKS"]

MARKS = {"tool": "__sttgym_tool__", "predicate": "__sttgym_predicate__", "operation": "__sttgym_operation__"}


def find_world(namespace: dict, class_name: str | None) -> type[World]:
    """The World subclass the module defined: the only one, or ``class_name``; a ValueError saying why not."""
    module = namespace.get("__name__")
    found = {name: value for name, value in namespace.items()
             if isinstance(value, type) and issubclass(value, World) and value.__module__ == module}
    if class_name is not None:
        if class_name not in found:
            raise ValueError(f"the module defines no World subclass {class_name!r} (it defines {sorted(found)})")
        return found[class_name]
    if len(found) != 1:
        raise ValueError(f"the module must define exactly one World subclass, not {sorted(found) or 'none'}; "
                         "name the one to load with class_name")
    return next(iter(found.values()))


def _json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _annotation(hints: dict, name: str) -> str | None:
    """The text of an annotation's type (``"list[str]"``, ``"Literal['a', 'b']"``), which the parent reads back with
    :func:`~sttgym.tools.read_annotation`; None when there is none."""
    return inspect.formatannotation(hints[name]) if name in hints else None


def _signature(func: Any) -> dict:
    try:
        hints = type_hints(func)  # read, never evaluated: with `from __future__ import annotations` they are text
    except TypeError:
        hints = {}  # a helper annotated with what no schema reads: its signature goes without annotations
    params = []
    for p in inspect.signature(func).parameters.values():
        param: dict[str, Any] = {"name": p.name, "kind": int(p.kind), "annotation": _annotation(hints, p.name)}
        if p.default is not inspect.Parameter.empty:  # a default that is not JSON: only its presence matters
            param["default"] = p.default if _json(p.default) else repr(p.default)
        params.append(param)
    return {"params": params, "returns": _annotation(hints, "return")}


def describe(cls: type[World]) -> dict:
    """What the parent needs to build a proxy class: names, strings, tool schemas, the signatures of the methods the
    generated classes define (marked or not: scenario code may call a world's helpers) and their JSON constants.
    What they inherit unchanged from World runs in the parent."""
    members, attributes = {}, {}
    for klass in cls.__mro__:
        if klass is World or not issubclass(klass, World):
            continue
        for name, value in vars(klass).items():
            if name.startswith("__") or name in members or name in attributes:
                continue
            if inspect.isfunction(value):
                marks = {kind: getattr(value, attr, None) for kind, attr in MARKS.items()}
                members[name] = {"tool": marks["tool"], "predicate": bool(marks["predicate"]),
                                 "operation": bool(marks["operation"]), "doc": value.__doc__,
                                 "signature": _signature(value)}
            elif not callable(value) and not isinstance(value, (property, staticmethod, classmethod)) and _json(value):
                attributes[name] = value
    tools = {name: [description, params, marks] for name, (description, params, marks) in _described(cls).items()}
    return {"name": cls.__name__, "doc": cls.__doc__, "domain": str(cls.domain), "description": str(cls.description),
            "members": members, "attributes": attributes, "tools": tools}


# ---------------------------------------------------------------------------------------------- requests


def _injected(value: Any) -> Any:
    """A ``ctx``/``log`` argument the parent sent tagged (see ``sandbox._engine_json``), as the engine's object."""
    if isinstance(value, dict) and len(value) == 1:
        if "$context" in value:
            from sttgym.triggers import Context

            return Context(**value["$context"])
        if "$log" in value:
            from sttgym.checklist import EpisodeLog

            log = value["$log"]
            return EpisodeLog(calls=log["calls"], said=log["said"], events=log["events"], revealed=log["revealed"],
                              request=log["request"])
    return value


def _raised(exc: BaseException) -> dict:
    """The code's own exception, as the parent re-raises it: its name and its nearest builtin class."""
    builtin = next(k.__name__ for k in type(exc).__mro__ if getattr(builtins, k.__name__, None) is k)
    return {"raised": {"type": type(exc).__name__, "builtin": builtin, "message": str(exc)[:2000]}}


class _Session:
    def __init__(self) -> None:
        self.world: type[World] | None = None
        self.callable: dict[str, bool] = {}
        self.state: dict | None = None  # the state the last call left, and its JSON text
        self.text = ""

    def load(self, request: dict) -> dict:
        self.world = find_world(execute(request["source"], module_name(request["source"])), request["class_name"])
        description = describe(self.world)
        self.callable = dict.fromkeys(description["members"], True)
        return {"value": description}

    def call(self, request: dict) -> dict:
        if self.world is None or request["method"] not in self.callable:
            raise ValueError(f"no method {request['method']!r} in the loaded world")
        if "state" in request:
            self.state, self.text = request["state"], json.dumps(request["state"])
        elif self.state is None:
            raise ValueError("the call sent no state and none is held")
        clock = Clock(request["start"])
        clock.minutes = request["minutes"]
        world = self.world(self.state, clock)
        kwargs = {k: _injected(v) for k, v in request["kwargs"].items()}
        reply: dict[str, Any] = {}
        try:
            reply["value"] = getattr(world, request["method"])(*request["args"], **kwargs)
        except MemoryError:
            raise
        except BaseException as exc:  # the code's own failure, reported to be re-raised by the parent
            reply = _raised(exc)
        try:
            after = json.dumps(world.state)  # strict: a state that is not JSON cannot replay
        except BaseException:
            self.state = None  # the parent sends the state again after any failure
            raise
        changed, self.text = after != self.text, after
        reply.update(minutes=clock.minutes, state=world.state if changed else None)
        return reply

    @staticmethod
    def function(request: dict) -> dict:
        namespace = execute(request["source"], module_name(request["source"]))
        func = namespace.get(request["name"])
        if not inspect.isfunction(func) or func.__globals__ is not namespace:
            raise ValueError(f"the module defines no top-level function {request['name']!r}")
        try:
            value = func(**request["args"])
        except MemoryError:
            raise
        except BaseException as exc:
            return _raised(exc)
        json.dumps(value)  # strict: only JSON values come back
        return {"value": value}


def module_name(source: str) -> str:
    """The module name generated code runs as: one per source, so two candidates' classes never share a name."""
    return "sttgym_generated_" + hashlib.sha1(source.encode()).hexdigest()[:12]


def _encode(reply: dict, limit: int) -> bytes:
    try:
        data = json.dumps(reply, default=str).encode()  # results read like render_result renders them
    except (TypeError, ValueError, RecursionError) as exc:
        return _failure("error", f"the reply is not JSON: {type(exc).__name__}: {exc}")
    if len(data) > limit:
        return _failure("error", f"the reply is {len(data):,} bytes, over the {limit:,}-byte limit")
    return data


def _failure(kind: str, message: str) -> bytes:
    return json.dumps({"failure": {"kind": kind, "message": message[:2000]}}).encode()


# ---------------------------------------------------------------------------------------------- process


def _confine(limits: dict) -> bool:
    """Limits the kernel enforces from here on: no core files, no file writes, an address space of ``memory_mb``
    (soft and hard: without capabilities nothing can raise them), CPU time per request (:func:`_cpu_budget`), and
    the system-call filter of :func:`_filter_system_calls`. Returns whether that filter is in place."""
    for module in ALLOWED_IMPORTS:  # imported now, under no limit, so no request pays for them
        __import__(module)
    import sttgym.checklist  # noqa: F401  (what ctx/log arguments are rebuilt with)
    import sttgym.triggers  # noqa: F401

    sys.dont_write_bytecode = True
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write over RLIMIT_FSIZE fails instead of killing
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    filtered = _filter_system_calls()
    memory = int(limits["memory_mb"]) * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    return filtered


# What no generated code needs once the worker has started, and code that got past the audit would reach for: new
# programs and processes (threads stay: libraries start them), sockets, tracing other processes, namespaces and
# mounts, and the kernel interfaces most exploits go through.
REFUSED_SYSTEM_CALLS = (
    "execve", "execveat", "fork", "vfork", "socket", "socketpair", "ptrace", "process_vm_readv", "process_vm_writev",
    "kcmp", "pidfd_open", "pidfd_getfd", "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "bpf",
    "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key", "io_uring_setup", "personality")
_CLONE_THREAD = 0x10000


def _filter_system_calls() -> bool:
    """Refuse :data:`REFUSED_SYSTEM_CALLS` (EPERM) and ``clone`` of a process rather than a thread, with seccomp
    through libseccomp; False where pyseccomp or libseccomp is missing (the OS sandbox's namespaces still hold)."""
    try:
        import pyseccomp as seccomp

        rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
        for name in REFUSED_SYSTEM_CALLS:
            rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, _CLONE_THREAD, 0))
        # clone3 keeps its flags in memory a filter cannot read: refused as unknown, glibc falls back to clone.
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
        rules.load()
    except (ImportError, OSError, RuntimeError, ValueError):  # no binding or library, a kernel without seccomp
        return False
    return True


def _cpu_budget(cpu_s: float) -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = math.ceil(usage.ru_utime + usage.ru_stime + cpu_s)
    resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def main(conn: Any, limits: dict) -> None:
    """The worker's loop: one JSON request in, one JSON reply out, until the parent closes the pipe."""
    filtered = _confine(limits)
    session = _Session()
    handlers = {"load": session.load, "call": session.call, "function": session.function}
    limit = int(limits["output_mb"] * 2**20)
    conn.send_bytes(json.dumps({"ready": True, "seccomp": filtered}).encode())
    while True:
        try:
            request = json.loads(conn.recv_bytes())
        except EOFError:
            return
        _cpu_budget(limits["cpu_s"])
        exhausted = False
        try:
            data = _encode(handlers[request["op"]](request), limit)
        except MemoryError:
            data, exhausted = _failure("memory", f"over the {limits['memory_mb']} MB memory limit"), True
        except Exception as exc:  # the sandbox's own refusal (a bad load, a state that is not JSON)
            data = _failure("error", f"{type(exc).__name__}: {exc}")
        conn.send_bytes(data)
        if exhausted:
            return


if __name__ == "__main__":
    from multiprocessing.connection import Connection

    main(Connection(int(sys.argv[1])), json.loads(sys.argv[2]))
