"""The TRL environment_factory adapter: tools with the world's schemas, episodes scored by the env, a GRPO step."""

from __future__ import annotations

import copy

import pytest

pytest.importorskip("trl")

import gymnasium as gym  # noqa: E402

from sttgym.adapters.trl import environment_class, environment_factories, episode_reward, grpo_dataset  # noqa: E402
from sttgym.agents import OracleAgent  # noqa: E402
from sttgym.authoring import tool_specs  # noqa: E402
from sttgym.registry import DOMAINS  # noqa: E402
from sttgym.rollout import rollout  # noqa: E402

ID, SEED = "STTArena/ColdChain-T1-easy", 1_000_000


def _public_methods(cls) -> set[str]:
    import inspect

    return {n for n, _ in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_")} - {"reset", "get_reward"}


def test_a_domains_tools_become_methods_with_the_worlds_schemas():
    from transformers.utils import get_json_schema

    cls = environment_class("ColdChain")
    specs = tool_specs(DOMAINS["ColdChain"].world)
    assert _public_methods(cls) == set(specs)
    env = cls()
    for name, spec in specs.items():
        schema = get_json_schema(getattr(env, name))["function"]
        assert set(schema["parameters"].get("properties", {})) == set(spec.parameters.get("properties", {}))
        assert set(schema["parameters"].get("required", [])) == set(spec.parameters.get("required", []))
    assert set(environment_factories(["ColdChain", "Hotel"])) == {"ColdChain", "Hotel"}
    with pytest.raises(ValueError, match="unknown domain"):
        environment_class("Atlantis")


def test_the_oracle_through_the_adapter_scores_as_in_gym():
    reference = rollout(gym.make(ID), OracleAgent(), seed=SEED)
    (row,) = grpo_dataset([(ID, SEED)])
    env = environment_class("ColdChain")()
    request = env.reset(**{k: v for k, v in row.items() if k != "environment"})
    assert request == gym.make(ID).reset(seed=SEED)[0]
    completion = []
    for step in reference.steps:
        action = step["action"]
        if "name" in action:
            observation = getattr(env, action["name"])(**action["arguments"])
            completion += [{"role": "assistant", "content": "", "tool_calls": [
                {"type": "function", "function": {"name": action["name"], "arguments": action["arguments"]}}]},
                           {"role": "tool", "name": action["name"], "content": observation}]
        else:
            completion.append({"role": "assistant", "content": action["content"]})
    assert episode_reward([completion], [env]) == [reference.reward] == [1.0]
    assert env.reset(**{k: v for k, v in row.items() if k != "environment"}) == request  # reusable, same instance
    assert episode_reward([[{"role": "assistant", "content": "Task Completed"}]], [env]) == [
        rollout(gym.make(ID), _Replier(), seed=SEED).reward]


class _Replier:
    def reset(self, *args, **kwargs):
        pass

    def act(self, observation, info):
        return {"content": "Task Completed"}


def test_a_grpo_step_with_the_adapter_on_the_tiny_model(tiny_path, tmp_path):
    """TRL's own tool loop drives the arena env; the tiny model wears Qwen3's template so TRL can parse its calls."""
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer
    from trl.chat_template_utils import qwen3_chat_template

    tokenizer = AutoTokenizer.from_pretrained(tiny_path)
    tokenizer.chat_template = qwen3_chat_template
    dataset = grpo_dataset([(ID, SEED), (ID, SEED + 1)])
    args = GRPOConfig(output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=2, num_generations=2,
                      max_completion_length=48, max_tool_calling_iterations=2, use_cpu=True, bf16=False,
                      report_to="none", logging_steps=1, learning_rate=1e-2, save_strategy="no")
    trainer = GRPOTrainer(model=str(tiny_path), reward_funcs=[episode_reward], args=args, train_dataset=dataset,
                          processing_class=copy.deepcopy(tokenizer),
                          environment_factory=environment_factories(["ColdChain"]))
    trainer.train()
    logged = [entry for entry in trainer.state.log_history if "reward" in entry]
    assert logged and 0.0 <= logged[0]["reward"] <= 1.0
    # every rollout played an instance of the dataset to its end, scored by the env
    assert trainer.environments and all(e.done for e in trainer.environments)
    assert {e.env.unwrapped.task.scenario_id for e in trainer.environments} == {"ColdChain__T1__easy"}
