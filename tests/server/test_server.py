"""`sttgym serve` and RemoteEnv on loopback: the same episodes as locally, many clients, clean refusals."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import gymnasium as gym
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import sttgym  # noqa: E402
from sttgym.agents import CycleTracingAgent, NominalAgent, OracleAgent, RandomAgent  # noqa: E402
from sttgym.evaluation.runner import EvalConfig, Runner  # noqa: E402
from sttgym.server import RemoteEnv, RemoteError  # noqa: E402
from sttgym.server.app import running  # noqa: E402
from sttgym.wrappers import MappingDrift, StochasticFailure, TemporalWindow  # noqa: E402
from tests.core.test_architecture import loaded_after  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ARENA = ["STTArena/ColdChain-T2-medium", "STTArena/CarRental-S1-hard", "STTArena/Hotel-ST2-impossible"]


@pytest.fixture(scope="module")
def url():
    with running(privileged=True) as address:
        yield address


def raw(url: str, method: str, path: str, body: bytes | None = None, headers: dict | None = None,
        chunked: bool = False) -> tuple[int, dict]:
    """One request as any HTTP client would send it; the status and the JSON reply."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        connection.request(method, path, iter([body]) if chunked else body,
                           {"Content-Type": "application/json", **(headers or {})}, encode_chunked=chunked)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def same_episode(remote: sttgym.Trajectory, local: sttgym.Trajectory) -> None:
    assert {**remote.to_dict(), "env_id": None} == {**local.to_dict(), "env_id": None}


@pytest.mark.parametrize("agent", [OracleAgent, NominalAgent])
def test_reference_agents_play_the_same_episodes_remotely(url, agent):
    for env_id in ARENA:
        for seed in (0, 3):
            env = RemoteEnv(url, env_id)
            remote = sttgym.rollout(env, agent(), seed=seed)
            env.close()
            same_episode(remote, sttgym.rollout(gym.make(env_id), agent(), seed=seed))
            assert remote.steps  # an episode was played, not only reset


def test_wrapper_stacks_named_in_the_request_match_the_local_stack(url):
    env_id = ARENA[1]
    stack = [("MappingDrift", {"fraction": 0.5}), ("StochasticFailure", {"p": 0.3}), ("TemporalWindow", {"k": 3})]
    remote = sttgym.rollout(RemoteEnv(url, env_id, wrappers=stack), OracleAgent(), seed=1)
    local_env = TemporalWindow(StochasticFailure(MappingDrift(gym.make(env_id), fraction=0.5), p=0.3), k=3)
    local = sttgym.rollout(local_env, OracleAgent(), seed=1)
    same_episode(remote, local)
    assert {"type": "timeout"} in [e for s in remote.steps for e in s["events"]]  # the stack did act


def test_a_scramble_condition_plays_the_same_remotely(url):
    # Plaintext output fields: the cycle-tracing agent reads hidden ones off the local Obfuscate layer, which a
    # remote env does not have.
    env = RemoteEnv(url, "ScrambleTool/All", nested_keys=False)
    remote = sttgym.rollout(env, CycleTracingAgent(), seed=2)
    same_episode(remote, sttgym.rollout(gym.make("ScrambleTool/All", nested_keys=False), CycleTracingAgent(), seed=2))
    assert env.task is None and len(remote.steps) > 20  # no arena task to share; a real episode


def test_a_time_limit_on_the_server_still_scores_the_episode(url):
    remote = sttgym.rollout(RemoteEnv(url, ARENA[0], max_episode_steps=3), OracleAgent(), seed=0)
    local = sttgym.rollout(gym.make(ARENA[0], max_episode_steps=3), OracleAgent(), seed=0)
    assert remote.truncated and len(remote.steps) == 3 and "checklist" in remote.info
    same_episode(remote, local)


def test_malformed_actions_are_answered_as_the_local_env_answers_them(url):
    actions = ["just text", None, 42, [1, 2], {}, {"name": "no_such_tool", "arguments": {}},
               {"name": "list_sites", "arguments": "{not json"}, {"name": "list_sites", "arguments": {"bogus": 1}},
               {"name": "list_sites"}, {"content": 7}, {"content": "Task Completed"}, {"name": "list_sites", "arguments": {}}]
    remote, local = RemoteEnv(url, ARENA[0]), gym.make(ARENA[0])
    assert remote.reset(seed=5) == local.reset(seed=5)
    for action in actions:
        assert remote.step(action) == local.step(action), action
    remote.close()


def test_text_actions_through_the_server(url):
    remote = RemoteEnv(url, ARENA[0], wrappers=["TextActions"])
    observation, info = remote.reset(seed=0)
    call = '<tool_call>{"name": "list_sites", "arguments": {}}</tool_call>'
    observation, *_, info = remote.step(call)
    assert info["result"] and "error" not in info["result"] and remote.action_space.contains(call)
    assert remote.step("<tool_call>{broken</tool_call>")[4]["result"]["error"]
    remote.close()


def test_thirty_two_clients_at_once_each_get_their_own_episodes(url):
    plays = [(ARENA[i % len(ARENA)], i) for i in range(32)]
    open_before = raw(url, "GET", "/health")[1]["sessions"]
    remote: dict[int, sttgym.Trajectory] = {}
    failures: list[BaseException] = []

    def client(env_id: str, seed: int) -> None:
        try:
            env = RemoteEnv(url, env_id)
            for episode in range(2):  # a session replays: reset again for the next episode
                remote[seed + 100 * episode] = sttgym.rollout(env, RandomAgent(max_calls=8), seed=seed + 100 * episode)
            env.close()
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=client, args=play) for play in plays]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not failures, failures[:1]
    for env_id, seed in plays:
        for s in (seed, seed + 100):
            same_episode(remote[s], sttgym.rollout(gym.make(env_id), RandomAgent(max_calls=8), seed=s))
    assert raw(url, "GET", "/health")[1]["sessions"] == open_before  # every client closed its session


def test_a_client_killed_mid_episode_leaves_a_healthy_server_and_its_session_expires():
    client = ("import sys; from sttgym.server import RemoteEnv\n"
              "env = RemoteEnv(sys.argv[1], 'STTArena/ColdChain-T2-medium'); env.reset(seed=0)\n"
              "env.step({'name': 'list_sites', 'arguments': {}}); print(env.session_id, flush=True)\n"
              "import time; time.sleep(60)\n")
    with running(ttl=0.5) as url:
        process = subprocess.Popen([sys.executable, "-c", client, url], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                                   env={**os.environ, "PYTHONPATH": str(ROOT)})
        session = process.stdout.readline().strip()
        process.kill()
        process.wait()
        # A second client dies halfway through sending a request.
        parts = urllib.parse.urlsplit(url)
        with socket.create_connection((parts.hostname, parts.port)) as sock:
            sock.sendall(b"POST /step HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 500\r\n\r\n{\"session_id\": ")
        assert session and raw(url, "GET", "/health")[0] == 200
        deadline = time.monotonic() + 10
        while raw(url, "GET", "/health")[1]["sessions"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert raw(url, "GET", "/health")[1] == {"status": "healthy", "sessions": 0, "max_sessions": 256}
        status, reply = raw(url, "POST", "/step", json.dumps({"session_id": session, "action": {}}).encode())
        assert status == 404 and reply["error"]["code"] == "SESSION_ERROR"
        # A client idle past the ttl gets a new session at its next reset; a step in the lost episode is an error.
        env = RemoteEnv(url, ARENA[0])
        first = env.reset(seed=1)
        time.sleep(0.8)
        with pytest.raises(RemoteError, match="idle for more than"):
            env.step({"content": "done"})
        assert env.reset(seed=1) == first and env.step({"content": "done"})[2]
        env.close()


def test_oversized_requests_are_refused_and_the_session_lives_on():
    with running(max_request_bytes=4096) as url:
        env = RemoteEnv(url, ARENA[0])
        env.reset(seed=0)
        with pytest.raises(RemoteError) as refused:
            env.step({"content": "x" * 5000})
        assert refused.value.status == 413 and refused.value.code == "TOO_LARGE"
        body = json.dumps({"session_id": env.session_id, "action": {"content": "y" * 5000}}).encode()
        status, reply = raw(url, "POST", "/step", body, chunked=True)  # no length declared: counted as it arrives
        assert status == 413 and reply["error"]["code"] == "TOO_LARGE"
        assert env.step({"name": "list_sites", "arguments": {}})[4]["turn"] == 1  # nothing reached the env
        env.close()


@pytest.mark.parametrize("request_, status, code", [
    ({"env_id": "STTArena/NoSuchDomain-T1-easy"}, 404, "FACTORY_ERROR"),
    ({"env_id": "os:STTArena/ColdChain-T2-medium"}, 404, "FACTORY_ERROR"),
    ({"env_id": "CartPole-v1"}, 404, "FACTORY_ERROR"),
    ({"env_id": ARENA[0], "wrappers": [{"name": "Shuffle"}]}, 422, "FACTORY_ERROR"),
    ({"env_id": ARENA[0], "wrappers": [{"name": "MappingDrift", "kwargs": {"fraction": 2}}]}, 422, "FACTORY_ERROR"),
    ({"env_id": ARENA[0], "kwargs": {"no_such_option": 1}}, 422, "VALIDATION_ERROR"),
    ({"env_id": ARENA[0], "seed": -1}, 422, "VALIDATION_ERROR"),
    ({"env_id": ARENA[0], "wrapper": []}, 422, "VALIDATION_ERROR"),
    ({"seed": 0}, 422, "VALIDATION_ERROR"),
    ({"session_id": "nope"}, 404, "SESSION_ERROR"),
])
def test_refused_resets_are_clean_json_errors(url, request_, status, code):
    got, reply = raw(url, "POST", "/reset", json.dumps(request_).encode())
    assert (got, reply["error"]["code"]) == (status, code)
    assert reply["error"]["message"] and "Traceback" not in reply["error"]["message"]


def test_other_refusals_are_clean_json_errors(url):
    assert raw(url, "POST", "/step", b"{not json")[1]["error"]["code"] == "INVALID_JSON"
    nested = b'{"session_id": "x", "action": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    assert raw(url, "POST", "/step", nested)[1]["error"]["code"] == "INVALID_JSON"
    assert raw(url, "POST", "/step", b'{"session_id": "x"}') == (
        422, {"error": {"code": "VALIDATION_ERROR", "message": "action: Field required"}})
    assert raw(url, "POST", "/step", b'{"session_id": "x", "action": {}}')[1]["error"]["code"] == "SESSION_ERROR"
    assert raw(url, "GET", "/state?session_id=x")[0] == 404
    assert raw(url, "GET", "/nowhere") == (404, {"error": {"code": "NOT_FOUND", "message": "Not Found"}})
    session = raw(url, "POST", "/reset", json.dumps({"env_id": ARENA[0]}).encode())[1]["session_id"]
    status, reply = raw(url, "POST", "/reset", json.dumps({"session_id": session, "env_id": ARENA[1]}).encode())
    assert status == 422 and "keeps the env" in reply["error"]["message"]
    assert raw(url, "POST", "/close", json.dumps({"session_id": session}).encode())[1]["closed"] is True
    assert raw(url, "POST", "/close", json.dumps({"session_id": session}).encode())[1]["closed"] is False
    with pytest.raises(RemoteError, match="cannot reach") as unreachable:
        RemoteEnv("http://127.0.0.1:9", ARENA[0], timeout=2).reset()
    assert unreachable.value.code == "UNREACHABLE"


def test_a_full_server_reuses_the_slots_of_ended_episodes_and_refuses_only_when_all_are_running():
    with running(max_sessions=2) as url:
        envs = [RemoteEnv(url, ARENA[0]) for _ in range(4)]
        envs[0].reset(seed=0), envs[0].step({"content": "done"})  # an ended episode
        envs[1].reset(seed=0)  # a running one
        assert envs[2].reset(seed=0) == envs[1].reset(seed=0)  # took the ended episode's slot
        with pytest.raises(RemoteError) as full:
            envs[3].reset(seed=0)
        assert full.value.status == 503 and full.value.code == "CAPACITY_REACHED"
        with pytest.raises(RemoteError, match="SESSION_ERROR"):
            envs[0].step({"content": "again"})  # its session went to envs[2]
        envs[1].close()
        assert envs[3].reset(seed=0) == envs[2].reset(seed=0)
        for env in envs:
            env.close()
        assert raw(url, "GET", "/health")[1]["sessions"] == 0


def test_state_and_metadata_name_what_is_served(url):
    env = RemoteEnv(url, ARENA[0], wrappers=[("MappingDrift", {"fraction": 0.25})])
    env.reset(seed=0)
    env.step({"content": "done"})
    state = env.state()
    assert state["spec"]["id"] == gym.make(ARENA[0]).spec.id and state["episodes"] == 1 and state["done"]
    assert state["spec"]["additional_wrappers"][-1]["name"] == "MappingDrift"
    local = gym.make(ARENA[0])
    local.reset(seed=0)
    assert env.task.model_dump(mode="json") == local.unwrapped.task.model_dump(mode="json")
    assert {n for n, s in env.tools.items() if s.mutates} == {n for n, s in local.unwrapped.tools.items() if s.mutates}
    env.close()
    metadata = raw(url, "GET", "/metadata")[1]
    assert gym.make(ARENA[0]).spec.id in metadata["env_ids"] and "ScrambleTool/All" in " ".join(metadata["env_ids"])
    assert "TemporalWindow" in metadata["wrappers"] and metadata["privileged"] is True


def test_an_unprivileged_server_withholds_the_task():
    with running() as url:
        env = RemoteEnv(url, ARENA[0])
        with pytest.raises(RuntimeError, match="--privileged"):
            sttgym.rollout(env, OracleAgent(), seed=0)
        assert "task" not in env.state() and env.tools  # the tools are no secret
        env.close()


def test_gym_make_builds_a_remote_env_that_passes_gymnasiums_checks(url):
    from gymnasium.utils.env_checker import check_env

    env = gym.make("sttgym/Remote", url=url, env_id=ARENA[0])
    assert env.unwrapped.env_id == ARENA[0] and env.reset(seed=4) == gym.make(ARENA[0]).reset(seed=4)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_an_eval_through_the_server_records_what_a_local_eval_records(url, tmp_path):
    options = {"agent": "nominal", "domains": ("ColdChain", "Hotel"), "limit": 6, "runs": 1,
               "conditions": ("dynamic", "static")}
    local = Runner(EvalConfig(**options), tmp_path / "local").run()
    remote = Runner(EvalConfig(**options, server=url), tmp_path / "remote").run()
    assert len(local) == 12 and any(r["reward"] > 0 for r in local) and "mutating_tools" in local[0]
    assert [{**r, "seconds": 0} for r in remote] == [{**r, "seconds": 0} for r in local]


def test_sttgym_serve_runs_the_server_until_interrupted():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "sttgym", "serve", "--port", str(port), "--ttl", "30"],
                               cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                assert raw(f"http://127.0.0.1:{port}", "GET", "/health")[1]["status"] == "healthy"
                break
            except ConnectionRefusedError:
                assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
                time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
    finally:
        process.kill()


def test_the_client_loads_no_server_stack_and_sttgym_loads_no_client():
    assert not {"fastapi", "uvicorn", "starlette"} & {m.split(".")[0] for m in loaded_after("import sttgym.server")}
    assert not [m for m in loaded_after("import sttgym") if m.startswith("sttgym.server")]


def test_the_remote_rollout_example_finds_every_episode_the_same():
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "remote_rollout.py")], capture_output=True, text=True,
                         timeout=120, check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
    assert out.count("same episode as locally") == 3 and "DIFFERS" not in out and "median step: local" in out


def test_stored_tasks_replay_remotely_and_a_task_of_another_id_is_refused(url):
    stored = gym.make(ARENA[1])
    stored.reset(seed=7)
    task = stored.unwrapped.task.model_dump(mode="json")
    remote = sttgym.rollout(RemoteEnv(url, ARENA[1]), OracleAgent(), seed=0, options={"task": task})
    same_episode(remote, sttgym.rollout(gym.make(ARENA[1]), OracleAgent(), seed=0, options={"task": task}))
    with pytest.raises(RemoteError) as refused:
        RemoteEnv(url, ARENA[0]).reset(options={"task": task})
    assert refused.value.status == 422 and "instance of CarRental-S1-hard" in refused.value.message


def test_sttgym_eval_with_server_writes_the_local_results(url, tmp_path):
    from typer.testing import CliRunner

    from sttgym.cli import app

    args = ["eval", "--agent", "oracle", "--domain", "Hotel", "--limit", "3"]
    for out, extra in (("local", []), ("remote", ["--server", url])):
        result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / out), *extra])
        assert result.exit_code == 0, result.output
    summaries = [json.loads((tmp_path / out / "summary.json").read_text()) for out in ("local", "remote")]
    assert summaries[0] == summaries[1] and summaries[0]["episodes"] == 3
    with pytest.raises(ValueError, match="rule user and judge"):
        EvalConfig(server=url, judge="llm")
