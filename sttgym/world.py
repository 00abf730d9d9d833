"""The base class of every domain world: state containers, tools, operations and predicates.

A world has three kinds of marked methods, each for its own reader:

- **tools** (:func:`sttgym.tools.tool`): what the agent may call;
- **operations** (:func:`operation`): how the world changes by itself; triggers invoke them by
  name, and the engine records what they changed by diffing the state, so nobody copies an old
  value by hand; agents never see them;
- **predicates** (:func:`predicate`): named yes/no questions about the world that trigger
  conditions, recovery guards and checklist items ask, by name and JSON arguments.

Because triggers and checks name operations and predicates instead of holding functions, a
task is plain data that round-trips through JSON.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Callable, ClassVar

from sttgym.clock import Clock, parse_time
from sttgym.tools import collect_tools, per_class

if TYPE_CHECKING:
    from sttgym.schema import Op, Pred

__all__ = ["World", "predicate", "operation", "predicates_of", "operations_of", "json_copy",
           "named_problems"]


def predicate(func: Callable) -> Callable:
    """Mark a world method as a predicate. It may take ``ctx`` (the call being made) and ``log``
    (the episode so far) as parameters; the engine passes them, tasks never do."""
    func.__sttgym_predicate__ = True
    return func


def operation(func: Callable) -> Callable:
    """Mark a world method as an operation triggers may invoke. It may take ``ctx`` (the call being made when the
    trigger fires), which the engine passes: an effect can then change what that call commits (the room it
    holds), so every path that makes the commitment meets the change."""
    func.__sttgym_operation__ = True
    return func


_INJECTED = ("ctx", "log")


def _marked(cls: type, mark: str) -> dict[str, inspect.Signature]:
    return per_class(cls, mark, lambda: {name: inspect.signature(member) for name, member in inspect.getmembers(cls)
                                         if getattr(member, mark, False)})


def predicates_of(cls: type) -> dict[str, inspect.Signature]:
    """The predicates of a world class, with the signatures tasks must call them by."""
    return _marked(cls, "__sttgym_predicate__")


def operations_of(cls: type) -> dict[str, inspect.Signature]:
    """The operations of a world class, with their signatures."""
    return _marked(cls, "__sttgym_operation__")


def _injected(cls: type) -> dict[str, tuple[str, ...]]:
    """Per predicate, which of ``ctx``/``log`` it takes (asked at every check: looked up once per class)."""
    return per_class(cls, "injected", lambda: {name: tuple(k for k in _INJECTED if k in signature.parameters)
                                               for name, signature in predicates_of(cls).items()})


def signature_problem(signature: inspect.Signature, args: dict) -> str | None:
    """Why ``args`` do not fit ``signature`` (injected ``ctx``/``log`` aside), or None."""
    params = {n: p for n, p in signature.parameters.items() if n != "self" and n not in _INJECTED}
    unknown = sorted(set(args) - set(params))
    missing = sorted(n for n, p in params.items() if p.default is inspect.Parameter.empty and n not in args)
    if unknown or missing:
        return f"unknown {unknown} / missing {missing}; expects ({', '.join(params)})"
    return None


def _schema(name: str) -> type:
    # The data models (and pydantic) load with the first task, not with import sttgym.
    from sttgym import schema

    return getattr(schema, name)


def named_problems(world: type, preds: list, ops: list) -> list[str]:
    """What in ``preds`` and ``ops`` (nested ``preds`` of all_of/any_of/none_of included) the world class lacks or
    cannot be called with: what a task loaded from JSON is checked against before it runs."""
    problems, stack = [], [("predicate", p) for p in preds] + [("operation", o) for o in ops]
    while stack:
        kind, named = stack.pop()
        named = (_schema("Pred") if kind == "predicate" else _schema("Op")).model_validate(named)
        signature = (predicates_of if kind == "predicate" else operations_of)(world).get(named.name)
        problem = f"no {kind} {named.name!r}" if signature is None else signature_problem(signature, named.args)
        if problem:
            problems.append(f"{named.name}: {problem}")
        elif kind == "predicate" and isinstance(named.args.get("preds"), list):
            stack += [("predicate", p) for p in named.args["preds"]]
    return problems


class World:
    """A domain's live state and the methods that read and change it.

    State is one JSON-like dict of containers (``{"vehicles": {id: {...}}, ...}``); a world
    reads its containers as attributes (``self.vehicles``), so tool code reads like the
    domain. Tools must validate before they change anything and return ``ok(...)``/``fail(...)``,
    never raise.

    Subclasses set ``domain`` (the name used in env IDs) and ``description`` (one line
    shown to agents in the system prompt), and ``inert``: per container, the field values that
    mean an entity no longer commits anything (``{"shipments": {"status": ["cancelled"]}}``), so a
    cancelled extra booking is not an extra booking (:mod:`sttgym.footprint`); and ``tallies``: per
    container, the fields that count the uses of a shared allowance (a promotion's ``used``), which
    any valid way of paying for the request moves, so the collateral gate does not hold them to the
    solutions' own choice of promotion.
    """

    domain: ClassVar[str] = ""
    description: ClassVar[str] = ""
    inert: ClassVar[dict[str, dict[str, list]]] = {}
    tallies: ClassVar[dict[str, set[str]]] = {}

    def __init__(self, state: dict, clock: Clock):
        self.state = state
        self.clock = clock

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: expose state containers as attributes.
        state = self.__dict__.get("state")
        if state is not None and name in state:
            return state[name]
        raise AttributeError(f"{type(self).__name__} has no attribute or state container {name!r}")

    @property
    def now(self) -> str:
        """The current simulated time, ISO format."""
        return self.clock.iso()

    def commits(self, container: str, entity: Any) -> bool:
        """Whether an entity of ``container`` still commits anything now (a live booking; not a cancelled one): by
        default, unless one of its fields holds a value ``inert`` lists. A world whose commitments lapse with time
        (a hold past its expiry) says so by overriding this."""
        fields = self.inert.get(container, {})
        return not (isinstance(entity, dict) and any(entity.get(f) in values for f, values in fields.items()))

    def next_id(self, kind: str, prefix: str) -> str:
        """A new id ``PREFIX-n`` from the world's ``counters[kind]`` (kept in the state, so ids replay)."""
        self.state["counters"][kind] += 1
        return f"{prefix}-{self.state['counters'][kind]}"

    # ---------------------------------------------------------------- evaluation

    def holds(self, pred: "Pred | dict", ctx: Any = None, log: Any = None) -> bool:
        """Whether ``pred`` holds now. A predicate that cannot read its fields (an entity the agent
        removed, one never created) does not hold."""
        if isinstance(pred, dict):
            pred = _schema("Pred").model_validate(pred)
        injected = _injected(type(self)).get(pred.name)
        if injected is None:
            raise KeyError(f"{type(self).__name__} has no predicate {pred.name!r}")
        extra = {k: v for k, v in (("ctx", ctx), ("log", log)) if k in injected}
        try:
            return bool(getattr(self, pred.name)(**pred.args, **extra))
        except (KeyError, TypeError, IndexError, ValueError, AttributeError):
            return False

    def apply(self, op: "Op | dict", ctx: Any = None) -> None:
        """Run one operation of a trigger's effect (``ctx``: the call during which it fires, for operations that
        take it)."""
        if isinstance(op, dict):
            op = _schema("Op").model_validate(op)
        signature = operations_of(type(self)).get(op.name)
        if signature is None:
            raise KeyError(f"{type(self).__name__} has no operation {op.name!r}")
        getattr(self, op.name)(**op.args, **({"ctx": ctx} if "ctx" in signature.parameters else {}))

    # ------------------------------------------------- predicates every world has

    @predicate
    def all_of(self, preds: list, ctx=None, log=None) -> bool:
        """Every one of ``preds`` holds."""
        return all(self.holds(p, ctx, log) for p in preds)

    @predicate
    def any_of(self, preds: list, ctx=None, log=None) -> bool:
        """At least one of ``preds`` holds."""
        return any(self.holds(p, ctx, log) for p in preds)

    @predicate
    def none_of(self, preds: list, ctx=None, log=None) -> bool:
        """None of ``preds`` holds."""
        return not any(self.holds(p, ctx, log) for p in preds)

    @predicate
    def time_reached(self, moment: str) -> bool:
        """The simulated clock is at or past ``moment`` (ISO)."""
        return self.clock.now >= parse_time(moment)

    @predicate
    def field_equals(self, path: list, value: Any) -> bool:
        """The state field at ``path`` (container, id, field, ...) equals ``value``."""
        node: Any = self.state
        for key in path:
            node = node[key]
        return node == value

    @predicate
    def fired_before(self, trigger: str, log) -> bool:
        """The world's change ``trigger`` happened before the call being made, not during it: a second change can
        wait for the agent's first move after the first one."""
        return any(e["trigger"] == trigger and e["call_index"] < len(log.calls) for e in log.events)

    @predicate
    def fired(self, trigger: str, log) -> bool:
        """The world's change ``trigger`` has happened, during the call being made included: a second change can come
        with the first one."""
        return any(e["trigger"] == trigger for e in log.events)

    @predicate
    def noticed(self, trigger: str, log) -> bool:
        """After ``trigger`` fired, a result the agent got showed what it changed: a read, a listing, or the error of a
        write the change made fail (whatever the result would have been without the change, it was not)."""
        return log.noticed(trigger)

    @predicate
    def acted_on(self, trigger: str, log) -> bool:
        """After a result first showed what ``trigger`` changed, the agent made a change of its own that went
        through: reading the change at the end of a stale plan is no reaction to it."""
        seen = log.revealed.get(trigger)
        writes = per_class(type(self), "writes", lambda: frozenset(n for n, s in collect_tools(self).items()
                                                                   if s.mutates))
        return seen is not None and any(c["name"] in writes and c["result"].get("success")
                                        for c in log.calls[seen + 1:])

    @predicate
    def asked_user(self, about: list, log, before: str | None = None) -> bool:
        """The agent asked the user a question (a message with a question mark) naming any of the words ``about`` (a
        withheld answer's keywords), and, with ``before``, did so ahead of its last successful call of that tool, so
        a guess followed by a question does not count, nor does a statement that happens to use the words."""
        from sttgym.user import USER_TOOL, words

        calls = log.calls
        if before is not None:
            last = max((i for i, c in enumerate(calls) if c["name"] == before and c["result"].get("success")),
                       default=None)
            calls = calls if last is None else calls[:last]
        wanted = {w.lower() for w in about}
        return any(c["name"] == USER_TOOL and c["result"].get("success") and "?" in str(c["arguments"].get("message"))
                   and wanted & words(str(c["arguments"].get("message", ""))) for c in calls)

    # ------------------------------------------------- operations every world has

    @operation
    def set_field(self, path: list, value: Any) -> None:
        """Set the state field at ``path`` (container, id, field, ...) to ``value``."""
        node = self.state
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = json_copy(value)  # the state must never alias the task


_SCALARS = frozenset({str, int, float, bool, type(None)})


def json_copy(value: Any) -> Any:
    """A copy of a JSON-like value (dicts, lists, scalars), several times faster than ``copy.deepcopy``.

    Scalars are taken as they are without a call of their own: most of a state is scalars, and the
    call was most of the copy's cost (a state is copied at every reset and every authoring dry run).
    """
    if isinstance(value, dict):
        return {k: v if type(v) in _SCALARS else json_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [v if type(v) in _SCALARS else json_copy(v) for v in value]
    return value
