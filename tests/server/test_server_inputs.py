"""Every request a server takes is typed and bounded, and every reply it gives is encodable: wrong types are a 422
naming the field, never a 500 from inside the env; a lone surrogate an agent sends comes back as U+FFFD; a client
too slow to send its request is disconnected; and a battery of hostile requests gets no 5xx at all."""

from __future__ import annotations

import json
import socket
import urllib.parse

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from sttgym.fuzz import CATEGORIES, hostile_action  # noqa: E402
from sttgym.server.app import running  # noqa: E402
from tests.server.test_server import ARENA, raw  # noqa: E402

SCRAMBLE = "ScrambleTool/All"


@pytest.fixture(scope="module")
def url():
    with running(request_timeout=1.0) as address:
        yield address


@pytest.mark.parametrize("request_, field", [
    ({"env_id": ARENA[0], "kwargs": {"user": "llm"}}, "kwargs.user"),
    ({"env_id": ARENA[0], "kwargs": {"user": 3}}, "kwargs.user"),
    ({"env_id": ARENA[0], "kwargs": {"judge": "anything"}}, "kwargs.judge"),
    ({"env_id": ARENA[0], "kwargs": {"max_turns": "5"}}, "kwargs.max_turns"),
    ({"env_id": ARENA[0], "kwargs": {"max_turns": None}}, "kwargs.max_turns"),
    ({"env_id": ARENA[0], "kwargs": {"max_turns": 10**9}}, "kwargs.max_turns"),
    ({"env_id": ARENA[0], "kwargs": {"dynamics": "no"}}, "kwargs.dynamics"),
    ({"env_id": ARENA[0], "kwargs": {"max_episode_steps": 2.5}}, "kwargs.max_episode_steps"),
    ({"env_id": SCRAMBLE, "kwargs": {"templates": "web_service_audit"}}, "kwargs.templates"),
    ({"env_id": SCRAMBLE, "kwargs": {"templates": ["no_such_template"]}}, "kwargs.templates.0"),
    ({"env_id": SCRAMBLE, "kwargs": {"templates": [1, 2]}}, "kwargs.templates.0"),
    ({"env_id": SCRAMBLE, "kwargs": {"budget": "100"}}, "kwargs.budget"),
    ({"env_id": SCRAMBLE, "kwargs": {"user": "rule"}}, "kwargs.user"),  # an arena keyword
    ({"env_id": ARENA[0], "wrappers": [{"name": "TemporalWindow", "kwargs": {"k": "3"}}]}, "wrappers.0.kwargs.k"),
    ({"env_id": ARENA[0], "wrappers": [{"name": "MappingDrift", "kwargs": {"fraction": None}}]},
     "wrappers.0.kwargs.fraction"),
    ({"env_id": ARENA[0], "wrappers": [{"name": "Obfuscate", "kwargs": {"nested": "yes"}}]},
     "wrappers.0.kwargs.nested"),
])
def test_a_keyword_of_the_wrong_type_is_a_422_naming_it(url, request_, field):
    status, reply = raw(url, "POST", "/reset", json.dumps(request_).encode())
    assert (status, reply["error"]["code"]) == (422, "VALIDATION_ERROR") and reply["error"]["message"].startswith(field)


def test_typed_keywords_still_reach_the_env(url):
    status, reply = raw(url, "POST", "/reset", json.dumps({"env_id": SCRAMBLE, "seed": 0, "kwargs": {
        "tasks": 2, "templates": ["web_service_audit", "scheduled_backup_audit"], "failure_p": 0, "nested_keys": False}
    }).encode())
    assert status == 200 and "2 tasks" in reply["observation"]
    status, reply = raw(url, "POST", "/reset", json.dumps({"env_id": ARENA[0], "seed": 0, "kwargs": {
        "max_turns": 3, "dynamics": False, "user": "none"}}).encode())
    assert status == 200 and "chat_with_user" not in json.dumps(reply["info"]["tools"])


def test_a_lone_surrogate_an_agent_sends_comes_back_encodable(url):
    session = raw(url, "POST", "/reset", json.dumps({"env_id": "ScrambleTool/Unscrambled", "seed": 0}).encode())[1]
    for action in ({"name": "read_file", "arguments": {"file_path": "/etc/\ud800"}},
                   {"name": "read_file", "arguments": {"\udfff": 1}}, {"name": "\ud83d", "arguments": {}}):
        body = json.dumps({"session_id": session["session_id"], "action": action}).encode()  # \\ud800 on the wire
        status, reply = raw(url, "POST", "/step", body)
        assert status == 200 and "\ufffd" in json.dumps(reply, ensure_ascii=False), reply


def test_a_client_too_slow_to_send_its_request_is_disconnected(url):
    parts = urllib.parse.urlsplit(url)
    slow = [socket.create_connection((parts.hostname, parts.port), timeout=15) for _ in range(40)]
    for i, sock in enumerate(slow):  # half send nothing, half stop halfway through (slowloris)
        if i % 2:
            sock.sendall(b"POST /step HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{\"session_id\": ")
    closed = sum(sock.recv(64) == b"" for sock in slow)  # waits until the server closes each, at most 15 s
    for sock in slow:
        sock.close()
    assert closed == len(slow)
    assert raw(url, "GET", "/health")[0] == 200  # and everyone else is served


def hostile_requests(rng: np.random.Generator, count: int) -> list[tuple[str, object]]:
    """Requests an attacker or a buggy client sends: bodies of every wrong shape, type and size, and actions from
    sttgym.fuzz (every category), for /reset and /step."""
    shapes = [None, [], 1, "x", {"env_id": 7}, {"env_id": ARENA[0], "seed": "1"}, {"env_id": ARENA[0], "seed": 2**70},
              {"env_id": ARENA[0], "options": {"task": 5}}, {"env_id": ARENA[0], "options": {"task": {"query": 1}}},
              {"env_id": ARENA[0], "kwargs": {"max_turns": -1}}, {"env_id": ARENA[0], "wrappers": [{"name": 1}]},
              {"env_id": "\ud800"}, {"env_id": ARENA[0], "kwargs": {"k" * 10_000: 1}},
              {"session_id": ["x"]}, {"session_id": "x", "seed": 0}]
    tools = [{"function": {"name": n, "parameters": {"properties": {"site_id": {"type": "string"}}}}}
             for n in ("list_sites", "get_site", "chat_with_user")]
    out = [("/reset", shape) for shape in shapes]
    for i in range(count - len(out)):
        out.append(("/step", hostile_action(rng, tools, ["DC-1", "CL-2"], CATEGORIES[i % len(CATEGORIES)])))
    return out


def test_hostile_requests_get_no_5xx(url):
    rng = np.random.default_rng(5)
    session = raw(url, "POST", "/reset", json.dumps({"env_id": ARENA[0], "seed": 0}).encode())[1]["session_id"]
    statuses = []
    for path, body in hostile_requests(rng, 300):
        if path == "/step":
            body = {"session_id": session, "action": body}
        try:
            data = json.dumps(body, default=repr).encode()
        except (TypeError, ValueError, RecursionError):  # not JSON at all: what a broken client sends instead
            data = b'{"session_id": "' + session.encode() + b'", "action": {"name": 1e999999'
        status, reply = raw(url, "POST", path, data)
        statuses.append(status)
        assert "error" in reply or status == 200
    assert [s for s in statuses if s >= 500] == [] and statuses.count(200) > 100
