"""Which instances are the benchmark, and which seeds are free for training.

An instance is an (env id, seed) pair. The arena benchmark is a versioned manifest
(``sttgym/data/manifests/arena-vN.json``; :data:`MANIFEST` names the current one, and each earlier one
was frozen by the release it names)
that freezes its instances, each with a digest of its task: adding a domain or a scenario
changes no frozen manifest, and a change to one of its instances shows up as a digest mismatch
(a test fails; freeze a new version instead). A manifest names the sttgym ``release`` that
froze it; a later release that changed its instances refuses to measure it (stored tasks
exported by that release still replay, with ``--tasks``, scored by the playing release's rules).
Benchmark seeds are small; training instances are drawn from ``TRAINING_SEED_START`` upward
and from the training half of every name pool, so no benchmark instance leaks into training data.
"""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources
from typing import Iterable, Iterator

BENCHMARK_SEEDS: tuple[int, ...] = tuple(range(10))  # per arena id, in arena-v1
TRAINING_SEED_START = 1_000_000
MANIFEST = "arena-v14"  # the arena benchmark sttgym eval measures by default
LIVE_SEEDS: tuple[int, ...] = (0, 1, 2)  # per id, for domains no frozen manifest covers


def is_training_seed(seed: int) -> bool:
    return seed >= TRAINING_SEED_START


# ------------------------------------------------------------------------ manifests

SCRAMBLE_CONDITIONS: tuple[str, ...] = ("Unscrambled", "Base", "Drift", "Failure", "Window", "All")
SCRAMBLE_EPISODES = 20  # five-task episodes per condition, as in ScrambleToolBench


def task_of(env_id: str, seed: int):
    """The task of one instance, as the env builds it."""
    import gymnasium as gym

    env = gym.make(env_id)
    env.reset(seed=seed)
    return env.unwrapped.task


def digest(task) -> str:
    """A short fingerprint of a task's data: equal digests, identical instances."""
    # Fields left at their defaults are left out, so adding an optional field to the task format does not
    # change the digest of an instance that does not use it.
    return hashlib.sha256(task.model_dump_json(exclude_defaults=True).encode()).hexdigest()[:16]


def freeze_manifest(name: str, env_ids: Iterable[str], seeds: Iterable[int] = BENCHMARK_SEEDS,
                    digests: bool = True) -> dict:
    """A manifest over ``env_ids`` x ``seeds``, seed-major.

    Within a seed, ids run conflict by conflict and domain by domain with the four levels
    together, so any prefix (``--limit``) covers every level before it repeats one.
    """
    from sttgym.registry import parse_arena_id
    from sttgym.task import CONFLICTS, LEVELS

    order = list(CONFLICTS)

    def place(env_id: str) -> tuple:
        domain_name, conflict, level = parse_arena_id(env_id)
        return order.index(conflict), domain_name, LEVELS.index(level)

    ids = sorted(env_ids, key=place)
    instances = [[env_id, seed, digest(task_of(env_id, seed)) if digests else None] for seed in seeds for env_id in ids]
    return {"name": name, "release": release(), "instances": instances}


def release() -> str:
    """The installed sttgym's version: the release a manifest frozen now belongs to."""
    from sttgym import __version__

    return __version__


def playable(manifest: dict) -> bool:
    """Whether this release builds the manifest's instances: it was frozen by this release."""
    return manifest["release"] == release()


def load_manifest(name: str = MANIFEST) -> dict:
    """A manifest shipped with sttgym, by name (a name, never a path); its ids are registered arena ids."""
    from sttgym.registry import registered_arena_id

    path = resources.files("sttgym").joinpath(f"data/manifests/{name}.json")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name) or not path.is_file():
        known = sorted(p.name[:-5] for p in resources.files("sttgym").joinpath("data/manifests").iterdir())
        raise ValueError(f"no benchmark manifest {name[:100]!r}; known: {', '.join(known)}")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["instances"] = [[registered_arena_id(env_id), seed, digest] for env_id, seed, digest in manifest["instances"]]
    return manifest


def arena_manifest(domains: Iterable[str] = (), name: str = MANIFEST) -> list[tuple[str, int]]:
    """The (env id, seed) pairs of a frozen arena benchmark (by default ``MANIFEST``), optionally only ``domains``'.

    ``name="live"``, or a domain the frozen manifest does not cover (one of your own), gives
    every registered id of it over ``LIVE_SEEDS``, in the same order, unfrozen.
    """
    from sttgym.registry import DOMAINS, arena_ids, parse_arena_id

    domains = list(domains)
    unknown = [d for d in domains if d not in DOMAINS]
    if unknown:
        raise ValueError(f"unknown domain(s) {', '.join(unknown)}; registered: {', '.join(sorted(DOMAINS))}")

    def live(ids: list[str]) -> list[tuple[str, int]]:
        return [(env_id, seed) for env_id, seed, _ in freeze_manifest("live", ids, LIVE_SEEDS, digests=False)["instances"]]

    if name == "live":
        return live([i for d in domains for i in arena_ids(d)] if domains else arena_ids())
    manifest = load_manifest(name)
    if not playable(manifest):
        raise ValueError(
            f"{name} was frozen by sttgym {manifest['release']}; this release ({release()}) builds some of its "
            f"instances differently, so its scores would not compare. Measure {MANIFEST}, or export {name} with "
            f"sttgym=={manifest['release']} (sttgym export --manifest {name}) and evaluate the file with --tasks.")
    frozen = [(env_id, seed) for env_id, seed, _ in manifest["instances"]]
    if not domains:
        return frozen
    covered = {parse_arena_id(env_id)[0] for env_id, _ in frozen}
    rows = [(env_id, seed) for env_id, seed in frozen if parse_arena_id(env_id)[0] in domains]
    return rows + live([i for d in domains if d not in covered for i in arena_ids(d)])


def export_rows(instances: Iterable[tuple[str, int]]) -> Iterator[dict]:
    """One JSON-ready row per instance: where it comes from, its split, its digest and the whole task."""
    for env_id, seed in instances:
        task = task_of(env_id, seed)
        yield {"env_id": env_id, "seed": seed, "split": "train" if is_training_seed(seed) else "benchmark",
               "digest": digest(task), "task": json.loads(task.model_dump_json())}


def scramble_manifest() -> list[tuple[str, int]]:
    """The ScrambleTool benchmark: ``SCRAMBLE_EPISODES`` episodes of each registered condition, seed-major."""
    import gymnasium as gym

    ids = [f"ScrambleTool/{c}" for c in SCRAMBLE_CONDITIONS if f"ScrambleTool/{c}" in gym.registry]
    return [(env_id, seed) for seed in range(SCRAMBLE_EPISODES) for env_id in ids]
