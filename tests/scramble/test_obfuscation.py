"""Obfuscate: aliases, hidden parameters, per-tool output keys, status tokens, plaintext meta-commands."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np

import sttgym  # noqa: F401  (registers the ScrambleTool ids)
from sttgym.envs.scramble.terminal import FUNCTIONS
from sttgym.wrappers import Obfuscate
from sttgym.wrappers.obfuscation import _fresh

from tests.scramble.scripted import layer


def _base(seed: int = 0):
    env = gym.make("ScrambleTool/Base")
    observation, info = env.reset(seed=seed)
    return env, info, layer(env, Obfuscate)


def _step(env, name: str, arguments: dict) -> dict:
    return env.step({"name": name, "arguments": arguments})[4]["result"]


def test_listing_shows_shuffled_aliases_without_parameters_and_plaintext_meta_commands():
    env, info, obf = _base()
    listed = [t["function"] for t in info["tools"]]
    aliases = [f["name"] for f in listed if f["name"].startswith("fn_")]
    assert len(set(aliases)) == 28 and all(re.fullmatch(r"fn_[0-9a-f]{4}", a) for a in aliases)
    assert all(f["parameters"]["properties"] == {} and f["description"] == "" for f in listed if f["name"] in aliases)
    assert [obf.function_of[a] for a in aliases] != sorted(FUNCTIONS)
    meta = {f["name"]: f for f in listed if f["name"] not in aliases}
    assert set(meta) == {"submit_solution", "skip_task", "end_episode"}
    assert "solution" in meta["submit_solution"]["parameters"]["properties"]
    _, other, _ = _base(seed=1)
    assert {t["function"]["name"] for t in other["tools"]} != {t["function"]["name"] for t in info["tools"]}


def test_schema_mismatch_reveals_keys_and_types_and_costs_an_action():
    env, info, obf = _base()
    alias = obf.alias["check_port_open"]
    before = info["task"]["actions"]
    result = _step(env, alias, {})
    status, message = result.values()
    assert status == obf.tokens[False] and message.startswith("Schema mismatch")
    keys = dict(re.findall(r"(arg_\d)\??: (\w+)", message))
    assert sorted(keys) == ["arg_0", "arg_1"] and sorted(keys.values()) == ["integer", "string"]
    host = next(k for k, t in keys.items() if t == "string")
    port = next(k for k, t in keys.items() if t == "integer")
    answer = _step(env, alias, {host: "127.0.0.1", port: 22})
    assert list(answer.values()) == [obf.tokens[True], {"host": "127.0.0.1", "port": 22, "open": True,
                                                        "service": "ssh"}]
    assert env.unwrapped.current.actions == before + 2


def test_output_keys_identify_the_tool_and_status_tokens_mark_the_outcome():
    env, _, obf = _base()
    keys = {}
    for function in ("get_cpu_info", "list_cron_jobs", "get_shell_info"):
        result = _step(env, obf.alias[function], {})
        keys[function] = set(result)
        assert all(re.fullmatch(r"out_[0-9a-f]{3}", k) for k in result) and obf.tokens[True] in result.values()
    assert not set.intersection(*keys.values())
    (key,) = obf.keys["get_env_variable"].values()
    error = _step(env, obf.alias["get_env_variable"], {key: "NOPE"})
    assert obf.tokens[False] in error.values() and "Environment variable not set: NOPE" in error.values()
    assert len(set(obf.tokens.values())) == 2


def test_unknown_names_and_meta_commands_stay_plaintext():
    env, _, _ = _base()
    assert _step(env, "read_file", {"file_path": "/etc/hostname"}) == {"success": False,
                                                                       "error": "Unknown command 'read_file'"}
    assert _step(env, "submit_solution", {"solution": "no"}) == {"success": False, "error": "Incorrect solution."}


def test_final_info_maps_aliases_to_functions_and_schemas_to_argument_keys():
    env, _, obf = _base()
    final = env.step({"name": "end_episode", "arguments": {}})[4]
    (mapping,) = final["mappings"]
    assert mapping == {alias: function for function, alias in obf.alias.items()}
    assert final["schemas"]["check_port_open"] == {obf.keys["check_port_open"]["host"]: "string",
                                                   obf.keys["check_port_open"]["port"]: "integer"}


def test_obfuscation_applies_to_an_arena_world(toy_ids):
    env = Obfuscate(gym.make(toy_ids[0]))
    observation, info = env.reset(seed=2)
    locker = re.search(r"locker (L\d+)", observation).group(1)
    assert {t["function"]["name"] for t in info["tools"]} == set(env.function_of)
    (key,) = env.keys["get_locker"].values()
    result = env.step({"name": env.alias["get_locker"], "arguments": {key: locker}})[4]["result"]
    status, locker_state = result.values()
    assert status == env.tokens[True] and locker_state["parcel"] is None
    *_, final = env.step({"content": "Task Completed"})
    assert final["mappings"] == [{a: f for f, a in env.alias.items()}]


def test_names_drawn_together_are_the_names_drawn_one_by_one():
    # _fresh draws every missing name in one call; episodes replay only if that equals drawing them singly
    # (collisions included: two hex digits force many), and the generator ends in the same state.
    for seed in range(20):
        for digits, count in ((4, 28), (3, 112), (2, 200), (1, 16)):
            together, singly = np.random.default_rng(seed), np.random.default_rng(seed)
            together.integers(16, size=3), singly.integers(16, size=3)  # a half-used random word carried in
            names: dict[str, None] = {}
            while len(names) < count:
                names["x" + "".join("0123456789abcdef"[int(d)] for d in singly.integers(16, size=digits))] = None
            assert _fresh(together, "x", digits, count) == list(names)
            assert together.integers(2**62) == singly.integers(2**62)
