"""The cycle-tracing reference agent of ScrambleToolBench §4.2: discover every tool once, then trace drift.

The agent has no privileged information about the mapping: it learns identifiers, argument
keys and status tokens from its observations and the tool listing alone. The one thing it
reads off the env is what the hidden keys inside a record mean, once it knows which function
answered (see :func:`_field_names`). What it knows beforehand is a :class:`Playbook`, an operator's prior knowledge of
the terminal *without its mapping*: each function's plaintext parameters, how each answers
a nonsense probe, and the procedure for each kind of task. A package registers its playbook
with :func:`register_playbook` (the ScrambleTool terminal's is known by name and loaded on
first use); the agent uses the one that recognises the first goal it is given.

Its policy:

- **Full operational discovery** (first task): one call with no arguments to every
  identifier; the functions that take none answer with data, the others with a schema
  mismatch that gives their argument keys and types. A second, correctly shaped call with
  probe values then gets a function-specific answer. Each function is recognised from its
  answer, and its output keys (which follow it wherever its identifier moves) become its
  fingerprint. That costs ``no-argument functions + 2 x the others`` calls (47 for the
  paper's 28).
- **Cycle tracing** (later tasks): when an identifier answers with another function's
  fingerprint ``g``, the tool the agent wanted moved, and ``g`` came from the identifier
  the agent last knew it at; calling that one next walks the drift's cycle backwards until
  the wanted function answers, updating the map on every call (§4.2: ``cycle length - 1``
  extra calls). When the chain breaks, it falls back to the identifiers not yet tried.
- **Retries** a call that timed out, at once.
- **Focused execution** inside execution windows: after discovery, the only calls are the
  task's procedure; an expired window restarts it from the trigger.
"""

from __future__ import annotations

import importlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Generator

import gymnasium as gym

from sttgym.agents.base import Agent
from sttgym.wrappers.obfuscation import MISMATCH, Obfuscate
from sttgym.wrappers.window import EXPIRED, NOT_OPEN

__all__ = ["CycleTracingAgent", "Playbook", "register_playbook", "playbook_named", "PLAYBOOKS", "signature", "probe_arguments"]

META = ("submit_solution", "skip_task", "end_episode")
PROBE = "zz-probe"
Procedure = Generator[tuple[str, dict], Any, str]


@dataclass(frozen=True)
class Playbook:
    """What an operator knows about a terminal before seeing its mapping.

    Attributes:
        functions: function -> its parameters and their JSON types, in signature order.
        signatures: (parameter types, :func:`signature` of its answer to probe arguments)
            -> function; the no-argument functions are keyed by their answer to ``{}``.
        echoed: for a function with two parameters of one type, the parameter whose probe
            value its answer quotes (how the agent tells the two apart).
        goal: the goal an observation announces, or None.
        plan: a goal -> the procedure that solves it (see ``Template.procedure``), or None.
    """

    functions: dict[str, dict[str, str]]
    signatures: dict[tuple, str]
    echoed: dict[str, str]
    goal: Callable[[str], str | None]
    plan: Callable[[str], Procedure | None]


PLAYBOOKS: dict[str, Playbook | Callable[[], Playbook]] = {
    "ScrambleTool": lambda: importlib.import_module("sttgym.envs.scramble.playbook").playbook(),
}


def register_playbook(name: str, playbook: Playbook | Callable[[], Playbook]) -> None:
    """Make ``playbook`` (or a function that builds it on first use) known to the agent."""
    PLAYBOOKS[name] = playbook


def playbook_named(name: str) -> Playbook:
    """A registered playbook, built now if it was registered as a function."""
    if not isinstance(PLAYBOOKS[name], Playbook):
        PLAYBOOKS[name] = PLAYBOOKS[name]()
    return PLAYBOOKS[name]


def probe_arguments(types: list[str]) -> list[Any]:
    """Nonsense values of ``types``; the strings are distinct, so an answer quoting one tells which argument it was."""
    return [1 if kind == "integer" else f"{PROBE}-{i}" for i, kind in enumerate(types)]


def signature(ok: bool, value: Any) -> tuple:
    """The shape of an answer, stripped of anything probe- or machine-specific, and of key names (hidden per
    episode): a record by its fields' types in order, rows by their first row's."""
    if not ok:
        return ("error", re.sub(rf"{PROBE}-\d+", "<probe>", str(value)))
    if isinstance(value, dict):
        return ("dict", tuple(type(v).__name__ for v in value.values()))
    if isinstance(value, list):
        return ("rows", signature(True, value[0])[1]) if value and isinstance(value[0], dict) else ("list",)
    return (type(value).__name__,)


class _TaskChanged(Exception):
    """The curriculum moved on (budget spent) while the agent was busy with the previous task."""


class CycleTracingAgent(Agent):
    """See the module docstring.

    Args:
        playbook: the prior knowledge to use (default: the registered one that knows the first goal).
        max_retries: consecutive timeouts of one call before giving the call up.
        attempts: tries of one task's procedure (after a wrong answer or an expired window) before skipping it.
    """

    def __init__(self, playbook: Playbook | None = None, max_retries: int = 25, attempts: int = 4):
        self.fixed_playbook, self.max_retries, self.attempts = playbook, max_retries, attempts

    def reset(self, observation: str, info: dict, env: gym.Env | None = None, seed: int | None = None) -> None:
        self.playbook = self.fixed_playbook or next(
            (p for p in map(playbook_named, list(PLAYBOOKS)) if p.goal(observation)), None)
        self.reveal = _field_names(env)
        names = [t["function"]["name"] for t in info.get("tools", [])]
        self.ids = [n for n in names if n not in META]
        self.plain = self.playbook is not None and set(self.ids) <= set(self.playbook.functions)
        self.function_at: dict[str, str] = {}  # identifier -> function, as last observed
        self.identifier_of: dict[str, str] = {}  # function -> identifier, as last observed
        self.owner_of_key: dict[str, str] = {}  # output key -> function (the fingerprints)
        self.keys: dict[str, dict[str, str]] = {}  # function -> parameter -> argument key
        self.tokens: dict[bool, str] = {}
        self.first: dict[str, dict] = {}  # identifier -> its answer to {} (discovery)
        self.fresh: dict[str, Any] = {}  # no-argument answers still current (same task, no window)
        self.verified: dict[str, str | None] = {}  # identifier -> function that answered there in this task
        self.before: dict[str, str] | None = None  # function -> identifier, as the current task found the table
        if self.plain:
            self.function_at, self.identifier_of = {f: f for f in self.ids}, {f: f for f in self.ids}
            self.keys = {f: {p: p for p in self.playbook.functions[f]} for f in self.ids}
        self.mapped = self.plain
        self.goal: str | None = None
        self.changed = self.expired = self.windowed = False
        self.script = self._episode(observation)
        self.started = False

    def act(self, observation: str, info: dict) -> dict[str, Any]:
        if self.playbook is None:
            return {"name": "end_episode", "arguments": {}}
        if not self.started:
            self.started = True
            return next(self.script)
        return self.script.send(observation)

    # ----------------------------------------------------------------- episode

    def _episode(self, observation: str) -> Generator[dict, str, None]:
        self._read(observation)
        while self.goal is not None:
            self.changed = False
            try:
                if not self.mapped:
                    yield from self._discover()
                yield from self._solve(self.goal)
            except _TaskChanged:
                continue
        while True:  # the episode is over; nothing should ask again
            yield {"name": "end_episode", "arguments": {}}

    def _read(self, observation: str) -> Any:
        """The result at the head of ``observation``; notices after it update the agent's view."""
        try:
            result, end = json.JSONDecoder().raw_decode(observation)
        except json.JSONDecodeError:
            result, end = None, 0
        notices = observation[end:]
        goal = self.playbook.goal(notices)
        if goal is not None:  # a task starts: drift may have struck, so nothing seen before is certain
            self.goal, self.changed, self.fresh, self.verified, self.before = goal, True, {}, {}, None
        if "execution window" in notices:
            self.windowed, self.fresh = True, {}
        if EXPIRED in notices:
            self.expired = True
        return result

    def _send(self, action: dict, expect_change: bool = False) -> Generator[dict, str, Any]:
        result = self._read((yield action))
        if self.changed and not expect_change:
            raise _TaskChanged
        return result

    def _call(self, identifier: str, arguments: dict) -> Generator[dict, str, Any]:
        """Call ``identifier``, again while it times out."""
        for _ in range(self.max_retries):
            result = yield from self._send({"name": identifier, "arguments": arguments})
            if not (isinstance(result, dict) and result.get("retryable")):
                break
        return result

    # --------------------------------------------------------------- discovery

    def _discover(self) -> Generator[dict, str, None]:
        for identifier in self.ids:
            if identifier not in self.first:
                self.first[identifier] = yield from self._call(identifier, {})
        refusals = {i: r for i, r in self.first.items() if _mismatch(r)}
        for result in list(refusals.values())[:1]:  # a refusal carries the failure token beside its message
            self.tokens[False] = next(v for v in result.values() if v != _mismatch(result))
        counts = Counter(v for i, r in self.first.items() if i not in refusals for v in r.values() if isinstance(v, str))
        if counts:
            self.tokens[True] = counts.most_common(1)[0][0]
        for identifier, result in self.first.items():
            if identifier in self.function_at:
                continue
            if identifier not in refusals:
                ok, value = self._payload(result)
                function = self.playbook.signatures.get(((), signature(ok, value)))
                self._learn(identifier, function, {}, result)
                if function is not None:
                    self.fresh[function] = self.reveal(function, value)
                continue
            types = _expected(_mismatch(result))
            arguments = dict(zip(sorted(types), probe_arguments([types[k] for k in sorted(types)])))
            answer = yield from self._call(identifier, arguments)
            ok, value = self._payload(answer)
            function = self.playbook.signatures.get((tuple(sorted(types.values())), signature(ok, value)))
            self._learn(identifier, function, self._roles(function, types, arguments, value), result, answer)
        self.mapped = True

    def _roles(self, function: str | None, types: dict[str, str], probes: dict[str, Any], answer: Any) -> dict:
        """parameter -> argument key: by type, and between two keys of one type, by which probe the answer quotes."""
        if function is None:
            return {}
        roles, free = {}, dict(types)
        for param, kind in self.playbook.functions[function].items():
            candidates = [k for k, t in free.items() if t == kind]
            quoted = [k for k in candidates if str(probes[k]) in str(answer)]
            if len(candidates) > 1 and quoted:
                wanted = self.playbook.echoed.get(function) == param
                candidates = [k for k in candidates if (k in quoted) == wanted] or candidates
            roles[param] = candidates[0]
            del free[candidates[0]]
        return roles

    def _learn(self, identifier: str, function: str | None, keys: dict, *answers: dict) -> None:
        if function is None:
            return
        self._observe(identifier, function)
        if keys or function not in self.keys:
            self.keys[function] = keys
        for answer in answers:
            if isinstance(answer, dict) and not answer.get("retryable"):
                self.owner_of_key.update((key, function) for key in answer)

    # ----------------------------------------------------------------- solving

    def _solve(self, goal: str) -> Generator[dict, str, None]:
        for _ in range(self.attempts):
            procedure = self.playbook.plan(goal)
            if procedure is None:
                break
            self.expired = False
            answer = yield from self._run(procedure)
            if answer is None:
                continue
            result = yield from self._send({"name": "submit_solution", "arguments": {"solution": answer}},
                                           expect_change=True)
            if self.changed:
                return
            if isinstance(result, dict) and result.get("success"):
                self.goal = None  # solved, and nothing announced after it: the curriculum is over
                return
            if NOT_OPEN not in str(result):
                self.fresh = {}  # a wrong answer: read everything again
        yield from self._send({"name": "skip_task", "arguments": {}}, expect_change=True)

    def _run(self, procedure: Procedure) -> Generator[dict, str, str | None]:
        """Drive ``procedure``; its answer, or None if a window expired or a step went wrong."""
        try:
            request = next(procedure)
            while True:
                ok, value = yield from self._use(*request)
                if self.expired or not ok:
                    return None
                request = procedure.send(value)
        except StopIteration as done:
            return done.value
        except (LookupError, TypeError, ValueError, AttributeError, RuntimeError):
            return None  # the data did not fit the procedure (stale or unexpected): try again

    def _use(self, function: str, arguments: dict) -> Generator[dict, str, tuple[bool, Any]]:
        """Run ``function`` wherever it now lives, tracing the drift's cycle when it moved."""
        if function in self.fresh and not self.windowed:
            return True, self.fresh.pop(function)
        if self.before is None:
            self.before = dict(self.identifier_of)  # the table as the task found it
        identifier = self.identifier_of.get(function)
        if identifier in self.verified and self.verified[identifier] != function:
            identifier = self._successor(self.verified[identifier])
        while identifier is not None:
            result = yield from self._call(identifier, {self.keys.get(function, {}).get(p, p): v
                                                        for p, v in arguments.items()})
            if self.expired:
                return False, None
            answered = function if self.plain else self._owner(result)
            self._observe(identifier, answered)
            if answered == function:
                ok, value = self._payload(result)
                return ok, self.reveal(function, value)
            identifier = self._successor(answered)
        return False, None

    def _observe(self, identifier: str, function: str | None) -> None:
        self.verified[identifier] = function
        if function is not None:
            self.function_at[identifier], self.identifier_of[function] = function, identifier

    def _successor(self, function: str | None) -> str | None:
        """Where to look next after ``function`` answered: where it was before, by the table as the task
        found it, skipping identifiers already seen in this task; else the first identifier not seen yet."""
        seen: set[str] = set()
        while function is not None and function not in seen:
            seen.add(function)
            identifier = (self.before or {}).get(function)
            if identifier is None:
                break
            if identifier not in self.verified:
                return identifier
            function = self.verified[identifier]
        return next((i for i in self.ids if i not in self.verified), None)

    def _owner(self, result: Any) -> str | None:
        if not isinstance(result, dict):
            return None
        return next((self.owner_of_key[k] for k in result if k in self.owner_of_key), None)

    def _payload(self, result: Any) -> tuple[bool, Any]:
        """(succeeded, value) of an answer, plaintext or behind status tokens."""
        if not isinstance(result, dict):
            return False, None
        if "success" in result:
            return bool(result["success"]), result.get("data", result.get("message", result.get("error")))
        status = next((v for v in result.values() if isinstance(v, str) and v in self.tokens.values()), None)
        value = next((v for v in result.values() if not (isinstance(v, str) and v in self.tokens.values())), None)
        return status == self.tokens.get(True), value


def _field_names(env: gym.Env | None) -> Callable[[str, Any], Any]:
    """How to read the keys inside a function's answer: the one thing the agent takes from the env.

    Which identifier runs which function, the argument keys and the status tokens are learnt
    by calling; what a hidden key inside a record means (which column is the owner) has no
    behavioural tell the procedures could use, so it is read off the episode's
    :class:`Obfuscate` layer, once the function that answered is known.
    """
    while isinstance(env, gym.Wrapper):
        if isinstance(env, Obfuscate):
            return env.reveal
        env = env.env
    return lambda function, value: value


def _mismatch(result: Any) -> str | None:
    """The schema-mismatch message in an answer, if it is one."""
    if not isinstance(result, dict):
        return None
    return next((v for v in result.values() if isinstance(v, str) and v.startswith(MISMATCH)), None)


def _expected(message: str) -> dict[str, str]:
    """argument key -> type, from a mismatch message's ``expected name(key: type, ...)``."""
    inside = re.search(r"expected [^(]*\((.*)\)\s*$", message)
    pairs = [p.split(":") for p in inside.group(1).split(", ")] if inside and inside.group(1) else []
    return {key.strip().rstrip("?"): kind.strip() for key, kind in pairs}
