"""The cycle-tracing reference agent on ScrambleTool, beside the paper's analytic references.

Prints (1) ScrambleToolBench Table 4's shape for the agent under ``ScrambleTool/Drift``:
mean actions per task position, the recovery overhead of tasks 2-5 (actions beyond the
4 calls + submission) against Eq. 2, and task 1 against the 48-action full-discovery
reference; (2) Table 2's completion rate C and tasks solved T on all six conditions.

    python examples/scramble_cycle_tracing.py                 # 200 Drift episodes, 200 per condition
    python examples/scramble_cycle_tracing.py --episodes 20   # the paper's 20 per condition
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

import gymnasium as gym

import sttgym  # noqa: F401  (registers the ScrambleTool ids)
from sttgym.agents import CycleTracingAgent
from sttgym.evaluation.scramble_metrics import scramble_metrics, scramble_references
from sttgym.rollout import rollout

CONDITIONS = ("Unscrambled", "Base", "Drift", "Failure", "Window", "All")


def episodes(env_id: str, count: int) -> list:
    env = gym.make(env_id)
    return [rollout(env, CycleTracingAgent(), seed=seed) for seed in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drift-episodes", type=int, default=200)
    parser.add_argument("--episodes", type=int, default=200, help="episodes per condition for C and T")
    parser.add_argument("--out", help="also write every figure to this JSON file")
    args = parser.parse_args()

    drift = episodes("ScrambleTool/Drift", args.drift_episodes)
    metrics, refs = scramble_metrics(drift), scramble_references(gym.make("ScrambleTool/Drift"))
    per_task = metrics["per_position"]
    print(f"ScrambleTool/Drift, {args.drift_episodes} episodes, cycle-tracing agent "
          f"(drift moves {refs['cycle_recovery'] + 1} of {refs['functions']} identifiers per boundary)")
    print(f"{'task':>6} {'actions':>8} {'solve ref':>9} {'overhead':>9} {'reference':>9} {'ratio':>6}")
    print(f"{1:>6} {per_task['actions'][0]:>8.2f} {'-':>9} {per_task['actions'][0]:>9.2f} "
          f"{refs['task1_reference']:>9} {per_task['actions'][0] / refs['task1_reference']:>6.2f}")
    for position, (actions, overhead) in enumerate(zip(per_task["actions"][1:], per_task["overhead"][1:]), start=2):
        print(f"{position:>6} {actions:>8.2f} {refs['solve_reference']:>9} {overhead:>9.2f} "
              f"{refs['expected_recovery']:>9.2f} {overhead / refs['expected_recovery']:>6.2f}")
    print(f"{'2-5':>6} {'':>8} {'':>9} {metrics['recovery_overhead']:>9.2f} {refs['expected_recovery']:>9.2f} "
          f"{metrics['recovery_overhead'] / refs['expected_recovery']:>6.2f}")
    spread = Counter(t["actions"] - t["functions"] - 1 for traj in drift for t in traj.info["tasks"][1:])
    print("overhead of tasks 2-5, count by value:", dict(sorted(spread.items())))
    print(f"share with no overhead: {spread[0] / sum(spread.values()):.3f} "
          f"(analytic: {1 - refs['drift_hit_probability']:.3f}); chain follow rate "
          f"{metrics['chain_follow_rate']:.3f} vs random {metrics['chain_random_rate']:.3f}; "
          f"stale calls {metrics['stale_calls_total']}")

    table = {}
    print(f"\n{'condition':>12} {'C':>6} {'T':>6} {'actions':>8}   ({args.episodes} episodes each)")
    for condition in CONDITIONS:
        found = scramble_metrics(episodes(f"ScrambleTool/{condition}", args.episodes))
        table[condition] = found
        print(f"{condition:>12} {found['completion_rate']:>6.2f} {found['tasks_solved']:>6.2f} "
              f"{found['action_efficiency'] or float('nan'):>8.1f}")
    if args.out:
        with open(args.out, "w") as handle:
            json.dump({"drift": metrics, "references": refs, "conditions": table}, handle, indent=2)


if __name__ == "__main__":
    main()
