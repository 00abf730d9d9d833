"""Running generated code safely: the audit, a worker process in an OS sandbox, and proxy worlds the engine accepts.

Code an LLM wrote (a :class:`~sttgym.world.World` subclass, a check function, a test configuration) is untrusted.
It runs only after :func:`~sttgym.synth.audit.audit` found nothing to refuse, with restricted builtins, and by
default in a separate worker process (:mod:`sttgym.synth.worker`) inside bubblewrap (its own user, PID, network,
mount and IPC namespaces: no network, a read-only view of the interpreter and its libraries only, no view of this
process or its ``/proc``) under CPU, wall-clock, memory and reply-size :class:`Limits`. Where bubblewrap cannot
run, generated code is refused (:class:`SandboxUnavailable`) unless the user opted in to a plain worker process
with ``STTGYM_SANDBOX=process``::

    World = load_world(source)                     # a proxy class; the code runs in the worker
    env_world = World(state, clock)                # tools, predicates and operations forward to the worker
    verdict = call_function(source, "check", {"state": state})

The proxy class is a World subclass built from what the worker describes: the same tool schemas, the same
predicate and operation signatures, every method the generated classes define forwarded to the worker. Its state
lives in the parent (``world.state`` is the engine's dict, so snapshots, restores and trigger diffs work as for
any world); each forwarded call sends the clock and the state (unless the worker holds that state already, as
after a read) and applies what comes back. Because generated code
may not assign attributes (the audit refuses it), a world instance holds nothing but its state and clock, so the
worker builds a fresh instance per call and needs no handles. The worker is long-lived per loaded class; one a
limit killed, one idle beyond :data:`MAX_LIVE_WORKERS`, or the parent's after a fork is started again (and the
source reloaded) by the next call. ``docs/synthesis-safety.md`` describes the whole design.

Where a limit stops a call: a **tool** returns a failed result (``internal_error`` and ``sandbox`` set to the
kind: tools never raise); a **predicate or operation** raises :class:`SandboxError`, which ends the episode's
step with that error (the engine has no failed result for them). An exception the code itself raised is
re-raised in the parent as the same builtin type (a subclass of it named like the code's own class), so
``World.holds`` and the core's tool guard treat it exactly as for an in-process world.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import weakref
from collections import OrderedDict
from dataclasses import asdict, dataclass, is_dataclass
from multiprocessing.connection import Connection
from typing import Any

from sttgym.synth.audit import audit, execute
from sttgym.tools import fail, per_class, read_annotation
from sttgym.world import World

__all__ = ["audit", "Unsafe", "SandboxError", "SandboxUnavailable", "Limits", "load_world", "call_function", "unload",
           "shutdown", "os_sandbox_problem", "sandbox_mode", "SANDBOX_VARIABLE"]

MIN_MEMORY_MB = 256  # a worker's interpreter and imports take about 130 MB before any generated code runs
MAX_LIVE_WORKERS = 8  # beyond these, the least recently used worker ends; its next call starts it again
START_S = 60.0  # how long a worker may take to start (imports; a loaded machine); not the code's time
MAX_MINUTES = 10 * 366 * 24 * 60  # a clock the code moved past ten years would overflow the engine's datetimes
MAX_TOOL_COST = 7 * 24 * 60  # minutes; the engine adds a tool's cost to the clock on every call
SANDBOX_VARIABLE = "STTGYM_SANDBOX"  # "process": the user's opt-in to plain worker processes where bwrap cannot run


class Unsafe(ValueError):
    """The audit refused the source; ``problems`` says what, one ``"line N: ... is not allowed"`` each."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        shown = "; ".join(self.problems[:10]) + (f"; and {len(self.problems) - 10} more" if len(self.problems) > 10
                                                   else "")
        super().__init__(f"generated code refused: {shown}")


class SandboxError(RuntimeError):
    """Generated code failed at run time. ``kind``: ``timeout`` (wall clock), ``cpu`` (CPU time), ``memory``,
    ``crash`` (the worker died otherwise) or ``error`` (it raised where no failure is expected, or produced what
    cannot come back: non-JSON state or result, a reply over the size limit)."""

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(message)


class SandboxUnavailable(SandboxError):
    """No sandbox to run generated code in: bubblewrap is missing or cannot create its namespaces here, and the
    user did not opt in to plain worker processes. Kind ``unavailable``; the message says how to fix it."""

    def __init__(self, message: str):
        super().__init__("unavailable", message)


@dataclass(frozen=True)
class Limits:
    """What one request to a worker (a load, a call, a function) may use. CPU and wall time are per request;
    memory is the worker's address space (it holds the interpreter and sttgym's core, about 130 MB, too)."""

    cpu_s: float = 5.0
    wall_s: float = 10.0
    memory_mb: int = 1024
    output_mb: float = 8.0  # the largest reply (a result and the state it leaves); the parent parses it whole

    def __post_init__(self) -> None:
        if min(self.cpu_s, self.wall_s, self.output_mb) <= 0 or self.memory_mb < MIN_MEMORY_MB:
            raise ValueError(f"limits must be positive, with memory_mb at least {MIN_MEMORY_MB}: {self}")


def _audited(source: str) -> None:
    problems = audit(source)
    if problems:
        raise Unsafe(problems)


# --------------------------------------------------------------------------------------------- the worker


class _Worker:
    """One sandbox process: started on first use, and again after a limit ended it (re-sending ``preload``)."""

    def __init__(self, limits: Limits, preload: dict | None = None):
        self.limits, self.preload = limits, preload
        self.process: Any = None
        self.conn: Any = None
        self.lock = threading.Lock()
        self.starts = 0  # processes started so far (restarts after a limit included)
        self.seccomp = False  # whether the running process filters its system calls (pyseccomp and libseccomp)
        self.sandbox: dict = {}  # bwrap's report on the running sandbox ("pid-namespace", ...), and a pidfd of its head
        self.held: str | None = None  # the JSON text of the state the process holds from the last call

    def request(self, message: dict, state: str | None = None) -> dict:
        """The worker's reply to ``message`` (and, for a call, ``state``: the world's state as JSON text); a
        SandboxError when a limit or the sandbox stopped it."""
        try:
            data = json.dumps(message, default=_engine_json)
        except (TypeError, ValueError) as exc:
            raise SandboxError("error", f"what the call sends is not JSON: {exc}") from None
        with self.lock:
            if self.process is not None and self.process.poll() is not None:
                self.close()  # it ended between requests (killed from outside): start afresh, lose no call
            if self.process is None:
                self._start()
            _used(self)
            if state is not None and state != self.held:  # a state the worker already holds is not sent again
                data = f'{data[:-1]}, "state": {state}}}'  # spliced: the text is JSON already
            try:
                reply = self._exchange(data.encode())
            except SandboxError:
                self.held = None
                raise
            if state is not None:
                self.held = state if reply.get("state") is None else json.dumps(reply["state"])
            return reply

    def start(self) -> dict | None:
        """Start the process now; the reply to ``preload``."""
        with self.lock:
            _used(self)
            return self._start()

    def _start(self) -> dict | None:
        if os.name != "posix":
            raise SandboxUnavailable("the sandbox's worker needs a POSIX system (its limits are rlimits); run "
                                     "reviewed code with isolate=False")
        parent, child = socket.socketpair()
        # A fresh interpreter (never fork: the parent may hold threads and locks), started with exec rather than
        # multiprocessing's spawn, which would re-run the parent's main script in the worker. It imports the same
        # sttgym as the parent, without the current directory on its path (nothing there can shadow a module),
        # hashes strings with a fixed seed, and sees none of the parent's environment (API keys).
        env = {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "PYTHONHASHSEED": "0",
               "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", "PATH": os.defpath}
        safe_path = ["-P"] if sys.version_info >= (3, 11) else []
        command = [sys.executable, *safe_path, "-m", "sttgym.synth.worker", str(child.fileno()),
                   json.dumps(asdict(self.limits))]
        info = told = None
        if sandbox_mode() == "bwrap":
            info, told = os.pipe()  # where bwrap says which process heads the sandbox
            command = [shutil.which("bwrap"), *_bwrap_arguments(), "--info-fd", str(told), "--", *_INIT, *command]
        try:
            self.process = subprocess.Popen(
                command, pass_fds=[child.fileno()] + ([told] if told is not None else []), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, env=env, cwd="/",
                start_new_session=True)  # a terminal's Ctrl-C reaches the parent, which ends it
        except BaseException:
            if info is not None:
                os.close(info)
            raise
        finally:
            child.close()
            if told is not None:
                os.close(told)
        if info is not None:
            self.sandbox = _sandbox_info(info)
        self.conn = Connection(parent.detach())
        self.starts += 1
        self.held = None
        self.seccomp = bool(self._receive(START_S).get("seccomp"))
        return None if self.preload is None else self._exchange(json.dumps(self.preload).encode())

    def _exchange(self, data: bytes) -> dict:
        try:
            self.conn.send_bytes(data)
        except OSError:
            raise self._ended() from None
        return self._receive(self.limits.wall_s)

    def _receive(self, timeout: float) -> dict:
        if not self.conn.poll(timeout):
            self.close()
            raise SandboxError("timeout", f"no answer within {timeout:g} s of wall-clock time")
        try:
            data = self.conn.recv_bytes(int(self.limits.output_mb * 2**20) + 4096)
        except (EOFError, OSError):  # OSError: longer than maxlength (the pipe is then unusable)
            raise self._ended() from None
        try:
            reply = json.loads(data)
        except (ValueError, RecursionError):
            self.close()
            raise SandboxError("error", "the worker's reply is not readable JSON") from None
        failure = reply.get("failure") if isinstance(reply, dict) else {"kind": "error", "message": "not an object"}
        if failure:
            kind = failure.get("kind") if failure.get("kind") in ("memory", "error") else "error"
            if kind == "memory":
                self.close()
            raise SandboxError(kind, str(failure.get("message")))
        return reply

    def _ended(self) -> SandboxError:
        try:
            code = self.process.wait(2)
        except subprocess.TimeoutExpired:  # alive: it sent more than the reply limit allows
            code = None
        self.close()
        # A signal that ended the worker: a negative status from a plain process, 128 + the signal through bwrap.
        killed_by = -code if code is not None and code < 0 else code - 128 if code is not None and code > 128 else 0
        if killed_by == signal.SIGXCPU:
            return SandboxError("cpu", f"over the {self.limits.cpu_s:g} s CPU-time limit")
        if killed_by == signal.SIGKILL:
            return SandboxError("memory", "the worker was killed (out of memory)")
        return SandboxError("crash", f"the worker ended (exit status {code})")

    def close(self) -> None:
        """End the process, and with it everything in its sandbox (a later request starts a new one)."""
        with _LIVE_LOCK:
            _LIVE.pop(self, None)
        if self.process is not None:
            head = self.sandbox.pop("pidfd", None)
            if head is None:  # a plain process (or a sandbox whose head had already ended)
                self.process.kill()
            else:
                # The sandbox's first process: the kernel ends every process of its PID namespace with it, and bwrap,
                # which reaps it, then exits by itself (killing bwrap first would leave its child unreaped).
                try:
                    signal.pidfd_send_signal(head, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                os.close(head)
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.conn.close()
        self.process = self.conn = None
        self.sandbox = {}


# --------------------------------------------------------------------------------------------- the OS sandbox


def sandbox_mode() -> str:
    """How workers run: ``"bwrap"`` (the default: inside bubblewrap) or ``"process"`` (plain processes, where the user
    opted in with ``STTGYM_SANDBOX=process``); :class:`SandboxUnavailable`, saying how to fix it, when neither can."""
    mode = os.environ.get(SANDBOX_VARIABLE) or "bwrap"
    if mode == "process":
        return mode
    if mode != "bwrap":
        raise SandboxUnavailable(f"{SANDBOX_VARIABLE}={mode!r} is not a sandbox: leave it unset (bubblewrap) or set it "
                                 "to 'process'")
    problem = os_sandbox_problem()
    if problem is not None:
        raise SandboxUnavailable(
            f"generated code runs only inside the OS sandbox, and {problem}. Install bubblewrap (Debian and Ubuntu: "
            f"apt-get install bubblewrap), or set {SANDBOX_VARIABLE}=process to run it in a plain worker process with "
            "no OS isolation (only for code you would run yourself)")
    return mode


def _sandbox_info(fd: int) -> dict:
    """What bwrap reports on the sandbox it started (``child-pid``: the host pid of its first process, and its
    namespaces), read until bwrap closes ``fd``, with a pidfd of that process (a pid could be reused, a pidfd cannot);
    ``{}`` when bwrap ended first."""
    with os.fdopen(fd, "rb") as pipe:
        ready, _, _ = select.select([pipe], [], [], START_S)
        data = pipe.read() if ready else b""
    try:
        info = json.loads(data)
        info["pidfd"] = os.pidfd_open(int(info["child-pid"]))
    except (ValueError, KeyError, TypeError, OSError):  # bwrap failed, or its first process already ended
        return {}
    return info


@functools.lru_cache(maxsize=1)
def os_sandbox_problem() -> str | None:
    """Why bubblewrap cannot sandbox a worker on this machine (not installed, no namespaces), or None when it can:
    it is asked once to start this interpreter exactly as a worker starts."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        probe = subprocess.run([bwrap, *_bwrap_arguments(), "--", *_INIT, sys.executable, "-c", ""],
                               capture_output=True, timeout=START_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap did not start ({exc})"
    if probe.returncode != 0:
        said = probe.stderr.decode("utf-8", "replace").strip()[:300]
        return f"bubblewrap cannot create its sandbox here (exit status {probe.returncode}: {said})"
    return None


# The sandbox's first process (PID 1 of its namespace, bwrap's --as-pid-1): it starts the worker, waits for it and
# exits with its status (128 + the signal that ended it, as bwrap reports one). bwrap's own PID 1 will not do: when
# the worker ends by itself (a CPU limit, a crash), bwrap's outer process exits on the status its PID 1 reports, before
# that PID 1 has ended and without reaping it, so it outlives bwrap until the host's init reaps it (seconds, or never
# where that init reaps nothing). This one is bwrap's child: bwrap exits only once it reaped it, and the kernel holds
# its end back until every other process of the namespace has ended and been reaped, so when the parent's wait for
# bwrap returns nothing of the sandbox is left. The worker is not PID 1 itself: a namespace's init ignores every
# signal it has no handler for but SIGKILL and SIGSTOP, the kernel's SIGXCPU (the CPU limit) included. The first process
# lets go of the worker's end of the socket pair once the worker holds it: the parent sees the pipe close when the
# worker closes it.
_INIT_SOURCE = """import os, sys
worker = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ)
os.closerange(3, 1 << 20)
code = os.waitstatus_to_exitcode(os.waitpid(worker, 0)[1])
os._exit(code if code >= 0 else 128 - code)
"""
_INIT = [sys.executable, "-I", "-S", "-c", _INIT_SOURCE]


def _bwrap_arguments() -> list[str]:
    """What bubblewrap isolates, and the little it shows: new user, PID, network, IPC, UTS and cgroup namespaces
    (no network at all, no other process visible, ``/proc`` its own), every capability dropped, killed with the
    parent, in a session of its own (no terminal to inject keys into), :data:`_INIT` as its first process;
    read-only, only the system's libraries and programs, the interpreter and the directories of ``sys.path``
    (sttgym's package alone, never the checkout around it) and the index of shared libraries; an empty ``/tmp`` and
    ``/dev``, and nothing else (no other file of ``/etc``, no home, no work directories)."""
    arguments = ["--unshare-all", "--unshare-user", "--cap-drop", "ALL", "--die-with-parent", "--new-session",
                 "--as-pid-1", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--chdir", "/tmp"]
    for root in _readable_roots():
        arguments += ["--ro-bind", root, root]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):  # merged-/usr systems make these links into /usr
        if os.path.islink(top):
            arguments += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            arguments += ["--ro-bind", top, top]
    if os.path.isfile("/etc/ld.so.cache"):  # the index of shared libraries, by which libseccomp is found
        arguments += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    return arguments


def _readable_roots() -> list[str]:
    """The directories the worker may read: the system's ``/usr``, the interpreter's prefixes, sttgym's packages
    (``import sttgym`` imports ``sttgym.envs`` too) and every other directory of ``sys.path``, outermost only."""
    import sttgym
    import sttgym.envs

    packages = {os.path.abspath(p) for p in [*sttgym.__path__, *sttgym.envs.__path__]}
    # An editable install's repository holds tests, docs and whatever else lies there: only its packages are shown.
    checkouts = {os.path.dirname(p) for p in packages} - {
        os.path.dirname(p) for p in packages if os.path.basename(os.path.dirname(p)) in ("site-packages", "dist-packages")}
    wanted = {"/usr", sys.base_prefix, sys.prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable)),
              *packages}
    wanted.update(os.path.abspath(p) for p in sys.path if p and os.path.isdir(p))
    wanted -= checkouts
    roots: list[str] = []
    for path in sorted(wanted):
        if not any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots):
            roots.append(path)
    return roots


# Workers by recency of use. The state lives in the parent, so ending an idle worker loses nothing: a pipeline that
# loads hundreds of candidate worlds keeps a bounded number of processes without unloading any.
_LIVE: OrderedDict[_Worker, None] = OrderedDict()
_LIVE_LOCK = threading.Lock()


def _forget_after_fork() -> None:
    """In a forked child: the parent's workers (and any lock a parent thread held) are the parent's; the child
    starts workers of its own on first use, and never ends the parent's."""
    global _LIVE_LOCK
    _LIVE_LOCK = threading.Lock()
    for worker in list(_LIVE) + list(_FUNCTION_WORKERS.values()):
        worker.lock = threading.Lock()
        if worker.conn is not None:
            worker.conn.close()  # the child's copy of the socket; the parent's stays open
        worker.process = worker.conn = worker.held = None
    _LIVE.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


def _used(worker: _Worker) -> None:
    """Mark ``worker`` (whose lock the caller holds) as just used, and end the least recently used beyond the cap."""
    with _LIVE_LOCK:
        _LIVE[worker] = None
        _LIVE.move_to_end(worker)
        idle = list(_LIVE)[:max(0, len(_LIVE) - MAX_LIVE_WORKERS)]
    for other in idle:
        if other.lock.acquire(blocking=False):  # one in use stays; the cap is exceeded only while it is
            try:
                other.close()
            finally:
                other.lock.release()


def _engine_json(value: Any) -> Any:
    """``ctx`` and ``log`` arguments (the engine's Context and EpisodeLog) as tagged JSON the worker rebuilds."""
    from sttgym.checklist import EpisodeLog
    from sttgym.triggers import Context

    if isinstance(value, Context):
        return {"$context": asdict(value)}
    if isinstance(value, EpisodeLog):
        return {"$log": {"calls": value.calls, "said": value.said, "events": value.events,
                         "revealed": value.revealed, "request": value.request}}
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    raise TypeError(f"{type(value).__name__} cannot be sent to the sandbox")


@functools.lru_cache(maxsize=256)
def _exception_class(name: str, base: type[Exception]) -> type[Exception]:
    return type(name, (base,), {"__module__": "sttgym.synth.generated"})


def _exception(raised: dict) -> Exception:
    """The parent's copy of an exception the code raised: its builtin type, or a subclass of it with its name."""
    base = getattr(builtins, str(raised.get("builtin")), RuntimeError)
    if not (isinstance(base, type) and issubclass(base, Exception)):
        base = RuntimeError  # BaseException, SystemExit, KeyboardInterrupt stay in the worker
    name = str(raised.get("type"))
    cls = base if name == base.__name__ else _exception_class(name if name.isidentifier() else "GeneratedError", base)
    return cls(str(raised.get("message", "")))


# --------------------------------------------------------------------------------------------- proxy worlds


def _annotation(text: str | None) -> Any:
    """The type the worker described, read without evaluating anything (never a string a later
    ``typing.get_type_hints`` would evaluate here); none for a type outside the schemas' vocabulary."""
    try:
        return inspect.Parameter.empty if text is None else read_annotation(str(text))
    except TypeError:
        return inspect.Parameter.empty


def _signature(described: dict) -> inspect.Signature:
    empty = inspect.Parameter.empty
    params = [inspect.Parameter(str(p["name"]), inspect._ParameterKind(p["kind"]),
                                annotation=_annotation(p["annotation"]), default=p.get("default", empty))
              for p in described["params"]]
    return inspect.Signature(params, return_annotation=_annotation(described["returns"]))


def _call(worker: _Worker, world: World, name: str, args: tuple, kwargs: dict) -> Any:
    clock = world.clock
    try:
        state = json.dumps(world.state)
    except (TypeError, ValueError) as exc:
        raise SandboxError("error", f"the world's state is not JSON: {exc}") from None
    reply = worker.request({"op": "call", "method": name, "start": clock.start.isoformat(), "minutes": clock.minutes,
                            "args": list(args), "kwargs": kwargs}, state)
    minutes = reply.get("minutes")
    if minutes != clock.minutes:
        if not isinstance(minutes, int) or not clock.minutes < minutes <= MAX_MINUTES:
            raise SandboxError("error", f"the code moved the clock to {minutes!r} minutes (from {clock.minutes})")
        clock.minutes = minutes
    if isinstance(reply.get("state"), dict):
        world.state.clear()  # in place: the world keeps its identity (the engine's snapshots restore into it)
        world.state.update(reply["state"])
    if "raised" in reply:
        raise _exception(reply["raised"])
    return reply.get("value")


def _forwarder(worker: _Worker, name: str, member: dict):
    is_tool = member["tool"] is not None

    def forward(self: World, *args: Any, **kwargs: Any) -> Any:
        try:
            return _call(worker, self, name, args, kwargs)
        except SandboxError as exc:
            if not is_tool:
                raise
            return fail(f"{name} was stopped by the sandbox ({exc.kind}): {exc}", internal_error=True, sandbox=exc.kind)

    forward.__name__ = forward.__qualname__ = name
    forward.__doc__ = member["doc"]
    forward.__signature__ = _signature(member["signature"])
    if is_tool:
        marks = member["tool"]
        forward.__sttgym_tool__ = {"mutates": bool(marks.get("mutates")), "cost": _cost(name, marks["cost"])}
    if member["predicate"]:
        forward.__sttgym_predicate__ = True
    if member["operation"]:
        forward.__sttgym_operation__ = True
    return forward


def _cost(tool: str, cost: Any) -> int:
    """A tool's cost in minutes, or a ValueError: one past a week would soon carry the engine's clock past year 9999."""
    if not isinstance(cost, int) or not 0 <= cost <= MAX_TOOL_COST:
        raise ValueError(f"tool {tool} costs {cost!r} minutes; a cost is a whole number up to {MAX_TOOL_COST}")
    return cost


def _parameters(schema: dict) -> dict:
    """A tool's argument schema as the engine reads it (properties, required names), or a ValueError."""
    if not (isinstance(schema.get("properties"), dict) and isinstance(schema.get("required"), list)
            and all(isinstance(v, dict) for v in schema["properties"].values())
            and all(r in schema["properties"] for r in schema["required"])):
        raise ValueError(f"not an argument schema: {schema!r:.200}")
    return schema


def _proxy_class(description: dict, worker: _Worker) -> type[World]:
    name = str(description["name"])
    namespace: dict[str, Any] = {key: value for key, value in description["attributes"].items()
                                 if str(key).isidentifier() and not str(key).startswith("__")}
    namespace.update({"__module__": "sttgym.synth.generated", "__doc__": description["doc"],
                      "domain": str(description["domain"]), "description": str(description["description"])})
    for member, described in description["members"].items():
        if str(member).isidentifier() and not str(member).startswith("__"):
            namespace[member] = _forwarder(worker, member, described)
    cls = type(name if name.isidentifier() else "GeneratedWorld", (World,), namespace)
    tools = {tool: (str(d), _parameters(p), {"mutates": bool(m.get("mutates")), "cost": _cost(tool, m["cost"])})
             for tool, (d, p, m) in description["tools"].items() if tool in namespace}
    per_class(cls, "tools", lambda: tools)  # the schemas the worker derived from the real annotations
    cls._sttgym_sandbox = worker
    weakref.finalize(cls, worker.close)
    return cls


# --------------------------------------------------------------------------------------------- the API


def _local_world(source: str, class_name: str | None) -> type[World]:
    from sttgym.synth.worker import find_world, module_name

    try:
        return find_world(execute(source, module_name(source)), class_name)
    except Exception as exc:
        raise SandboxError("error", f"loading the world failed: {type(exc).__name__}: {exc}") from exc


def load_world(source: str, *, class_name: str | None = None, limits: Limits = Limits(),
               isolate: bool = True) -> type[World]:
    """The World subclass ``source`` defines (the only one, or ``class_name``), after the audit.

    ``isolate=True``: the code runs in a sandboxed worker process under ``limits`` and the class returned is a
    proxy the engine uses like any world. ``isolate=False``: it runs here with restricted builtins, unbounded and
    with no OS isolation (only for code you reviewed, and tests). Raises :class:`Unsafe` (the audit's problems),
    :class:`SandboxUnavailable` (no sandbox here) or :class:`SandboxError`.
    """
    _audited(source)
    if not isolate:
        return _local_world(source, class_name)
    worker = _Worker(limits, {"op": "load", "source": source, "class_name": class_name})
    try:
        return _proxy_class(worker.start()["value"], worker)
    except SandboxUnavailable:
        raise
    except SandboxError as exc:
        worker.close()
        raise SandboxError(exc.kind, f"loading the world failed: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a description the engine cannot use
        worker.close()
        raise SandboxError("error", f"loading the world failed: {exc}") from None


def unload(world: type[World]) -> None:
    """End the worker of a proxy class now (a later call starts it again); nothing for an in-process class."""
    worker = world.__dict__.get("_sttgym_sandbox")
    if worker is not None:
        with worker.lock:
            worker.close()


_FUNCTION_WORKERS: dict[Limits, _Worker] = {}


def call_function(source: str, name: str, args: dict, *, limits: Limits = Limits()) -> Any:
    """Run the top-level function ``name`` of ``source`` with keyword ``args`` in a worker; its JSON result.

    Each call runs the module afresh in one worker shared by all calls with the same ``limits``. Raises
    :class:`Unsafe`, or :class:`SandboxError` (kind ``error`` when the function raised or returned what is not
    JSON).
    """
    _audited(source)
    worker = _FUNCTION_WORKERS.setdefault(limits, _Worker(limits))
    reply = worker.request({"op": "function", "source": source, "name": name, "args": args})
    if "raised" in reply:
        raised = reply["raised"]
        raise SandboxError("error", f"{name} raised {raised.get('type')}: {raised.get('message')}")
    return reply.get("value")


def shutdown() -> None:
    """End the workers :func:`call_function` keeps (a later call starts one again): at the end of a run."""
    while _FUNCTION_WORKERS:
        worker = _FUNCTION_WORKERS.popitem()[1]
        with worker.lock:
            worker.close()
