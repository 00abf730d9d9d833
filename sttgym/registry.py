"""The catalogue of domains and their scenarios, and their gymnasium IDs.

A domain registers itself (``register_domain``) when its package is imported; the core
never names a domain. IDs read ``STTArena/<Domain>-<Conflict>-<difficulty>``.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Callable

import gymnasium as gym

from sttgym.vector import make_vector_env
from sttgym.world import World

if TYPE_CHECKING:
    from sttgym.authoring import Author
    from sttgym.task import Task

__all__ = ["CONFLICTS", "LEVELS", "Domain", "DOMAINS", "register_domain", "scenario_package", "load_plugins", "arena_id", "arena_ids", "parse_arena_id", "registered_arena_id", "registered_id", "SUITE_NAMESPACES"]

ARENA_NAMESPACE = "STTArena"
# The STT-Arena taxonomy: nine conflict types (ids in env names) and four levels.
CONFLICTS: dict[str, str] = {
    "T1": "Window Expiry",
    "T2": "Priority Reorder",
    "T3": "Quota Reset",
    "S1": "Site Mismatch",
    "S2": "Dependency Block",
    "S3": "Route Restriction",
    "ST1": "Resource Shift",
    "ST2": "Failure Cascade",
    "ST3": "Handoff Failure",
}
LEVELS: tuple[str, ...] = ("easy", "medium", "hard", "impossible")
Scenario = Callable[["Author"], "Task"]  # see sttgym.authoring


@dataclass
class Domain:
    name: str
    world: type[World]
    scenarios: dict[tuple[str, str], Scenario] = field(default_factory=dict)  # (conflict, level) -> scenario


DOMAINS: dict[str, Domain] = {}


PLUGIN_GROUP = "sttgym.domains"  # entry points of packages whose import registers domains
BUNDLES_VARIABLE = "STTGYM_BUNDLES"  # synthesized bundles to register, paths joined by os.pathsep


def load_plugins() -> tuple[list[str], dict[str, str]]:
    """Import every installed package that declares an ``sttgym.domains`` entry point.

    Gymnasium no longer loads plugins, and importing sttgym does not either (it stays fast): the
    command line calls this, and so can any harness. A package declares, in its pyproject.toml,
    ``[project.entry-points."sttgym.domains"] mydomain = "mypackage.domain"``; importing that
    module must call :func:`register_domain`. The bundles named by the ``STTGYM_BUNDLES``
    environment variable (directories written by ``sttgym synth``, joined by ``os.pathsep``)
    register too. Returns the entry points loaded and, for those that failed, why (a broken
    plugin is reported, never fatal).
    """
    from importlib.metadata import entry_points

    loaded, failed = [], {}
    for point in entry_points(group=PLUGIN_GROUP):
        try:
            point.load()
            loaded.append(point.name)
        except Exception as exc:  # a third party's bug must not break every command
            failed[point.name] = f"{type(exc).__name__}: {exc}"
    for path in filter(None, os.environ.get(BUNDLES_VARIABLE, "").split(os.pathsep)):
        from sttgym.synth.bundle import load_bundle  # generated code and its sandbox load only when asked for

        try:
            loaded.append(load_bundle(path).name)
        except Exception as exc:  # a bad bundle is reported like a broken plugin
            failed[path] = f"{type(exc).__name__}: {exc}"
    return loaded, failed


def arena_id(domain: str, conflict: str, level: str) -> str:
    return f"{ARENA_NAMESPACE}/{domain}-{conflict}-{level}"


def parse_arena_id(env_id: str) -> tuple[str, str, str]:
    """``"STTArena/ColdChain-T2-medium"`` -> ``("ColdChain", "T2", "medium")``."""
    name = env_id.split(":", 1)[-1]
    if not name.startswith(ARENA_NAMESPACE + "/"):
        raise ValueError(f"{env_id!r} is not an STTArena id")
    parts = name[len(ARENA_NAMESPACE) + 1:].split("-")
    if len(parts) != 3:
        raise ValueError(f"{env_id!r} does not read STTArena/<Domain>-<Conflict>-<difficulty>")
    return parts[0], parts[1], parts[2]


SUITE_NAMESPACES = (ARENA_NAMESPACE, "ScrambleTool")  # the ids sttgym itself registers


def registered_id(env_id: str, namespaces: tuple[str, ...] = SUITE_NAMESPACES) -> str:
    """``env_id`` as registered, without a module prefix; a ValueError for an id that would make ``gym.make`` import
    code, or that is not a registered id of ``namespaces``.

    Every id read from data goes through here (a file, a dataset row, a config, a request, a bundle):
    ``"mod:STTArena/..."`` would have gymnasium import ``mod`` before making the env.
    """
    module, _, name = str(env_id).rpartition(":")
    if module not in ("", "sttgym"):
        raise ValueError(f"{str(env_id)[:200]!r} names a module to import ({module[:80]!r}); give the bare id, "
                         f"e.g. {name[:120]!r}")
    if name.partition("/")[0] not in namespaces or name not in gym.registry:
        raise ValueError(f"{str(env_id)[:200]!r} is not a registered {' or '.join(namespaces)} id (see `sttgym list`)")
    return name


def registered_arena_id(env_id: str) -> str:
    """:func:`registered_id` for the arena's ids only (training and its datasets)."""
    return registered_id(env_id, (ARENA_NAMESPACE,))


def register_domain(world: type[World], scenarios: dict[tuple[str, str], Scenario],
                    name: str | None = None) -> Domain:
    """Add a domain and register one gymnasium id per (conflict, level) scenario.

    ``name`` (default: ``world.domain``) is the domain's name in ids: a synthesized bundle registers its generated
    world under ``Synth<Env>`` whatever the generated class calls itself."""
    name = name or world.domain
    for conflict, level in scenarios:
        if conflict not in CONFLICTS or level not in LEVELS:
            raise ValueError(f"{name}: unknown conflict/level {(conflict, level)}")
    domain = Domain(name, world, dict(scenarios))
    DOMAINS[domain.name] = domain
    for conflict, level in scenarios:
        env_id = arena_id(domain.name, conflict, level)
        if env_id not in gym.registry:
            gym.register(env_id, entry_point="sttgym.env:ArenaEnv", vector_entry_point="sttgym.registry:arena_vector_env",
                         kwargs={"domain": domain.name, "conflict": conflict, "difficulty": level})
    return domain


def _build_from(module: str, author: "Author", level: str) -> "Task":
    return importlib.import_module(module).build(author, level=level)


def scenario_package(package: str) -> dict[tuple[str, str], Scenario]:
    """The 36 scenarios of a package laid out one module per conflict type, each with ``build(author, level)``.

    The modules are named after the conflict types (``t1_window_expiry``, ``s3_route_restriction``,
    ...); each loads when the first instance of one of its ids is built, so registering a domain
    costs no scenario code.
    """
    return {(conflict, level): partial(_build_from, f"{package}.{conflict.lower()}_{name.lower().replace(' ', '_')}",
                                       level=level)
            for conflict, name in CONFLICTS.items() for level in LEVELS}


def arena_vector_env(num_envs: int = 1, vectorization: str = "async", *, domain: str, conflict: str,
                     difficulty: str, **kwargs) -> gym.vector.VectorEnv:
    """The vector entry point of every arena id (``gym.make_vec``), named by string so specs serialise."""
    return make_vector_env(arena_id(domain, conflict, difficulty), num_envs, vectorization, **kwargs)


def arena_ids(domain: str | None = None) -> list[str]:
    """Every registered arena id, grouped by domain, conflict and level."""
    order = {c: i for i, c in enumerate(CONFLICTS)}
    ids = []
    for d in sorted(DOMAINS.values(), key=lambda d: d.name):
        if domain is None or d.name == domain:
            for conflict, level in sorted(d.scenarios, key=lambda k: (order[k[0]], LEVELS.index(k[1]))):
                ids.append(arena_id(d.name, conflict, level))
    return ids


# The client of `sttgym serve`: gym.make("sttgym/Remote", url=..., env_id=...) (sttgym.server loads only when made).
if "sttgym/Remote" not in gym.registry:
    gym.register("sttgym/Remote", entry_point="sttgym.server.client:RemoteEnv")
