"""sttgym report --validate: a whole, consistent run passes; each way a run can be untrustworthy is named."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from sttgym.cli import app
from sttgym.evaluation.runner import SUMMARY, TRAJECTORIES
from sttgym.evaluation.submission import validate_run
from tests.evaluation.evaltoy import register


@pytest.fixture
def run(tmp_path):
    register()
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", "--domain", "EvalToy", "--agent", "oracle", "--runs", "1",
                                      "--full", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def _rewrite(path, change):
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(change(lines)) + "\n", encoding="utf-8")


def test_a_whole_run_is_a_valid_submission(run):
    assert validate_run(run) == []
    result = CliRunner().invoke(app, ["report", "--validate", str(run)])
    assert result.exit_code == 0 and "valid submission" in result.output


def test_a_missing_episode_an_impossible_reward_and_a_doctored_summary_are_named(run):
    def tamper(lines):
        first = json.loads(lines[1])
        first["success"] = not first["success"]
        return [lines[0], json.dumps(first), *lines[3:]]  # drops an episode, flips one's success

    _rewrite(run / TRAJECTORIES, tamper)
    summary = json.loads((run / SUMMARY).read_text())
    summary["overall"] = 1.0 if summary["overall"] != 1.0 else 0.5
    (run / SUMMARY).write_text(json.dumps(summary))
    problems = validate_run(run)
    assert any("have no record" in p for p in problems)
    assert any("disagrees with reward" in p for p in problems)
    assert any(SUMMARY in p and "overall" in p for p in problems)
    result = CliRunner().invoke(app, ["report", "--validate", str(run)])
    assert result.exit_code == 1 and "problem" in result.output
    assert json.loads((run / SUMMARY).read_text())["overall"] == summary["overall"]  # --validate changes nothing


def test_a_partial_run_and_a_non_run_are_refused(tmp_path):
    register()
    out = tmp_path / "partial"
    CliRunner().invoke(app, ["eval", "--domain", "EvalToy", "--agent", "oracle", "--runs", "1", "--limit", "2",
                             "--out", str(out)])
    assert any("partial run" in p for p in validate_run(out))
    assert validate_run(tmp_path / "nothing")[0].startswith("config.json")


def test_a_run_names_the_release_that_played_it_and_another_release_cannot_resume_it(run):
    import sttgym
    from sttgym.evaluation.runner import CONFIG

    config = json.loads((run / CONFIG).read_text())
    assert config["version"] == sttgym.__version__
    (run / CONFIG).write_text(json.dumps({**config, "version": "0.0.1"}))
    result = CliRunner().invoke(app, ["eval", "--domain", "EvalToy", "--agent", "oracle", "--runs", "1",
                                      "--out", str(run)])
    assert result.exit_code != 0 and "version" in result.output
