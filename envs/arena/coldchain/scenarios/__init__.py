"""The 36 ColdChain scenarios: one module per conflict type, each building its four levels."""

from __future__ import annotations

from functools import partial

from sttgym.envs.arena.coldchain.scenarios import (
    s1_site_mismatch,
    s2_dependency_block,
    s3_route_restriction,
    st1_resource_shift,
    st2_failure_cascade,
    st3_handoff_failure,
    t1_window_expiry,
    t2_priority_reorder,
    t3_quota_reset,
)
from sttgym.task import LEVELS

__all__ = ["SCENARIOS"]

MODULES = {"T1": t1_window_expiry, "T2": t2_priority_reorder, "T3": t3_quota_reset,
           "S1": s1_site_mismatch, "S2": s2_dependency_block, "S3": s3_route_restriction,
           "ST1": st1_resource_shift, "ST2": st2_failure_cascade, "ST3": st3_handoff_failure}

SCENARIOS = {(conflict, level): partial(module.build, level=level) for conflict, module in MODULES.items()
             for level in LEVELS}
