"""STT-Arena environments as TRL ``environment_factory`` environments, for ``GRPOTrainer``'s own tool loop.

TRL (``GRPOTrainer(environment_factory=...)``) exposes an environment object's public methods
to the model as tools, calls ``reset(**row)`` with each dataset row before generation, and lets
reward functions read the environments of a batch. An arena domain's tools become methods of
a class built once per domain, with the world's own signatures and docstrings (from which TRL
derives the JSON schemas); each call is one ``env.step``, so triggers fire, time passes and the
checklist is scored exactly as in ``gym.make``.

The model's last message, the one without a tool call, is the reply that ends an episode:
:func:`episode_reward` hands it to the environment and returns the environment's reward, so
impossible tasks are judged on what the model told the user.

    from sttgym.adapters.trl import environment_factories, episode_reward, grpo_dataset
    trainer = GRPOTrainer(model, reward_funcs=[episode_reward], train_dataset=grpo_dataset(instances),
                          environment_factory=environment_factories(), args=GRPOConfig(...))

This is TRL's generic tool loop (several calls per turn allowed, the chat template's own tool
format); ``sttgym train rl`` is the REINFORCE++ trainer with the paper's one-call-per-turn
protocol and environment tokens masked by construction.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import gymnasium as gym

from sttgym.registry import DOMAINS, parse_arena_id, registered_arena_id
from sttgym.tools import type_hints

__all__ = ["ArenaToolEnv", "environment_class", "environment_factories", "episode_reward", "grpo_dataset",
           "system_prompt"]


class ArenaToolEnv:
    """One arena episode behind TRL's environment interface; subclasses per domain carry the tools."""

    def __init__(self) -> None:
        self.env: gym.Env | None = None
        self.done, self.reward = False, 0.0

    def reset(self, env_id: str, seed: int, **row: Any) -> str:
        """Start the row's instance; the user's request is appended to the prompt's last message."""
        if self.env is not None:
            self.env.close()
        self.env = gym.make(registered_arena_id(env_id))
        observation, _ = self.env.reset(seed=int(seed))
        self.done, self.reward = False, 0.0
        return observation

    def _act(self, action: dict) -> str:
        if self.env is None:
            return "No task is running: reset() first."
        if self.done:
            return "The conversation has ended."
        observation, reward, terminated, truncated, _ = self.env.step(action)
        if terminated or truncated:
            self.done, self.reward = True, float(reward)
        return observation

    def _end(self, reply: str) -> float:
        """End the episode with ``reply`` to the user (if it has not ended) and return its reward."""
        if not self.done:
            self._act({"content": reply})
        return self.reward


def _forwarding(name: str, func: Callable) -> Callable:
    """A method that calls tool ``name`` through the env, with ``func``'s signature and docstring."""
    hints = type_hints(func)  # read in the world's module, never evaluated: its annotations may be strings
    signature = inspect.signature(func)
    signature = signature.replace(parameters=[p.replace(annotation=hints.get(n, p.annotation))
                                              for n, p in signature.parameters.items()])

    def call(self: ArenaToolEnv, **arguments: Any) -> str:
        # TRL passes the model's arguments as keywords; wrong ones reach the env, which answers as it does any agent.
        return self._act({"name": name, "arguments": arguments})

    call.__name__ = call.__qualname__ = name
    call.__doc__ = func.__doc__
    call.__signature__ = signature.replace(
        parameters=[inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD), *signature.parameters.values()],
        return_annotation=str)
    call.__annotations__ = {**{k: v for k, v in hints.items() if k != "return"}, "return": str}
    return call


@functools.cache
def environment_class(domain: str) -> type[ArenaToolEnv]:
    """The TRL environment class of an arena domain: one method per tool of its world (and the user channel)."""
    from sttgym.authoring import tool_specs

    if domain not in DOMAINS:
        raise ValueError(f"unknown domain {domain!r}; registered: {', '.join(sorted(DOMAINS))}")
    methods = {name: _forwarding(name, spec.func) for name, spec in tool_specs(DOMAINS[domain].world).items()}
    clash = sorted(set(methods) & {"reset", "get_reward"})
    if clash:
        raise ValueError(f"{domain}: tools {clash} would shadow the environment's own methods")
    return type(f"{domain}ToolEnv", (ArenaToolEnv,), {**methods, "__doc__": DOMAINS[domain].world.description})


def environment_factories(domains: list[str] | None = None) -> dict[str, Callable[[], ArenaToolEnv]]:
    """``environment_factory`` for ``GRPOTrainer``: one factory per domain, chosen by each row's ``environment``."""
    return {domain: environment_class(domain) for domain in (domains or sorted(DOMAINS))}


def system_prompt(env: gym.Env, observation: str, info: dict, seed: int) -> str:
    """The system turn the evaluation's LLM agent gets for the instance ``env`` was just reset to."""
    from sttgym.agents.llm import LLMAgent

    agent = LLMAgent(model=None)
    agent.reset(observation, info, env=env, seed=seed)
    return agent.begin(observation, info)[0]["content"]


def grpo_dataset(instances: list[tuple[str, int]]) -> Any:
    """A ``datasets.Dataset`` of rows TRL can roll out: the prompt, the instance, and its domain's environment.

    The prompt is the system turn the evaluation's LLM agent gets for the instance and an empty
    user turn, which ``reset`` fills with the instance's request.
    """
    from datasets import Dataset

    rows = []
    for env_id, seed in instances:
        env = gym.make(registered_arena_id(env_id))
        observation, info = env.reset(seed=int(seed))
        rows.append({"prompt": [{"role": "system", "content": system_prompt(env, observation, info, int(seed))},
                                {"role": "user", "content": ""}],
                     "env_id": registered_arena_id(env_id), "seed": int(seed), "environment": parse_arena_id(env_id)[0]})
        env.close()
    return Dataset.from_list(rows)


def episode_reward(completions: list, environments: list[ArenaToolEnv], **kwargs: Any) -> list[float]:
    """A TRL reward function: each episode ends with the model's last text as its reply, scored by its env."""
    rewards = []
    for completion, environment in zip(completions, environments, strict=True):
        said = [m for m in completion if m.get("role") == "assistant" and not m.get("tool_calls")]
        reply = said[-1].get("content", "") if said else ""
        rewards.append(environment._end(reply if isinstance(reply, str) else ""))
    return rewards
