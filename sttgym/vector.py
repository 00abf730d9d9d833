"""Vectorised sttgym envs: ``gym.make_vec(id, num_envs=n)`` just works, and so do gymnasium's own vector envs.

Observations are free text, which gymnasium's shared-memory buffers cannot hold (they store
fixed-length strings over a fixed charset). Every sttgym id therefore gets a vector entry
point that builds an ``AsyncVectorEnv`` with ``shared_memory=False`` (or a
``SyncVectorEnv``, with ``vectorization="sync"``), and asking for shared memory explicitly
fails with a message saying so.

Infos hold tool results of any shape, and gymnasium merges sub-env infos key by key, descending
into dict values: it breaks as soon as two sub-envs disagree on a value's shape (one tool result
holds a list where another holds a dict, a reply has no result at all). Gymnasium offers no way
for an env to say how its infos merge, so importing sttgym gives gymnasium's ``SyncVectorEnv``
and ``AsyncVectorEnv`` :func:`_add_info`, which keeps each sub-env's structured values whole when
the sub-envs are sttgym's (their observations are :class:`~sttgym.spaces.AnyText`):
``info["result"][i]`` is env ``i``'s own result dict, whether the vector env came from this
module, from ``gym.make_vec(..., vectorization_mode="sync" | "async")`` or was built by hand
(``AsyncVectorEnv(fns, shared_memory=False)``). Other envs' infos merge as gymnasium merges them.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
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


def _numeric(value: Any) -> bool:
    return type(value) in (int, float, bool) or isinstance(value, np.number)


_merge_by_key = gym.vector.VectorEnv._add_info


def _add_info(self: gym.vector.VectorEnv, vector_infos: dict[str, Any], env_info: dict[str, Any],
              env_num: int) -> dict[str, Any]:
    """Sub-env ``env_num``'s info merged into the vector info: numbers into arrays, every other value put whole into
    an object array (gymnasium's key-by-key merge for envs that are not sttgym's)."""
    if not isinstance(getattr(self, "single_observation_space", None), AnyText):
        return _merge_by_key(self, vector_infos, env_info, env_num)
    for key, value in env_info.items():
        if key not in vector_infos:
            vector_infos[key] = (np.zeros(self.num_envs, dtype=type(value)) if _numeric(value)
                                 else np.full(self.num_envs, fill_value=None, dtype=object))
            vector_infos[f"_{key}"] = np.zeros(self.num_envs, dtype=np.bool_)
        array = vector_infos[key]
        if array.dtype != object and not _numeric(value):
            array = vector_infos[key] = array.astype(object)  # a key that was numeric elsewhere
        array[env_num] = value
        vector_infos[f"_{key}"][env_num] = True
    return vector_infos


for _vector_env in (gym.vector.SyncVectorEnv, gym.vector.AsyncVectorEnv):
    _vector_env._add_info = _add_info


@create_shared_memory.register(AnyText)
def _no_shared_text(space: AnyText, n: int = 1, ctx: Any = None) -> None:
    raise ValueError(
        "sttgym observations are free text and cannot live in shared memory: use "
        "gym.make_vec(id, num_envs=n) (async, shared_memory=False) or pass vector_kwargs={'shared_memory': False}")
