"""What a served session may build: a registered sttgym id, its typed ``gym.make`` keywords, the suite's wrappers.

Nothing here knows HTTP or OpenEnv; :mod:`sttgym.server.environment` builds each session's env with
:func:`build_env`, and :mod:`sttgym.server.app` turns a :class:`ServeError` into a JSON reply.
"""

from __future__ import annotations

import functools
import inspect
import json
import typing
from typing import Annotated, Any, Literal

import gymnasium as gym
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from sttgym.envs.scramble.templates import TEMPLATES
from sttgym.registry import SUITE_NAMESPACES, registered_id
from sttgym.wrappers import MappingDrift, Obfuscate, StochasticFailure, TemporalWindow, TextActions

__all__ = ["ServeError", "WRAPPERS", "NAMESPACES", "KEYWORDS", "build_env", "wrapper_keywords"]

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
        # Code and status lead the text: OpenEnv's WebSocket reports an environment's exception by its text alone.
        super().__init__(f"{code} ({status}): {message}")
        self.status, self.code, self.message = status, code, message


def build_env(env_id: str, kwargs: dict[str, Any], wrappers: list[dict[str, Any]]) -> gym.Env:
    """``gym.make(env_id, **kwargs)`` under ``wrappers`` (innermost first), or a :class:`ServeError` saying why not:
    the id must be a registered sttgym id, the keywords of its kind (:data:`KEYWORDS`) and of each wrapper's
    constructor, of their types (422 ``VALIDATION_ERROR`` naming the field); values the env or a wrapper refuses
    are a 422 ``FACTORY_ERROR``."""
    try:
        env_id = registered_id(env_id, NAMESPACES)  # never "module:..." (gymnasium would import the module)
    except ValueError as exc:
        raise ServeError(404, "FACTORY_ERROR", f"{exc}; served: {', '.join(NAMESPACES)}/... (see GET /envs)") \
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
        raise ServeError(404, "FACTORY_ERROR", f"unknown env id {env_id!r} (see GET /envs)") from None
    except (TypeError, ValueError) as exc:
        raise ServeError(422, "FACTORY_ERROR", f"cannot make {env_id}: {exc}") from None
    try:
        for wrapper in wrappers:
            env = WRAPPERS[wrapper["name"]](env, **wrapper["kwargs"])
    except (TypeError, ValueError) as exc:
        env.close()
        raise ServeError(422, "FACTORY_ERROR", f"cannot wrap {env_id}: {exc}") from None
    return env
