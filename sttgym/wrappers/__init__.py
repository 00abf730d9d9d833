"""Wrappers that add ScrambleTool dynamics (obfuscation, drift, failures, windows) to any sttgym env, and
one that takes a model's raw text as the action (:class:`TextActions`).

Each is seeded from the reset seed, recorded in the env spec (``gym.make(env.spec)``
rebuilds the stack) and composes with the others in any order; see :mod:`sttgym.wrappers.base`.
"""

from sttgym.wrappers.base import ToolWrapper
from sttgym.wrappers.drift import MappingDrift
from sttgym.wrappers.failure import StochasticFailure
from sttgym.wrappers.obfuscation import Obfuscate
from sttgym.wrappers.text import TextActions
from sttgym.wrappers.window import TemporalWindow

__all__ = ["ToolWrapper", "Obfuscate", "MappingDrift", "StochasticFailure", "TemporalWindow", "TextActions"]
