"""The layers stay what docs/architecture.md says: a lean core, seams instead of internals."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "transformers", "trl", "datasets", "openai", "matplotlib")
PAST_THE_CORE = ("sttgym.agents", "sttgym.models", "sttgym.evaluation", "sttgym.training", "sttgym.cli",
                 "sttgym.judge.llm", "sttgym.user.llm", "sttgym.synth", "sttgym.server", "sttgym.viewer", "sttgym.adapters")


def loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter has loaded after running ``code``."""
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return set(json.loads(out.stdout.splitlines()[-1]))


def past_the_core(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY or m.startswith(PAST_THE_CORE))


def test_import_sttgym_loads_only_the_core_registry_and_environment_library():
    loaded = loaded_after("import sttgym")
    assert past_the_core(loaded) == []
    # Scenario code and the task data models (pydantic) load with the first episode of an id.
    assert "pydantic" not in loaded and not [m for m in loaded if ".scenarios." in m]


def test_playing_every_kind_of_env_loads_nothing_past_the_core():
    code = """
import gymnasium as gym, sttgym
for env_id in ("STTArena/ColdChain-T2-medium", "STTArena/CarRental-S1-hard", "ScrambleTool/All"):
    env = gym.make(env_id); obs, info = env.reset(seed=0)
    env.step({"name": info["tools"][0]["function"]["name"], "arguments": {}}); env.step({"content": "done"})
"""
    assert past_the_core(loaded_after(code)) == []


@pytest.mark.parametrize("layer", ["sttgym.agents", "sttgym.evaluation.runner", "sttgym.judge.llm"])
def test_agents_and_evaluation_load_model_backends_only_when_a_model_is_used(layer):
    assert not [m for m in loaded_after(f"import {layer}") if m.split(".")[0] in HEAVY]


# What wrappers, reward terms and the runner may use of an env: the documented seams (sttgym.core, sttgym.env).
SEAMS = {"tools", "done", "meta_commands", "call_log", "status", "snapshot", "restore", "score", "native_windows",
         "window_trigger", "reset_window", "task", "dynamics", "evaluate", "holds",
         "action_space", "np_random"}  # the last two: gymnasium's own public surface


@pytest.mark.parametrize("path", sorted(str(p.relative_to(ROOT)) for p in [
    *(ROOT / "sttgym" / "wrappers").glob("*.py"), ROOT / "sttgym" / "rewards.py",
    ROOT / "sttgym" / "evaluation" / "runner.py"]))
def test_wrappers_rewards_and_the_runner_reach_an_env_only_through_its_seams(path):
    source = (ROOT / path).read_text()
    used = set(re.findall(r"(?:unwrapped|tool_env\([^)]*\)|(?<![\w.])base|_arena\([^)]*\))\.(\w+)", source))
    assert used <= SEAMS, f"{path} uses {sorted(used - SEAMS)}"
