"""Where bubblewrap cannot run here, the synthesis tests run generated code in plain worker processes (the opt-in
``STTGYM_SANDBOX=process`` a user would give) and the tests of the OS sandbox itself skip. With
``STTGYM_SANDBOX_TESTS=require`` (CI sets it) nothing falls back: a missing sandbox fails them."""

import os

import pytest

from sttgym.synth.sandbox import SANDBOX_VARIABLE, os_sandbox_problem

REQUIRED = os.environ.get("STTGYM_SANDBOX_TESTS") == "require"
if os_sandbox_problem() is not None and not REQUIRED:
    os.environ.setdefault(SANDBOX_VARIABLE, "process")


@pytest.fixture
def os_sandbox():
    """For tests of the OS sandbox itself: skips where bubblewrap cannot sandbox workers here (or the user chose
    plain processes), fails there instead under ``STTGYM_SANDBOX_TESTS=require``."""
    why = os_sandbox_problem() or (f"{SANDBOX_VARIABLE}=process runs plain worker processes"
                                   if os.environ.get(SANDBOX_VARIABLE) == "process" else None)
    if why is not None:
        if REQUIRED:
            pytest.fail(f"the OS sandbox is required and unavailable: {why}")
        pytest.skip(why)
