"""MappingDrift: one cycle over the configured count of identifiers at each boundary; a bijection throughout."""

from __future__ import annotations

import gymnasium as gym
import pytest

import sttgym  # noqa: F401  (registers the ScrambleTool ids)
from sttgym.wrappers import MappingDrift, Obfuscate

from tests.scramble.scripted import layer

SKIP = {"name": "skip_task", "arguments": {}}


def _cycle_length(before: dict, after: dict) -> list[int]:
    """Lengths of the cycles of the permutation taking ``before`` to ``after`` (fixed points left out)."""
    where = {target: ident for ident, target in before.items()}
    step = {ident: where[after[ident]] for ident in after}  # identifier -> where its tool came from
    lengths, seen = [], set()
    for start in step:
        if start in seen or step[start] == start:
            continue
        length, node = 0, start
        while node not in seen:
            seen.add(node)
            node, length = step[node], length + 1
        lengths.append(length)
    return lengths


def _keys(value) -> frozenset[str]:
    """Every key of a result, the hidden ones inside it included: they follow the tool, wherever it moves."""
    if isinstance(value, list):
        return frozenset().union(*map(_keys, value))
    if isinstance(value, dict):
        return frozenset(value).union(*map(_keys, value.values()))
    return frozenset()


@pytest.mark.parametrize("seed", range(5))
def test_each_boundary_moves_exactly_seven_identifiers_in_one_cycle(seed):
    env = gym.make("ScrambleTool/Drift")
    env.reset(seed=seed)
    drift = layer(env, MappingDrift)
    assert drift.moved == 7
    for _ in range(6):
        before = dict(drift.route)
        info = env.step(SKIP)[4]
        after = drift.route
        assert sorted(after.values()) == sorted(before.values()) and set(after) == set(before)  # a bijection
        assert sum(after[i] != before[i] for i in after) == 7 and _cycle_length(before, after) == [7]
        assert {"type": "drift", "moved": 7} in info["events"]
    final = env.step({"name": "end_episode", "arguments": {}})[4]
    obf = layer(env, Obfuscate)
    assert len(final["mappings"]) == 7
    for route, mapping in zip(drift.routes, final["mappings"]):
        assert mapping == {ident: obf.function_of[target] for ident, target in route.items()}


def test_a_moved_identifier_runs_the_tool_that_moved_into_it():
    env = gym.make("ScrambleTool/Drift")
    env.reset(seed=3)
    drift, obf = layer(env, MappingDrift), layer(env, Obfuscate)
    no_args = [a for a in drift.ids if not obf.keys[obf.function_of[a]]]
    keys_before = {a: _keys(env.step({"name": a, "arguments": {}})[4]["result"]) for a in no_args}
    env.step(SKIP)
    for ident in no_args:
        now = _keys(env.step({"name": ident, "arguments": {}})[4]["result"])
        source = next(a for a in drift.ids if drift.routes[0][a] == drift.route[ident])
        if source in keys_before:  # identical keys means the same tool answered
            assert now == keys_before[source]
        assert (now == keys_before[ident]) == (drift.route[ident] == drift.routes[0][ident])


def test_meta_commands_never_move_and_a_lone_move_becomes_a_pair():
    env = MappingDrift(gym.make("ScrambleTool/Base"), fraction=0.02)
    observation, info = env.reset(seed=0)
    assert env.moved == 2 and not set(env.meta_commands) & set(env.ids)
    still = MappingDrift(gym.make("ScrambleTool/Base"), fraction=0.0)
    still.reset(seed=0)
    route = dict(still.route)
    assert still.moved == 0 and still.step(SKIP)[4]["events"][-1]["type"] == "task_start" and still.route == route
    with pytest.raises(ValueError):
        MappingDrift(gym.make("ScrambleTool/Base"), fraction=1.5)


def test_drift_strikes_arena_worlds_when_a_trigger_fires(toy_ids):
    env = MappingDrift(gym.make(toy_ids[0]), fraction=1.0)
    observation, info = env.reset(seed=1)
    locker = observation.split("locker ")[1].split(" ")[0]
    assert env.route == {i: i for i in env.ids} and env.moved == len(env.ids) == 3
    info = env.step({"name": "get_locker", "arguments": {"locker_id": locker}})[4]
    assert info["events"] == []  # reading changes nothing
    info = env.step({"name": "reserve_locker", "arguments": {"locker_id": locker, "parcel_id": "P1"}})[4]
    assert any("trigger" in e for e in info["events"]) and info["events"][-1]["type"] == "drift"
    assert all(env.route[i] != i for i in env.ids)
    *_, final = env.step({"content": "Task Completed"})
    assert final["mappings"] == [dict(r) for r in env.routes]
