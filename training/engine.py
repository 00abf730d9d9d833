"""A batched, lock-stepped multi-turn rollout engine working at the token level.

Many episodes advance together: each round, every unfinished episode's token sequence goes
to the policy in one batch, each generates one turn (stopping at its end-of-turn token),
the turn is read as one action (:class:`~sttgym.agents.llm.LLMAgent`'s rules: one tool
call, or the final reply; anything else is a violation the env rejects), the env steps,
and its answer is appended as environment tokens. The sequence of an episode is therefore
the prompt followed by alternating policy tokens (mask 1) and environment tokens (mask 0),
exactly the sequence :func:`~sttgym.training.render.render` gives for the finished
conversation, and the same the SFT data are rendered with.

A tokenizer reading ids as entity slots (:mod:`sttgym.models.slots`) is shown the
conversation so, and each turn's slots are spelled back as real ids before the env reads it.

Caps: ``max_turn_tokens`` per turn (a cut turn gets its end-of-turn token appended as an
environment token, as the template would write it), ``max_episode_tokens`` for the whole
sequence, prompt included, and ``max_turns`` turns. An episode that hits the token cap or
the turn cap is ended with an empty reply so the env scores the state it reached
(``truncated``).

The policy is any ``generate(prompts, max_new_tokens) -> new ids`` function (each turn's ids, or a
:class:`Sample` when the sampler reports its log-probabilities, as vLLM does): the RL trainer
passes its own (plain transformers, or vLLM), :class:`HFGenerator` samples from a local model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
import json
import math
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from sttgym.agents.llm import USER_TOOL, LLMAgent
from sttgym.registry import registered_arena_id
from sttgym.models.base import ChatResponse
from sttgym.models.parsing import parse_assistant_text
from sttgym.models.slots import slots_of
from sttgym.models.template import end_of_turn_id, stop_token_ids
from sttgym.rewards import RewardTerm, ShapedReward, build_reward, well_formed
from sttgym.training.render import decode_tools, followup_ids, render, render_prompt

__all__ = ["Generate", "Sample", "Episode", "RolloutEngine", "HFGenerator", "evaluate_policy", "rl_readiness",
           "refusals", "copy_accuracy"]



@dataclass(frozen=True)
class Sample:
    """One generated turn with the sampler's log-probability of each of its tokens."""

    ids: list[int]
    logprobs: list[float]


Generate = Callable[[list[list[int]], int], list["list[int] | Sample"]]


@dataclass
class Episode:
    """One episode at the token level, and what happened in it."""

    env_id: str
    seed: int
    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    policy_mask: list[int] = field(default_factory=list)  # 1: the policy generated it; 0: the environment wrote it
    sampling_logprobs: list[float] = field(default_factory=list)  # the sampler's, per completion token; NaN: unknown
    turn_ends: list[int] = field(default_factory=list)  # index into completion_ids of each turn's last policy token
    turn_rewards: list[float] = field(default_factory=list)
    actions: list[dict] = field(default_factory=list)
    results: list[dict] = field(default_factory=list)  # the env's result for each action
    runnable: list[bool] = field(default_factory=list)  # each action was a reply or a call fitting its tool's schema
    messages: list[dict] = field(default_factory=list)
    tools: list[dict] = field(default_factory=list)
    terminated: bool = False
    truncated: bool = False
    info: dict = field(default_factory=dict)

    @property
    def reward(self) -> float:
        return float(sum(self.turn_rewards))

    @property
    def tool_calls(self) -> int:
        return sum("name" in a for a in self.actions)

    @property
    def violations(self) -> int:
        return sum("violation" in a for a in self.actions)

    @property
    def valid_calls(self) -> int:
        """Tool calls naming a real tool with arguments that fit its schema."""
        return sum("name" in a and ok for a, ok in zip(self.actions, self.runnable))

    @property
    def accepted_calls(self) -> int:
        """Tool calls the world carried out."""
        return sum("name" in a and bool(r.get("success")) for a, r in zip(self.actions, self.results))

    @property
    def repeated_calls(self) -> int:
        """Tool calls identical (tool and arguments) to an earlier call of the episode."""
        calls = [json.dumps(a, sort_keys=True, default=str) for a in self.actions if "name" in a]
        return len(calls) - len(set(calls))

    @property
    def replied(self) -> bool:
        """Whether the episode ended with the policy's final reply (not a turn cap or a token budget)."""
        return any("content" in a for a in self.actions)

    @property
    def length(self) -> int:
        return len(self.prompt_ids) + len(self.completion_ids)


class _Slot:
    """An episode in progress: its env, the agent keeping its conversation, and its tokens."""

    def __init__(self, env: gym.Env, agent: LLMAgent, episode: Episode):
        self.env, self.agent, self.episode = env, agent, episode
        self.done = False


class RolloutEngine:
    """Plays a batch of instances with a policy; see the module docstring.

    Args:
        tokenizer: the policy's tokenizer, with a training template (see
            :func:`~sttgym.training.render.prepare_tokenizer`).
        generate: ``(prompts, max_new_tokens) -> new token ids`` for each prompt.
        max_turns, max_turn_tokens, max_episode_tokens: the caps.
        reward: reward terms (a :class:`~sttgym.rewards.RewardTerm` or a config list); None: the env's reward.
        env_kwargs: passed to ``gym.make``.
        agree: with several processes, the element-wise maximum over every process of this
            process's ``[prompts, max_new_tokens]`` for the next round. Generation is a collective
            operation under DeepSpeed ZeRO-3 and vLLM's server and tensor-parallel modes, and TRL
            splits vLLM's gathered outputs assuming every process sent as many prompts as the
            others: so each round every process sends the same number of prompts (topped up with
            discarded stand-ins, also when all its episodes are over) with the same token budget,
            until no process has an episode running. None: a single process.
    """

    def __init__(self, tokenizer: Any, generate: Generate, *, max_turns: int = 50, max_turn_tokens: int = 4096,
                 max_episode_tokens: int = 32768, reward: RewardTerm | list[dict] | None = None,
                 env_kwargs: dict | None = None, agree: Callable[[list[int]], list[int]] | None = None):
        self.tokenizer, self.generate = tokenizer, generate
        self.end_of_turn = end_of_turn_id(tokenizer)
        self.slots = slots_of(tokenizer)
        self.max_turns, self.max_turn_tokens, self.max_episode_tokens = max_turns, max_turn_tokens, max_episode_tokens
        self.reward = reward
        self.env_kwargs = dict(env_kwargs or {})
        self.agree = agree or (lambda local: local)

    def run(self, instances: list[tuple[str, int]]) -> list[Episode]:
        """Play every ``(env_id, seed)`` instance to its end; episodes come back in the same order."""
        slots = [self._start(env_id, seed) for env_id, seed in instances]
        active = [s for s in slots if not s.done]
        while True:
            budgets = [min(self.max_turn_tokens, self.max_episode_tokens - s.episode.length) for s in active]
            width, budget = self.agree([len(active), max(budgets, default=1)])
            if width == 0:
                return [s.episode for s in slots]
            stand_in = slots[0].episode.prompt_ids if slots else [self.end_of_turn]
            prompts = [s.episode.prompt_ids + s.episode.completion_ids for s in active]
            outputs = self.generate(prompts + [stand_in] * (width - len(active)), budget)
            for slot, out, own in zip(active, outputs, budgets):
                sampled = out if isinstance(out, Sample) else Sample(list(out), [math.nan] * len(out))
                self._advance(slot, sampled.ids[:own], sampled.logprobs[:own])
            active = [s for s in active if not s.done]

    def _term(self) -> RewardTerm:
        return self.reward if isinstance(self.reward, RewardTerm) else build_reward(self.reward)

    def _start(self, env_id: str, seed: int) -> _Slot:
        env = ShapedReward(gym.make(registered_arena_id(env_id), **self.env_kwargs), self._term())  # ids from rows
        observation, info = env.reset(seed=seed)
        agent = LLMAgent(model=None)
        agent.reset(observation, info, env=env, seed=seed)
        conversation = agent.begin(observation, info)
        prompt = render_prompt(self.tokenizer, conversation, decode_tools(agent.chat_tools))
        slot = _Slot(env, agent, Episode(env_id, seed, prompt, tools=list(info["tools"])))
        if len(prompt) >= self.max_episode_tokens:
            self._force_end(slot)
        return slot

    def _advance(self, slot: _Slot, ids: list[int], logprobs: list[float]) -> None:
        episode, end = slot.episode, self.end_of_turn
        closed = bool(ids) and ids[-1] == end
        episode.completion_ids += ids
        episode.policy_mask += [1] * len(ids)
        episode.sampling_logprobs += logprobs
        episode.turn_ends.append(len(episode.completion_ids) - 1)
        text = self.tokenizer.decode(ids[:-1] if closed else ids, skip_special_tokens=False)
        if self.slots is not None:
            text = self.slots.decode(text, slot.agent.messages)
        content, calls, reasoning = parse_assistant_text(text)
        action = slot.agent.finish(ChatResponse(content=content, tool_calls=calls, reasoning=reasoning, raw=text))
        seen = len(slot.agent.messages)
        episode.runnable.append(well_formed(slot.env, action))
        observation, reward, terminated, truncated, info = slot.env.step(action)
        episode.actions.append(action)
        episode.results.append(info.get("result") or {})
        episode.turn_rewards.append(float(reward))
        if terminated or truncated:
            self._close(slot, terminated, truncated, info)
            return
        conversation = slot.agent.begin(observation, info)
        env_tokens = ([] if closed else [end]) + followup_ids(self.tokenizer, conversation[seen:], conversation[:seen])
        if len(slot.agent.turns) >= self.max_turns or episode.length + len(env_tokens) >= self.max_episode_tokens:
            self._force_end(slot)
            return
        episode.completion_ids += env_tokens
        episode.policy_mask += [0] * len(env_tokens)
        episode.sampling_logprobs += [math.nan] * len(env_tokens)

    def _force_end(self, slot: _Slot) -> None:
        """End an episode that ran out of room with an empty reply, so the env scores where it stands."""
        _, reward, terminated, truncated, info = slot.env.step({"content": ""})
        if slot.episode.turn_rewards:  # a prompt too long for even one turn earns nothing: no token to credit
            slot.episode.turn_rewards[-1] += float(reward)
        self._close(slot, False, True, info)

    @staticmethod
    def _close(slot: _Slot, terminated: bool, truncated: bool, info: dict) -> None:
        episode = slot.episode
        episode.terminated, episode.truncated, episode.info = terminated, truncated, info
        episode.messages = slot.agent.messages
        slot.env.close()
        slot.done = True


class HFGenerator:
    """``generate`` for :class:`RolloutEngine` from a local transformers model.

    Samples at ``temperature`` (0: greedy); every sample draws its torch seed from ``rng``,
    and the global torch RNG is left untouched.
    """

    def __init__(self, model: Any, tokenizer: Any, *, temperature: float = 1.0, top_p: float = 1.0,
                 rng: np.random.Generator | None = None, batch_size: int = 64):
        self.model, self.tokenizer = model, tokenizer
        self.temperature, self.top_p, self.batch_size = temperature, top_p, batch_size
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.stops = stop_token_ids(tokenizer, model)

    def __call__(self, prompts: list[list[int]], max_new_tokens: int) -> list[list[int]]:
        return [ids for start in range(0, len(prompts), self.batch_size)
                for ids in self._batch(prompts[start:start + self.batch_size], max_new_tokens)]

    def _batch(self, prompts: list[list[int]], max_new_tokens: int) -> list[list[int]]:
        device = self.model.device
        width = max(map(len, prompts))
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts], device=device)
        attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=device)
        sample = self.temperature > 0
        options: dict[str, Any] = {"do_sample": sample, "temperature": self.temperature if sample else None,
                                   "top_p": self.top_p if sample else None, "top_k": None}
        devices = [device] if device.type == "cuda" else []
        with torch.no_grad(), torch.random.fork_rng(devices=devices):
            torch.manual_seed(int(self.rng.integers(2**63 - 1)))
            output = self.model.generate(input_ids=input_ids, attention_mask=attention,
                                         max_new_tokens=max_new_tokens, eos_token_id=self.stops,
                                         pad_token_id=pad, **options)
        return [cut_at_stop(row, self.stops) for row in output[:, width:].tolist()]


def cut_at_stop(ids: list[int], stops: list[int]) -> list[int]:
    """``ids`` up to and including the first stop token (what follows is padding or another turn)."""
    end = next((i for i, token in enumerate(ids) if token in stops), len(ids) - 1)
    return ids[:end + 1]


def _load(path: str) -> tuple[Any, Any]:
    """A checkpoint's tokenizer (with a training template: assistant masks) and its model, for evaluation."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from sttgym.training.render import prepare_tokenizer

    return prepare_tokenizer(AutoTokenizer.from_pretrained(path)), AutoModelForCausalLM.from_pretrained(path).eval()


def _play(path: str, instances: list[tuple[str, int]], *, samples: int, temperature: float, seed: int,
          max_turns: int, max_turn_tokens: int, max_episode_tokens: int, batch_size: int) -> list[Episode]:
    """Episodes of the checkpoint at ``path``: each instance played ``samples`` times in a row."""
    tokenizer, model = _load(path)
    generator = HFGenerator(model, tokenizer, temperature=temperature, batch_size=batch_size,
                            rng=np.random.default_rng(seed))
    engine = RolloutEngine(tokenizer, generator, max_turns=max_turns, max_turn_tokens=max_turn_tokens,
                           max_episode_tokens=max_episode_tokens)
    return engine.run([instance for instance in instances for _ in range(samples)])


def evaluate_policy(path: str, instances: list[tuple[str, int]], *, samples: int = 1, temperature: float = 0.0,
                    seed: int = 0, max_turns: int = 50, max_turn_tokens: int = 256, max_episode_tokens: int = 32768,
                    batch_size: int = 64) -> dict[str, Any]:
    """Episodes of the checkpoint at ``path`` on ``instances``, summarised: greedy by default.

    With ``temperature`` above 0 every instance is played ``samples`` times (torch seeds drawn from
    ``seed``), which scores the policy RL samples from rather than its most likely path. Returns each
    instance's reward (``rewards``, in the order of ``instances``, the mean of its samples: for paired
    comparisons), the mean reward, the success rate (reward 1, over all episodes), the share of turns that
    were one readable call or the final reply, the shares of tool calls that fit a tool's schema and that
    the world carried out, the mean numbers of tool calls and of repeated identical calls per episode, the
    share of episodes that ended with the final reply, and the :func:`refusals` on feasible tasks.
    """
    if samples < 1 or (samples > 1 and temperature == 0.0):
        raise ValueError(f"samples={samples} at temperature {temperature}: greedy episodes repeat exactly, "
                         "so take one sample greedily and several only when sampling")
    episodes = _play(path, instances, samples=samples, temperature=temperature, seed=seed, max_turns=max_turns,
                     max_turn_tokens=max_turn_tokens, max_episode_tokens=max_episode_tokens, batch_size=batch_size)
    rewards = np.array([e.reward for e in episodes]).reshape(len(instances), samples)
    turns = sum(len(e.actions) for e in episodes) or 1
    calls = sum(e.tool_calls for e in episodes)
    return {"episodes": len(episodes), "rewards": rewards.mean(axis=1).tolist(),
            "reward": float(rewards.mean()), "success": float((rewards >= 1.0).mean()),
            "readable_turns": 1.0 - sum(e.violations for e in episodes) / turns,
            "valid_calls": sum(e.valid_calls for e in episodes) / calls if calls else 0.0,
            "accepted_calls": sum(e.accepted_calls for e in episodes) / calls if calls else 0.0,
            "tool_calls": calls / len(episodes),
            "repeated_calls": sum(e.repeated_calls for e in episodes) / len(episodes),
            "replied": float(np.mean([e.replied for e in episodes])), **refusals(episodes)}


def refusals(episodes: list[Episode]) -> dict[str, float]:
    """How often a policy tells the user a feasible task cannot be done, and how much it looked first.

    A *refusal* is a message to the user (through ``chat_with_user`` or in the final reply) that
    the rule judge reads as declining the request itself (``declines``), in an episode of a feasible task.
    A policy rewarded by the impossible-task judge can learn to refuse everything:
    ``refusals_on_feasible`` rising while ``reads_before_refusal`` (read calls before the first
    refusal) falls is that exploit forming.
    """
    from sttgym.authoring import tool_specs
    from sttgym.judge.rule import declines, looks_like_a_list
    from sttgym.registry import DOMAINS, parse_arena_id

    feasible = [e for e in episodes if e.info.get("task", {}).get("solvable", True)]
    reads = []
    for episode in feasible:
        specs = tool_specs(DOMAINS[parse_arena_id(episode.env_id)[0]].world)
        for turn, action in enumerate(episode.actions):
            said = action.get("content") if "content" in action else (
                action.get("arguments", {}).get("message") if action.get("name") == USER_TOOL else None)
            if isinstance(said, str) and declines(said) and not looks_like_a_list(said):
                reads.append(sum(1 for a in episode.actions[:turn] if a.get("name") in specs
                                 and not specs[a["name"]].mutates and a["name"] != USER_TOOL))
                break
    return {"refusals_on_feasible": len(reads) / len(feasible) if feasible else 0.0,
            "reads_before_refusal": float(np.mean(reads)) if reads else 0.0}


def rl_readiness(path: str, instances: list[tuple[str, int]], *, samples: int = 4, temperature: float = 1.0,
                 seed: int = 0, max_turns: int = 50, max_turn_tokens: int = 256, max_episode_tokens: int = 32768,
                 batch_size: int = 64) -> dict[str, float]:
    """Whether RL from the checkpoint at ``path`` can learn anything on ``instances``, before spending on it.

    REINFORCE++ learns from differences: a task whose sampled rollouts all score alike gives its
    tokens zero advantage under a group baseline (and only noise under batch whitening). So the
    policy is sampled ``samples`` times per instance at the RL ``temperature`` and this returns
    the sampled success rate, pass@k (an instance solved in any of its samples), the mean reward,
    and ``spread``: the share of instances whose samples did not all score the same. A spread of
    0 means every gradient of RL on these tasks would be 0.
    """
    episodes = _play(path, instances, samples=samples, temperature=temperature, seed=seed, max_turns=max_turns,
                     max_turn_tokens=max_turn_tokens, max_episode_tokens=max_episode_tokens, batch_size=batch_size)
    rewards = np.array([e.reward for e in episodes]).reshape(len(instances), samples)
    return {"samples": samples, "sampled_success": float((rewards >= 1.0).mean()),
            f"pass@{samples}": float((rewards >= 1.0).any(axis=1).mean()), "sampled_reward": float(rewards.mean()),
            "spread": float((rewards.max(axis=1) > rewards.min(axis=1)).mean()), **refusals(episodes)}


def copy_accuracy(path: str, instances: list[tuple[str, int]]) -> dict[str, float]:
    """How well the checkpoint at ``path`` predicts the oracle's turns on ``instances``, teacher-forced.

    The share of the assistant's tokens predicted right (greedy next token given the true
    prefix), split into tokens holding a digit (ids, entity slots, times, quantities: what
    must be copied from the request and the tool results) and all others (the protocol and
    the plan).
    """
    from sttgym.agents import OracleAgent
    from sttgym.models.tiny import holds_digit
    from sttgym.rollout import rollout
    from sttgym.training.transcripts import from_trajectory

    tokenizer, model = _load(path)
    has_digit = torch.tensor(holds_digit(tokenizer))
    right = {True: 0, False: 0}
    total = {True: 0, False: 0}
    for env_id, seed in instances:
        transcript = from_trajectory(rollout(gym.make(env_id), OracleAgent(), seed=seed))
        ids, mask = render(tokenizer, transcript.messages, transcript.tools)
        ids = torch.tensor(ids)
        with torch.no_grad():
            predicted = model(ids[None]).logits[0, :-1].argmax(-1)
        scored = torch.tensor(mask[1:], dtype=torch.bool)
        hit, digit = (predicted == ids[1:])[scored], has_digit[ids[1:][scored]]
        for kind in (True, False):
            right[kind] += int(hit[digit == kind].sum())
            total[kind] += int((digit == kind).sum())
    return {"digit_tokens": right[True] / max(1, total[True]), "other_tokens": right[False] / max(1, total[False])}
