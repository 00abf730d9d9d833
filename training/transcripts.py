"""Transcripts: an episode as a list of actions, replayed in its environment.

Training data is kept as the *actions* an agent took on an instance (an env id and a seed):
replaying them regenerates every tool result, every trigger that fired and the reward, so
a transcript edited by the refiner is judged by what the environment really does, never by
stale results copied from the original.

The chat messages of a transcript are written by :class:`~sttgym.agents.llm.LLMAgent`'s
own bookkeeping (system prompt, assistant tool-call turns, tool results), so a model
trained on them reads exactly what it reads when the evaluation runner drives it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from sttgym.agents.llm import USER_TOOL, LLMAgent
from sttgym.core import tool_env
from sttgym.models.base import ChatResponse
from sttgym.rollout import Trajectory

__all__ = ["Step", "Transcript", "replay", "from_trajectory", "is_call", "failed"]


@dataclass(frozen=True)
class Step:
    """One action and what came back: the observation, the raw result, the triggers that fired."""

    action: dict
    observation: str
    result: dict | None
    events: tuple[dict, ...] = ()  # each with the trigger's "timing" ("before"/"after" the call) added


def is_call(step: Step) -> bool:
    return "name" in step.action


def failed(step: Step) -> bool:
    """A call the world refused (not counting transient failures that say they may be retried)."""
    return is_call(step) and not (step.result or {}).get("success") and not (step.result or {}).get("retryable")


@dataclass
class Transcript:
    """An episode replayed from its actions."""

    env_id: str
    seed: int
    steps: list[Step]
    reward: float
    messages: list[dict]
    tools: list[dict]
    reads: frozenset[str]  # tools that only read the world (the user channel excluded)
    env_kwargs: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)  # the final step's info (checklist breakdown)
    reasoning: bool = False  # the assistant turns carry reasoning text (sttgym.training.reasoning.narrate)

    @property
    def actions(self) -> list[dict]:
        return [step.action for step in self.steps]

    @property
    def texts(self) -> list[str]:
        """Each block's assistant text: the reasoning beside a call, or the final reply."""
        return [m.get("content") or "" for m in self.messages if m["role"] == "assistant"]

    @property
    def tool_calls(self) -> int:
        return sum(map(is_call, self.steps))

    def mutates(self, step: Step) -> bool:
        """Whether ``step`` is an attempt to change the world (or to tell the user something)."""
        return is_call(step) and step.action["name"] not in self.reads

    def record(self) -> dict[str, Any]:
        """The transcript as a row of a training dataset (TRL conversational format, tools as JSON)."""
        return {"env_id": self.env_id, "seed": self.seed, "messages": self.messages,
                "tools": json.dumps(self.tools, ensure_ascii=False), "reward": self.reward,
                "tool_calls": self.tool_calls}


def _assistant_turn(action: dict) -> ChatResponse:
    if "name" in action:
        return ChatResponse(tool_calls=[{"name": action["name"], "arguments": action.get("arguments", {})}])
    return ChatResponse(content=action.get("content", ""))


def replay(env_id: str, seed: int, actions: list[dict], env_kwargs: dict | None = None) -> Transcript:
    """Play ``actions`` on the instance ``(env_id, seed)`` from its start; stop where the episode ends."""
    env_kwargs = dict(env_kwargs or {})
    env = gym.make(env_id, **env_kwargs)
    observation, info = env.reset(seed=seed)
    base = env.unwrapped
    timing = {t.name: t.timing for t in base.task.triggers}
    reads = frozenset(n for n, spec in tool_env(env).tools.items() if not spec.mutates and n != USER_TOOL)
    agent = LLMAgent(model=None)
    agent.reset(observation, info, env=env, seed=seed)
    agent.begin(observation, info)
    steps, reward, final = [], 0.0, {}
    for action in actions:
        agent.finish(_assistant_turn(action))
        observation, reward, terminated, truncated, final = env.step(action)
        events = tuple({**e, "timing": timing.get(e["trigger"])} for e in final.get("events", []))
        steps.append(Step(action, observation, final.get("result"), events))
        if terminated or truncated:
            break
        agent.begin(observation, final)
    env.close()
    return Transcript(env_id, seed, steps, float(reward), agent.messages, list(info["tools"]), reads, env_kwargs,
                      final)


def from_trajectory(traj: Trajectory, env_kwargs: dict | None = None) -> Transcript:
    """A rollout's transcript: its calls and replies replayed (turns the env rejected as malformed are dropped)."""
    actions = [s["action"] for s in traj.steps
               if isinstance(s["action"], dict) and ("name" in s["action"] or set(s["action"]) == {"content"})]
    return replay(traj.env_id, traj.seed, actions, env_kwargs)
