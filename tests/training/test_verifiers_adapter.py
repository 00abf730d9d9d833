"""The verifiers adapter: the world's tools behind the rollout's MCP server, episodes scored as in gym, vf-eval."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("verifiers")

import gymnasium as gym  # noqa: E402
import verifiers.v1 as vf  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402

from sttgym.adapters.verifiers import (  # noqa: E402
    ArenaChatHarness,
    ArenaConfig,
    ArenaData,
    ArenaTask,
    ArenaTaskset,
    ArenaToolset,
    load_environment,
)
from sttgym.agents import OracleAgent  # noqa: E402
from sttgym.manifests import TRAINING_SEED_START  # noqa: E402
from sttgym.models.base import ChatResponse  # noqa: E402
from sttgym.rollout import rollout  # noqa: E402
from tests.models.fake_server import FakeServer  # noqa: E402

INSTANCES = [("STTArena/ColdChain-T1-easy", TRAINING_SEED_START), ("STTArena/Hotel-S2-medium", TRAINING_SEED_START + 1),
             ("STTArena/Airline-T2-impossible", TRAINING_SEED_START + 2)]


def _server(data: ArenaData) -> MCPServer:
    """The rollout's tool server, registered in-process as verifiers' MCP process does after its task arrives."""
    toolset = ArenaToolset(vf.ToolsetConfig())
    asyncio.run(toolset.setup_task(data))
    server = MCPServer("arena")
    toolset.register(server)
    return server


def _call(server: MCPServer, name: str, arguments: dict) -> str:
    (content,) = asyncio.run(server.call_tool(name, arguments)).content
    return content.text


def _checklist(data: ArenaData, actions: list[dict], reply: str) -> float:
    """The task's reward for a rollout that played ``actions`` and ended with ``reply`` (what the trace carries)."""
    trace = SimpleNamespace(state=SimpleNamespace(actions=actions), last_reply=reply)
    return asyncio.run(ArenaTask(data).checklist(trace))


@pytest.mark.parametrize("user", [True, False])
def test_the_server_advertises_the_gym_envs_tools(user):
    env_id, seed = INSTANCES[0]
    _, info = gym.make(env_id, user="rule" if user else "none").reset(seed=seed)
    advertised = asyncio.run(_server(ArenaData(env_id=env_id, seed=seed, user=user)).list_tools())
    assert [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.input_schema}} for t in advertised] == info["tools"]
    assert ("chat_with_user" in {t.name for t in advertised}) == user


@pytest.mark.parametrize("env_id,seed", INSTANCES)
def test_the_oracle_through_the_server_sees_and_scores_what_it_does_in_gym(env_id, seed):
    reference = rollout(gym.make(env_id), OracleAgent(), seed=seed)
    data = ArenaData(env_id=env_id, seed=seed)
    server = _server(data)
    calls = [step["action"] for step in reference.steps if "name" in step["action"]]
    (reply,) = [step["action"]["content"] for step in reference.steps if "content" in step["action"]]
    observations = [_call(server, call["name"], call["arguments"]) for call in calls]
    assert observations == [step["observation"] for step in reference.steps[:len(calls)]]
    assert _checklist(data, calls, reply) == reference.reward
    # the reward is the env's own: without the calls the same reply scores what it scores in gym
    bare = rollout(gym.make(env_id), _Replier(reply), seed=seed).reward
    assert _checklist(data, [], reply) == bare
    assert bare != reference.reward or env_id.endswith("impossible")


class _Replier:
    def __init__(self, reply: str):
        self.reply = reply

    def reset(self, *args, **kwargs):
        pass

    def act(self, observation, info):
        return {"content": self.reply}


def test_a_wrong_call_gets_the_envs_error_text_and_counts_as_in_gym():
    env_id, seed = INSTANCES[0]
    server = _server(ArenaData(env_id=env_id, seed=seed, max_turns=2))
    env = gym.make(env_id, max_turns=2)
    env.reset(seed=seed)
    wrong = {"name": "add_or_update_route_plan", "arguments": {"vehicle_id": 7}}
    text = _call(server, wrong["name"], wrong["arguments"])
    assert text == env.step(wrong)[0] and json.loads(text)["success"] is False
    assert "route_plan" in json.loads(text)["error"]
    task = ArenaTask(ArenaData(env_id=env_id, seed=seed, max_turns=2))
    assert not asyncio.run(task.turn_cap(SimpleNamespace(state=SimpleNamespace(actions=[wrong]))))
    _call(server, wrong["name"], wrong["arguments"])  # the second call reaches the turn cap: the rollout stops
    assert asyncio.run(task.turn_cap(SimpleNamespace(state=SimpleNamespace(actions=[wrong] * 2))))
    assert _call(server, wrong["name"], wrong["arguments"]) == "The conversation has ended."


def test_the_taskset_selects_manifest_or_training_instances():
    benchmark = ArenaTaskset(ArenaConfig(id="sttgym-arena", domains=["ColdChain"], levels=["easy"], conflicts=["T1"]))
    assert benchmark.instances() and {e for e, _ in benchmark.instances()} == {"STTArena/ColdChain-T1-easy"}
    assert all(seed < TRAINING_SEED_START for _, seed in benchmark.instances())
    training = ArenaTaskset(ArenaConfig(id="sttgym-arena", domains=["Hotel"], levels=["hard"], training_seeds=2))
    assert training.instances()[:2] == [("STTArena/Hotel-T1-hard", TRAINING_SEED_START),
                                        ("STTArena/Hotel-T1-hard", TRAINING_SEED_START + 1)]
    task = next(iter(training))
    env_id, seed = training.instances()[0]
    assert task.data.prompt == gym.make(env_id).reset(seed=seed)[0]
    assert task.data.id == f"{env_id}@{seed}" and "chat_with_user" in task.data.system_prompt
    with pytest.raises(ValueError, match="unknown domain"):
        ArenaTaskset(ArenaConfig(id="sttgym-arena", domains=["Atlantis"])).instances()
    with pytest.raises(ValueError, match="no arena instance"):
        ArenaTaskset(ArenaConfig(id="sttgym-arena", domains=["Hotel"], levels=["trivial"])).instances()


def test_load_environment_is_the_python_entry():
    env = load_environment(domains=["Hotel"], levels=["easy"], training_seeds=1, user=False, max_turns=9)
    assert isinstance(env, vf.SingleAgentEnv) and isinstance(env.taskset, ArenaTaskset)
    assert isinstance(env._harnesses["agent"], ArenaChatHarness)  # verifiers' chat loop, not its bash default
    data = next(iter(env.taskset)).data
    assert (data.env_id, data.seed, data.user, data.max_turns) == ("STTArena/Hotel-T1-easy", TRAINING_SEED_START,
                                                                  False, 9)
    assert "chat_with_user" not in data.system_prompt


def test_vf_eval_plays_two_tasks_against_a_scripted_model(tmp_path):
    """vf-eval resolves sttgym-arena, runs verifiers' chat harness on the local runtime, scores as gym does."""
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "vf-eval").exists() or not shutil.which("uv", path=f"{bin_dir}{os.pathsep}{os.environ['PATH']}"):
        pytest.skip("vf-eval's chat harness runs as a uv script: needs vf-eval and uv beside this interpreter")
    config = ArenaConfig(id="sttgym-arena", domains=["ColdChain"], levels=["easy"])
    instances = ArenaTaskset(config).instances()[:2]
    # the first task: the oracle's episode; the second: a wrong call first, and the oracle's last call left out
    wrong = {"name": "add_or_update_route_plan", "arguments": {"vehicle_id": 7}}
    scripts, expected, tools = {}, {}, {}
    for k, (env_id, seed) in enumerate(instances):
        oracle_actions = [step["action"] for step in rollout(gym.make(env_id), OracleAgent(), seed=seed).steps]
        actions = oracle_actions if k == 0 else [wrong, *oracle_actions[:-2], oracle_actions[-1]]
        env = gym.make(env_id)
        request, info = env.reset(seed=seed)
        played = [env.step(action) for action in actions]
        scripts[request], tools[request] = actions, info["tools"]
        expected[f"{env_id}@{seed}"] = (played[-1][1], played[0][0])  # the reward; the first observation
    full, partial = (reward for reward, _ in expected.values())
    assert full == 1.0 and 0.0 < partial < 1.0  # a score the replay can only match by playing every call

    def oracle(messages: list[dict]) -> ChatResponse:
        request = next(m["content"] for m in messages if m["role"] == "user")
        action = scripts[request][sum(m["role"] == "assistant" for m in messages)]
        return ChatResponse(tool_calls=[action]) if "name" in action else ChatResponse(content=action["content"])

    with FakeServer(oracle, lifetime=300) as server:
        result = subprocess.run(
            [str(bin_dir / "vf-eval"), "sttgym-arena", "-n", "2", "--model", "scripted",
             "--client.base-url", server.url, "--no-push", "--no-rich", "-o", str(tmp_path), "--run.name", "run",
             "--env.taskset.domains", '["ColdChain"]', "--env.taskset.levels", '["easy"]',
             "--env.agent.runtime.type", "subprocess"],
            capture_output=True, text=True, timeout=280,
            env={**os.environ, "PRIME_API_KEY": "unused", "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
                 "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parents[2]),
                                                             os.environ.get("PYTHONPATH")]))})
    assert result.returncode == 0, result.stderr[-3000:]
    episodes = [json.loads(line) for line in (tmp_path / "run" / "traces.jsonl").read_text().splitlines()]
    assert {episode["task"]["data"]["id"]: episode["traces"][0]["rewards"]["checklist"]["score"]
            for episode in episodes} == {task: reward for task, (reward, _) in expected.items()}
    assert len(server.requests) == sum(len(actions) for actions in scripts.values())
    for body in server.requests:  # the model sees the gym env's tools, and after a call the env's answer
        request = next(m["content"] for m in body["messages"] if m["role"] == "user")
        assert body["tools"] == tools[request]
    second = [body["messages"] for body in server.requests if len(body["messages"]) == 4
              and body["messages"][1]["content"] == list(scripts)[1]]
    assert [messages[-1]["content"] for messages in second] == [list(expected.values())[1][1]]
