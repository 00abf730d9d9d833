"""Every performance figure of sttgym, each as a ratio to a CartPole step timed in the same run.

    OMP_NUM_THREADS=1 python benchmarks/run.py [--blocks 7] [--quick]

Each measure is timed in ``--blocks`` blocks, every block right after a block of CartPole
steps, so load on a shared machine hits both alike; within a block, every figure is a median
over single calls (CartPole: over runs of ten steps), so a call the machine preempted does not
count. The table gives the median of the per-block ratios with their min–max, and the median
absolute time. Absolute times on a shared machine are noise: quote the ratios.

Measures: an arena step by kind (read, write, invalid action, final reply) in the oracle's own
episodes, the tool's own time within its read and write steps (the domain's work, which no
engine change saves) and the engine alone (the same calls with every tool stubbed); a read at turn 1 and at turn 50; reset per domain and per ScrambleTool condition;
``gym.make``; what each wrapper adds to a step (actions sent as an agent would through it);
memory per env; ``import sttgym`` against
``import gymnasium``; RL training rows per second; reference-agent eval episodes per second.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from typing import Callable

import gymnasium as gym

import sttgym
from sttgym.agents import OracleAgent
from sttgym.tools import ok
from sttgym.wrappers import MappingDrift, Obfuscate, StochasticFailure, TemporalWindow

LIBRARY = sorted(d for d, dom in sttgym.DOMAINS.items() if dom.world.__module__.startswith("sttgym.envs."))
DOMAIN_IDS = tuple(f"STTArena/{d}-T2-medium" for d in LIBRARY)
WRAPPERS: dict[str, Callable[[gym.Env], gym.Env]] = {  # MappingDrift needs Obfuscate's aliases underneath
    "Obfuscate": Obfuscate, "Obfuscate+MappingDrift": lambda e: MappingDrift(Obfuscate(e)),
    "StochasticFailure": lambda e: StochasticFailure(e, p=0.1), "TemporalWindow": lambda e: TemporalWindow(e, k=10)}
CARTPOLE_STEPS, CHUNK = 2000, 10


def cartpole_step() -> float:
    """Seconds per CartPole-v1 step (unwrapped) over one block: the median of runs of ``CHUNK`` steps, so a
    preempted run on a shared machine counts no more than a preempted arena step does in its median."""
    env = gym.make("CartPole-v1").unwrapped
    env.reset(seed=0)
    runs = []
    for _ in range(CARTPOLE_STEPS // CHUNK):
        start = time.perf_counter()
        for i in range(CHUNK):
            _, _, terminated, truncated, _ = env.step(i % 2)
            if terminated or truncated:
                env.reset()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs) / CHUNK


def _kind(env: gym.Env, action: dict) -> str:
    if "content" in action:
        return "final reply"
    spec = env.unwrapped.tools.get(action.get("name"))
    return "invalid" if spec is None else ("write" if spec.mutates else "read")


def _as_agent_sends(env: gym.Env, action: dict) -> dict:
    """``action`` (plaintext) as an agent would send it through an Obfuscate layer in ``env``'s stack."""
    layer = env
    while isinstance(layer, gym.Wrapper) and not isinstance(layer, Obfuscate):
        layer = layer.env
    name = action.get("name")
    if not isinstance(layer, Obfuscate) or name not in layer.alias:
        return action
    return {"name": layer.alias[name], "arguments": {layer.keys[name][k]: v for k, v in action["arguments"].items()}}


def step_kinds(env_id: str, episodes: int, make: Callable[[gym.Env], gym.Env] = lambda e: e) -> dict[str, float]:
    """Median seconds per step of each kind, over the oracle's episodes (plus one invalid action each)."""
    samples: dict[str, list[float]] = {}
    env = make(gym.make(env_id).unwrapped)
    for seed in range(episodes):
        observation, info = env.reset(seed=seed)
        agent = OracleAgent()
        agent.reset(observation, info, env=env, seed=seed)
        bad = {"name": "no_such_tool", "arguments": {}}
        started = time.perf_counter()
        observation, _, _, _, info = env.step(bad)
        samples.setdefault("invalid", []).append(time.perf_counter() - started)
        while True:
            action = agent.act(observation, info)
            sent = _as_agent_sends(env, action)
            started = time.perf_counter()
            observation, _, terminated, truncated, info = env.step(sent)
            samples.setdefault(_kind(env, action), []).append(time.perf_counter() - started)
            if terminated or truncated:
                break
    return {kind: statistics.median(values) for kind, values in samples.items()}


def tool_time(env_id: str, episodes: int) -> float:
    """Median seconds the tool itself takes in the oracle's read and write steps: the domain's work on its
    world, which a step costs whatever the engine around it does."""
    env, times = gym.make(env_id).unwrapped, []

    def timed(func: Callable[..., dict]) -> Callable[..., dict]:
        def run(**arguments):
            started = time.perf_counter()
            try:
                return func(**arguments)
            finally:
                times.append(time.perf_counter() - started)
        return run

    for seed in range(episodes):
        observation, info = env.reset(seed=seed)
        env.tools = {name: dataclasses.replace(spec, func=timed(spec.func)) for name, spec in env.tools.items()}
        agent = OracleAgent()
        agent.reset(observation, info, env=env, seed=seed)
        terminated = truncated = False
        while not (terminated or truncated):
            observation, _, terminated, truncated, info = env.step(agent.act(observation, info))
    return statistics.median(times)


def engine_step(env_id: str, episodes: int) -> float:
    """Median seconds of the oracle's tool calls replayed with every tool stubbed to a small fixed result:
    what the engine itself (parsing, checking, triggers, rendering, the call log, info) adds to a call."""
    env = gym.make(env_id).unwrapped
    played = []
    for seed in range(episodes):
        observation, info = env.reset(seed=seed)
        agent = OracleAgent()
        agent.reset(observation, info, env=env, seed=seed)
        terminated = truncated = False
        while not (terminated or truncated):
            action = agent.act(observation, info)
            played.append((seed, action))
            observation, _, terminated, truncated, info = env.step(action)
    times, episode = [], None
    for seed, action in played:
        if "content" in action:
            continue
        if seed != episode:
            episode = seed
            env.reset(seed=seed)
            env.tools = {name: dataclasses.replace(spec, func=lambda **_: ok(message="done"))
                         for name, spec in env.tools.items()}
        started = time.perf_counter()
        env.step(action)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def read_at_turn(env_id: str, turn: int, repeats: int = 30) -> float:
    """Median seconds of the oracle's first read when it is the episode's ``turn``-th action."""
    env = gym.make(env_id, max_turns=10**6).unwrapped
    times = []
    for seed in range(repeats):
        env.reset(seed=seed)
        read = next(c for c in env.task.oracle if not env.tools[c.name].mutates and c.name != "chat_with_user")
        action = {"name": read.name, "arguments": read.arguments}
        for _ in range(turn - 1):
            env.step(action)
        started = time.perf_counter()
        env.step(action)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def per_call(fn: Callable[[int], None], n: int) -> float:
    """The median seconds of ``fn(i)`` over ``i < n``."""
    times = []
    for i in range(n):
        started = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def memory_per_env(env_id: str, n: int = 50) -> float:
    """Bytes a reset env holds, averaged over ``n``."""
    tracemalloc.start()
    envs = []
    for i in range(n):
        env = gym.make(env_id)
        env.reset(seed=i)
        envs.append(env)
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return size / n


def import_time(module: str, repeats: int) -> float:
    """Median seconds to import ``module`` in a fresh interpreter, with bytecode cached as an installed package has
    it (some machines set PYTHONDONTWRITEBYTECODE, which makes every import compile its sources anew)."""
    code = f"import time; s = time.perf_counter(); import {module}; print(time.perf_counter() - s)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def once() -> float:
        return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                    env=env).stdout)

    once()  # writes the bytecode
    return statistics.median(once() for _ in range(repeats))


def rl_rows_per_second(count: int) -> float:
    from sttgym.training.data import rl_records

    started = time.perf_counter()
    rows = sum(1 for _ in rl_records(count))
    return rows / (time.perf_counter() - started)


def eval_episodes_per_second(limit: int) -> float:
    from sttgym.evaluation.runner import EvalConfig, Runner

    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        records = Runner(EvalConfig(agent="nominal", runs=1, limit=limit), out).run()
        return len(records) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=7, help="blocks per measure (medians and min-max over them)")
    parser.add_argument("--quick", action="store_true", help="smaller blocks, for a smoke run")
    args = parser.parse_args()
    episodes, resets = (3, 20) if args.quick else (10, 100)
    measures: dict[str, Callable[[], float]] = {}
    for env_id in DOMAIN_IDS:
        name = env_id.split("/")[1].split("-")[0]
        for kind in ("read", "write", "invalid", "final reply"):
            measures[f"{name} step: {kind}"] = lambda kind=kind, env_id=env_id: step_kinds(env_id, episodes)[kind]
        measures[f"{name} step: the tool itself"] = lambda env_id=env_id: tool_time(env_id, episodes)
        measures[f"{name} step: engine alone"] = lambda env_id=env_id: engine_step(env_id, episodes)
        measures[f"{name} read at turn 1"] = lambda env_id=env_id: read_at_turn(env_id, 1)
        measures[f"{name} read at turn 50"] = lambda env_id=env_id: read_at_turn(env_id, 50)
        measures[f"{name} reset"] = lambda env_id=env_id, env=gym.make(env_id): per_call(
            lambda i: env.reset(seed=i), resets)
        measures[f"{name} gym.make"] = lambda env_id=env_id: per_call(lambda i: gym.make(env_id), resets)
    for condition in ("Unscrambled", "Base", "All"):
        measures[f"ScrambleTool/{condition} reset"] = lambda c=condition, env=gym.make(f"ScrambleTool/{condition}"): (
            per_call(lambda i: env.reset(seed=i), max(5, resets // 10)))
    base_id = DOMAIN_IDS[0]
    for wrapper, make in WRAPPERS.items():
        measures[f"{wrapper}: added per step"] = lambda make=make: (
            statistics.median(step_kinds(base_id, episodes, make).values())
            - statistics.median(step_kinds(base_id, episodes).values()))

    print(f"sttgym benchmarks, {args.blocks} blocks each; ratio = measure / CartPole-v1 step in the same block")
    print(f"{'measure':<36} {'median':>12} {'ratio':>9} {'min-max':>17}")
    for label, measure in measures.items():
        ratios, values = [], []
        for _ in range(args.blocks):
            baseline = cartpole_step()
            value = measure()
            values.append(value)
            ratios.append(value / baseline)
        print(f"{label:<36} {statistics.median(values) * 1e6:>9.1f} us {statistics.median(ratios):>8.1f}x "
              f"{min(ratios):>7.1f}-{max(ratios):.1f}x")
    for env_id in DOMAIN_IDS:
        print(f"{'memory per env ' + env_id.split('/')[1]:<36} {memory_per_env(env_id) / 1024:>9.1f} KiB")
    gym_import, sttgym_import = import_time("gymnasium", args.blocks), import_time("sttgym", args.blocks)
    print(f"{'import sttgym / import gymnasium':<36} {sttgym_import * 1e3:>9.1f} ms {sttgym_import / gym_import:>8.2f}x")
    print(f"{'train data: RL rows per second':<36} {rl_rows_per_second(50 if args.quick else 500):>12.1f}")
    print(f"{'eval (nominal): episodes per second':<36} {eval_episodes_per_second(30 if args.quick else 300):>12.1f}")
    print(f"({len(sttgym.arena_ids())} arena ids registered)")


if __name__ == "__main__":
    main()
