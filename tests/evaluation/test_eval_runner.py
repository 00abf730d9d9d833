"""The runner: reference agents through the suite, weighted summaries, threads and batches, resume after a kill."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.evaluation.evaltoy import register
from tests.evaluation.scripted import ScriptedModel, nominal_policy

from sttgym.evaluation.runner import TRAJECTORIES, EvalConfig, Runner, load_records
from sttgym.models.base import ChatResponse
from sttgym.evaluation.summary import arena_summary, summarise


@pytest.fixture(scope="module", autouse=True)
def domain():
    register()


def evaluate(tmp_path, scripted=None, **options):
    config = EvalConfig(domains=["EvalToy"], **{"protocol": "full", **options})  # every seed, unless a test says
    return Runner(config, tmp_path / "run", model=scripted).run(), config


def test_the_default_protocol_plays_each_id_once_and_full_every_instance(tmp_path):
    per_id = Runner(EvalConfig(agent="oracle", runs=1), tmp_path / "a").instances()
    full = Runner(EvalConfig(agent="oracle", runs=1, protocol="full"), tmp_path / "b").instances()
    assert len(per_id) == len({env_id for env_id, _ in full}) == 360 and len(full) == 3600
    first = {}
    for env_id, seed in full:
        first.setdefault(env_id, seed)
    assert per_id == list(first.items())  # each id at its first instance, in the manifest's order
    assert Runner(EvalConfig(agent="oracle", runs=1, limit=7), tmp_path / "c").instances() == per_id[:7]
    with pytest.raises(ValueError, match="protocol"):
        EvalConfig(protocol="some")
    # A run directory written before the protocol existed measured every instance, and resumes as such.
    assert EvalConfig.from_dict({"agent": "oracle", "runs": 1}).protocol == "full"


@pytest.mark.parametrize("agent, expected", [("oracle", 1.0), ("noop", 0.0)])
def test_reference_agents_through_the_runner(tmp_path, agent, expected):
    records, config = evaluate(tmp_path, agent=agent, runs=2)
    assert len(records) == 2 * 15  # 5 ids x 3 benchmark seeds x 2 runs
    summary = summarise(records, "arena", label=agent)
    for level in ("easy", "medium", "hard", "impossible", "overall"):
        assert summary[level] == expected and summary["std"][level] == 0.0
    assert summary["counts"] == {"easy": 6, "medium": 3, "hard": 3, "impossible": 3}


def test_pass_at_1_is_binary_and_overall_weights_levels_as_chosen():
    def row(env, level, run, reward):
        return {"condition": "dynamic", "env_id": env, "seed": 0, "run": run, "difficulty": level, "reward": reward,
                "calls": 2, "conflict": "T1", "steps": []}
    records = [row(f"e{i}", "easy", run, 1.0) for i in range(3) for run in (0, 1)]
    records += [row("h", "hard", 0, 0.0), row("h", "hard", 1, 0.5)]
    suite = arena_summary(records, k=2, weights="suite")
    assert suite["hard"] == 0.0 and suite["score"]["hard"] == 0.25  # half a checklist is not a pass
    assert suite["overall"] == pytest.approx(0.75)  # each run: 3/4 * 1 + 1/4 * 0
    assert suite["score"]["overall"] == pytest.approx((0.75 + 0.875) / 2)
    assert suite["score_std"]["hard"] == pytest.approx(math.sqrt(0.125)) and suite["std"]["hard"] == 0.0
    assert suite["medium"] is None and suite["weights"] == {"scheme": "suite", "easy": 0.75, "hard": 0.25}
    paper = arena_summary(records, k=2)  # the default: the paper's 71 easy and 59 hard tasks
    assert paper["overall"] == pytest.approx(71 / 130) and paper["weights"]["scheme"] == "paper"
    with pytest.raises(ValueError, match="weights"):
        arena_summary(records, weights="equal")
    assert paper["pass_at_k"]["2"]["hard"] == 0.0 and paper["pass_at_k"]["1"]["easy"] == 1.0


def test_remote_models_run_in_threads_and_local_ones_in_batches(tmp_path):
    remote = ScriptedModel(nominal_policy)
    records, _ = evaluate(tmp_path / "remote", agent="llm", model="m", runs=1, workers=4, scripted=remote)
    assert len(records) == 15 and all(r["calls"] == 2 and r["usage"]["completion_tokens"] == 13 for r in records)
    assert all(c["size"] == 1 for c in remote.calls)
    local = ScriptedModel(nominal_policy, batched=True, delay=0.01)  # long enough for the threads to meet
    records, _ = evaluate(tmp_path / "local", agent="llm", model="m", runs=1, workers=5, scripted=local)
    assert [r["reward"] for r in records] == [0.0] * 15 and len(local.calls) < 3 * 15
    assert max(c["size"] for c in local.calls) > 1


def test_resume_refuses_another_evaluation_but_lets_runs_grow(tmp_path):
    evaluate(tmp_path, agent="noop", runs=1)
    with pytest.raises(ValueError, match="agent"):
        evaluate(tmp_path, agent="oracle", runs=1)
    records, _ = evaluate(tmp_path, agent="noop", runs=2)
    assert len(records) == 30 and sorted({r["run"] for r in records}) == [0, 1]


def test_a_torn_last_line_is_cut_and_its_episode_played_again(tmp_path):
    records, _ = evaluate(tmp_path, agent="oracle", runs=1, limit=3)
    path = tmp_path / "run" / TRAJECTORIES
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:2]) + lines[2][:40])
    again, _ = evaluate(tmp_path, agent="oracle", runs=1, limit=3)
    assert [r["key"] for r in again] == [r["key"] for r in records]
    assert len(path.read_text().splitlines()) == 3


def test_a_killed_run_resumes_without_losing_or_duplicating(tmp_path):
    out = tmp_path / "run"
    worker = [sys.executable, str(Path(__file__).parent / "resume_worker.py"), str(out)]
    process = subprocess.Popen(worker)
    path, deadline = out / TRAJECTORIES, time.monotonic() + 120
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if path.exists() and len(path.read_text().splitlines()) >= 10:
                break
            time.sleep(0.01)
    finally:
        process.kill()
        process.wait()
    killed_at = len(path.read_text().splitlines())
    assert 10 <= killed_at < 60, "the run should have been killed mid-way"
    subprocess.run(worker, check=True, timeout=300)
    lines = path.read_text().splitlines()
    keys = [json.loads(line)["key"] for line in lines]
    assert len(keys) == len(set(keys)) == 60  # 15 instances x 4 runs, each exactly once
    assert len(load_records(path)) == 60


def test_llm_agent_on_the_scramble_suite_stops_through_end_episode_on_a_backend_error(tmp_path):

    down = ScriptedModel(lambda conversation: ChatResponse(error="gave up after 7 attempts"))
    config = EvalConfig(suite="scramble", agent="llm", model="m", runs=1, limit=6)
    records = Runner(config, tmp_path / "run", model=down).run()
    assert sorted(r["env_id"].split("/")[1] for r in records) == sorted(
        ["Unscrambled", "Base", "Drift", "Failure", "Window", "All"])
    for record in records:
        assert record["error"] == "gave up after 7 attempts" and record["turns"] == 1 and record["terminated"]
        assert record["steps"][0]["action"] == {"name": "end_episode", "arguments": {}}
        assert "terminal" in record["messages"][0]["content"] and "Task Completed" not in record["messages"][0]["content"]
    summary = summarise(records, "scramble")
    assert summary["errors"] == 6 and summary["episodes"] == 0 and summary["conditions"] == {}  # not scored as 0
    with pytest.raises(ValueError, match="arena task plans"):
        EvalConfig(suite="scramble", agent="oracle")


def test_a_lone_surrogate_in_a_record_is_saved_and_read_back(tmp_path):
    (played,), _ = evaluate(tmp_path, agent="noop", runs=1, limit=1)
    record = {**played, "reply": "half an emoji \ud83d and the rest"}  # as a broken model reply may be
    runner = Runner(EvalConfig(domains=["EvalToy"], agent="noop", runs=1, limit=1), tmp_path / "run")
    runner._append(record)
    assert load_records(runner.path)[record["key"]] == record


def test_corrupt_lines_are_skipped_and_their_episodes_played_again(tmp_path):
    records, _ = evaluate(tmp_path, agent="oracle", runs=1, limit=3)
    path = tmp_path / "run" / TRAJECTORIES
    lines = path.read_bytes().splitlines(keepends=True)
    broken = json.loads(lines[1])
    del broken["reward"]  # the right key, a field missing
    path.write_bytes(lines[0] + json.dumps(broken).encode() + b"\n" + b"\xff\xfe not utf-8 {\n" + lines[2])
    assert set(load_records(path)) == {records[0]["key"], records[2]["key"]}
    again, config = evaluate(tmp_path, agent="oracle", runs=1, limit=3)
    assert [r["key"] for r in again] == [r["key"] for r in records] and all(r["reward"] == 1.0 for r in again)
    assert summarise(again, "arena", label="oracle")["episodes"] == 3


def test_a_second_run_on_the_same_directory_is_refused_while_the_first_holds_it(tmp_path):
    from sttgym.evaluation.runner import _exclusive

    with _exclusive(tmp_path / "run"):
        with pytest.raises(ValueError, match="another sttgym eval is writing"):
            evaluate(tmp_path, agent="oracle", runs=1, limit=2)
    records, _ = evaluate(tmp_path, agent="oracle", runs=1, limit=2)  # free again once the first is done
    assert len(records) == 2


def test_a_torn_config_no_longer_bricks_the_directory(tmp_path):
    evaluate(tmp_path, agent="oracle", runs=1, limit=2)
    (tmp_path / "run" / "config.json").write_text('{"suite": "are')
    records, _ = evaluate(tmp_path, agent="oracle", runs=1, limit=2)
    assert len(records) == 2 and json.loads((tmp_path / "run" / "config.json").read_text())["agent"] == "oracle"


def test_bad_out_directories_are_clear_errors_not_tracebacks(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from sttgym.cli import app

    a_file = tmp_path / "file"
    a_file.write_text("x")
    result = CliRunner().invoke(app, ["eval", "--domain", "EvalToy", "--agent", "oracle", "--out", str(a_file)])
    said = " ".join(result.output.replace("│", " ").split())  # rich wraps long messages in a box
    assert result.exit_code != 0 and "is a file" in said and "Traceback" not in said

    def full_disk(self, record):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Runner, "_append", full_disk)
    result = CliRunner().invoke(app, ["eval", "--domain", "EvalToy", "--agent", "oracle", "--out", str(tmp_path / "r")])
    said = " ".join(result.output.split())
    assert result.exit_code == 1 and "cannot write the run" in said and "No space left on device" in said


def test_an_episode_that_outgrows_the_model_s_context_is_scored_as_a_failure_not_an_error(tmp_path):
    """A small-context model's long episodes are its own failures: scored and counted, never left out."""
    def short_memory(conversation):
        if sum(m["role"] == "assistant" for m in conversation) == 0:
            return nominal_policy(conversation)  # one call fits
        return ChatResponse(error="request rejected: BadRequestError 400: maximum context length is 64 tokens",
                            context_full=True)

    records, _ = evaluate(tmp_path, agent="llm", model="m", runs=1, workers=1, scripted=ScriptedModel(short_memory))
    assert records and all(r["error"] is None and r["context_overflow"] and r["truncated"] for r in records)
    assert all(r["calls"] == 1 and r["steps"][-1]["action"] == {"content": ""} for r in records)
    summary = summarise(records, "arena")
    assert summary["episodes"] == len(records) and summary["errors"] == 0
    assert summary["context_overflows"] == len(records) and summary["overall"] == 0.0


def test_a_backend_that_is_down_stops_the_run_and_nothing_is_scored(tmp_path):
    from typer.testing import CliRunner

    from sttgym.cli import app
    from sttgym.evaluation.runner import MAX_ERRORS_IN_A_ROW, BackendFailing

    down = ScriptedModel(lambda conversation: ChatResponse(error="connection refused"))
    config = EvalConfig(domains=["EvalToy"], agent="llm", model="m", runs=5, workers=1)
    runner = Runner(config, tmp_path / "run", model=down)
    with pytest.raises(BackendFailing, match="in a row ended on an error.*connection refused"):
        runner.run()
    records = runner.records()
    assert len(records) == MAX_ERRORS_IN_A_ROW < len(runner.episodes())
    summary = summarise(records, "arena")
    assert summary["errors"] == MAX_ERRORS_IN_A_ROW and summary["episodes"] == 0 and summary["overall"] is None
    # From the command line: a model that cannot be reached is an error exit, not a report of zeros.
    result = CliRunner().invoke(app, ["eval", "--domain", "EvalToy", "--model", "m", "--base-url",
                                      "http://127.0.0.1:9/v1", "--max-retries", "0", "--request-timeout", "2",
                                      "--out", str(tmp_path / "cli")])
    assert result.exit_code != 0 and "in a row ended on an error" in result.output
