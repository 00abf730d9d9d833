"""Which instances are the benchmark, and which seeds are free for training.

An instance is an (env id, seed) pair. Benchmark seeds are small; training instances are
drawn from ``TRAINING_SEED_START`` upward, so no benchmark instance can leak into training data.
"""

from __future__ import annotations

BENCHMARK_SEEDS: tuple[int, ...] = (0, 1, 2)  # per arena id
TRAINING_SEED_START = 1_000_000


def is_training_seed(seed: int) -> bool:
    return seed >= TRAINING_SEED_START


# ------------------------------------------------------------------------ manifests

SCRAMBLE_CONDITIONS: tuple[str, ...] = ("Unscrambled", "Base", "Drift", "Failure", "Window", "All")
SCRAMBLE_EPISODES = 20  # five-task episodes per condition, as in ScrambleToolBench


def arena_manifest(domain: str | None = None) -> list[tuple[str, int]]:
    """The arena benchmark's (env id, seed) pairs, seed-major.

    Within a seed, ids run conflict by conflict and domain by domain with the four levels
    together, so any prefix (``--limit``) covers every level before it repeats one.
    """
    from sttgym.registry import arena_ids, parse_arena_id
    from sttgym.task import CONFLICTS, LEVELS

    order = list(CONFLICTS)

    def place(env_id: str) -> tuple:
        domain_name, conflict, level = parse_arena_id(env_id)
        return order.index(conflict), domain_name, LEVELS.index(level)

    ids = sorted(arena_ids(domain), key=place)
    return [(env_id, seed) for seed in BENCHMARK_SEEDS for env_id in ids]


def scramble_manifest() -> list[tuple[str, int]]:
    """The ScrambleTool benchmark: ``SCRAMBLE_EPISODES`` episodes of each registered condition, seed-major."""
    import gymnasium as gym

    ids = [f"ScrambleTool/{c}" for c in SCRAMBLE_CONDITIONS if f"ScrambleTool/{c}" in gym.registry]
    return [(env_id, seed) for seed in range(SCRAMBLE_EPISODES) for env_id in ids]
