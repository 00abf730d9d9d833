"""Bundles: a synthesized domain on disk, and registering it as gym ids.

A bundle is a directory::

    manifest.json    format, domain name, world class, ids, provenance (model, endpoint, prompts' hash,
                     times) and every stage's verdict per task
    world.py         the generated world (audited, loaded in the sandbox)
    tasks.json       the accepted tasks: sttgym Task JSON, each with its conflict and difficulty

:func:`load_bundle` registers it as ``STTArena/Synth<Env>-<Conflict>-<level>`` (the ``Synth``
prefix keeps a generated domain from shadowing a hand-written one, and keeps ids in the usual
three parts). A scenario of a bundle picks one of its stored instances with the env's seeded
generator, so ``reset(seed=s)`` is as reproducible as for a built-in domain.
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from functools import partial
from pathlib import Path
from typing import Any

from sttgym.registry import Domain, register_domain
from sttgym.world import named_problems

__all__ = ["FORMAT", "load_bundle", "write_bundle", "register_tasks", "stored_instance"]

FORMAT = "sttgym-synth-bundle/1"
MANIFEST, WORLD, TASKS = "manifest.json", "world.py", "tasks.json"


def stored_instance(author: Any, instances: tuple[str, ...]) -> Any:
    """The scenario of a bundle: one of its stored tasks (JSON text), chosen by the instance's seeded generator."""
    from sttgym.task import Task

    return Task.model_validate_json(instances[int(author.rng.integers(len(instances)))])


def register_tasks(name: str, world: type, tasks: list[dict]) -> Domain:
    """Register ``tasks`` (Task JSON with conflict and difficulty set) of ``world`` as domain ``name``.

    Registering a name again replaces its scenarios: the pipeline registers each candidate alone to try it.
    """
    from sttgym.task import Task

    grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
    for data in tasks:
        task = Task.model_validate(data)
        problems = named_problems(world, *task.named())
        if problems:
            raise ValueError(f"{name} {task.conflict}-{task.difficulty}: the task does not fit the world: "
                             f"{'; '.join(problems[:3])}")
        grouped[(task.conflict, task.difficulty)].append(
            task.model_copy(update={"domain": name}).model_dump_json())
    return register_domain(world, {key: partial(stored_instance, instances=tuple(found))
                                   for key, found in grouped.items()}, name=name)


def write_bundle(path: Path, name: str, source: str, class_name: str, tasks: list[dict], provenance: dict,
                 verdicts: dict, problems: list[str] = ()) -> Path:
    """Write a bundle directory (files replaced atomically, so a reader never sees half of one); ``problems``: what
    ``sttgym validate`` found over the whole bundle, recorded for its reviewer."""
    from sttgym.registry import arena_id

    path.mkdir(parents=True, exist_ok=True)
    ids = sorted({arena_id(name, t["conflict"], t["difficulty"]) for t in tasks})
    manifest = {"format": FORMAT, "domain": name, "class_name": class_name, "ids": ids, "instances": len(tasks),
                "provenance": provenance, "verdicts": verdicts, "validate_problems": list(problems)}
    for file, text in ((WORLD, source), (TASKS, json.dumps(tasks, indent=1, ensure_ascii=False)),
                       (MANIFEST, json.dumps(manifest, indent=1, ensure_ascii=False))):
        partial_file = path / (file + ".partial")
        partial_file.write_text(text, encoding="utf-8")
        os.replace(partial_file, path / file)
    return path


def load_bundle(path: str | os.PathLike, *, isolate: bool = True) -> Domain:
    """Register the bundle at ``path`` (see the module docstring); its world runs in the sandbox.

    ``isolate=False`` runs the audited world in this process (faster; only for bundles you have
    reviewed). Raises ``ValueError`` for a directory that is not a readable bundle, and the
    sandbox's ``Unsafe``/``SandboxError`` for a world that fails its audit or does not load.
    """
    from sttgym.synth.sandbox import load_world

    path = Path(path)
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT:
            raise ValueError(f"format {manifest.get('format')!r}, expected {FORMAT!r}")
        domain, class_name = str(manifest["domain"]), str(manifest["class_name"])
        if not re.fullmatch(r"[A-Z][A-Za-z0-9]*", domain):
            raise ValueError(f"domain {domain!r} must be CamelCase letters and digits (it is part of gym ids)")
        source = (path / WORLD).read_text(encoding="utf-8")  # fixed names: a manifest never points elsewhere
        tasks = json.loads((path / TASKS).read_text(encoding="utf-8"))
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path} is not a bundle written by sttgym synth: {exc}") from exc
    world = load_world(source, class_name=class_name, isolate=isolate)
    return register_tasks(domain, world, tasks)
