"""Sessions of a served environment: one env (and its wrapper stack) per client, built, stepped and reaped.

Nothing here knows HTTP; :mod:`sttgym.server.app` turns these calls and their :class:`ServeError`
into requests and JSON replies. A session holds one env for one client: the client resets it for
each episode (seeded, so an episode is the same as a local one) and closes it, or it expires
after ``ttl`` seconds without a request (a client that died leaves nothing behind for long).
"""

from __future__ import annotations

import functools
import inspect
import json
import secrets
import threading
import time
import typing
from dataclasses import dataclass, field
from typing import Annotated, Any, Callable, Literal

import gymnasium as gym
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from sttgym.core import tool_env
from sttgym.envs.scramble.templates import TEMPLATES
from sttgym.registry import SUITE_NAMESPACES, registered_id
from sttgym.wrappers import MappingDrift, Obfuscate, StochasticFailure, TemporalWindow, TextActions

__all__ = ["ServeError", "Session", "Sessions", "WRAPPERS", "NAMESPACES", "KEYWORDS", "build_env", "wrapper_keywords"]

NAMESPACES = SUITE_NAMESPACES  # what a server builds: sttgym's own ids, never any other registered env
WRAPPERS: dict[str, type[gym.Wrapper]] = {cls.__name__: cls for cls in (
    Obfuscate, MappingDrift, StochasticFailure, TemporalWindow, TextActions)}
MAX_STEPS = 10_000  # the longest episode a request may ask for (turns, budgets, time limits, windows)


def _left_out(**bounds: Any) -> Any:
    """A keyword a request may leave out (the env's own default then applies: it is never sent), but not send as
    null, nor of another type than its annotation."""
    return Field(default=None, **bounds)


class _Keywords(BaseModel):
    """``gym.make``'s own keywords, which every id takes. Validated as the request's JSON (strict: ``"5"`` is no
    integer, an integer is a number, an array a tuple)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    max_episode_steps: int = _left_out(ge=1, le=MAX_STEPS)
    render_mode: Literal["ansi"] = _left_out()


class ArenaKeywords(_Keywords):
    """What an ``STTArena/...`` id takes from a request: rule user and judge only (the LLM ones run in the env)."""

    dynamics: bool = _left_out()
    max_turns: int = _left_out(ge=1, le=MAX_STEPS)
    user: Literal["rule", "none"] = _left_out()
    judge: Literal["rule"] = _left_out()


class ScrambleKeywords(_Keywords):
    """What a ``ScrambleTool/...`` id takes: the curriculum's and the condition's settings."""

    tasks: int = _left_out(ge=1, le=len(TEMPLATES))
    budget: int = _left_out(ge=1, le=MAX_STEPS)
    templates: tuple[Literal[tuple(TEMPLATES)], ...] = _left_out(min_length=1)  # type: ignore[valid-type]
    drift_fraction: float = _left_out(ge=0.0, le=1.0)
    failure_p: float = _left_out(ge=0.0, lt=1.0)
    window_k: int = _left_out(ge=1, le=MAX_STEPS)
    nested_keys: bool = _left_out()
    verbatim: tuple[Annotated[str, Field(max_length=200)], ...] = _left_out(max_length=64)


KEYWORDS: dict[str, type[BaseModel]] = {"STTArena": ArenaKeywords, "ScrambleTool": ScrambleKeywords}


@functools.cache
def wrapper_keywords(name: str) -> type[BaseModel]:
    """The keywords wrapper ``name`` takes after the env, as a strict model of its constructor's annotations."""
    init = WRAPPERS[name].__init__
    hints = typing.get_type_hints(init)  # the suite's own classes: trusted code
    fields = {p: (hints.get(p, Any), param.default) for p, param in inspect.signature(init).parameters.items()
              if p not in ("self", "env")}
    return create_model(f"{name}Keywords", __config__=ConfigDict(extra="forbid", strict=True), **fields)


def _checked(model: type[BaseModel], keywords: dict[str, Any], where: str) -> dict[str, Any]:
    """``keywords`` as ``model`` reads them (only those given), or a 422 naming each wrong field."""
    try:
        return model.model_validate_json(json.dumps(keywords)).model_dump(exclude_unset=True)
    except ValidationError as exc:
        said = "; ".join(f"{'.'.join(map(str, (where, *e['loc'])))}: {e['msg']}" for e in exc.errors()[:5])
        raise ServeError(422, "VALIDATION_ERROR", said) from None


class ServeError(Exception):
    """A request the server refuses: ``code`` names the kind (OpenEnv's error codes where one fits)."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def build_env(env_id: str, kwargs: dict[str, Any], wrappers: list[dict[str, Any]]) -> gym.Env:
    """``gym.make(env_id, **kwargs)`` under ``wrappers`` (innermost first), or a :class:`ServeError` saying why not:
    the id must be a registered sttgym id, the keywords of its kind (:data:`KEYWORDS`) and of each wrapper's
    constructor, of their types (422 ``VALIDATION_ERROR`` naming the field); values the env or a wrapper refuses
    are a 422 ``FACTORY_ERROR``."""
    try:
        env_id = registered_id(env_id, NAMESPACES)  # never "module:..." (gymnasium would import the module)
    except ValueError as exc:
        raise ServeError(404, "FACTORY_ERROR", f"{exc}; served: {', '.join(NAMESPACES)}/... (see GET /metadata)") \
            from None
    unknown = [w["name"] for w in wrappers if w["name"] not in WRAPPERS]
    if unknown:
        raise ServeError(422, "FACTORY_ERROR", f"unknown wrapper {unknown[0]!r}; known: {', '.join(WRAPPERS)}")
    kwargs = _checked(KEYWORDS[env_id.partition("/")[0]], kwargs, "kwargs")
    wrappers = [{"name": w["name"], "kwargs": _checked(wrapper_keywords(w["name"]), w["kwargs"],
                                                       f"wrappers.{i}.kwargs")} for i, w in enumerate(wrappers)]
    try:
        env = gym.make(env_id, **kwargs)
    except gym.error.Error:  # gymnasium's "no such id" family
        raise ServeError(404, "FACTORY_ERROR", f"unknown env id {env_id!r} (see GET /metadata)") from None
    except (TypeError, ValueError) as exc:
        raise ServeError(422, "FACTORY_ERROR", f"cannot make {env_id}: {exc}") from None
    try:
        for wrapper in wrappers:
            env = WRAPPERS[wrapper["name"]](env, **wrapper["kwargs"])
    except (TypeError, ValueError) as exc:
        env.close()
        raise ServeError(422, "FACTORY_ERROR", f"cannot wrap {env_id}: {exc}") from None
    return env


@dataclass(eq=False)
class Session:
    """One client's env. ``lock`` serialises its requests; ``used`` is when the last one arrived."""

    id: str
    env_id: str
    env: gym.Env
    used: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    episodes: int = 0
    steps: int = 0  # in the current episode
    done: bool = False

    def reset(self, seed: int | None, options: dict | None) -> tuple[Any, dict]:
        try:
            observation, info = self.env.reset(seed=seed, options=options)
        except ValueError as exc:  # options the env refuses (a stored task of another id, a malformed one)
            raise ServeError(422, "VALIDATION_ERROR", f"the env refused the reset: {exc}") from None
        self.episodes, self.steps, self.done = self.episodes + 1, 0, False
        return observation, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        base = tool_env(self.env)
        if truncated and not base.done:  # a time limit cut the episode: score it as sttgym.rollout does
            reward, end = base.conclude()
            info = {**info, **end}
        self.steps += 1
        self.done = terminated or truncated
        return observation, float(reward), terminated, truncated, info

    def state(self, privileged: bool) -> dict:
        """What a harness may read about the session; an arena task only from a privileged server (else no ``task``)."""
        base = tool_env(self.env)
        state = {"session_id": self.id, "env_id": self.env_id, "spec": json.loads(self.env.spec.to_json()),
                 "episodes": self.episodes, "step_count": self.steps, "done": self.done, "privileged": privileged,
                 "tools": [{**spec.schema["function"], "mutates": spec.mutates, "cost": spec.cost}
                           for spec in base.tools.values()]}
        task = getattr(base, "task", None)
        if not hasattr(task, "model_dump"):  # no arena task (ScrambleTool): nothing to withhold
            state["task"] = None
        elif privileged:
            state["task"] = task.model_dump(mode="json")
        return state


class Sessions:
    """The live sessions of a server: at most ``max_sessions``, each closed after ``ttl`` idle seconds.

    When all slots are taken, a new session takes the slot of the least recently used one whose
    episode has ended (a client keeps its session between episodes, and its next reset simply
    opens a new one); only when every session is mid-episode is a new one refused.
    """

    def __init__(self, max_sessions: int = 256, ttl: float = 600.0, clock: Callable[[], float] = time.monotonic):
        if max_sessions < 1 or ttl <= 0:
            raise ValueError("max_sessions must be at least 1 and ttl positive")
        self.max_sessions, self.ttl, self.clock = max_sessions, ttl, clock
        self._sessions: dict[str, Session | None] = {}  # None: a slot held while its env is being built
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    def open(self, env_id: str, kwargs: dict, wrappers: list[dict]) -> Session:
        self.reap()
        sid = secrets.token_urlsafe(16)  # unguessable: a session is its holder's alone
        with self._lock:
            if len(self._sessions) >= self.max_sessions:
                ended = [s for s in self._sessions.values() if s is not None and s.done]
                if not ended:
                    raise ServeError(503, "CAPACITY_REACHED", f"all {self.max_sessions} sessions of the server are "
                                                              "mid-episode; close one or try again later")
                evicted = min(ended, key=lambda s: s.used)
                del self._sessions[evicted.id]
            else:
                evicted = None
            self._sessions[sid] = None
        if evicted is not None:
            self._shut(evicted)
        try:
            env = build_env(env_id, kwargs, wrappers)
        except BaseException:
            with self._lock:
                del self._sessions[sid]
            raise
        session = Session(sid, env_id, env, self.clock())
        with self._lock:
            self._sessions[sid] = session
        return session

    def get(self, sid: str) -> Session:
        """The live session ``sid``, marked as used now."""
        with self._lock:
            session = self._sessions.get(sid)
        if session is None or self._expired(session):
            if session is not None:
                self.close(sid)
            raise ServeError(404, "SESSION_ERROR", f"unknown session {sid!r}: never opened, closed, or idle for more "
                                                   f"than {self.ttl:g} s")
        session.used = self.clock()
        return session

    def close(self, sid: str) -> bool:
        with self._lock:
            session = self._sessions.get(sid)
            if session is None:  # unknown, or still being built (its opener will hand it out)
                return False
            del self._sessions[sid]
        self._shut(session)
        return True

    @staticmethod
    def _shut(session: Session) -> None:
        with session.lock:  # a request in flight on it finishes first
            session.env.close()

    def reap(self) -> int:
        """Close every session idle for longer than ``ttl``; how many were closed."""
        with self._lock:
            stale = [s.id for s in self._sessions.values() if s is not None and self._expired(s)]
        return sum(self.close(sid) for sid in stale)

    def close_all(self) -> None:
        with self._lock:
            ids = [sid for sid, s in self._sessions.items() if s is not None]
        for sid in ids:
            self.close(sid)

    def _expired(self, session: Session) -> bool:
        return self.clock() - session.used > self.ttl
