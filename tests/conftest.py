import os

# The suite runs in parallel workers (pytest -n 2): torch's default of one thread per core in each of them
# oversubscribes the cores and made small matmuls orders of magnitude slower. Set before torch is imported.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest


@pytest.fixture(scope="session")
def toy_ids():
    """Register the toy domain (tests/toy_domain.py) once and return its two ids."""
    import functools

    import sttgym
    from tests.toy_domain import LockerWorld, toy_scenario

    sttgym.register_domain(LockerWorld, {("T1", "easy"): toy_scenario,
                                         ("T1", "impossible"): functools.partial(toy_scenario, solvable=False)})
    return "STTArena/Toy-T1-easy", "STTArena/Toy-T1-impossible"
