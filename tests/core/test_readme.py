"""Every command the README shows runs, as written or made smaller, so none of them can rot.

A README command is one `&&`-separated part of a line of its shell blocks. Each must appear in
``PLAYED`` (run here: the command itself, with arguments appended that shrink it, or with a
placeholder the reader replaces, a model path or a server URL, replaced), in ``ELSEWHERE``
(run by the test named there, at a size CPU CI affords), or be an install or the test command
(checked against pyproject.toml and .ci/run). A new README command with none of these fails.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sttgym.cli import app

ROOT = Path(__file__).parents[2]
SHELL = re.compile(r"^```(?:bash|sh)\n(.*?)^```", re.S | re.M)


def readme_commands() -> list[str]:
    lines = [line.split("  #")[0].strip() for block in SHELL.findall((ROOT / "README.md").read_text("utf-8"))
             for line in block.splitlines()]
    return [part.strip() for line in lines if line for part in line.split("&&")]


TINY = "<tiny model>"
SERVED = "<served URL>"
# README command -> (arguments as run here, with placeholders; arguments appended to shrink it: an option
# given twice takes its last value)
PLAYED = {
    "sttgym eval --out runs/demo": (None, []),
    "sttgym eval --agent oracle --out runs/oracle": (None, ["--domain", "Hotel"]),
    "sttgym eval --model ./checkpoints/my-agent --runs 3 --out runs/me":
        (["eval", "--model", TINY, "--runs", "3", "--out", "runs/me"], ["--domain", "EvalToy", "--limit", "1", "--runs", "1",
                                                                      "--max-new-tokens", "8"]),
    "sttgym eval --model Qwen/Qwen3-8B --base-url http://localhost:8000/v1 --out runs/q8":
        (["eval", "--model", "Qwen/Qwen3-8B", "--base-url", SERVED, "--out", "runs/q8"], ["--domain", "EvalToy"]),
    "sttgym eval --suite scramble --agent cycle-tracing --out runs/scramble": (None, []),
    "sttgym play start STTArena/ColdChain-T2-medium --seed 3 -i": (None, []),
    "sttgym play start STTArena/Hotel-S2-easy --seed 4 --blind": (None, []),
    "sttgym play step 'search_availability hotel_id=HTL-SAF73 check_in=2024-03-19 nights=3 kind=deluxe'": (None, []),
    "sttgym play step 'Task Completed'": (None, []),
    "sttgym play review runs/play": (None, []),
    # its default corpus, as from the repository's root
    "sttgym play stats": (["play", "stats", str(ROOT / "tests/data/playtests.jsonl")], []),
}
SERVE = "sttgym serve --host 0.0.0.0 --port 8000"
# Too large for CPU CI as written (a 4B model, thousands of transcripts): run by these tests on tiny sizes.
ELSEWHERE = {
    "sttgym train data --out runs/data": "tests/training/test_data.py",
    "sttgym train sft --config paper-sft --out runs/sft": "tests/training/test_trainers.py",
    "sttgym train rl  --config paper-rl --model runs/sft/final --out runs/rl": "tests/training/test_trainers.py",
    "python examples/train_cpu_demo.py": "tests/training/test_demo.py",
    "python examples/copy_pretraining.py repeats --mode twice": "tests/training/test_copy_pretraining_example.py",
}


def is_install(command: str) -> bool:
    return command.startswith(("pip install", "bash tests/verifiers_env.sh"))


TEST_COMMAND = "python -m pytest -n 2 tests"


def test_every_readme_command_is_run_by_a_test():
    commands = readme_commands()
    assert len(commands) >= len(PLAYED) + len(ELSEWHERE)
    unknown = [c for c in commands if c not in PLAYED and c not in ELSEWHERE and c != SERVE and c != TEST_COMMAND
               and not is_install(c)]
    assert not unknown, f"README commands no test runs: {unknown}"
    assert set(PLAYED) | set(ELSEWHERE) | {SERVE} <= set(commands), "commands here that the README no longer shows"
    for test_file in ELSEWHERE.values():
        assert (ROOT / test_file).exists(), test_file


def test_the_install_commands_name_real_extras_and_ci_runs_the_readme_s_test_command():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["optional-dependencies"]
    installs = [c for c in readme_commands() if c.startswith("pip install -e")]
    assert installs
    for command in installs:
        (named,) = re.findall(r'"\.\[([\w,]+)\]"', command)
        assert set(named.split(",")) <= set(extras), command
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    assert TEST_COMMAND in readme_commands() and ci.rstrip().splitlines()[-1] == TEST_COMMAND
    for step in ("pip install --quiet torch==2.13.0", 'pip install --quiet -e ".[all]"', "bash tests/verifiers_env.sh"):
        assert step in ci


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    pytest.importorskip("transformers")
    from sttgym.models.tiny import build_tiny_model
    from tests.evaluation.evaltoy import register

    register()
    return str(build_tiny_model(tmp_path_factory.mktemp("tiny") / "model"))


def test_the_readme_s_commands_run(tmp_path, monkeypatch, tiny_model):
    from tests.evaluation.evaltoy import register
    from tests.evaluation.scripted import nominal_policy
    from tests.models.fake_server import FakeServer

    register()
    monkeypatch.chdir(tmp_path)  # the commands write under runs/ and play's session file, as for a reader
    runner = CliRunner()
    said = {}
    with FakeServer(nominal_policy) as served:
        for command, (arguments, shrink) in PLAYED.items():
            arguments = shlex.split(command)[1:] if arguments is None else arguments
            arguments = [{TINY: tiny_model, SERVED: served.url}.get(a, a) for a in arguments]
            result = runner.invoke(app, [*arguments, *shrink], input=":quit\n" if "-i" in arguments else None)
            assert result.exit_code == 0, f"{command}\n{result.output[-3000:]}"
            said[command] = result.output
            out = next((arguments[i + 1] for i, a in enumerate(arguments) if a == "--out"), None)
            if arguments[0] == "eval":  # the run is whole: its report, figures and every episode scored
                assert (tmp_path / out / "report.md").exists() and (tmp_path / out / "summary.json").exists(), command
    assert "Episode key (for sttgym play label)" in said["sttgym play review runs/play"]  # it saw the played episode
    assert "| hard |" in said["sttgym play stats"]


def test_the_readme_s_serve_command_serves():
    """As written but on loopback and a free port: CI may not bind every interface, nor port 8000."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    arguments = shlex.split(SERVE)[1:]
    arguments[arguments.index("--host") + 1], arguments[arguments.index("--port") + 1] = "127.0.0.1", str(port)
    pytest.importorskip("openenv")
    process = subprocess.Popen([sys.executable, "-m", "sttgym", *arguments], cwd=ROOT, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as reply:
                    assert reply.status == 200
                break
            except OSError:
                assert process.poll() is None, process.stderr.read()
                assert time.monotonic() < deadline, "the server did not start within 60 s"
                time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
    finally:
        process.kill()
