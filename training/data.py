"""Training data at scale: expert transcripts for SFT and task instances for RL, as HF datasets.

Every instance comes from the training seed range (``TRAINING_SEED_START`` upward), never
from the benchmark's small seeds: :func:`training_instances` deals seeds out round-robin
over the chosen env ids, so instance ``k`` is ``(ids[k % n], TRAINING_SEED_START + k // n)``.

SFT rows are conversations in TRL's conversational format (``messages`` with tool calls
whose arguments are JSON strings, and a ``tools`` column holding the schemas as a JSON
string, so Arrow never merges the differently shaped argument objects of different tools
into one struct). RL rows carry the instance (``env_id``, ``seed``) and its opening
``prompt`` (system and user messages).

Each SFT transcript starts from a noisy expert (or any agent, e.g. an LLM) and goes through
the refiner; only replay-verified edits are kept, and only transcripts scoring at least
``min_reward`` make the dataset. ``reasoning`` gives the assistant turns short reasoning text
beside their calls (:mod:`sttgym.training.reasoning`); ``refine=False`` keeps the transcripts
as the agent played them (the paper's "SFT without refinement" ablation, its Table 2),
filtered by the same ``min_reward``.

Both builders take ``workers``: instances are independent, so with the default agent and
refiner they are played in that many processes, in chunks, and consumed in instance order;
the rows are exactly those of one process.
"""

from __future__ import annotations

import json
import multiprocessing
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from sttgym.agents.base import Agent
from sttgym.agents.llm import LLMAgent
from sttgym.cluster import cpus, ray_session
from sttgym.manifests import TRAINING_SEED_START, is_training_seed
from sttgym.registry import arena_ids, registered_arena_id
from sttgym.rollout import rollout
from sttgym.training.noisy import NoisyExpert
from sttgym.training.reasoning import narrate
from sttgym.training.refine import Refinement, Refiner, RuleRefiner
from sttgym.training.transcripts import from_trajectory

__all__ = ["distribution", "distribution_figure", "training_instances", "AgentFactory", "SFTStats", "sft_records", "build_sft_dataset", "rl_records",
           "build_rl_dataset", "save_dataset", "load_dataset", "run_dataset"]

AgentFactory = Callable[[np.random.Generator], Agent]


def training_instances(count: int, env_ids: list[str] | None = None,
                       start: int = TRAINING_SEED_START) -> list[tuple[str, int]]:
    """``count`` (env id, seed) pairs from the training range, round-robin over ``env_ids`` (default: all arena ids)."""
    ids = _checked_ids(env_ids, start)
    return [_instance(k, ids, start) for k in range(count)]


def _checked_ids(env_ids: list[str] | None, start: int) -> list[str]:
    ids = [registered_arena_id(i) for i in env_ids] if env_ids else arena_ids()
    if not ids:
        raise ValueError("no environment ids to draw instances from (no arena domain is registered)")
    if not is_training_seed(start):
        raise ValueError(f"seed {start} is in the benchmark range; training seeds start at {TRAINING_SEED_START}")
    return ids


def _instance(k: int, ids: list[str], start: int) -> tuple[str, int]:
    return ids[k % len(ids)], start + k // len(ids)


@dataclass
class SFTStats:
    """What building an SFT set took and did."""

    refine: bool = True  # False: the agent's transcripts as played (the "without refinement" ablation)
    reasoning: bool = True  # the assistant turns carry reasoning text
    attempted: int = 0
    kept: int = 0
    refined: int = 0  # transcripts the refiner changed
    calls_before: list[int] = field(default_factory=list)  # tool calls of each kept transcript, before refinement
    calls_after: list[int] = field(default_factory=list)
    calls_with_text: int = 0  # tool-call turns of the kept transcripts that carry reasoning text
    text_words: int = 0  # words of that text
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        calls = sum(self.calls_after)
        return {"refine": self.refine, "reasoning": self.reasoning, "attempted": self.attempted, "kept": self.kept,
                "refined": self.refined,
                "avg_tool_calls_before": float(np.mean(self.calls_before)) if self.calls_before else 0.0,
                "avg_tool_calls_after": float(np.mean(self.calls_after)) if self.calls_after else 0.0,
                "calls_with_text": round(self.calls_with_text / calls, 3) if calls else 0.0,
                "avg_text_words": round(self.text_words / self.calls_with_text, 1) if self.calls_with_text else 0.0,
                "seconds": round(self.seconds, 2)}


def noisy_expert(rng: np.random.Generator) -> Agent:
    return NoisyExpert(rng)


def _transcript(k: int, ids: list[str], start: int, seed: int, agent: AgentFactory, refiner: Refiner | None,
                env_kwargs: dict | None, reasoning: bool) -> tuple[dict, int, int, bool]:
    """Instance ``k`` played by its agent and refined (unless ``refiner`` is None): (row, tool calls
    before, after, whether refined)."""
    env_id, instance_seed = _instance(k, ids, start)
    env = gym.make(env_id, **(env_kwargs or {}))
    traj = rollout(env, agent(np.random.default_rng([seed, k])), seed=instance_seed)
    env.close()
    played = from_trajectory(traj, env_kwargs)
    if reasoning:
        played = narrate(played)
    refinement = refiner.refine(played) if refiner is not None else Refinement(played, played)
    refined = refinement.refined
    row = {**refined.record(), "original_tool_calls": refinement.original.tool_calls,
           "original_reward": refinement.original.reward,
           "refinements": [f"{stage}:{type(op).__name__}" for stage, op in refinement.operations]}
    return row, refinement.original.tool_calls, refined.tool_calls, refinement.changed


def _in_order(work: Callable[[int], Any], keys: Iterable[int], workers: int, ray: str | None = None) -> Iterator[Any]:
    """``work(k)`` for each key, in order; with ``workers`` > 1 computed ahead in that many processes, or
    with ``ray`` ("local", "auto" or a cluster address) on a Ray cluster."""
    if ray is not None:
        yield from _on_ray(work, keys, ray)
        return
    if workers <= 1:
        yield from map(work, keys)
        return
    # fork: the children inherit every domain registered at run time (plugins, a notebook's own); only the
    # default agent and refiner run there, which hold no threads or locks a fork could copy mid-use
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        keys, chunk = iter(keys), 8 * workers
        while batch := [k for _, k in zip(range(chunk), keys)]:
            yield from pool.map(work, batch, chunksize=4)


def _run_keys(work: Callable[[int], Any], keys: list[int]) -> list[Any]:
    return [work(k) for k in keys]


def _on_ray(work: Callable[[int], Any], keys: Iterable[int], address: str) -> Iterator[Any]:
    """``work(k)`` for each key as Ray tasks of a few keys each, consumed in key order. The workers import
    sttgym and the domains themselves: a domain registered only in this process is not there."""
    with ray_session(address) as ray:
        run = ray.remote(_run_keys)
        keys, ahead = iter(keys), 16 * cpus(ray)
        while batch := [k for _, k in zip(range(ahead), keys)]:
            for task in [run.remote(work, batch[i:i + 4]) for i in range(0, len(batch), 4)]:
                yield from ray.get(task)


def sft_records(count: int, env_ids: list[str] | None = None, *, seed: int = 0, agent: AgentFactory = noisy_expert,
                refiner: Refiner | None = None, min_reward: float = 1.0, start: int = TRAINING_SEED_START,
                env_kwargs: dict | None = None, stats: SFTStats | None = None, workers: int = 1,
                refine: bool = True, reasoning: bool = True, ray: str | None = None) -> Iterator[dict]:
    """Yield ``count`` refined transcripts (dataset rows), drawing training instances until enough qualify.

    The agent of instance ``k`` draws from ``np.random.default_rng([seed, k])``, so the data
    depend only on ``seed`` and the registered environments. ``refiner=None`` uses the
    rule-based refiner; ``refine=False`` uses none (the rows are the agent's transcripts, and
    ``min_reward`` applies to them). ``reasoning`` gives the assistant turns reasoning text
    (the tool calls are the same either way). Gives up (raises ``RuntimeError``) when fewer than one instance in
    ten qualifies. ``workers`` > 1 plays instances in parallel processes, and ``ray`` on a Ray
    cluster (the default agent and refiner only: a model cannot be shared that way); the rows are
    the same.
    """
    if (workers > 1 or ray is not None) and (agent is not noisy_expert or refiner is not None):
        raise ValueError("workers > 1 and ray need the default noisy expert and rule refiner (a model is not shared "
                         "between processes)")
    if refiner is not None and not refine:
        raise ValueError("refine=False trains on unrefined transcripts; it takes no refiner")
    stats = stats if stats is not None else SFTStats()
    stats.refine, stats.reasoning = refine, reasoning
    began = time.perf_counter()
    ids = _checked_ids(env_ids, start)
    limit = 10 * count + 10
    work = partial(_transcript, ids=ids, start=start, seed=seed, agent=agent,
                   refiner=(refiner or RuleRefiner()) if refine else None, env_kwargs=env_kwargs, reasoning=reasoning)
    for row, before, after, changed in _in_order(work, range(limit), workers, ray):
        if stats.kept >= count:
            return
        stats.attempted += 1
        if row["reward"] < min_reward:
            continue
        stats.kept += 1
        stats.refined += changed
        stats.calls_before.append(before)
        stats.calls_after.append(after)
        texts = [m["content"] for m in row["messages"] if m["role"] == "assistant" and m.get("tool_calls")
                 and m["content"]]
        stats.calls_with_text += len(texts)
        stats.text_words += sum(len(text.split()) for text in texts)
        stats.seconds = time.perf_counter() - began
        yield row
    if stats.kept < count:
        raise RuntimeError(f"only {stats.kept} of {limit} instances reached reward {min_reward}")


def build_sft_dataset(count: int = 2212, env_ids: list[str] | None = None, **options: Any):
    """The SFT set as a ``datasets.Dataset`` and its :class:`SFTStats` (options: see :func:`sft_records`)."""
    from datasets import Dataset

    stats = SFTStats()
    rows = list(sft_records(count, env_ids, stats=stats, **options))
    return Dataset.from_list(rows), stats


def _opening(instance: tuple[str, int], env_kwargs: dict | None) -> dict:
    env_id, seed = instance
    env = gym.make(env_id, **(env_kwargs or {}))  # a make costs a tenth of a reset; nothing is held open
    observation, info = env.reset(seed=seed)
    env.close()
    agent = LLMAgent(model=None)
    agent.reset(observation, info, env=env, seed=seed)
    return {"env_id": env_id, "seed": seed, "prompt": agent.begin(observation, info),
            "tools": json.dumps(info["tools"], ensure_ascii=False), "task": json.dumps(info["task"])}


def rl_records(count: int = 8119, env_ids: list[str] | None = None, start: int = TRAINING_SEED_START,
               env_kwargs: dict | None = None, workers: int = 1, ray: str | None = None) -> Iterator[dict]:
    """RL task instances with their opening prompt (system and user turns, as the LLM agent sees them)."""
    instances = training_instances(count, env_ids, start)
    yield from _in_order(partial(_opening, env_kwargs=env_kwargs), instances, workers, ray)


def build_rl_dataset(count: int = 8119, env_ids: list[str] | None = None, **options: Any):
    """The RL instances as a ``datasets.Dataset``."""
    from datasets import Dataset

    return Dataset.from_list(list(rl_records(count, env_ids, **options)))


def distribution(rows: Iterable[dict]) -> dict[str, Any]:
    """How a dataset's rows spread over domains, conflict types and levels, and (SFT rows) over tool calls per
    transcript: the training-data counterpart of the benchmark's distribution figures."""
    from collections import Counter

    from sttgym.registry import parse_arena_id

    parts: dict[str, Counter] = {"domain": Counter(), "conflict": Counter(), "level": Counter(), "tool_calls": Counter()}
    for row in rows:
        domain, conflict, level = parse_arena_id(row["env_id"])
        parts["domain"][domain] += 1
        parts["conflict"][conflict] += 1
        parts["level"][level] += 1
        if "tool_calls" in row:
            parts["tool_calls"][int(row["tool_calls"])] += 1
    return {name: dict(sorted(counter.items())) for name, counter in parts.items() if counter}


def distribution_figure(path: str | Path, distributions: dict[str, dict]) -> Path:
    """One row of bar charts per dataset (``{"sft": distribution(...), "rl": ...}``); needs matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sttgym.registry import CONFLICTS, LEVELS

    order = {"conflict": list(CONFLICTS), "level": list(LEVELS)}
    columns = ("domain", "conflict", "level", "tool_calls")
    fig, axes = plt.subplots(len(distributions), len(columns), figsize=(15, 3.2 * len(distributions)), squeeze=False)
    for row, (name, parts) in zip(axes, distributions.items()):
        for ax, column in zip(row, columns):
            counts = parts.get(column, {})
            if not counts:  # RL rows are instances: nothing was played yet
                ax.set_axis_off()
                continue
            keys = [k for k in order[column] if k in counts] if column in order else list(counts)
            labels = keys if column == "tool_calls" else [str(k) for k in keys]  # numbers keep their own ticks
            ax.bar(labels, [counts[k] for k in keys], color="tab:green" if name == "sft" else "tab:blue")
            ax.set_title(f"{name}: {'tool calls per transcript' if column == 'tool_calls' else 'by ' + column}")
            ax.set_ylabel("transcripts" if name == "sft" else "instances")
            ax.tick_params(axis="x", labelrotation=45 if column == "domain" else 0, labelsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)


def save_dataset(dataset: Any, path: str | Path) -> Path:
    """Save with ``save_to_disk``; :func:`load_dataset` reads it back."""
    dataset.save_to_disk(str(path))
    return Path(path)


def load_dataset(path: str | Path):
    from datasets import load_from_disk

    return load_from_disk(str(path))


def run_dataset(folder: Path, saved: str | None, build: Callable[[], tuple[Any, dict | None]]) -> Any:
    """A run's training data: the dataset saved at ``saved`` when given, else the one the run
    saved in ``folder`` before (so a resumed run trains on the same rows), else ``build()``'s,
    saved in ``folder`` with its statistics (if any) in ``folder/stats.json``.
    """
    if saved:
        return load_dataset(saved)
    if (folder / "dataset_info.json").exists():
        return load_dataset(folder)
    dataset, stats = build()
    save_dataset(dataset, folder)
    if stats is not None:
        (folder / "stats.json").write_text(json.dumps(stats, indent=1))
    return dataset
