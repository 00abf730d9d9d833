"""What a served model sends back is kept fit to keep: its text encodable (a lone surrogate would fail the next
request that carries it) and the configured API key out of everything a run writes, even when a server echoes the
request's headers in a reply that succeeded."""

from __future__ import annotations

import dataclasses

import pytest

pytest.importorskip("openai")
from typer.testing import CliRunner  # noqa: E402

from sttgym.cli import app  # noqa: E402
from sttgym.evaluation.runner import TRAJECTORIES, load_records  # noqa: E402
from sttgym.models import OpenAIModel  # noqa: E402
from sttgym.models.base import ChatResponse  # noqa: E402
from sttgym.synth.llm import Asker  # noqa: E402
from sttgym.synth.prompts import CODE, Template  # noqa: E402
from tests.evaluation.evaltoy import register  # noqa: E402
from tests.evaluation.scripted import call, nominal_policy, text  # noqa: E402
from tests.models.fake_server import FakeServer  # noqa: E402

SECRET = "sk-proj-ECHOED0123456789abcdef"


def eval_against(server: FakeServer, out, *extra: str):
    register()
    return CliRunner().invoke(app, ["eval", "--model", "served", "--base-url", server.url, "--domain", "EvalToy",
                                    "--runs", "1", "--workers", "2", "--max-retries", "0", "--out", str(out), *extra])


def secrets_found(out) -> list[str]:
    """The files under ``out`` that hold the key (or a long piece of it)."""
    return [str(p) for p in out.rglob("*") if p.is_file() and (SECRET in (data := p.read_text("utf-8", "replace"))
                                                               or SECRET[8:24] in data)]


def test_a_key_echoed_in_successful_replies_is_written_nowhere(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeServer(lambda messages: text("hello"), echo_headers=True) as served:
        (reply,) = OpenAIModel("served", base_url=served.url).chat([[{"role": "user", "content": "hi"}]])
    assert "your request's headers" in reply.content and "[redacted]" in reply.content
    assert SECRET not in reply.content + reply.raw
    with FakeServer(nominal_policy, echo_headers=True) as served:
        result = eval_against(served, tmp_path / "run")
    assert result.exit_code == 0, result.output
    records = load_records(tmp_path / "run" / TRAJECTORIES)
    assert len(records) == 5 and [r["error"] for r in records.values()] == [None] * 5
    assert "[redacted]" in (tmp_path / "run" / TRAJECTORIES).read_text(encoding="utf-8")  # the echo was there
    assert secrets_found(tmp_path / "run") == []


def test_a_key_in_a_reply_stays_out_of_the_synthesis_log(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeServer(lambda messages: text(f"no JSON here, but the key: {SECRET}")) as served:
        asker = Asker(OpenAIModel("served", base_url=served.url, max_retries=0), tmp_path / "log" / "model.jsonl",
                      attempts=1)
        asker.ask("stage", Template("echo", "system", "say {x}", CODE), {"item": {"x": "it"}})
    assert secrets_found(tmp_path) == [] and "[redacted]" in (tmp_path / "log" / "model.jsonl").read_text()


def surrogate_then_nominal(conversation: list[dict]) -> ChatResponse:
    """The nominal plan, its first turn's text holding half an emoji (as a model's JSON escapes can send)."""
    response = nominal_policy(conversation)
    if not any(m["role"] == "assistant" for m in conversation):
        response = dataclasses.replace(response, content="let me look \ud83d")
    return response


def test_a_lone_surrogate_from_the_model_loses_no_episode(tmp_path):
    """It made the next request unencodable: the episode ended "malformed response" and went unscored."""
    rewards = {}
    for name, policy in (("plain", nominal_policy), ("surrogate", surrogate_then_nominal)):
        with FakeServer(policy) as served:
            result = eval_against(served, tmp_path / name)
        assert result.exit_code == 0, result.output
        records = load_records(tmp_path / name / TRAJECTORIES)
        assert len(records) == 5 and [r["error"] for r in records.values()] == [None] * 5
        rewards[name] = {k: r["reward"] for k, r in records.items()}
    assert rewards["surrogate"] == rewards["plain"]  # every episode played and scored as without it
    said = [m.get("content") or "" for r in records.values() for m in r["messages"] if m["role"] == "assistant"]
    assert "let me look \ufffd" in said and not any("\ud83d" in m for m in said)
