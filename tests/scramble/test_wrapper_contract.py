"""What every wrapper promises at the edges of an episode: before the first reset and after the end."""

import gymnasium as gym
import pytest

from sttgym.wrappers import MappingDrift, Obfuscate, StochasticFailure, TemporalWindow

STACKS = {
    "obfuscate": Obfuscate,
    "drift": lambda env: MappingDrift(Obfuscate(env), fraction=0.5),
    "failure": lambda env: StochasticFailure(env, p=0.9),
    "window": lambda env: TemporalWindow(env, k=2),
}


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("env_id", ["STTArena/CarRental-T1-easy", "ScrambleTool/Unscrambled"])
def test_stepping_before_reset_is_gymnasium_s_reset_needed(stack, env_id):
    env = STACKS[stack](gym.make(env_id))
    with pytest.raises(gym.error.ResetNeeded):
        env.step({"name": "anything", "arguments": {}})


def test_no_timeout_after_the_episode_ended():
    env = StochasticFailure(gym.make("STTArena/CarRental-T1-easy"), p=0.99)
    _, info = env.reset(seed=0)
    env.step({"content": "Task Completed"})
    name = next(t["function"]["name"] for t in info["tools"] if not t["function"]["parameters"]["required"])
    for _ in range(5):  # with p=0.99 a timeout would all but surely show up here
        observation, _, terminated, _, info = env.step({"name": name, "arguments": {}})
        assert terminated and "episode has ended" in observation and not info.get("events")


@pytest.mark.parametrize("env_id", ["STTArena/CarRental-T1-easy", "ScrambleTool/Unscrambled"])
def test_reset_info_is_the_caller_s_own_copy(env_id):
    env = gym.make(env_id)
    _, info = env.reset(seed=0)
    original = info["tools"][0]["function"]["name"]
    info["tools"][0]["function"]["name"] = "renamed"
    info["tools"][0]["function"]["parameters"]["properties"]["injected"] = {"type": "string"}
    _, again = env.reset(seed=0)
    assert again["tools"][0]["function"]["name"] == original
    assert "injected" not in again["tools"][0]["function"]["parameters"]["properties"]


@pytest.mark.parametrize("env_id", ["ScrambleTool/All", "STTArena/ColdChain-T1-easy"])
def test_make_vec_is_async_and_a_wrapped_env_pickles_mid_episode(env_id):
    import pickle

    vec = gym.make_vec(env_id, num_envs=2)
    try:
        assert isinstance(vec, gym.vector.AsyncVectorEnv)
    finally:
        vec.close()
    env = gym.make(env_id)
    if env_id.startswith("STTArena"):
        env = TemporalWindow(StochasticFailure(MappingDrift(Obfuscate(env)), p=0.2), k=3)
    env.reset(seed=2)
    env.step({"name": "nothing", "arguments": {}})
    clone = pickle.loads(pickle.dumps(env))
    assert clone.step({"content": "done"})[0] == env.step({"content": "done"})[0]
