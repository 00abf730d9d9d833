"""The verifiers adapter: the world's tools behind the run's MCP server, episodes scored as in gym, vf-eval."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("verifiers")

import gymnasium as gym  # noqa: E402
import verifiers.v1 as vf  # noqa: E402

from sttgym.adapters.verifiers import (  # noqa: E402
    ArenaChatHarness,
    ArenaConfig,
    ArenaData,
    ArenaState,
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


def _rollout(data: ArenaData, rollout: str = "r") -> ArenaState:
    """A rollout's state as ArenaTask.setup leaves it for the tool server."""
    state = ArenaState()
    asyncio.run(ArenaTask(data).setup(SimpleNamespace(state=state, id=rollout), runtime=None))
    return state


def _tools(toolset: ArenaToolset, state: ArenaState) -> list[dict]:
    """The tools the server lists to the rollout, in the gym env's own format."""
    listing = toolset.respond(state, "tools/list", {}).tools
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.input_schema}} for t in listing]


def _call(toolset: ArenaToolset, state: ArenaState, name: str, arguments: dict) -> str:
    (content,) = toolset.respond(state, "tools/call", {"name": name, "arguments": arguments}).content
    return content.text


def _trace(actions: list[dict], reply: str) -> SimpleNamespace:
    """What the scoring reads of a rollout that played ``actions`` and ended with ``reply``."""
    return SimpleNamespace(state=SimpleNamespace(actions=actions), last_reply=reply)


def _checklist(data: ArenaData, actions: list[dict], reply: str) -> float:
    return asyncio.run(ArenaTask(data).checklist(_trace(actions, reply)))


def _expected_metrics(env_id: str, reward: float, checklist: list[dict]) -> dict[str, float]:
    """The metrics a rollout of ``env_id`` reports when its episode ended with ``reward`` and ``checklist``."""
    domain, _, level = env_id.split("/")[1].split("-")
    solved = float(reward >= 1.0)
    return {"pass": solved, f"pass/{level}": solved, f"pass/{domain}": solved,
            **{f"check/{c['name']}": float(c["passed"]) for c in checklist}}


@pytest.mark.parametrize("user", [True, False])
def test_the_server_advertises_the_gym_envs_tools(user):
    env_id, seed = INSTANCES[0]
    _, info = gym.make(env_id, user="rule" if user else "none").reset(seed=seed)
    state = _rollout(ArenaData(env_id=env_id, seed=seed, user=user))
    advertised = _tools(ArenaToolset(vf.SharedToolsetConfig()), state)
    assert advertised == info["tools"]
    assert ("chat_with_user" in {t["function"]["name"] for t in advertised}) == user


@pytest.mark.parametrize("env_id,seed", INSTANCES)
def test_the_oracle_through_the_server_sees_and_scores_what_it_does_in_gym(env_id, seed):
    reference = rollout(gym.make(env_id), OracleAgent(), seed=seed)
    data = ArenaData(env_id=env_id, seed=seed)
    toolset, state = ArenaToolset(vf.SharedToolsetConfig()), _rollout(data)
    calls = [step["action"] for step in reference.steps if "name" in step["action"]]
    (reply,) = [step["action"]["content"] for step in reference.steps if "content" in step["action"]]
    observations = [_call(toolset, state, call["name"], call["arguments"]) for call in calls]
    assert observations == [step["observation"] for step in reference.steps[:len(calls)]]
    assert state.actions == calls  # what the scoring replays
    assert _checklist(data, calls, reply) == reference.reward
    metrics = asyncio.run(ArenaTask(data).breakdown(_trace(calls, reply)))
    assert metrics == _expected_metrics(env_id, reference.reward, reference.info["checklist"])
    assert metrics["pass"] == 1.0 and len([k for k in metrics if k.startswith("check/")]) >= 3
    # the reward is the env's own: without the calls the same reply scores what it scores in gym
    bare = rollout(gym.make(env_id), _Replier(reply), seed=seed)
    assert _checklist(data, [], reply) == bare.reward
    assert bare.reward != reference.reward or env_id.endswith("impossible")
    metrics = asyncio.run(ArenaTask(data).breakdown(_trace([], reply)))
    assert metrics == _expected_metrics(env_id, bare.reward, bare.info["checklist"])
    assert metrics["pass"] == 0.0 and 0.0 in {v for k, v in metrics.items() if k.startswith("check/")}


class _Replier:
    def __init__(self, reply: str):
        self.reply = reply

    def reset(self, *args, **kwargs):
        pass

    def act(self, observation, info):
        return {"content": self.reply}


def test_a_wrong_call_gets_the_envs_error_text_and_counts_as_in_gym():
    env_id, seed = INSTANCES[0]
    toolset, state = ArenaToolset(vf.SharedToolsetConfig()), _rollout(ArenaData(env_id=env_id, seed=seed, max_turns=2))
    env = gym.make(env_id, max_turns=2)
    env.reset(seed=seed)
    wrong = {"name": "add_or_update_route_plan", "arguments": {"vehicle_id": 7}}
    text = _call(toolset, state, wrong["name"], wrong["arguments"])
    assert text == env.step(wrong)[0] and json.loads(text)["success"] is False
    assert "route_plan" in json.loads(text)["error"]
    task = ArenaTask(ArenaData(env_id=env_id, seed=seed, max_turns=2))
    assert not asyncio.run(task.turn_cap(SimpleNamespace(state=SimpleNamespace(actions=[wrong]))))
    _call(toolset, state, wrong["name"], wrong["arguments"])  # the second call reaches the turn cap: the rollout stops
    assert asyncio.run(task.turn_cap(SimpleNamespace(state=state)))
    assert _call(toolset, state, wrong["name"], wrong["arguments"]) == "The conversation has ended."


def test_one_server_plays_each_rollout_on_its_own_env_and_rebuilds_one_it_let_go():
    """The run's single tool server: interleaved rollouts do not see each other's calls, and a rollout
    whose env was dropped (more rollouts in flight than it holds) goes on from its state's calls."""
    env_id, seed = INSTANCES[0]
    oracle = [step["action"] for step in rollout(gym.make(env_id), OracleAgent(), seed=seed).steps
              if "name" in step["action"]]
    env = gym.make(env_id)
    env.reset(seed=seed)
    expected = [env.step(call)[0] for call in oracle]
    toolset = ArenaToolset(vf.SharedToolsetConfig())
    toolset.HELD = 1
    first, second = (_rollout(ArenaData(env_id=env_id, seed=seed), rollout) for rollout in ("a", "b"))
    seen = {"a": [], "b": []}
    for call in oracle:  # in turn: each call of one rollout evicts the other's env
        for name, state in (("a", first), ("b", second)):
            seen[name].append(_call(toolset, state, call["name"], call["arguments"]))
    assert seen == {"a": expected, "b": expected} and len(toolset.envs) == 1
    assert first.actions == second.actions == oracle
    assert len(set(expected)) > 1  # the calls change the world: a replay that lost or doubled one would show
    with pytest.raises(ValueError, match="no arena task"):
        toolset.respond(ArenaState(), "tools/list", {})


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
    scripts, expected, tools, metrics = {}, {}, {}, {}
    for k, (env_id, seed) in enumerate(instances):
        oracle_actions = [step["action"] for step in rollout(gym.make(env_id), OracleAgent(), seed=seed).steps]
        actions = oracle_actions if k == 0 else [wrong, *oracle_actions[:-2], oracle_actions[-1]]
        env = gym.make(env_id)
        request, info = env.reset(seed=seed)
        played = [env.step(action) for action in actions]
        scripts[request], tools[request] = actions, info["tools"]
        expected[f"{env_id}@{seed}"] = (played[-1][1], played[0][0])  # the reward; the first observation
        metrics[f"{env_id}@{seed}"] = _expected_metrics(env_id, played[-1][1], played[-1][4]["checklist"])
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
    # Pass@1, level, domain and every check, reported beside the reward and left out of it
    reported = {episode["task"]["data"]["id"]: episode["traces"][0]["metrics"] for episode in episodes}
    assert reported == metrics and {m["pass"] for m in reported.values()} == {0.0, 1.0}
    assert any(value == 0.0 for m in reported.values() for name, value in m.items() if name.startswith("check/"))
    assert {name for episode in episodes for name in episode["traces"][0]["rewards"]} == {"checklist"}
    # one tool server for the run, started before the rollouts: none of them waits for a process of its own
    log = (tmp_path / "run" / "logs" / "latest" / "eval.log").read_text()
    (url,) = re.findall(r"shared tool server '': (\S+)", log)
    assert re.findall(r"tool server '' \(shared\): (\S+)", log) == [url, url]
    assert len(server.requests) == sum(len(actions) for actions in scripts.values())
    for body in server.requests:  # the model sees the gym env's tools, and after a call the env's answer
        request = next(m["content"] for m in body["messages"] if m["role"] == "user")
        assert body["tools"] == tools[request]
    second = [body["messages"] for body in server.requests if len(body["messages"]) == 4
              and body["messages"][1]["content"] == list(scripts)[1]]
    assert [messages[-1]["content"] for messages in second] == [list(expected.values())[1][1]]
