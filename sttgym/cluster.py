"""Ray, when a run asks for it (``sttgym eval --ray``, ``sttgym train data --ray``): one way to connect.

``address`` is ``"local"`` (a Ray instance started for the run), ``"auto"`` (the cluster ``ray
start`` left running) or a cluster address (``"ray://head:10001"``). A connection that already
exists (a notebook's, a test's) is used as it is and left open.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["ray_session", "cpus"]


@contextlib.contextmanager
def ray_session(address: str) -> Iterator[Any]:
    """The ``ray`` module, connected to ``address`` for the block; a connection made here is closed after it."""
    try:
        import ray
    except ImportError as exc:
        raise ValueError("--ray needs Ray: pip install 'sttgym[ray]'") from exc
    if ray.is_initialized():
        yield ray
        return
    ray.init(address=None if address == "local" else address, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


def cpus(ray: Any) -> int:
    """The CPUs of the connected cluster (at least 1): how many tasks to keep in flight."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))
