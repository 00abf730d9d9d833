"""Synthesis of new environments by an LLM, and the sandbox its generated code runs in.

Nothing heavy loads with this package: the names below import their modules on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "audit": "sttgym.synth.sandbox", "Unsafe": "sttgym.synth.sandbox", "SandboxError": "sttgym.synth.sandbox",
    "Limits": "sttgym.synth.sandbox", "load_world": "sttgym.synth.sandbox", "call_function": "sttgym.synth.sandbox",
    "unload": "sttgym.synth.sandbox", "shutdown": "sttgym.synth.sandbox",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'sttgym.synth' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
