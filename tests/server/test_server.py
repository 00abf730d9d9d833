"""`sttgym serve` and RemoteEnv on loopback: the same episodes as locally, many clients, clean refusals.

OpenEnv's own client, validator and an MCP client are in tests/server/test_openenv.py."""

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

pytest.importorskip("openenv")  # the server is OpenEnv's (the serve extra)

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


def test_malformed_calls_are_answered_as_locally_and_other_shapes_are_refused(url):
    calls = [{"name": "no_such_tool", "arguments": {}}, {"name": "list_sites", "arguments": "{not json"},
             {"name": "list_sites", "arguments": {"bogus": 1}}, {"name": "list_sites"}, {"content": "Task Completed"},
             {"name": "list_sites", "arguments": {}}]
    remote, local = RemoteEnv(url, ARENA[0]), gym.make(ARENA[0])
    assert remote.reset(seed=5) == local.reset(seed=5)
    for action in calls:
        assert remote.step(action) == local.step(action), action
    remote.reset(seed=5)
    for action in [None, 42, [1, 2], {}, {"content": 7}, {"name": "list_sites", "arguments": {},
                                                                       "extra": 1}]:
        with pytest.raises(RemoteError) as refused:  # the server's actions are typed: these never reach the env
            remote.step(action)
        assert refused.value.code == "VALIDATION_ERROR", action
    assert remote.step({"name": "list_sites", "arguments": {}})[4]["turn"] == 1
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


def test_a_client_killed_mid_episode_frees_its_session_and_leaves_a_healthy_server():
    client = ("import sys; from sttgym.server import RemoteEnv\n"
              "env = RemoteEnv(sys.argv[1], 'STTArena/ColdChain-T2-medium'); env.reset(seed=0)\n"
              "env.step({'name': 'list_sites', 'arguments': {}}); print(env.episode_id, flush=True)\n"
              "import time; time.sleep(60)\n")
    with running(max_sessions=1) as url:
        process = subprocess.Popen([sys.executable, "-c", client, url], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                                   env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert process.stdout.readline().strip()
        with pytest.raises(RemoteError) as full:  # the one slot is the live client's
            RemoteEnv(url, ARENA[0]).reset(seed=0)
        assert full.value.code == "CAPACITY_REACHED"
        process.kill()
        process.wait()
        # A second client dies halfway through sending a request.
        parts = urllib.parse.urlsplit(url)
        with socket.create_connection((parts.hostname, parts.port)) as sock:
            sock.sendall(b"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 500\r\n\r\n{\"seed\": ")
        assert raw(url, "GET", "/health") == (200, {"status": "healthy"})
        env, deadline = RemoteEnv(url, ARENA[0]), time.monotonic() + 10
        while True:  # the dead client's session is freed as soon as the server sees its socket close
            try:
                first = env.reset(seed=1)
                break
            except RemoteError as exc:
                assert exc.code == "CAPACITY_REACHED" and time.monotonic() < deadline
                time.sleep(0.05)
        assert env.step({"content": "done"})[2] and env.reset(seed=1) == first
        env.close()


def test_oversized_requests_are_refused():
    with running(max_request_bytes=4096) as url:
        body = json.dumps({"env_id": ARENA[0], "options": {"task": "x" * 5000}}).encode()
        for chunked in (False, True):  # with no length declared, the body is counted as it arrives
            status, reply = raw(url, "POST", "/reset", body, chunked=chunked)
            assert status == 413 and reply["error"]["code"] == "TOO_LARGE"
        env = RemoteEnv(url, ARENA[0])
        env.reset(seed=0)
        with pytest.raises(RemoteError):  # a WebSocket message over the bound closes the session
            env.step({"content": "x" * 5000})
        assert env.reset(seed=0)[0] and env.step({"name": "list_sites", "arguments": {}})[4]["turn"] == 1
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
    ({"env_id": ARENA[0], "episode_id": "x" * 300}, 422, "VALIDATION_ERROR"),
    ({"seed": 0}, 422, "VALIDATION_ERROR"),  # this server has no default env
])
def test_refused_resets_are_clean_json_errors(url, request_, status, code):
    got, reply = raw(url, "POST", "/reset", json.dumps(request_).encode())
    assert (got, reply["error"]["code"]) == (status, code)
    assert reply["error"]["message"] and "Traceback" not in reply["error"]["message"]


def test_other_refusals_are_clean_json_errors(url):
    assert raw(url, "POST", "/step", b"{not json")[1]["error"]["code"] == "INVALID_JSON"
    nested = b'{"action": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    assert raw(url, "POST", "/step", nested)[1]["error"]["code"] == "INVALID_JSON"
    assert raw(url, "POST", "/step", b'{"request_id": "x"}') == (
        422, {"error": {"code": "VALIDATION_ERROR", "message": "action: Field required"}})
    assert raw(url, "POST", "/step", b'{"action": {"content": 7}}') == (
        422, {"error": {"code": "VALIDATION_ERROR", "message": "action: content: Input should be a valid string"}})
    status, reply = raw(url, "POST", "/step", b'{"action": {"content": "done"}}')  # HTTP is stateless, as OpenEnv's
    assert status == 409 and reply["error"]["code"] == "SESSION_ERROR" and "/ws" in reply["error"]["message"]
    assert raw(url, "GET", "/nowhere") == (404, {"error": {"code": "NOT_FOUND", "message": "Not Found"}})
    assert raw(url, "POST", "/episodes/nope/mcp", b"{}")[1]["error"]["code"] == "SESSION_ERROR"
    with pytest.raises(RemoteError, match="cannot reach") as unreachable:
        RemoteEnv("http://127.0.0.1:9", ARENA[0], timeout=2).reset()
    assert unreachable.value.code == "UNREACHABLE"


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
    envs = raw(url, "GET", "/envs")[1]
    assert gym.make(ARENA[0]).spec.id in envs["env_ids"] and "ScrambleTool/All" in " ".join(envs["env_ids"])
    assert "TemporalWindow" in envs["wrappers"] and envs["privileged"] is True and envs["default_env_id"] is None
    assert raw(url, "GET", "/metadata")[1]["version"] == sttgym.__version__


def test_an_unprivileged_server_withholds_the_task():
    with running() as url:
        env = RemoteEnv(url, ARENA[0])
        with pytest.raises(RuntimeError, match="--privileged"):
            sttgym.rollout(env, OracleAgent(), seed=0)
        assert env.state()["task"] is None and env.tools  # the tools are no secret
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
    process = subprocess.Popen([sys.executable, "-m", "sttgym", "serve", "--port", str(port), "--ttl", "30",
                                "--env-id", ARENA[0]],
                               cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60  # importing OpenEnv's server takes seconds on a busy machine
        while True:
            try:
                assert raw(f"http://127.0.0.1:{port}", "GET", "/health")[1]["status"] == "healthy"
                break
            except ConnectionRefusedError:
                assert process.poll() is None, process.stderr.read()
                assert time.monotonic() < deadline, "the server did not start within 60 s"
                time.sleep(0.1)
        status, reply = raw(f"http://127.0.0.1:{port}", "POST", "/reset", b'{"seed": 4}')  # the default env
        assert status == 200 and reply["observation"]["text"] == gym.make(ARENA[0]).reset(seed=4)[0]
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
    finally:
        process.kill()


@pytest.mark.parametrize("args, says", [(["--env-id", "STTArena/NoSuch-T1-easy"], "is not a registered"),
                                        (["--env-id", "os:STTArena/ColdChain-T2-medium"], "names a module"),
                                        (["--port", "70000"], "--port")])
def test_sttgym_serve_refuses_bad_input_in_one_line(args, says):
    from typer.testing import CliRunner

    from sttgym.cli import app

    result = CliRunner().invoke(app, ["serve", *args])
    assert result.exit_code == 2 and says in " ".join(result.output.split()) and "Traceback" not in result.output


def test_the_client_loads_no_server_stack_and_sttgym_loads_no_client():
    assert not {"fastapi", "uvicorn", "starlette", "openenv", "mcp"} & {
        m.split(".")[0] for m in loaded_after("import sttgym.server")}
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


def test_sttgym_eval_refuses_a_server_that_cannot_play_the_run_in_one_line(tmp_path):
    from typer.testing import CliRunner

    from sttgym.cli import app

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        free = f"http://127.0.0.1:{probe.getsockname()[1]}"
    args = ["eval", "--agent", "cycle-tracing", "--domain", "Hotel", "--limit", "2"]
    with running() as unprivileged:
        for server, says in ((unprivileged, "start it with --privileged"), (free, "cannot reach the sttgym server")):
            result = CliRunner().invoke(app, [*args, "--server", server, "--out", str(tmp_path / "run")])
            assert result.exit_code == 2 and says in " ".join(result.output.split()), result.output
            assert "Traceback" not in result.output and not (tmp_path / "run" / "trajectories.jsonl").exists()
