"""Vectorised arena envs: ``gym.make_vec("STTArena/...", num_envs=n)`` just works.

Observations are free text, which gymnasium's shared-memory buffers cannot hold (they store
fixed-length strings over a fixed charset). Every arena id therefore gets a vector entry
point that builds an ``AsyncVectorEnv`` with ``shared_memory=False`` (or a
``SyncVectorEnv``), and asking for shared memory explicitly fails with a message saying so.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium.vector.utils import create_shared_memory

from sttgym.spaces import AnyText

__all__ = ["make_vector_env"]


def make_vector_env(id: str, num_envs: int = 1, vectorization: str = "async", **kwargs: Any) -> gym.vector.VectorEnv:
    """``num_envs`` copies of ``id``, stepped in subprocesses (``"async"``) or in this one (``"sync"``)."""
    fns = [lambda: gym.make(id, **kwargs) for _ in range(num_envs)]
    if vectorization == "sync":
        return gym.vector.SyncVectorEnv(fns)
    if vectorization == "async":
        return gym.vector.AsyncVectorEnv(fns, shared_memory=False)
    raise ValueError(f"vectorization must be 'async' or 'sync', not {vectorization!r}")


@create_shared_memory.register(AnyText)
def _no_shared_text(space: AnyText, n: int = 1, ctx: Any = None) -> None:
    raise ValueError(
        "sttgym observations are free text and cannot live in shared memory: use "
        "gym.make_vec(id, num_envs=n) (async, shared_memory=False) or pass vector_kwargs={'shared_memory': False}")
