"""The agent interface shared by reference agents and LLM agents."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

__all__ = ["Agent"]


class Agent:
    """Something that picks an action from what it has seen.

    ``reset`` starts an episode with the first observation and info (and the env, which
    only privileged reference agents may read); ``act`` returns the next action.
    """

    def reset(self, observation: str, info: dict, env: gym.Env | None = None, seed: int | None = None) -> None:
        pass

    def act(self, observation: str, info: dict) -> dict[str, Any]:
        raise NotImplementedError
