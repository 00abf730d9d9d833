"""A test-only arena domain for the evaluation tests: the toy locker world at every level.

Registered under its own name (``EvalToy``) so the runner's manifest can be limited to it
with ``domain="EvalToy"``, whatever other domains are installed.
"""

from __future__ import annotations

import functools

from tests.toy_domain import LockerWorld, toy_scenario

DOMAIN = "EvalToy"
LEVELS = ("easy", "medium", "hard")


class EvalToyWorld(LockerWorld):
    domain = DOMAIN


def register() -> list[str]:
    """Register the domain (idempotent) and return its ids."""
    import sttgym

    scenarios = {("T1", level): toy_scenario for level in LEVELS}
    scenarios[("T1", "impossible")] = functools.partial(toy_scenario, solvable=False)
    scenarios[("S1", "easy")] = toy_scenario
    sttgym.register_domain(EvalToyWorld, scenarios)
    return sttgym.arena_ids(DOMAIN)
