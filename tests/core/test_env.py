import copy
import pickle

import gymnasium as gym
import pytest

import sttgym
from sttgym.agents import NominalAgent, NoopAgent, OracleAgent, RandomAgent
from sttgym.env import MAX_TURNS


@pytest.fixture
def env(toy_ids):
    return gym.make(toy_ids[0], render_mode="ansi")


def test_reset_gives_the_query_tools_and_task(env):
    obs, info = env.reset(seed=3)
    assert obs.startswith("Please reserve locker")
    names = [t["function"]["name"] for t in info["tools"]]
    assert names == sorted(["get_locker", "reserve_locker", "chat_with_user"])
    assert info["task"]["domain"] == "Toy" and info["task"]["conflict"] == "T1"
    assert not {"solvable", "difficulty", "scenario_id"} & set(info["task"])  # nothing tells the level
    assert info["clock"] == "2024-05-01T09:00"
    assert env.observation_space.contains(obs)


def test_same_seed_same_instance_other_seed_other(env):
    a, _ = env.reset(seed=3)
    b, _ = env.reset(seed=3)
    c, _ = env.reset(seed=4)
    assert a == b and a != c


def test_tool_call_advances_the_clock_and_reward_comes_at_the_end(env):
    env.reset(seed=0)
    locker = list(env.unwrapped.world.state["lockers"])[1]  # the one no trigger touches
    obs, reward, terminated, truncated, info = env.step({"name": "get_locker", "arguments": {"locker_id": locker}})
    assert '"success": true' in obs and info["result"]["data"]["status"] == "free"
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["clock"] == "2024-05-01T09:01" and info["turn"] == 1
    obs, reward, terminated, truncated, info = env.step({"content": "Task Completed"})
    assert terminated and not truncated
    assert [(c["name"], c["gate"], c["passed"]) for c in info["checklist"]] == [
        ("parcel_in_b", False, False), ("no_collateral_change", True, True), ("truthful_report", True, True)]
    assert reward == 0.0 and info["score"] == 0.0


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("action, fragment", [
    ({"name": "open_sesame", "arguments": {}}, "unknown tool"),
    ({"name": "__init__", "arguments": {}}, "unknown tool"),
    ({"name": "reset", "arguments": {}}, "unknown tool"),
    ({"name": "reserve_locker", "arguments": {"locker_id": "L1"}}, "missing argument(s) 'parcel_id'"),
    ({"name": "reserve_locker", "arguments": '{"locker_id": 5, "parcel_id": "P"}'}, "must be string"),
    ({"name": "get_locker", "arguments": "{not json"}, "not valid JSON"),
    ({"name": "get_locker"}, "missing argument(s) 'locker_id'"),
    ({"name": 7, "arguments": {}}, "non-empty string"),
    ({"content": 12}, "must be a string"),
    ({"content": "", "arguments": None}, "unexpected action field(s): arguments"),
    ({"name": "get_locker", "arguments": {"locker_id": "L1"}, "content": "hi"}, "unexpected action field(s): content"),
    ({"name": "get_locker", "arguments": {("locker", 1): "L1"}}, "key that is not a string"),
    ({"name": "get_locker", "arguments": {"locker_id": 10 ** 5000}}, "integer longer than 100 digits"),
    ({"name": "get_locker", "arguments": {"locker_id": _nested(100_000)}}, "nest deeper than 32 levels"),
    ({"name": "get_locker", "arguments": {"locker_id": 1j}}, "not a JSON value"),
    ({"name": "get_locker", "arguments": {"locker_id": "\\" * 100_000}}, "longer than 20,000 characters"),
    ({"deep": _nested(100_000)}, "an action must be"),
    ({"foo": "bar"}, "an action must be"),
    ("get_locker", "an action must be"),
    (None, "an action must be"),
])
def test_bad_actions_are_rejected_without_touching_the_world(env, action, fragment):
    env.reset(seed=0)
    before = copy.deepcopy(env.unwrapped.world.state), env.unwrapped.clock.minutes
    obs, reward, terminated, truncated, info = env.step(action)
    assert fragment in info["result"]["error"] and fragment in obs
    assert (copy.deepcopy(env.unwrapped.world.state), env.unwrapped.clock.minutes) == before
    assert not terminated and reward == 0.0


def test_a_json_string_of_arguments_is_accepted(env):
    env.reset(seed=0)
    locker = list(env.unwrapped.world.state["lockers"])[1]  # the one no trigger touches
    _, _, _, _, info = env.step({"name": "get_locker", "arguments": '{"locker_id": "%s"}' % locker})
    assert info["result"]["success"]


def test_results_do_not_alias_the_world(env):
    env.reset(seed=0)
    locker = list(env.unwrapped.world.state["lockers"])[1]  # the one no trigger touches
    _, _, _, _, info = env.step({"name": "get_locker", "arguments": {"locker_id": locker}})
    info["result"]["data"]["status"] = "hacked"
    assert env.unwrapped.world.state["lockers"][locker]["status"] == "free"


def test_episode_truncates_after_max_turns_and_is_scored(toy_ids):
    env = gym.make(toy_ids[0], max_turns=3)
    env.reset(seed=0)
    results = [env.step({"name": "get_locker", "arguments": {"locker_id": "nope"}}) for _ in range(3)]
    assert [r[3] for r in results] == [False, False, True]
    assert "checklist" in results[-1][4]
    obs, reward, terminated, truncated, info = env.step({"content": "hello?"})
    assert "episode has ended" in info["result"]["error"]
    assert MAX_TURNS == 50


def test_dynamics_off_removes_triggers_and_uses_the_static_checklist(toy_ids):
    dynamic = sttgym.rollout(gym.make(toy_ids[0]), NominalAgent(), seed=1)
    static = sttgym.rollout(gym.make(toy_ids[0], dynamics=False), NominalAgent(), seed=1)
    assert dynamic.reward == 0.0 and [e["trigger"] for e in dynamic.info["trigger_log"]] == ["locker_taken"]
    assert static.reward == 1.0 and static.info["trigger_log"] == []
    assert [c["name"] for c in static.info["checklist"]] == ["parcel_in_a", "no_collateral_change", "truthful_report"]


def test_reference_agents(toy_ids):
    easy, impossible = toy_ids
    assert sttgym.rollout(gym.make(easy), OracleAgent(), seed=2).reward == 1.0
    assert sttgym.rollout(gym.make(impossible), OracleAgent(), seed=2).reward == 1.0
    assert sttgym.rollout(gym.make(impossible), NominalAgent(), seed=2).reward == 0.0
    noop = sttgym.rollout(gym.make(easy), NoopAgent(), seed=2)
    assert noop.reward == 0.0 and len(noop.steps) == 1
    r1 = sttgym.rollout(gym.make(easy), RandomAgent(), seed=5)
    r2 = sttgym.rollout(gym.make(easy), RandomAgent(), seed=5)
    assert r1.steps == r2.steps and len(r1.steps) > 1


def test_trajectory_messages_are_chat_format(toy_ids):
    traj = sttgym.rollout(gym.make(toy_ids[0]), OracleAgent(), seed=0)
    roles = [m["role"] for m in traj.messages]
    assert roles == ["user"] + ["assistant", "tool"] * 5 + ["assistant"]
    call = traj.messages[1]["tool_calls"][0]
    assert call["function"]["name"] == "get_locker" and isinstance(call["function"]["arguments"], str)
    assert traj.messages[2]["tool_call_id"] == call["id"]
    assert traj.messages[-1]["content"] == "Task Completed"
    assert traj.tool_calls == 5 and traj.to_dict()["reward"] == 1.0


def test_render_ansi_is_a_transcript(env):
    env.reset(seed=0)
    env.step({"name": "get_locker", "arguments": {"locker_id": "x"}})
    text = env.render()
    assert "Toy__T1__easy" in text and "get_locker" in text and "no locker 'x'" in text


def test_no_user_ablation_removes_chat(toy_ids):
    env = gym.make(toy_ids[0], user="none")
    _, info = env.reset(seed=0)
    assert "chat_with_user" not in [t["function"]["name"] for t in info["tools"]]
    _, _, _, _, info = env.step({"name": "chat_with_user", "arguments": {"message": "hi"}})
    assert "unknown tool" in info["result"]["error"]


def test_unknown_scenario_and_render_mode_are_clear_errors(toy_ids):
    from sttgym.env import ArenaEnv

    with pytest.raises(ValueError, match="unknown domain"):
        ArenaEnv("Nowhere", "T1", "easy")
    with pytest.raises(ValueError, match="no scenario"):
        ArenaEnv("Toy", "S3", "hard")
    with pytest.raises(ValueError, match="render_mode"):
        ArenaEnv("Toy", "T1", "easy", render_mode="human")


def test_spaces_sample_contain_compare_and_pickle(env):
    space = env.action_space
    space.seed(0)
    samples = [space.sample() for _ in range(200)]
    assert all(space.contains(s) for s in samples)
    assert any("content" in s for s in samples) and any("name" in s for s in samples)
    assert not space.contains({"name": "nope", "arguments": {}}) and not space.contains("x")
    clone = pickle.loads(pickle.dumps(space))
    assert clone == space and clone.sample() == space.sample()
    assert env.observation_space.contains("ünïcødé \n {json}") and not env.observation_space.contains(3)


def test_reads_never_cause_a_change_and_the_write_that_does_meets_it(toy_ids):
    env = gym.make(toy_ids[0])
    env.reset(seed=0)
    locker = list(env.unwrapped.world.state["lockers"])[0]
    _, _, _, _, info = env.step({"name": "get_locker", "arguments": {"locker_id": locker}})
    assert info["events"] == [] and info["result"]["data"]["status"] == "free"
    _, _, _, _, info = env.step({"name": "reserve_locker", "arguments": {"locker_id": locker, "parcel_id": "P1"}})
    event = info["events"][0]
    assert event["trigger"] == "locker_taken" and event["call_index"] == 1
    assert event["changes"] == [{"path": f"lockers.{locker}.status", "old": "free", "new": "taken"}]
    assert info["result"]["success"] is False and "taken" in info["result"]["error"]


def test_ids_load_with_the_module_prefix_without_a_prior_import():
    import subprocess
    import sys

    code = "import gymnasium as gym; print(gym.make('sttgym:STTArena/ColdChain-T2-medium').reset(seed=0)[0])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120).stdout
    assert "CLINIC-" in out
