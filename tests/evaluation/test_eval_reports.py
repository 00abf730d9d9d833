"""Reports: the papers' tables and the figures beside summary.json; comparison of several runs."""

from __future__ import annotations

import json

import pytest
from tests.evaluation.evaltoy import register
from typer.testing import CliRunner

from sttgym.cli import app
from sttgym.evaluation.reports import scramble_tables, write_report
from sttgym.evaluation.summary import scramble_summary

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module", autouse=True)
def domain():
    register()


def run(tmp_path, name, *options):
    out = tmp_path / name
    result = CliRunner().invoke(app, ["eval", "--domain", "EvalToy", "--out", str(out), *options])
    assert result.exit_code == 0, result.output
    return out


def test_arena_report_has_the_tables_and_figures(tmp_path):
    out = run(tmp_path, "nominal", "--agent", "nominal", "--k", "2", "--static", "--no-user")
    report = (out / "report.md").read_text()
    for section in ("Table 3", "Table 2", "Avg. Calls", "By conflict type", "pass@k", "pass^k", "Conditions",
                    "Stale-state execution"):
        assert section in report
    for figure in ("per_conflict.png", "pass_at_k.png", "static_vs_dynamic.png", "user_ablation.png"):
        assert (out / figure).read_bytes().startswith(b"\x89PNG") and f"({figure})" in report
    summary = json.loads((out / "summary.json").read_text())
    assert summary["conditions"]["static"]["overall"] == 1.0 and summary["overall"] == 0.0
    assert summary["runs"] == 2  # a reference agent runs once by default; --k 2 asks for two attempts


def test_report_command_compares_runs_row_by_row(tmp_path):
    runs = [run(tmp_path, agent, "--agent", agent, "--runs", "1") for agent in ("oracle", "noop")]
    table = tmp_path / "compare.md"
    result = CliRunner().invoke(app, ["report", *map(str, runs), "--out", str(table)])
    assert result.exit_code == 0, result.output
    rows = [line for line in table.read_text().splitlines() if line.startswith(("| oracle", "| noop"))]
    assert rows[0].startswith("| oracle | 100.00") and rows[1].startswith("| noop | 0.00") and len(rows) == 6


def test_scramble_tables_give_completion_rate_and_tasks_solved(tmp_path):
    def record(condition, run, solved):
        tasks = [{"template": "t", "solved": i < solved, "actions": 3} for i in range(5)]
        return {"env_id": f"ScrambleTool/{condition}", "seed": 0, "run": run, "reward": solved / 5, "turns": 15,
                "steps": [], "info": {"tasks": tasks}}
    records = [record("Base", 0, 5), record("Base", 1, 3), record("Drift", 0, 1), record("Drift", 1, 1)]
    summary = {"suite": "scramble", "agent": "probe", "episodes": 4, "runs": 2, "errors": 0, **scramble_summary(records)}
    base = summary["conditions"]["Base"]
    assert base["completion_rate"] == 0.5 and base["tasks_solved"] == 4.0 and base["completion_rate_std"] > 0
    table = scramble_tables([summary])
    assert "| probe | 0.50 | 4.00 | 0.00 | 1.00 |" in table
    written = write_report(tmp_path, summary)
    assert (tmp_path / "scramble_conditions.png") in written


def test_arena_report_has_a_table_per_domain():
    from sttgym.evaluation.reports import arena_tables
    from sttgym.evaluation.summary import arena_summary

    def record(domain, level, reward):
        return {"condition": "dynamic", "env_id": f"STTArena/{domain}-T1-{level}", "seed": 0, "run": 0,
                "reward": reward, "calls": 3, "domain": domain, "conflict": "T1", "difficulty": level}
    records = [record("Aa", "easy", 1.0), record("Aa", "hard", 0.5), record("Bb", "easy", 0.0)]
    summary = {"agent": "probe", **arena_summary(records)}
    assert summary["by_domain"]["Aa"] == {"pass": 0.5, "score": 0.75, "episodes": 2, "easy": 1.0, "medium": None,
                                          "hard": 0.0, "impossible": None}
    assert summary["by_domain"]["Bb"]["pass"] == 0.0
    one = arena_tables([summary])
    assert "## By domain" in one and "| Aa | 100.00 | – | 0.00 | – | 50.00 | 75.00 | 2 |" in one
    both = arena_tables([summary, {**summary, "agent": "other"}])
    assert "| Bb | 0.00 | 0.00 |" in both and "## By domain" not in both
