"""Which instances are the benchmark, and which seeds are free for training.

An instance is an (env id, seed) pair. Benchmark seeds are small; training instances are
drawn from ``TRAINING_SEED_START`` upward, so no benchmark instance can leak into training data.
"""

from __future__ import annotations

BENCHMARK_SEEDS: tuple[int, ...] = (0, 1, 2)  # per arena id
TRAINING_SEED_START = 1_000_000


def is_training_seed(seed: int) -> bool:
    return seed >= TRAINING_SEED_START
