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


def test_report_command_compares_runs_row_by_row_and_keeps_every_section(tmp_path):
    runs = [run(tmp_path, agent, "--agent", agent, "--k", "2", "--no-user") for agent in ("oracle", "noop")]
    table = tmp_path / "compare" / "compare.md"
    table.parent.mkdir()
    result = CliRunner().invoke(app, ["report", *map(str, runs), "--out", str(table)])
    assert result.exit_code == 0, result.output
    text = table.read_text()
    rows = [line for line in text.splitlines() if line.startswith(("| oracle", "| noop"))]
    assert rows[0].startswith("| oracle | 100.00") and rows[1].startswith("| noop | 0.00")
    for section in ("by conflict type (STT-Arena Figure 4)", "pass@k and pass^k", "per condition", "Failure modes",
                    "Figures 9 and 10"):
        assert section in text
    assert "| oracle | 100.00 | " in text.split("per condition")[1]  # a row per run in the condition table
    for figure in ("models.png", "conflicts_by_model.png", "conditions_by_model.png", "pass_at_k_by_model.png"):
        assert (table.parent / figure).read_bytes().startswith(b"\x89PNG") and f"({figure})" in text


def test_scramble_comparison_pairs_memory_runs_and_gives_tables_4_and_5_and_intervals():
    from sttgym.evaluation.reports import scramble_tables

    def summary(agent, t, follows=None):
        per = {"actions": [50.0, 9.25, 10.0], "overhead": [45.0, 4.25, 5.0], "adjusted": [40.0, 8.0, 9.0]}
        metrics = {"per_position": per, "position_slope": 0.75, "chain_opportunities": 10 if follows else 0,
                   "chain_follow_rate": follows, "chain_random_rate": 0.1, "chain_p_value": 0.01}
        condition = {"completion_rate": t / 5, "tasks_solved": t, "completion_rate_ci": (0.1, 0.9),
                     "tasks_solved_ci": (t - 1, t), "failures": {"budget": 1, "early_exit": 2}, "metrics": metrics}
        return {"agent": agent, "config": {"agent": agent.split()[-1], "model": "m"},
                "conditions": {"Base": condition, "Drift": {**condition, "tasks_solved": t - 1}}}
    text = scramble_tables([summary("m llm", 3.0), summary("m memory", 4.0, follows=0.5)])
    assert "| m memory | 0.80 (+0.20) | 4.00 (+1.00) | 0.80 (+0.20) | 3.00 (+1.00) |" in text
    assert "| *Mean without memory* (1) | 0.60 | 3.00 | 0.60 | 2.00 |" in text
    assert "| *Mean of memory runs* (1) | 0.80 (+0.20) | 4.00 (+1.00) |" in text
    assert "| 2 | 9.25 | 9.25 | 5 | 4.25 | 4.25 | 1 |" in text  # overhead 4.25 against Eq. 2's 4.25: ratio 1
    assert "| 1 | 40 | 40 | – | 40 | 48 | 0.833 |" in text  # Appendix D: the adjusted counts
    chain = text.split("(ScrambleToolBench Table 5)")[1].split("##")[0]
    assert "| m memory | Drift | 10 | 50.00 | 10.00 | 0.01 |" in chain and "| m llm |" not in chain  # no opportunity
    assert "| m llm | Base | 3.00 [2.00, 3.00] | 0.60 [0.10, 0.90] | – | 1 | 2 |" in text


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


def test_a_scramble_report_at_full_completion_is_written(tmp_path):
    """Every task solved in 12 episodes put the Wilson bound a hair under 1.0, and the figure's error bar went
    negative: `sttgym eval --suite scramble --agent cycle-tracing` exited 1 with no report."""
    def record(seed):
        tasks = [{"template": "t", "solved": True, "actions": 3, "outcome": "solved"} for _ in range(5)]
        return {"env_id": "ScrambleTool/Base", "seed": seed, "run": 0, "reward": 1.0, "turns": 15, "steps": [],
                "usage": {"prompt_tokens": 1, "completion_tokens": 10}, "info": {"tasks": tasks}}
    summary = {"suite": "scramble", "agent": "probe", "episodes": 12, "runs": 1, "errors": 0,
               **scramble_summary([record(s) for s in range(12)])}
    low, high = summary["conditions"]["Base"]["completion_rate_ci"]
    assert low < 1.0 == high
    written = write_report(tmp_path, summary)
    assert (tmp_path / "report.md").is_file() and len(written) > 1


def test_figure_2_intervals_count_failed_episodes_tokens_and_failure_causes():
    from sttgym.evaluation.summary import wilson

    def record(seed, solved, tokens, outcome="solved", quit_=False):
        tasks = [{"template": "t", "solved": i < solved, "actions": 3, "outcome": "solved" if i < solved else outcome}
                 for i in range(5)]
        return {"env_id": "ScrambleTool/Base", "seed": seed, "run": 0, "reward": solved / 5, "turns": 15, "steps": [],
                "usage": {"prompt_tokens": 1, "completion_tokens": tokens},
                "info": {"tasks": tasks, "ended_early": quit_}}
    records = [record(0, 5, 100), record(1, 2, 300, "budget"), record(2, 1, 200, quit_=True)]
    base = scramble_summary(records)["conditions"]["Base"]
    assert base["completion_tokens_per_solved_task"] == 600 / 8  # the failed episodes' tokens count too
    low, high = base["completion_tokens_per_solved_task_ci"]
    assert 20 <= low < 75 < high <= 200  # a resample ranges from episode 0 thrice (20 a task) to episode 2 (200)
    assert base["completion_rate_ci"] == pytest.approx(wilson(1, 3)) and base["failures"] == {"budget": 1, "early_exit": 1}
    assert base["tasks_solved_ci"][0] >= 1 and base["tasks_solved_ci"][1] <= 5
    low, high = wilson(0, 20)
    assert low == 0.0 and high == pytest.approx(0.1611, abs=1e-4)  # the Wilson bound at 0 of 20
