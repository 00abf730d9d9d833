"""Vectorised arena envs: ``gym.make_vec("STTArena/...", num_envs=n)`` just works.

Observations are free text, which gymnasium's shared-memory buffers cannot hold (they store
fixed-length strings over a fixed charset). Every arena id therefore gets a vector entry
point that builds an ``AsyncVectorEnv`` with ``shared_memory=False`` (or a
``SyncVectorEnv``, with ``vectorization="sync"``), and asking for shared memory explicitly
fails with a message saying so. Those vector envs also keep each sub-env's info values whole
(see :class:`_WholeValues`); gymnasium's own, built by an explicit ``vectorization_mode``,
merge infos key by key and need every sub-env's info to have the same shape.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import create_shared_memory

from sttgym.spaces import AnyText

__all__ = ["make_vector_env", "SyncArenaVectorEnv", "AsyncArenaVectorEnv"]


class _WholeValues:
    """Info merging that keeps each env's structured values whole.

    Gymnasium merges sub-env infos key by key and descends into dict values, so it breaks as
    soon as two envs disagree on a value's shape (one tool result holds a list where another
    holds a dict, a reply has no result at all). Here every value that is not a number is put
    whole into an object array: ``info["result"][i]`` is env ``i``'s own result dict.
    """

    def _add_info(self, vector_infos: dict[str, Any], env_info: dict[str, Any], env_num: int) -> dict[str, Any]:
        for key, value in env_info.items():
            if key not in vector_infos:
                numeric = type(value) in (int, float, bool) or isinstance(value, np.number)
                vector_infos[key] = (np.zeros(self.num_envs, dtype=type(value)) if numeric
                                     else np.full(self.num_envs, fill_value=None, dtype=object))
                vector_infos[f"_{key}"] = np.zeros(self.num_envs, dtype=np.bool_)
            array = vector_infos[key]
            if array.dtype != object and not (type(value) in (int, float, bool) or isinstance(value, np.number)):
                array = vector_infos[key] = array.astype(object)  # a key that was numeric elsewhere
            array[env_num] = value
            vector_infos[f"_{key}"][env_num] = True
        return vector_infos


class SyncArenaVectorEnv(_WholeValues, gym.vector.SyncVectorEnv):
    """Sub-envs stepped in this process, infos kept whole."""


class AsyncArenaVectorEnv(_WholeValues, gym.vector.AsyncVectorEnv):
    """Sub-envs stepped in subprocesses (text observations need ``shared_memory=False``), infos kept whole."""


def make_vector_env(id: str, num_envs: int = 1, vectorization: str = "async", **kwargs: Any) -> gym.vector.VectorEnv:
    """``num_envs`` copies of ``id``, stepped in subprocesses (``"async"``) or in this one (``"sync"``)."""
    fns = [lambda: gym.make(id, **kwargs) for _ in range(num_envs)]
    if vectorization == "sync":
        return SyncArenaVectorEnv(fns)
    if vectorization == "async":
        return AsyncArenaVectorEnv(fns, shared_memory=False)
    raise ValueError(f"vectorization must be 'async' or 'sync', not {vectorization!r}")


@create_shared_memory.register(AnyText)
def _no_shared_text(space: AnyText, n: int = 1, ctx: Any = None) -> None:
    raise ValueError(
        "sttgym observations are free text and cannot live in shared memory: use "
        "gym.make_vec(id, num_envs=n) (async, shared_memory=False) or pass vector_kwargs={'shared_memory': False}")
