"""Running one episode of an agent in an env, and the trajectory it leaves; scoring an episode a time limit cuts.

An sttgym env scores its episode when it ends it (a final reply, its own ``max_turns``). An episode cut
from outside, by gymnasium's :class:`~gymnasium.wrappers.TimeLimit` (``gym.make(id, max_episode_steps=N)``,
or one wrapped by hand), is scored the same way: importing sttgym makes ``TimeLimit.step`` hand a cut
sttgym episode to :func:`score_cut`, so the cut step's reward is the score of the final state and its
info carries the end (checklist, trigger log) in any loop, not only in :func:`rollout`. Gymnasium gives
the env no way to learn the limit (``gym.make`` keeps it out of the env's spec and arguments), hence the
hook on the wrapper; steps of other environments under a ``TimeLimit`` are untouched.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import gymnasium as gym
from gymnasium.wrappers import TimeLimit

from sttgym.core import ToolEnv

if TYPE_CHECKING:  # agents load only when used
    from sttgym.agents.base import Agent


__all__ = ["Trajectory", "rollout", "score_cut"]


@dataclass
class Trajectory:
    """One episode: the reward, each step, the chat transcript, and the final info."""

    env_id: str | None
    seed: int | None
    reward: float = 0.0
    steps: list[dict] = field(default_factory=list)  # {"action", "observation", "reward", "events", "clock"}
    messages: list[dict] = field(default_factory=list)  # chat format, tool calls included
    info: dict = field(default_factory=dict)  # the final step's info (checklist breakdown, trigger log)
    terminated: bool = False
    truncated: bool = False

    @property
    def tool_calls(self) -> int:
        return sum(1 for s in self.steps if "name" in s["action"])

    def add(self, action: Any, observation: str, reward: float, info: dict) -> None:
        """Record one step: the action, what came back, and the chat messages it stands for."""
        if isinstance(action, dict) and "name" in action:
            call_id = f"call_{len(self.steps)}"
            self.messages.append(_tool_call_message(action, call_id))
            self.messages.append({"role": "tool", "tool_call_id": call_id, "name": str(action.get("name")),
                                  "content": observation})
        else:
            content = action.get("content", "") if isinstance(action, dict) else str(action)
            self.messages.append({"role": "assistant", "content": content})
        self.steps.append({"action": action, "observation": observation, "reward": reward,
                           "events": info.get("events", []), "clock": info.get("clock")})  # clock: arena only

    def to_dict(self) -> dict[str, Any]:
        return {"env_id": self.env_id, "seed": self.seed, "reward": self.reward, "terminated": self.terminated,
                "truncated": self.truncated, "steps": self.steps, "messages": self.messages, "info": self.info}


def _tool_call_message(action: dict, call_id: str) -> dict:
    arguments = action.get("arguments", {})
    return {"role": "assistant", "content": "", "tool_calls": [{
        "id": call_id, "type": "function",
        "function": {"name": str(action.get("name")),
                     "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments, default=str)}}]}


def rollout(env: gym.Env, agent: Agent, seed: int | None = None, max_steps: int = 1000,
            options: dict | None = None) -> Trajectory:
    """Play one episode of ``agent`` in ``env`` from ``env.reset(seed=seed, options=options)``."""
    observation, info = env.reset(seed=seed, options=options)
    agent.reset(observation, info, env=env, seed=seed)
    traj = Trajectory(env_id=env.spec.id if env.spec else None, seed=seed)
    traj.messages.append({"role": "user", "content": observation})
    for _ in range(max_steps):
        action = agent.act(observation, info)
        observation, reward, terminated, truncated, info = env.step(action)
        traj.add(action, observation, reward, info)
        if terminated or truncated:
            reward, info = score_cut(env, reward, truncated, info)
            traj.reward, traj.terminated, traj.truncated = float(reward), terminated, truncated
            break
    traj.info = info
    return traj


def score_cut(env: gym.Env, reward: Any, truncated: bool, info: dict) -> tuple[Any, dict]:
    """The reward and info of a step that ends an episode, where a wrapper (a time limit) cut an sttgym episode
    short: the env concludes it, so it is scored like an episode the env ended itself. Any other step, and any
    other env's, comes back as it was."""
    base = env.unwrapped
    if truncated and isinstance(base, ToolEnv) and not base.done:
        reward, end = base.conclude()
        info = {**info, **end}
    return reward, info


_limit_step = TimeLimit.step


def _step_scoring_the_cut(self: TimeLimit, action: Any) -> tuple[Any, Any, bool, bool, dict]:
    observation, reward, terminated, truncated, info = _limit_step(self, action)
    reward, info = score_cut(self, reward, truncated, info)
    return observation, reward, terminated, truncated, info


TimeLimit.step = _step_scoring_the_cut
