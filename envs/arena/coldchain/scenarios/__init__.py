"""The 36 ColdChain scenarios: one module per conflict type, each building its four levels."""

from sttgym.registry import scenario_package

__all__ = ["SCENARIOS"]

SCENARIOS = scenario_package(__name__)
