"""Hostile actions against every registered environment, under every wrapper stack (sttgym.fuzz)."""

import zlib

import gymnasium as gym
import numpy as np
import pytest

import sttgym
from sttgym.actions import brief
from sttgym.fuzz import CATEGORIES, STACKS, fuzz, hostile_action

SCRAMBLE = sorted(i for i in gym.registry if i.startswith("ScrambleTool/"))


@pytest.mark.parametrize("env_id", sttgym.arena_ids() + SCRAMBLE)
def test_no_hostile_action_raises_or_changes_the_world_when_refused(env_id):
    report = fuzz([env_id], 40, stacks=["plain"], seed=zlib.crc32(env_id.encode()))
    assert report.ok, report.exceptions[:3] + report.state_changes[:3] + report.oversized[:3]


@pytest.mark.parametrize("stack", STACKS)
def test_every_wrapper_stack_survives_hostile_actions(stack):
    ids = ["STTArena/ColdChain-ST2-hard", "STTArena/CarRental-T3-impossible", "ScrambleTool/Unscrambled"]
    report = fuzz(ids, 150, stacks=[stack], seed=7)
    assert report.ok, report.exceptions[:3] + report.state_changes[:3] + report.oversized[:3]
    assert set(report.by_category) == set(CATEGORIES)


def test_hostile_actions_are_seeded_and_cover_every_category():
    tools = [{"function": {"name": "get", "parameters": {"properties": {"id": {"type": "string"}}}}}]
    def draw(seed):
        rng = np.random.default_rng(seed)
        return [brief(hostile_action(rng, tools, ["VH-101"], c), 10**6) for c in CATEGORIES for _ in range(5)]

    assert draw(1) == draw(1) and draw(1) != draw(2)


def test_the_fuzz_command_reports_its_figures_and_refuses_unknown_stacks(tmp_path):
    import json

    from typer.testing import CliRunner

    from sttgym.cli import app

    out = tmp_path / "fuzz.json"
    result = CliRunner().invoke(app, ["fuzz", "--actions", "60", "--id", "STTArena/CarRental-T1-easy",
                                      "--stack", "plain", "--stack", "drift", "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["actions"] == 60 and report["exceptions"] == [] and report["state_changes"] == []
    bad = CliRunner().invoke(app, ["fuzz", "--stack", "sideways"])
    assert bad.exit_code == 2 and "sideways" in bad.output


def test_the_fuzzer_reports_unencodable_and_oversized_observations_when_they_occur(monkeypatch):
    """Its checks can fail: with arguments taken as sent and observations rendered raw (as before issue 32), the
    surrogates and huge names it sends come back as findings."""
    import json

    import sttgym.actions as actions
    import sttgym.core as core

    monkeypatch.setattr(core, "observe", lambda result: json.dumps(result, ensure_ascii=False))
    monkeypatch.setattr(actions, "encodable_value", lambda value: value)
    monkeypatch.setattr(actions, "MAX_KEY", 10**8)
    monkeypatch.setattr(actions, "MAX_ARGUMENTS", 10**9)
    report = fuzz(["ScrambleTool/Unscrambled"], 300, stacks=["plain"], seed=11)
    assert report.unencodable and report.oversized and not report.ok
