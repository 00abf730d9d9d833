"""What the tool-use wrappers share: seeding, seeing through the stack, and rewriting a step's result.

Three conventions let the wrappers compose in any order, on ScrambleTool and arena envs alike:

- **Seeding.** A wrapper draws only from ``self.rng``, derived from the reset seed and the
  wrapper's class name (never from global random state, never from the env's own generator,
  whose draws stay as they would be without the wrapper). A reset without a seed continues
  the wrapper's generator, as gymnasium envs do.
- **Seeing through.** :meth:`ToolWrapper.inward` says which action a layer hands to the env
  it wraps; :func:`resolve` follows an action down the whole stack, so a wrapper can ask
  what the base env would run (:func:`valid_call`) without running it. A layer that refuses
  an action itself still steps the env with :data:`REJECTED`, so the refusal costs the
  action it would have cost in the base env.
- **Results.** An observation is the rendered ``info["result"]`` followed by plaintext
  notices (the next task's goal, a window countdown). :func:`with_result` swaps the rendered
  result and keeps the notices, whatever the order of the layers.

``meta_commands`` (the base env's plaintext curriculum commands, empty for arena envs) are
never renamed, moved or failed by any wrapper.
"""

from __future__ import annotations

import copy
import zlib
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils import RecordConstructorArgs

from sttgym.actions import ToolCall, parse_action, render_result
from sttgym.core import tool_env
from sttgym.spaces import ToolCallSpace
from sttgym.tools import ToolSpec, validate_arguments

__all__ = ["ToolWrapper", "REJECTED", "resolve", "valid_call", "with_result"]

REJECTED: dict = {"name": "", "arguments": {}}  # every env answers it with an error, and counts it


class ToolWrapper(gym.Wrapper, RecordConstructorArgs):
    """Base of the suite's wrappers; see the module docstring for the conventions it keeps.

    Subclasses pass their constructor arguments to ``__init__`` (they are recorded in the
    env spec, so ``gym.make(env.spec)`` rebuilds the stack), override :meth:`on_reset` and
    :meth:`inward` as needed, and implement ``step``.
    """

    def __init__(self, env: gym.Env, **recorded: Any):
        RecordConstructorArgs.__init__(self, **recorded)
        gym.Wrapper.__init__(self, env)
        self.rng: np.random.Generator | None = None

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        observation, info = self.env.reset(seed=seed, options=options)
        if seed is not None or self.rng is None:
            root = seed if seed is not None else int(copy.deepcopy(self.unwrapped.np_random).integers(2**63))
            self.rng = np.random.default_rng([root, zlib.crc32(type(self).__name__.encode())])
        return self.on_reset(observation, info)

    def require_reset(self) -> None:
        """Raise gymnasium's ResetNeeded when stepped before the first reset (no episode draws exist yet)."""
        if self.rng is None:
            raise gym.error.ResetNeeded(f"call reset() before step() on {type(self).__name__}")

    def on_reset(self, observation: Any, info: dict) -> tuple[Any, dict]:
        """Set up the episode's draws from ``self.rng``; may rewrite the first observation and info."""
        return observation, info

    def inward(self, action: Any) -> Any:
        """The action this layer hands to the env it wraps when the agent sends ``action``."""
        return action

    @property
    def meta_commands(self) -> tuple[str, ...]:
        return tool_env(self.env).meta_commands


def resolve(env: gym.Env, action: Any) -> Any:
    """The action the base env receives when ``action`` is stepped into ``env`` (followed through every layer)."""
    layer = env
    while isinstance(layer, gym.Wrapper):
        if isinstance(layer, ToolWrapper):
            action = layer.inward(action)
        elif isinstance(layer, gym.ActionWrapper):
            action = layer.action(action)
        layer = layer.env
    return action


def schema_only() -> dict:
    """The function of a ToolSpec that only carries a schema to validate against (a module function: it pickles)."""
    return {}


def valid_call(env: gym.Env, action: Any) -> ToolCall | None:
    """The base env's tool call ``action`` stands for, when the base env would run it; else None."""
    call = parse_action(resolve(env, action))
    space = env.unwrapped.action_space
    if not isinstance(call, ToolCall) or not isinstance(space, ToolCallSpace):
        return None
    schema = next((t for t in space.tools if t["name"] == call.name), None)
    if schema is None:
        return None
    spec = ToolSpec(call.name, schema.get("description", ""), schema["parameters"], False, 0, func=schema_only)
    return None if validate_arguments(spec, call.arguments) else call


def with_result(observation: Any, old: Any, new: dict) -> str:
    """``observation`` with the rendered ``old`` result replaced by ``new``; the notices after it are kept."""
    head = render_result(old) if isinstance(old, dict) else None
    if head is None or not isinstance(observation, str) or not observation.startswith(head):
        return render_result(new)
    return render_result(new) + observation[len(head):]
