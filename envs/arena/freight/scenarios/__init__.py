"""The 36 Freight scenarios: one module per conflict type, each covering the four levels."""

from sttgym.registry import scenario_package

__all__ = ["SCENARIOS"]

SCENARIOS = scenario_package(__name__)
