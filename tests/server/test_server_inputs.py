"""Every request a server takes is typed and bounded, and every reply it gives is encodable: wrong types are a 422
naming the field, never a 500 from inside the env; a lone surrogate an agent sends comes back as U+FFFD; a client
too slow to send its request is disconnected; and a battery of hostile requests and messages gets no server error."""

from __future__ import annotations

import json
import socket
import urllib.parse

import numpy as np
import pytest

pytest.importorskip("openenv")

from sttgym.fuzz import CATEGORIES, hostile_action  # noqa: E402
from sttgym.server.app import MAX_REQUEST_BYTES, running  # noqa: E402
from sttgym.server.client import _Closed, _WebSocket  # noqa: E402
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
    assert status == 200 and "2 tasks" in reply["observation"]["text"]
    status, reply = raw(url, "POST", "/reset", json.dumps({"env_id": ARENA[0], "seed": 0, "kwargs": {
        "max_turns": 3, "dynamics": False, "user": "none"}}).encode())
    assert status == 200 and "chat_with_user" not in json.dumps(reply["observation"]["info"]["tools"])


def session(url: str, env_id: str) -> _WebSocket:
    """An OpenEnv session (a WebSocket) reset on ``env_id``, to send it messages of any shape."""
    parts = urllib.parse.urlsplit(url)
    ws = _WebSocket("http", parts.hostname, parts.port, "/ws", timeout=10)
    ws.send(json.dumps({"type": "reset", "data": {"env_id": env_id, "seed": 0}}))
    assert json.loads(ws.receive())["type"] == "observation"
    return ws


def test_a_lone_surrogate_an_agent_sends_comes_back_encodable(url):
    ws = session(url, "ScrambleTool/Unscrambled")
    for action in ({"name": "read_file", "arguments": {"file_path": "/etc/\ud800"}},
                   {"name": "read_file", "arguments": {"\udfff": 1}}, {"name": "\ud83d", "arguments": {}}):
        ws.send(json.dumps({"type": "step", "data": action}))  # \\ud800 on the wire
        reply = json.loads(ws.receive())
        assert reply["type"] == "observation" and "\ufffd" in json.dumps(reply, ensure_ascii=False), reply
    ws.close()


def test_a_client_too_slow_to_send_its_request_is_disconnected(url):
    ws = session(url, ARENA[0])
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
    ws.send(json.dumps({"type": "step", "data": {"name": "list_sites", "arguments": {}}}))  # a session is no request:
    assert json.loads(ws.receive())["type"] == "observation"  # it outlives the deadline
    ws.close()


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


def test_hostile_requests_get_no_server_error(url):
    rng = np.random.default_rng(5)
    ws, statuses, kinds = session(url, ARENA[0]), [], []
    for path, body in hostile_requests(rng, 300):
        try:
            data = json.dumps(body, default=repr)
        except (TypeError, ValueError, RecursionError):  # not JSON at all: what a broken client sends instead
            data = '{"name": 1e999999'
        if path == "/reset":
            status, reply = raw(url, "POST", path, data.encode())
            statuses.append(status)
            assert "error" in reply or status == 200
        else:
            message = '{"type": "step", "data": ' + data + "}"
            if len(message) > MAX_REQUEST_BYTES:  # a message over the bound closes its session, maybe mid-send
                with pytest.raises((_Closed, OSError)):
                    ws.send(message)
                    ws.receive()
                ws, kind = session(url, ARENA[0]), "closed"
            else:
                ws.send(message)
                reply = json.loads(ws.receive())
                kind = reply["type"] if reply["type"] == "observation" else reply["data"]["code"]
                if kind == "SESSION_ERROR":  # OpenEnv ends a session whose message it cannot parse (nested too deep)
                    ws.close()
                    ws, kind = session(url, ARENA[0]), "closed"
            kinds.append(kind)
    ws.close()
    assert statuses and [s for s in statuses if s >= 500] == []
    assert set(kinds) <= {"observation", "VALIDATION_ERROR", "INVALID_JSON", "closed"}
    assert kinds.count("observation") > 100 and "closed" in kinds
