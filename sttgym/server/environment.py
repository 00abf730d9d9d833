"""An sttgym env as an OpenEnv environment: typed actions, observations and state, one env per session.

OpenEnv's server (:mod:`openenv.core.env_server`) makes one :class:`SttgymEnvironment` per WebSocket
session (and a short-lived one per stateless HTTP call); the session's first ``reset`` builds the gym
env it names (or the server's default), and later resets replay it, or rebuild it when they name
another. Episodes are the local ones: the observation's ``text``, ``info``, ``reward`` and end flags are
what ``gym.make(env_id, **kwargs)`` under the same wrappers returns for the same seed.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from openenv.core.env_server import Action, Environment, Observation, State
from openenv.core.env_server.types import EnvironmentMetadata
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from sttgym.actions import encodable, encodable_value
from sttgym.core import tool_env
from sttgym.server.sessions import ServeError, build_env

__all__ = ["SttgymAction", "SttgymObservation", "SttgymState", "SttgymEnvironment", "Settings", "Episodes",
           "MAX_WRAPPERS"]

MAX_WRAPPERS = 8
log = logging.getLogger("sttgym.server")


class SttgymAction(Action):
    """One action: a tool call (``name`` and ``arguments``), the final reply (``content``), or, under the
    TextActions wrapper, the model's raw ``text``."""

    name: str | None = Field(default=None, min_length=1, description="the tool to call")
    # Any, so that pydantic never walks the arguments: the env checks them (shape, depth, size) and answers a
    # malformed call as it does locally, and a refusal would echo them to the client.
    arguments: Any = Field(default=None, description="the call's arguments: an object, or its JSON text as "
                                                      "OpenAI-style APIs send it")
    content: str | None = Field(default=None, description="the final reply to the user; it ends an arena episode")
    text: str | None = Field(default=None, description="raw model output, for a session under TextActions")

    @model_validator(mode="before")
    @classmethod
    def _encodable(cls, data: Any) -> Any:
        # pydantic refuses a string with a lone surrogate, and OpenEnv's refusal echoes it in a frame no JSON can
        # carry, which ends the session; the env reads U+FFFD for it anyway (sttgym.actions), as it does locally.
        if not isinstance(data, dict):
            return data
        return {encodable(k) if isinstance(k, str) else k: v if k == "arguments" or not isinstance(v, str)
                else encodable(v) for k, v in data.items()}

    @model_validator(mode="after")
    def _one_kind(self) -> SttgymAction:
        # PydanticCustomError, not ValueError: OpenEnv sends the errors to the client as JSON, which cannot carry
        # the exception object a ValueError leaves in them (the frame would fail, and end the session).
        given = [k for k in ("name", "content", "text") if getattr(self, k) is not None]
        if len(given) != 1:
            raise PydanticCustomError("one_kind", "an action is exactly one of: a tool call (name, arguments), a "
                                                  "reply (content), or text; got {given}",
                                      {"given": ", ".join(given) or "none of them"})
        if self.arguments is not None and self.name is None:
            raise PydanticCustomError("one_kind", "arguments belong to a tool call (give name)")
        return self

    def env_action(self) -> Any:
        """What ``env.step`` takes for this action."""
        if self.text is not None:
            return self.text
        if self.content is not None:
            return {"content": self.content}
        return {"name": self.name, "arguments": {} if self.arguments is None else self.arguments}


class SttgymObservation(Observation):
    """What ``reset`` and ``step`` return: the env's text observation, gymnasium's info and end flags, beside
    OpenEnv's ``reward``, ``done`` (terminated or truncated) and ``metadata`` (ids of the session's episode)."""

    text: str = Field(description="the observation, as the local env returns it")
    info: dict[str, Any] = Field(default_factory=dict, description="gymnasium's info; the final one holds the "
                                                                    "checklist and the score")
    terminated: bool = False
    truncated: bool = False


class SttgymState(State):
    """The session as a harness sees it (``episode_id`` and ``step_count`` are OpenEnv's)."""

    env_id: str | None = Field(default=None, description="the id played (none before the first reset)")
    spec: dict[str, Any] | None = Field(default=None, description="env.spec as JSON, wrappers included")
    episodes: int = 0
    done: bool = False
    reward: float | None = Field(default=None, description="the last step's reward")
    info: dict[str, Any] = Field(default_factory=dict, description="the last step's info (the final one: "
                                                                    "checklist, score)")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="the base env's tools, with their cost "
                                                                          "and whether they change the world")
    privileged: bool = False
    task: dict[str, Any] | None = Field(default=None, description="the arena task played, solution included: "
                                                                  "on a --privileged server only")
    mcp: str | None = Field(default=None, description="path of this session's MCP endpoint")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)  # a misspelt field is an error, not silently ignored


class WrapperSpec(_Strict):
    name: str = Field(description="one of the sttgym.wrappers (GET /envs lists them)")
    kwargs: dict[str, Any] = Field(default_factory=dict)


class ResetFields(_Strict):
    """What a reset may say besides OpenEnv's ``seed`` and ``episode_id``: the env to build (defaults: the
    server's ``--env-id``, or the session's env) and gymnasium's reset ``options``."""

    env_id: str | None = None
    kwargs: dict[str, Any] | None = None
    wrappers: list[WrapperSpec] | None = Field(default=None, max_length=MAX_WRAPPERS)
    options: dict[str, Any] | None = None
    seed: int | None = Field(default=None, ge=0, lt=2**63)
    episode_id: str | None = Field(default=None, max_length=255)


class Episodes:
    """The sessions an MCP client may reach, by an unguessable token (a session is its holder's alone)."""

    def __init__(self) -> None:
        self._by_token: dict[str, SttgymEnvironment] = {}
        self._lock = threading.Lock()

    def add(self, env: SttgymEnvironment) -> str:
        token = secrets.token_urlsafe(16)
        with self._lock:
            self._by_token[token] = env
        return token

    def get(self, token: str) -> SttgymEnvironment | None:
        with self._lock:
            return self._by_token.get(token)

    def remove(self, token: str) -> None:
        with self._lock:
            self._by_token.pop(token, None)


@dataclass(frozen=True)
class Settings:
    """The server's configuration, shared by every session."""

    env_id: str | None = None  # what a reset naming no env plays
    privileged: bool = False
    episodes: Episodes = field(default_factory=Episodes)


class SttgymEnvironment(Environment[SttgymAction, SttgymObservation, SttgymState]):
    """One session's env. OpenEnv runs a session's calls one at a time on its own thread; the lock orders them
    with the MCP tool calls of the same session, which arrive on other threads."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # every session builds its own env: nothing is shared

    def __init__(self, settings: Settings):
        super().__init__()
        self.settings = settings
        self.env: Any = None
        self.built: tuple[str, str] | None = None  # (env_id, its keywords and wrappers as JSON): what env is
        self.episode_id: str | None = None
        self.episodes = self.steps = 0
        self.done, self.closed = False, False
        self.reward: float | None = None
        self.info: dict[str, Any] = {}
        self.token: str | None = None
        self.lock = threading.Lock()

    # ------------------------------------------------------------------ OpenEnv's interface

    def reset(self, seed: int | None = None, episode_id: str | None = None, **fields: Any) -> SttgymObservation:
        try:
            request = ResetFields.model_validate({"seed": seed, "episode_id": episode_id, **fields})
        except ValidationError as exc:
            raise ServeError(422, "VALIDATION_ERROR", _problems(exc)) from None
        with self.lock:
            self._check_open()
            self._build(request)
            try:
                observation, info = self.env.reset(seed=request.seed, options=request.options)
            except ValueError as exc:  # options the env refuses (a stored task of another id, a malformed one)
                raise ServeError(422, "VALIDATION_ERROR", f"the env refused the reset: {exc}") from None
            except Exception as exc:
                raise _crashed(exc) from None
            if self.token is None:
                self.token = self.settings.episodes.add(self)
            self.episode_id = request.episode_id or str(uuid.uuid4())
            self.episodes, self.steps, self.done, self.reward, self.info = self.episodes + 1, 0, False, None, {}
            return SttgymObservation(text=encodable(observation), info=encodable_value(info), metadata=self._metadata())

    def step(self, action: SttgymAction, timeout_s: float | None = None, request_id: str | None = None,
             **fields: Any) -> SttgymObservation:
        # timeout_s is OpenEnv's bound on a step's run time: an sttgym step is a simulated, bounded call that
        # finishes in milliseconds, so there is nothing for it to cut short.
        if fields:
            raise ServeError(422, "VALIDATION_ERROR", f"unexpected step field(s): {', '.join(sorted(fields))}")
        with self.lock:
            self._check_open()
            if self.env is None:
                raise ServeError(409, "SESSION_ERROR", "reset the session before stepping it (OpenEnv's HTTP /step is "
                                                       "stateless: play episodes over the WebSocket /ws)")
            observation, reward, terminated, truncated, info = self._guarded(self.env.step, action.env_action())
            base = tool_env(self.env)
            if truncated and not base.done:  # a time limit cut the episode: score it as sttgym.rollout does
                reward, end = self._guarded(base.conclude)
                info = {**info, **end}
            self.steps += 1
            # A lone surrogate an agent sent may be echoed in the info, and no JSON reply could carry it.
            self.done, self.reward, self.info = terminated or truncated, float(reward), encodable_value(info)
            metadata = self._metadata() if request_id is None else {**self._metadata(), "request_id": request_id}
            return SttgymObservation(text=encodable(observation), info=self.info, reward=self.reward, done=self.done,
                                     terminated=terminated, truncated=truncated, metadata=metadata)

    @property
    def state(self) -> SttgymState:
        with self.lock:
            state = SttgymState(episode_id=self.episode_id, step_count=self.steps, episodes=self.episodes,
                                done=self.done, reward=self.reward, info=self.info,
                                privileged=self.settings.privileged, mcp=self._mcp_path())
            if self.env is None:
                return state
            base = tool_env(self.env)
            state.env_id, state.spec = self.built[0], json.loads(self.env.spec.to_json())
            state.tools = [{**spec.schema["function"], "mutates": spec.mutates, "cost": spec.cost}
                           for spec in base.tools.values()]
            task = getattr(base, "task", None)
            if hasattr(task, "model_dump") and self.settings.privileged:  # ScrambleTool has no task to withhold
                state.task = task.model_dump(mode="json")
            return state

    def get_metadata(self) -> EnvironmentMetadata:
        from sttgym import __version__

        return EnvironmentMetadata(
            name="sttgym", version=__version__, description="Gymnasium tool-use environments for LLM agents under spatio-temporal dynamics "
                        f"(default env: {self.settings.env_id or 'none, a reset names one'}; GET /envs lists them)")

    def close(self) -> None:
        with self.lock:
            self.closed = True
            if self.token is not None:
                self.settings.episodes.remove(self.token)
            if self.env is not None:
                self.env.close()
                self.env = None

    # ------------------------------------------------------------------ MCP (sttgym.server.mcp_tools)

    def tool_listing(self) -> list[dict[str, Any]]:
        """The tools the episode accepts now, as OpenAI-style function schemas."""
        with self.lock:
            self._check_open()
            return [] if self.env is None else [spec.schema["function"] for spec in tool_env(self.env).tools.values()]

    # ------------------------------------------------------------------ internals

    def _build(self, request: ResetFields) -> None:
        named = request.env_id is not None or request.kwargs is not None or request.wrappers is not None
        if not named and self.env is not None:
            return  # the next episode of the session's env
        env_id = request.env_id or (self.built[0] if self.built else self.settings.env_id)
        if env_id is None:
            raise ServeError(422, "VALIDATION_ERROR", "name env_id in the reset: this server has no default env "
                                                      "(sttgym serve --env-id)")
        kwargs = request.kwargs or {}
        wrappers = [w.model_dump() for w in request.wrappers or []]
        config = (env_id, json.dumps([kwargs, wrappers], sort_keys=True))
        if config == self.built:
            return
        if self.env is not None:
            self.env.close()
            self.env, self.built = None, None
        self.env, self.built = build_env(env_id, kwargs, wrappers), config

    @staticmethod
    def _guarded(call: Any, *args: Any) -> Any:
        try:
            return call(*args)
        except Exception as exc:
            raise _crashed(exc) from None

    def _check_open(self) -> None:
        if self.closed:
            raise ServeError(404, "SESSION_ERROR", "the session was closed (idle for longer than the server's ttl, "
                                                   "or ended); open a new one")

    def _mcp_path(self) -> str | None:
        return None if self.token is None else f"/episodes/{self.token}/mcp"

    def _metadata(self) -> dict[str, Any]:
        return {"env_id": self.built[0], "episode_id": self.episode_id, "step": self.steps, "mcp": self._mcp_path()}


def _crashed(exc: Exception) -> ServeError:
    """An exception of the env's own (a bug): logged with its traceback, reported to the client by name only."""
    log.error("the env raised", exc_info=exc)
    return ServeError(500, "EXECUTION_ERROR", f"the environment raised {type(exc).__name__} (details in the "
                                              "server's log)")


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors()[:5])
