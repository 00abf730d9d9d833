"""sttgym: tool-use environments for LLM agents under spatio-temporal dynamics.

Importing the package registers every environment id (``STTArena/...``, ``ScrambleTool/...``).
"""

from sttgym.registry import DOMAINS, arena_ids, register_domain
from sttgym.rollout import Trajectory, rollout

__version__ = "0.12.0"
__all__ = ["DOMAINS", "arena_ids", "register_domain", "rollout", "Trajectory", "load_bundle", "__version__"]


def __getattr__(name: str):
    # load_bundle brings the sandbox and pydantic with it: it loads on first use, not with import sttgym.
    if name == "load_bundle":
        from sttgym.synth.bundle import load_bundle

        return load_bundle
    raise AttributeError(f"module 'sttgym' has no attribute {name!r}")

# The environment library registers itself on import; the core names no domain.
import sttgym.envs  # noqa: E402,F401  (import for its registrations)
