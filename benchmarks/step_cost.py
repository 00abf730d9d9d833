"""Median cost of one arena env step, as a ratio to a CartPole step measured in the same run.

    python benchmarks/step_cost.py [--id STTArena/ColdChain-T2-medium] [--steps 2000] [--repeats 7]

Each repeat times a block of steps; medians over repeats are reported, and the ratio of
medians is the figure to quote (absolute times on a shared machine are noise).
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym

import sttgym
from sttgym.agents import OracleAgent


def _arena_actions(env_id: str) -> list[dict]:
    """A realistic action mix: the oracle's own calls for one episode, replayed in a loop."""
    traj = sttgym.rollout(gym.make(env_id), OracleAgent(), seed=0)
    return [s["action"] for s in traj.steps if "name" in s["action"]]


def time_arena(env_id: str, steps: int) -> float:
    env = gym.make(env_id, max_turns=10**9).unwrapped  # unwrapped: time the env, not gymnasium's checkers
    actions = _arena_actions(env_id)
    env.reset(seed=0)
    start = time.perf_counter()
    for i in range(steps):
        env.step(actions[i % len(actions)])
    return (time.perf_counter() - start) / steps


def time_cartpole(steps: int) -> float:
    env = gym.make("CartPole-v1").unwrapped
    env.reset(seed=0)
    start = time.perf_counter()
    for i in range(steps):
        _, _, terminated, truncated, _ = env.step(i % 2)
        if terminated or truncated:
            env.reset()
    return (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--id", default=None, help="arena id (default: the first registered)")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    env_id = args.id or "STTArena/ColdChain-T2-medium"
    if env_id not in gym.registry:
        env_id = sttgym.arena_ids()[0]
    arena, cartpole = [], []
    for _ in range(args.repeats):  # interleaved, so load on the machine hits both alike
        cartpole.append(time_cartpole(args.steps))
        arena.append(time_arena(env_id, args.steps))
    a, c = statistics.median(arena), statistics.median(cartpole)
    print(f"{env_id}: median step {a * 1e6:.1f} us over {args.repeats} x {args.steps} steps")
    print(f"CartPole-v1: median step {c * 1e6:.1f} us")
    print(f"ratio arena/CartPole: {a / c:.1f}x")


if __name__ == "__main__":
    main()
