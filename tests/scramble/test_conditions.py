"""The six registered conditions: gymnasium's checker, rebuilding from the spec, determinism, fuzzing."""

from __future__ import annotations

import copy
import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings, strategies as st

import sttgym  # noqa: F401  (registers the ScrambleTool ids)

CONDITIONS = ("Unscrambled", "Base", "Drift", "Failure", "Window", "All")
IDS = [f"ScrambleTool/{c}" for c in CONDITIONS]


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_passes(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checker warns that the env is wrapped, which is the point
        check_env(gym.make(env_id))


def _transcript(env, seed: int, steps: int = 40) -> list[str]:
    observation, info = env.reset(seed=seed)
    env.action_space.seed(seed)
    out = [observation]
    for _ in range(steps):
        observation, _, terminated, truncated, _ = env.step(env.action_space.sample())
        out.append(observation)
        if terminated or truncated:
            break
    return out


@pytest.mark.parametrize("env_id", IDS)
def test_one_seed_fixes_the_episode_and_the_spec_rebuilds_it(env_id):
    env = gym.make(env_id)
    first = _transcript(env, 11)
    rebuilt = gym.make(env.spec)
    assert [type(w) for w in _stack(rebuilt)] == [type(w) for w in _stack(env)]
    assert _transcript(rebuilt, 11) == first == _transcript(env, 11)
    assert _transcript(env, 12) != first


def _stack(env) -> list:
    layers = [env]
    while isinstance(layers[-1], gym.Wrapper):
        layers.append(layers[-1].env)
    return layers


def test_conditions_share_the_instance_and_the_aliases_of_a_seed():
    listings, goals = set(), set()
    for env_id in IDS[1:]:
        observation, info = gym.make(env_id).reset(seed=5)
        listings.add(tuple(t["function"]["name"] for t in info["tools"]))
        goals.add(info["task"]["goal"])
    assert len(listings) == 1 and len(goals) == 1


_values = st.recursive(st.none() | st.booleans() | st.integers(-10, 10**6) | st.text(max_size=30),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                      max_size=3), max_leaves=6)


@st.composite
def _actions(draw, names: list[str]):
    kind = draw(st.sampled_from(["call", "call", "call", "reply", "junk"]))
    if kind == "reply":
        return {"content": draw(st.text(max_size=40))}
    if kind == "junk":
        return draw(_values)
    name = draw(st.sampled_from(names) | st.text(max_size=12))
    keys = st.sampled_from(["arg_0", "arg_1", "path", "solution"]) | st.text(max_size=6)
    return {"name": name, "arguments": draw(st.dictionaries(keys, _values, max_size=3) | st.text(max_size=20))}


@pytest.mark.parametrize("env_id", IDS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_actions_never_raise_and_change_state_only_through_the_curriculum(env_id, data):
    env = gym.make(env_id)
    _, info = env.reset(seed=data.draw(st.integers(0, 50)))
    names = [t["function"]["name"] for t in info["tools"]] + ["read_file", "fn_0000"]
    for action in data.draw(st.lists(_actions(names), min_size=1, max_size=12)):
        before = copy.deepcopy(env.unwrapped.machine.state)
        observation, reward, terminated, truncated, info = env.step(action)
        assert isinstance(observation, str) and 0.0 <= reward <= 1.0 and not truncated
        assert isinstance(info["result"], dict)
        if not any(e["type"] == "window_expired" for e in info["events"]):
            assert env.unwrapped.machine.state == before  # every terminal function only reads
        if terminated:
            break


def test_the_wrappers_compose_in_any_order():
    from sttgym.agents import CycleTracingAgent
    from sttgym.rollout import rollout
    from sttgym.wrappers import MappingDrift, Obfuscate, StochasticFailure, TemporalWindow

    def plain():
        return gym.make("ScrambleTool/Unscrambled")

    stacks = [TemporalWindow(StochasticFailure(MappingDrift(Obfuscate(plain(), nested=True), 0.25), 0.1), 10),
              Obfuscate(TemporalWindow(StochasticFailure(MappingDrift(plain(), 0.25), 0.1), 10), nested=True),
              StochasticFailure(Obfuscate(MappingDrift(TemporalWindow(plain(), 10), 0.25), nested=True), 0.1)]
    for env in stacks:
        for seed in range(3):
            traj = rollout(env, CycleTracingAgent(), seed=seed)
            mappings = traj.info["mappings"]
            assert traj.reward == 1.0 and all(sorted(m.values()) == sorted(mappings[0].values()) for m in mappings)
            assert all(identifier.startswith("fn_") for identifier in mappings[0])
            assert [sum(a[i] != b[i] for i in a) for a, b in zip(mappings, mappings[1:])] == [7] * 4


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzzed_actions_on_a_fully_scrambled_arena_world_never_raise(toy_ids, data):
    from sttgym.wrappers import MappingDrift, Obfuscate, StochasticFailure, TemporalWindow

    env = TemporalWindow(StochasticFailure(MappingDrift(Obfuscate(gym.make(toy_ids[0])), 1.0), 0.3), 2)
    _, info = env.reset(seed=data.draw(st.integers(0, 50)))
    names = [t["function"]["name"] for t in info["tools"]] + ["get_locker"]
    for action in data.draw(st.lists(_actions(names), min_size=1, max_size=10)):
        observation, reward, terminated, truncated, info = env.step(action)
        assert isinstance(observation, str) and 0.0 <= reward <= 1.0 and isinstance(info["result"], (dict, type(None)))
        if terminated or truncated:
            break


def test_every_condition_setting_is_a_keyword_of_make():
    from sttgym.wrappers import MappingDrift, Obfuscate, StochasticFailure, TemporalWindow

    from tests.scramble.scripted import layer

    env = gym.make("ScrambleTool/All", drift_fraction=0.5, failure_p=0.2, window_k=5, nested_keys=False, budget=30)
    env.reset(seed=0)
    assert layer(env, MappingDrift).fraction == 0.5 and layer(env, StochasticFailure).p == 0.2
    assert layer(env, TemporalWindow).k == 5 and not layer(env, Obfuscate).nested and env.unwrapped.budget == 30
    default = gym.make("ScrambleTool/All")
    default.reset(seed=0)
    assert layer(default, Obfuscate).nested and layer(default, Obfuscate).verbatim == {"fetch_web_content"}
