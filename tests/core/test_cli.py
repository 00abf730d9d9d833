"""The command line as a user meets it: version and help, clear errors, plugins, output that pipes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import gymnasium as gym
import pytest
from typer.testing import CliRunner

import sttgym
from sttgym.cli import app
from sttgym.registry import DOMAINS

RUN = CliRunner()


def test_version_and_short_help():
    assert RUN.invoke(app, ["--version"]).output.strip() == f"sttgym {sttgym.__version__}"
    assert "Usage" in RUN.invoke(app, ["-h"]).output and "Usage" in RUN.invoke(app, ["eval", "-h"]).output


@pytest.mark.parametrize("args, says", [
    (["list", "--domain", "Nope"], "no domain 'Nope'"),
    (["validate", "--domain", "Nope"], "no domain 'Nope'"),
    (["eval", "--agent", "noop", "--limit", "-1"], "--limit"),
    (["eval", "--agent", "noop", "--runs", "0"], "--runs"),  # once ran the whole benchmark
    (["eval", "--agent", "noop", "--workers", "0"], "--workers"),
    (["serve", "--port", "99999"], "--port"),  # once a 170-line traceback
    (["eval", "--agent", "noop", "--domain", "Nope"], "unknown domain"),
])
def test_bad_input_is_a_clear_error_not_a_traceback(args, says, tmp_path):
    result = RUN.invoke(app, [*args, *(["--out", str(tmp_path / "run")] if args[0] == "eval" else [])])
    assert result.exit_code != 0 and says in " ".join(result.output.split()) and "Traceback" not in result.output


def test_a_domain_of_an_installed_package_is_seen_by_every_command(tmp_path, monkeypatch):
    (tmp_path / "parcel_plugin.py").write_text(textwrap.dedent("""
        import functools
        import sttgym
        from tests.toy_domain import LockerWorld, toy_scenario

        class ParcelPluginWorld(LockerWorld):
            domain = "ParcelPlugin"

        sttgym.register_domain(ParcelPluginWorld, {("T1", "easy"): toy_scenario,
                                                   ("T1", "impossible"): functools.partial(toy_scenario, solvable=False)})
    """))
    dist = tmp_path / "parcel_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: parcel-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[sttgym.domains]\nparcels = parcel_plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        listed = RUN.invoke(app, ["list", "--plain"])
        assert "STTArena/ParcelPlugin-T1-easy" in listed.output.splitlines()
        validated = RUN.invoke(app, ["validate", "--domain", "ParcelPlugin", "--seeds", "1"])
        assert validated.exit_code == 0 and "2/2 tasks valid" in validated.output
    finally:
        DOMAINS.pop("ParcelPlugin", None)
        for env_id in [i for i in gym.registry if i.startswith("STTArena/ParcelPlugin-")]:
            del gym.registry[env_id]


def test_report_output_keeps_markdown_tables_whole_when_piped(tmp_path):
    from tests.evaluation.evaltoy import register

    register()
    run = tmp_path / "noop"
    assert RUN.invoke(app, ["eval", "--domain", "EvalToy", "--agent", "noop", "--runs", "1",
                            "--out", str(run)]).exit_code == 0
    code = "import sys; from tests.evaluation.evaltoy import register; register(); from sttgym.cli import app; " \
           "sys.argv = ['sttgym', 'report', sys.argv[1]]; app()"
    out = subprocess.run([sys.executable, "-c", code, str(run)], capture_output=True, text=True, check=True).stdout
    rows = [line for line in out.splitlines() if line.startswith("|")]
    assert rows and all(line.endswith("|") for line in rows)  # one table row per line, never wrapped
    assert json.loads((run / "summary.json").read_text())["agent"] == "noop"


def test_rich_tables_stay_whole_when_piped():
    code = "import sys; from sttgym.cli import app; sys.argv = ['sttgym', 'validate', '--domain', 'CarShare', " \
           "'--domain', 'Irrigation', '--seeds', '1']; app()"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert "per domain" in out and "Irrigation" in out and "…" not in out  # no cell cut short to fit 80 columns


def test_long_work_shows_progress_lines_outside_a_terminal():
    result = RUN.invoke(app, ["validate", "--domain", "CarRental", "--seeds", "1"])
    lines = [line for line in result.output.splitlines() if line.startswith("STTArena/CarRental-") and "/36 (" in line]
    assert result.exit_code == 0 and len(lines) >= 9 and lines[-1].split(": ")[1].startswith("36/36")


def test_validate_takes_several_domains_as_eval_does(tmp_path):
    out = tmp_path / "report.json"
    result = CliRunner().invoke(app, ["validate", "--domain", "ColdChain", "--domain", "Hotel", "--seeds", "1",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    validated = {t["env_id"].split("/")[1].split("-")[0] for t in json.loads(out.read_text())["tasks"]}
    assert validated == {"ColdChain", "Hotel"}
