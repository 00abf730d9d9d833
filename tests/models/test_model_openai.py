"""The OpenAI-compatible backend against a loopback server: retries, errors, tool calls, and a full evaluation."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("openai")
from tests.evaluation.evaltoy import register
from tests.models.fake_server import FakeServer, completion
from tests.evaluation.scripted import call, nominal_policy, text
from typer.testing import CliRunner

from sttgym.cli import app
from sttgym.models import OpenAIModel
from sttgym.models.parsing import has_malformed_call

CONVERSATION = [{"role": "system", "content": "rules"}, {"role": "user", "content": "reserve locker L1 for parcel P2"}]


@pytest.fixture
def server():
    with FakeServer(lambda messages: call("get_locker", locker_id="L1")) as s:
        yield s


@pytest.fixture
def sleeps(monkeypatch):
    """The SDK's waits between retries, recorded instead of slept (only the SDK's clock is replaced)."""
    import time
    import types

    import openai._base_client as base

    waits = []
    clock = types.SimpleNamespace(**{k: getattr(time, k) for k in dir(time) if not k.startswith("_")})
    clock.sleep = waits.append
    monkeypatch.setattr(base, "time", clock)
    return waits


def model(server, **options):
    return OpenAIModel("served", base_url=server.url, **{"max_retries": 3, "timeout": 5.0, **options})


def test_rate_limits_server_errors_and_timeouts_are_retried_with_backoff(server, sleeps):
    server.faults.extend([("status", 429), ("status", 500), ("status", 408), ("delay", 1.0)])
    (response,) = model(server, timeout=0.3, max_retries=4).chat([CONVERSATION])
    assert response.error is None
    assert response.tool_calls == [{"name": "get_locker", "arguments": {"locker_id": "L1"}, "id": "c0"}]
    assert response.prompt_tokens == 21 and response.completion_tokens == 7
    assert len(server.requests) == 5 and len(sleeps) == 4
    # the SDK's backoff: 0.5 s doubling, less up to a quarter of jitter
    assert all(0.375 * 2 ** i <= wait <= 0.5 * 2 ** i for i, wait in enumerate(sleeps))


def test_gives_up_after_the_retries_and_records_why(server, sleeps):
    server.faults.extend([("status", 503)] * 4)
    (response,) = model(server).chat([CONVERSATION])
    assert response.error.startswith("gave up after 3 retries") and "503" in response.error
    assert len(server.requests) == 4


def test_a_client_error_is_not_retried(server, sleeps):
    server.faults.append(("status", 400))
    (response,) = model(server).chat([CONVERSATION])
    assert response.error.startswith("request rejected") and len(server.requests) == 1


@pytest.mark.parametrize("message, full", [
    ("This model's maximum context length is 8192 tokens. However, you requested 9100 tokens", True),  # OpenAI, vLLM
    ("the request exceeds the available context size, try increasing it", True),  # llama.cpp
    ("Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096", False),
    ("invalid tool schema", False)])
def test_a_context_that_is_full_is_told_from_other_rejections(server, message, full):
    server.faults.append(("status", 400, {}, message))
    (response,) = model(server).chat([CONVERSATION])
    assert response.error.startswith("request rejected") and response.context_full is full


@pytest.mark.parametrize("body", ["this is not json", json.dumps({"id": "x", "choices": []}),
                                  json.dumps({"choices": [{"message": {"content": 5}}]})])
def test_malformed_responses_become_errors(server, body):
    server.faults.append(("body", body))
    (response,) = model(server).chat([CONVERSATION])
    assert response.error and "malformed" in response.error


def test_request_carries_tools_thinking_seed_and_clean_messages(server):
    tools = [{"type": "function", "function": {"name": "get_locker", "parameters": {"type": "object"}}}]
    history = CONVERSATION + [
        {"role": "assistant", "content": "", "reasoning_content": "hmm", "tool_calls": [
            {"id": "call_1_0", "type": "function", "function": {"name": "get_locker", "arguments": '{"locker_id": "L1"}'}}]},
        {"role": "tool", "tool_call_id": "call_1_0", "name": "get_locker", "content": "{}"}]
    model(server).chat([history, CONVERSATION], tools, thinking=False, seed=5, temperature=0.0, max_tokens=64)
    assert len(server.requests) == 2
    body = server.requests[0] if len(server.requests[0]["messages"]) == 4 else server.requests[1]
    assert body["tools"] == tools and body["seed"] == 5 and body["temperature"] == 0.0 and body["max_tokens"] == 64
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert "reasoning_content" not in body["messages"][2] and body["messages"][3]["tool_call_id"] == "call_1_0"


def test_text_calls_reasoning_and_malformed_native_arguments_are_read():
    with FakeServer(lambda m: text('<think>plan</think>\n<tool_call>{"name": "get_locker", '
                                   '"arguments": {"locker_id": "L7"}}</tool_call>')) as plain:
        (response,) = model(plain).chat([CONVERSATION])
    assert response.reasoning == "plan" and response.tool_calls[0]["arguments"] == {"locker_id": "L7"}
    with FakeServer(lambda m: call("x")) as broken:
        broken.faults.append(("body", json.dumps(completion(call("get_locker"), raw_arguments={0: "{locker: 1"}))))
        (response,) = model(broken).chat([CONVERSATION])
    assert response.error is None and response.tool_calls == [] and has_malformed_call(response.content)


def test_sttgym_eval_against_the_server_end_to_end(tmp_path):
    register()
    with FakeServer(nominal_policy) as served:
        served.faults.extend([("status", 429), ("status", 502)])
        out = tmp_path / "run"
        result = CliRunner().invoke(app, ["eval", "--model", "served", "--base-url", served.url, "--domain", "EvalToy",
                                          "--runs", "2", "--k", "2", "--workers", "3", "--out", str(out)])
        assert result.exit_code == 0, result.output
        requests = len(served.requests)
    summary = json.loads((out / "summary.json").read_text())
    # The per-id protocol (the default): each of the 5 ids' first instance, twice over.
    assert summary["episodes"] == 10 and summary["errors"] == 0 and summary["overall"] == 0.0
    assert summary["failure_modes"]["stale_state"] == 10  # the blind plan never re-reads the taken locker
    assert requests == 10 * 3 + 2  # three turns per episode, plus the two retried faults
    record = json.loads((out / "trajectories.jsonl").read_text().splitlines()[0])
    assert record["usage"] == {"prompt_tokens": 63, "completion_tokens": 21} and record["calls"] == 2
    assert summary["usage"] == {"prompt_tokens": 63, "completion_tokens": 21, "violations": 0}
    report = (out / "report.md").read_text()
    assert "Table 3" in report and "| served | 63.0 | 21.0 | 0.0 |" in report


def test_llm_user_and_judge_served_by_the_same_server(tmp_path):
    register()

    def policy(messages):
        system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
        if system.startswith("You judge"):
            return text('{"passed": false, "recognized_impossibility": false, "fed_back_to_user": false}')
        if system.startswith("You are playing the user"):
            return text("Just reserve it, please.")
        return nominal_policy(messages)

    with FakeServer(policy) as served:
        out = tmp_path / "run"
        result = CliRunner().invoke(app, ["eval", "--model", "served", "--base-url", served.url, "--domain", "EvalToy",
                                          "--runs", "1", "--limit", "4", "--user", "llm", "--judge", "llm",
                                          "--out", str(out)])
        assert result.exit_code == 0, result.output
        judged = sum(m[0]["content"].startswith("You judge") for m in (r["messages"] for r in served.requests))
    records = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    impossible = [r for r in records if r["difficulty"] == "impossible"]
    assert len(impossible) == 1 and judged == 1
    assert [c["judge"] for c in impossible[0]["info"]["checklist"]][:2] == ["llm", "llm"]


@pytest.mark.parametrize("headers, wait", [({"Retry-After": "3"}, (3.0, 3.0)), ({"retry-after-ms": "2500"}, (2.5, 2.5)),
                                           ({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, (0.375, 0.5)),  # past
                                           ({"Retry-After": "soon"}, (0.375, 0.5))])  # unreadable: backoff
def test_the_server_s_retry_after_is_honoured_in_each_form(server, sleeps, headers, wait):
    server.faults.append(("status", 429, headers))
    (response,) = model(server).chat([CONVERSATION])
    assert response.error is None and len(sleeps) == 1 and wait[0] - 0.01 <= sleeps[0] <= wait[1] + 0.01


def test_a_retry_after_date_in_the_future_is_waited_for(server, sleeps):
    import email.utils
    import time

    server.faults.append(("status", 503, {"Retry-After": email.utils.formatdate(time.time() + 30, usegmt=True)}))
    model(server).chat([CONVERSATION])
    assert 25 <= sleeps[0] <= 31


def test_the_api_key_never_reaches_an_error(server, monkeypatch):
    secret = "sk-live-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    echo = f"bad request; headers were Authorization: Bearer {secret}, x-api-key: {secret}"
    server.faults.extend([("status", 400, {}, echo), ("status", 500, {}, echo)])
    backend = OpenAIModel("served", base_url=server.url, max_retries=0)
    for _ in range(2):
        (response,) = backend.chat([CONVERSATION])
        assert response.error and secret not in response.error and "0123456789" not in response.error


def test_request_timeout_and_retries_reach_the_backend_and_bad_values_are_refused(tmp_path):
    from sttgym.evaluation.runner import EvalConfig, Runner

    config = EvalConfig(agent="llm", model="served", base_url="http://127.0.0.1:9/v1", request_timeout=7.5,
                        max_retries=2)
    backend = Runner(config, tmp_path)._chat_model()
    assert (backend.timeout, backend.max_retries) == (7.5, 2)
    with pytest.raises(ValueError, match="request_timeout"):
        EvalConfig(agent="llm", model="served", base_url="http://x/v1", request_timeout=0)
    result = CliRunner().invoke(app, ["eval", "--model", "m", "--base-url", "http://x/v1", "--max-retries", "-1",
                                      "--out", str(tmp_path / "r")])
    assert result.exit_code != 0 and "max_retries" in result.output


def test_a_run_against_a_faulty_server_records_every_episode_once_and_no_secret(tmp_path, monkeypatch):
    """Every kind of fault, mixed into one evaluation: the run completes and nothing leaks."""
    from sttgym.evaluation.runner import TRAJECTORIES, load_records

    register()
    secret = "sk-proj-SECRET0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    huge = completion(text("Task Completed " + "x" * 1_000_000))
    surrogate = completion(text("half an emoji \ud83d then Task Completed"))
    echo = f"invalid request; Authorization: Bearer {secret}"
    with FakeServer(nominal_policy) as served:
        served.faults.extend([
            ("status", 500), ("status", 429, {"retry-after-ms": "5"}), ("status", 503, {"Retry-After": "0"}),
            ("status", 400, {}, echo), ("body", "not json"), ("body", json.dumps({"id": "x", "choices": []})),
            ("body", json.dumps(completion(call("get_locker", locker_id="L1"), raw_arguments={0: "{locker: 1"}))),
            ("body", json.dumps(huge)), ("body", json.dumps(surrogate)), ("delay", 0.6), ("status", 502),
            ("status", 401, {}, echo)])
        out = tmp_path / "run"
        result = CliRunner().invoke(app, ["eval", "--model", "served", "--base-url", served.url, "--domain", "EvalToy",
                                          "--runs", "1", "--full", "--workers", "3", "--request-timeout", "0.3",
                                          "--max-retries", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = (out / TRAJECTORIES).read_text(encoding="utf-8").splitlines()
    records = load_records(out / TRAJECTORIES)
    assert len(lines) == len(records) == 15  # every episode exactly once
    assert any(r["error"] for r in records.values()) and any(not r["error"] for r in records.values())
    for path in out.rglob("*"):
        if path.is_file():
            assert secret not in path.read_text(encoding="utf-8", errors="replace"), path


def test_the_server_s_tool_call_ids_go_back_with_the_results():
    import gymnasium as gym

    import sttgym
    from sttgym.agents import LLMAgent

    register()
    with FakeServer(nominal_policy) as served:
        sttgym.rollout(gym.make("STTArena/EvalToy-T1-easy"), LLMAgent(model(served)), seed=0)
        later = served.requests[-1]["messages"]
    issued = [c["id"] for m in later if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    answered = [m["tool_call_id"] for m in later if m["role"] == "tool"]
    assert issued and answered == issued and all(i.startswith("c") for i in issued)  # the fake server's ids


def test_a_reasoning_model_gets_an_effort_and_no_sampling_parameters(server):
    backend = model(server, reasoning_effort="high")
    backend.chat([CONVERSATION], None, temperature=0.7, max_tokens=512)
    (body,) = server.requests
    assert body["reasoning_effort"] == "high" and body["max_completion_tokens"] == 512
    assert "temperature" not in body and "max_tokens" not in body
    with pytest.raises(ValueError, match="reasoning_effort"):
        model(server, reasoning_effort="max")
    with pytest.raises(ValueError, match="reasoning effort"):
        from sttgym.evaluation.runner import EvalConfig
        EvalConfig(agent="llm", model="m", reasoning_effort="high")  # a local model has no effort setting
