"""Obfuscate: aliases, hidden parameters, per-tool output keys, status tokens, plaintext meta-commands."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

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
    status, record = _step(env, alias, {host: "127.0.0.1", port: 22}).values()
    assert status == obf.tokens[True] and all(re.fullmatch(r"out_[0-9a-f]{3}", k) for k in record)
    assert obf.reveal("check_port_open", record) == {"host": "127.0.0.1", "port": 22, "open": True, "service": "ssh"}
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


def _payload(result: dict, obf: Obfuscate):
    return next(v for v in result.values() if v not in obf.tokens.values())


def test_keys_inside_results_are_hidden_per_tool_at_any_depth_and_stable_across_calls():
    env, _, obf = _base()
    rows = _payload(_step(env, obf.alias["list_kernel_modules"], {}), obf)
    cpu = _payload(_step(env, obf.alias["get_cpu_info"], {}), obf)
    processes = _payload(_step(env, obf.alias["list_running_processes"], {}), obf)
    assert len({tuple(row) for row in rows}) == 1  # every row has the same hidden columns
    hidden = {"list_kernel_modules": set(rows[0]), "get_cpu_info": set(cpu), "list_running_processes": set(processes[0])}
    assert all(re.fullmatch(r"out_[0-9a-f]{3}", k) for keys in hidden.values() for k in keys)
    assert not set.intersection(*hidden.values())  # "name" of a module and of a process differ
    assert not set().union(*hidden.values()) & {k for (_, _), k in obf.outputs.items()}
    assert set(obf.reveal("get_cpu_info", cpu)) == {"architecture", "model", "model_id", "cores", "threads", "cache_kb"}
    plain = gym.make("ScrambleTool/Unscrambled")
    plain.reset(seed=0)
    assert obf.reveal("list_kernel_modules", rows) == _step(plain, "list_kernel_modules", {})["data"]
    again = _payload(_step(env, obf.alias["get_cpu_info"], {}), obf)
    assert again == cpu
    other = layer(_base(seed=1)[0], Obfuscate)
    other_cpu = _payload(_step(other, other.alias["get_cpu_info"], {}), other)
    assert set(other_cpu) != set(cpu) and other.reveal("get_cpu_info", other_cpu).keys() == obf.reveal(
        "get_cpu_info", cpu).keys()


def test_relayed_content_keeps_its_keys_and_the_setting_can_be_turned_off():
    env, info, obf = _base()
    page = next(url for url, body in env.unwrapped.machine.state["web"].items() if isinstance(body, dict))
    (key,) = obf.keys["fetch_web_content"].values()
    body = _payload(_step(env, obf.alias["fetch_web_content"], {key: page}), obf)
    assert body == env.unwrapped.machine.state["web"][page]
    plain = gym.make("ScrambleTool/Base", nested_keys=False)
    plain.reset(seed=0)
    bare = layer(plain, Obfuscate)
    cpu = _payload(_step(plain, bare.alias["get_cpu_info"], {}), bare)
    assert "architecture" in cpu and not bare.nested


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


@pytest.mark.parametrize("nested", [False, True])
def test_obfuscation_applies_to_an_arena_world(toy_ids, nested):
    env = Obfuscate(gym.make(toy_ids[0]), nested=nested)
    observation, info = env.reset(seed=2)
    locker = re.search(r"locker (L\d+)", observation).group(1)
    assert {t["function"]["name"] for t in info["tools"]} == set(env.function_of)
    (key,) = env.keys["get_locker"].values()
    result = env.step({"name": env.alias["get_locker"], "arguments": {key: locker}})[4]["result"]
    status, locker_state = result.values()
    assert status == env.tokens[True] and ("parcel" in locker_state) != nested
    assert env.reveal("get_locker", locker_state)["parcel"] is None
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
