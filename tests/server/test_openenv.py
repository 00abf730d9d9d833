"""`sttgym serve` with OpenEnv's own tools and an MCP client: its validator, its client, and the `mcp` package's
client each play against the server, and every episode is the local one."""

from __future__ import annotations

import asyncio
import json

import gymnasium as gym
import pytest

pytest.importorskip("openenv")
pytest.importorskip("mcp")

import sttgym  # noqa: E402
from sttgym.agents import OracleAgent  # noqa: E402
from sttgym.server.app import running  # noqa: E402
from tests.server.test_server import ARENA, raw  # noqa: E402


@pytest.fixture(scope="module")
def url():
    with running(env_id=ARENA[0]) as address:
        yield address


def test_openenv_validate_passes_every_check(url):
    from openenv.cli._validation import validate_running_environment  # what `openenv validate --url` runs

    report = validate_running_environment(url)
    assert report["passed"], [c for c in report["criteria"] if not c["passed"]]
    assert report["summary"]["passed_count"] == report["summary"]["total_count"] == 6
    assert report["mode"] == "simulation" and report["standard_version"] == sttgym.__version__


def test_the_schema_and_standard_request_fields(url):
    schema = raw(url, "GET", "/schema")[1]
    assert {"name", "arguments", "content", "text"} <= set(schema["action"]["properties"])
    assert {"text", "info", "reward", "done", "metadata"} <= set(schema["observation"]["properties"])
    assert {"env_id", "task", "step_count", "episode_id"} <= set(schema["state"]["properties"])
    status, reply = raw(url, "POST", "/reset", json.dumps({"seed": 3, "episode_id": "ep-7"}).encode())
    assert status == 200 and reply["observation"]["metadata"]["episode_id"] == "ep-7" and reply["done"] is False
    assert reply["observation"]["text"] == gym.make(ARENA[0]).reset(seed=3)[0]  # the server's default env
    status, reply = raw(url, "POST", "/step", json.dumps({"action": {"content": "done"}, "timeout_s": 5,
                                                          "request_id": "r-1", "bogus": 1}).encode())
    assert (status, reply["error"]["code"]) == (422, "VALIDATION_ERROR") and "bogus" in reply["error"]["message"]


def oracle_calls(env_id: str, seed: int) -> tuple[list[dict], list[tuple], dict]:
    """The oracle's actions on the local env, each step it got, and its final info."""
    local, agent = gym.make(env_id), OracleAgent()
    observation, info = local.reset(seed=seed)
    agent.reset(observation, info, env=local)
    actions, steps = [], []
    while True:
        action = agent.act(observation, info)
        observation, reward, terminated, truncated, info = local.step(action)
        actions.append(action)
        steps.append((observation, reward, terminated or truncated))
        if terminated or truncated:
            return actions, steps, info


def test_openenv_generic_client_plays_the_local_episode(url):
    from openenv.core import GenericEnvClient

    env_id, seed = ARENA[1], 3
    local = gym.make(env_id)
    first, first_info = local.reset(seed=seed)
    actions, steps, final = oracle_calls(env_id, seed)
    with GenericEnvClient(base_url=url).sync() as client:
        result = client.reset(env_id=env_id, seed=seed, episode_id="ep-1")
        assert (result.observation["text"], result.observation["info"]) == (first, first_info)
        assert result.reward is None and not result.done
        for action, (observation, reward, done) in zip(actions, steps):
            result = client.step(action)
            assert (result.observation["text"], result.reward, result.done) == (observation, reward, done)
        assert result.observation["info"] == final and result.reward == 1.0 and "checklist" in final
        state = client.state()
        assert (state["env_id"], state["episode_id"], state["step_count"], state["done"]) == (
            env_id, "ep-1", len(actions), True)
        assert "task" not in state or state["task"] is None  # not a privileged server


async def play_over_mcp(address: str, actions: list[dict]) -> tuple[list, list]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with streamable_http_client(address) as (read, write, _), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        results = [await session.call_tool(a["name"], a["arguments"]) for a in actions]
        return tools, results


def closed_soon(gone, tries: int = 100) -> bool:
    """Whether ``gone()`` holds within ``tries`` looks a twentieth of a second apart."""
    import time

    for _ in range(tries):
        if gone():
            return True
        time.sleep(0.05)
    return False


def test_an_mcp_client_lists_the_tools_and_plays_the_episode_to_its_reward(url):
    from openenv.core import GenericEnvClient

    env_id, seed = ARENA[0], 2
    actions, steps, final = oracle_calls(env_id, seed)
    *calls, reply = actions
    assert reply.keys() == {"content"} and calls  # the oracle calls tools, then replies
    shown = gym.make(env_id).reset(seed=seed)[1]["tools"]  # what a local agent is shown
    with GenericEnvClient(base_url=url).sync() as client:  # the harness opens the episode over OpenEnv ...
        path = client.reset(env_id=env_id, seed=seed).observation["metadata"]["mcp"]
        tools, results = asyncio.run(play_over_mcp(url + path, calls))  # ... the agent plays its tools over MCP
        listed = {t.name: (t.description, t.inputSchema) for t in tools}
        assert listed == {t["function"]["name"]: (t["function"]["description"], t["function"]["parameters"])
                          for t in shown}
        for result, (observation, reward, done) in zip(results, steps):
            assert result.content[0].text == observation and not result.isError
            assert (result.meta["sttgym"]["reward"], result.meta["sttgym"]["done"]) == (reward, done)
        assert client.state()["step_count"] == len(calls)  # each call was a step of the session's episode
        end = client.step(reply)  # ... and the harness sends the final reply: the reward, the checklist
        assert end.done and end.reward == steps[-1][1] == 1.0 and end.observation["info"] == final
    # the session closes with its client, its tools with it; the server sees the socket close a moment later
    assert closed_soon(lambda: raw(url, "POST", path, b"{}")[0] == 404)


def test_an_mcp_call_a_tool_refuses_is_an_error_result_and_still_a_step(url):
    from openenv.core import GenericEnvClient

    with GenericEnvClient(base_url=url).sync() as client:
        path = client.reset(seed=0).observation["metadata"]["mcp"]
        _, [result] = asyncio.run(play_over_mcp(url + path, [{"name": "get_site", "arguments": {"site_id": 5}}]))
        local = gym.make(ARENA[0])
        local.reset(seed=0)
        assert result.isError and result.content[0].text == local.step(
            {"name": "get_site", "arguments": {"site_id": 5}})[0]
        assert client.state()["step_count"] == 1
