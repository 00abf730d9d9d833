"""The 36 Ticketing scenarios: one module per conflict type, each covering the four levels."""

from __future__ import annotations

import importlib
from functools import partial

from sttgym.registry import Scenario
from sttgym.task import LEVELS

__all__ = ["SCENARIOS"]

_MODULES = {"T1": "t1_window_expiry", "T2": "t2_priority_reorder", "T3": "t3_quota_reset",
            "S1": "s1_site_mismatch", "S2": "s2_dependency_block", "S3": "s3_route_restriction",
            "ST1": "st1_resource_shift", "ST2": "st2_failure_cascade", "ST3": "st3_handoff_failure"}

SCENARIOS: dict[tuple[str, str], Scenario] = {
    (conflict, level): partial(importlib.import_module(f"{__name__}.{module}").build, level=level)
    for conflict, module in _MODULES.items() for level in LEVELS
}
