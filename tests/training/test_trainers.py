"""An SFT step and an RL step on the tiny offline model, resumable runs, and the bundled configs."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file
from typer.testing import CliRunner

from sttgym.cli import app
from sttgym.training.config import CONFIG_DIR, RLSettings, SFTSettings, load_settings
from sttgym.training.render import render
from sttgym.training.rl import ReinforcePPTrainer, grpo_config, rl_data
from sttgym.training.sft import sft_data, tokenize, train_sft

CPU = {"bf16": False, "use_cpu": True, "report_to": "none"}


def _weights(path):
    return load_file(str(path / "model.safetensors"))


def _changed(before, after) -> bool:
    return any(not torch.equal(before[k], after[k]) for k in before)


def _metrics(path):
    return [json.loads(line) for line in (path / "metrics.jsonl").read_text().splitlines()]


def test_sft_step_trains_on_assistant_tokens_and_resumes(tiny_path, toy_ids, tmp_path):
    settings = SFTSettings(model=str(tiny_path), data={"count": 6, "env_ids": list(toy_ids)},
                           trainer={**CPU, "max_steps": 2, "per_device_train_batch_size": 2, "learning_rate": 1e-2,
                                    "logging_steps": 1, "save_steps": 2, "max_length": 4096})
    final = train_sft(settings, tmp_path)
    assert _changed(_weights(tiny_path), _weights(final))
    assert [m["step"] for m in _metrics(tmp_path) if "loss" in m] == [1, 2]
    assert all(torch.isfinite(torch.tensor(m["loss"])) for m in _metrics(tmp_path) if "loss" in m)

    from transformers import AutoTokenizer
    tokenizer = AutoTokenizer.from_pretrained(final)
    data = sft_data(settings.data, tmp_path / "data")
    tokenized = tokenize(data, tokenizer)
    assert list(tokenized[0]["assistant_masks"]) == render(tokenizer, data[0]["messages"], data[0]["tools"])[1]

    more = settings.model_copy(update={"trainer": {**settings.trainer, "max_steps": 3}})
    train_sft(more, tmp_path)  # picks up checkpoint-2 and runs one more step
    assert [m["step"] for m in _metrics(tmp_path) if "loss" in m] == [1, 2, 3]


def _rl_settings(tiny_path, toy_ids, **changes):
    base = dict(model=str(tiny_path), data={"count": 8, "env_ids": [toy_ids[0]]}, tasks_per_step=2,
                rollouts_per_task=2, max_turns=3, max_turn_tokens=24, max_episode_tokens=4096,
                reward=[{"term": "checklist"}, {"term": "format", "penalty": 0.5}],
                trainer={**CPU, "max_steps": 1, "per_device_train_batch_size": 2, "learning_rate": 1e-2,
                         "save_steps": 1})
    return RLSettings(**{**base, **changes})


@pytest.mark.parametrize("kl", [{"coef": 0.1, "placement": "reward", "estimator": "k2"},
                                {"coef": 0.1, "placement": "loss", "estimator": "k3"}])
def test_rl_step_builds_reinforce_pp_batches_and_updates_the_policy(tiny_path, tiny, toy_ids, tmp_path, kl):
    settings = _rl_settings(tiny_path, toy_ids, kl=kl)
    trainer = ReinforcePPTrainer(str(tiny_path), settings, grpo_config(settings, tmp_path),
                                 rl_data(settings, tmp_path / "data"), tiny[0])
    assert (trainer.beta != 0.0) == (kl["placement"] == "loss") and trainer.ref_model is not None
    rows = [trainer.train_dataset[0]] * 2 + [trainer.train_dataset[1]] * 2
    trainer.model.train()
    assert trainer.eos_token_ids[0] == tiny[0].convert_tokens_to_ids("<|im_end|>")
    assert all(len(ids) <= 3 for ids in trainer._policy_generate([[5, 6, 7], [8, 9]], 3))  # a turn's own budget
    assert trainer.generation_config.max_new_tokens == settings.max_turn_tokens
    trainer.settings = settings.model_copy(update={"algorithm": "reinforce_pp_baseline"})
    batch = trainer._generate_and_score_completions(rows)
    policy = batch["tool_mask"].bool()
    spread = trainer._metrics["train"]["advantage/zero_spread_groups"][-1]
    if spread == 1.0:  # every group's rollouts scored alike: a group baseline leaves nothing to learn
        assert batch["advantages"].abs().max() == 0
    else:  # scaled to unit spread over the batch, not re-centred
        assert batch["advantages"][policy].std(unbiased=False) == pytest.approx(1.0, abs=1e-3)
    trainer.settings = settings
    batch = trainer._generate_and_score_completions(rows)
    policy = batch["tool_mask"].bool()
    assert batch["advantages"].shape == batch["completion_ids"].shape
    assert (batch["advantages"][~policy] == 0).all()
    assert batch["advantages"][policy].mean().abs() < 1e-4  # whitened over the batch
    assert batch["sampling_per_token_logps"].shape == batch["completion_ids"].shape  # NaN: transformers reports none
    assert ("ref_per_token_logps" in batch) == (kl["placement"] == "loss")
    assert batch["num_items_in_batch"] == policy.sum()
    assert all(trainer._metrics["train"][k] for k in ("episode/return", "episode/violations"))

    before = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}
    trainer.train()
    assert _changed(before, trainer.model.state_dict())


def test_rl_run_writes_metrics_and_resumes(tiny_path, toy_ids, tmp_path):
    from sttgym.training.rl import train_rl

    settings = _rl_settings(tiny_path, toy_ids)
    train_rl(settings, tmp_path)
    train_rl(settings.model_copy(update={"trainer": {**settings.trainer, "max_steps": 2}}), tmp_path)
    steps = [m["step"] for m in _metrics(tmp_path) if "episode/return" in m]
    assert steps == [1, 2]
    assert (tmp_path / "final" / "model.safetensors").exists()


@pytest.mark.parametrize("path", sorted(CONFIG_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_bundled_configs_make_valid_trainer_configs(path, tmp_path):
    from trl import SFTConfig

    settings = load_settings(path)
    cpu = {"bf16": False, "use_cpu": True, "use_vllm": False, "model_init_kwargs": None}
    if settings.kind == "sft":
        assert SFTConfig(output_dir=str(tmp_path), **{**settings.trainer, **{k: v for k, v in cpu.items()
                                                                             if k != "use_vllm"}})
    else:
        args = grpo_config(settings.model_copy(update={"trainer": {**settings.trainer, **cpu}}), tmp_path)
        assert args.generation_batch_size == settings.tasks_per_step * settings.rollouts_per_task
        assert args.num_generations == settings.rollouts_per_task


def test_paper_configs_carry_the_papers_numbers():
    sft, rl = load_settings(CONFIG_DIR / "paper-sft.yaml"), load_settings(CONFIG_DIR / "paper-rl.yaml")
    assert sft.model == "Qwen/Qwen3-4B-Base" and sft.global_batch_size == 128 and sft.data.count == 2212
    assert {k: sft.trainer[k] for k in ("num_train_epochs", "learning_rate", "lr_scheduler_type", "warmup_steps",
                                        "max_length")} == {"num_train_epochs": 2, "learning_rate": 1e-5,
                                                           "lr_scheduler_type": "cosine", "warmup_steps": 0.03,
                                                           "max_length": 32768}
    assert (rl.kl.coef, rl.trainer["learning_rate"], rl.tasks_per_step, rl.rollouts_per_task, rl.trainer["max_steps"],
            rl.max_episode_tokens, rl.max_turn_tokens, rl.max_turns, rl.data.count) == (
        0.1, 1e-6, 32, 4, 100, 32768, 4096, 50, 8119)


def test_paper_configs_keep_fp32_master_weights_and_16_bit_weights_are_refused():
    for name in ("paper-sft", "paper-rl"):
        trainer = load_settings(CONFIG_DIR / f"{name}.yaml").trainer
        assert trainer["bf16"] and trainer["model_init_kwargs"]["dtype"] == "float32"
    for settings in (SFTSettings, RLSettings):
        with pytest.raises(ValueError, match="fp32 master weights"):
            settings(model="m", trainer={"model_init_kwargs": {"dtype": "bfloat16"}})
        assert settings(model="m", trainer={"model_init_kwargs": {"dtype": "bfloat16"}, "deepspeed": "zero2.json"})


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_small_update_survives_only_with_fp32_weights(tiny_path, dtype):
    """What the refusal above is about: one AdamW step at the paper's RL rate, with bf16 compute."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_path, dtype=dtype)
    before = {k: v.detach().clone() for k, v in model.named_parameters()}
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6, weight_decay=0.0)
    ids = torch.arange(2, 34)[None]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    optimizer.step()
    changed = [float((before[k] != p.detach()).float().mean()) for k, p in model.named_parameters()]
    share = sum(changed) / len(changed)
    if dtype is torch.float32:
        assert share > 0.9
    else:
        assert share < 0.2  # most bf16 weights cannot move by 1e-6 of themselves


def test_reinforce_pp_baseline_takes_gamma_one():
    with pytest.raises(ValueError, match="gamma"):
        RLSettings(model="m", algorithm="reinforce_pp_baseline", gamma=0.99)
    assert RLSettings(model="m", algorithm="reinforce_pp", gamma=0.99)


def test_command_line_overrides_follow_trl_style():
    from sttgym.training.config import apply_overrides

    raw = {"kind": "rl", "model": "m", "trainer": {"max_steps": 100}, "kl": {"coef": 0.1}}
    out = apply_overrides(raw, ["--max_steps", "2", "--learning-rate=1e-5", "--kl.coef", "0", "--tasks_per_step", "4"])
    assert out == {"kind": "rl", "model": "m", "trainer": {"max_steps": 2, "learning_rate": 1e-5}, "kl": {"coef": 0},
                   "tasks_per_step": 4}
    assert raw["trainer"] == {"max_steps": 100}  # the file's settings are not changed in place
    for bad in (["max_steps", "2"], ["--max_steps"], ["--model.x", "1"]):
        with pytest.raises(ValueError):
            apply_overrides(raw, bad)


def test_settings_refuse_typos_and_derived_keys():
    with pytest.raises(ValueError):
        RLSettings(model="m", learning_rate=1e-3)
    with pytest.raises(ValueError, match="derived"):
        RLSettings(model="m", trainer={"beta": 0.1})
    with pytest.raises(ValueError, match="k3"):
        RLSettings(model="m", kl={"placement": "loss", "estimator": "k1"})


@pytest.mark.parametrize("trainer", [{"trust_remote_code": True}, {"model_init_kwargs": {"trust_remote_code": True}},
                                     {"model_init_kwargs": {"x": [{"trust_remote_code": "yes"}]}}])
def test_a_config_cannot_make_training_run_code(trainer, toy_ids):
    for settings in (SFTSettings, RLSettings):
        with pytest.raises(ValueError, match="trust_remote_code"):
            settings(model="m", trainer=trainer)
    assert SFTSettings(model="m", trainer={"model_init_kwargs": {"trust_remote_code": False}})
    instances = SFTSettings(model="m", data={"count": 1, "env_ids": ["os:" + toy_ids[0]]}).data
    with pytest.raises(ValueError, match="names a module to import"):
        instances.ids()


def test_cli_trains_sft_from_a_config_file(tiny_path, toy_ids, tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text(json.dumps({"kind": "sft", "model": "unused", "data": {"count": 40, "env_ids": list(toy_ids)},
                                  "trainer": {**CPU, "max_steps": 50, "per_device_train_batch_size": 2,
                                              "max_length": 4096}}))  # TRL's default 1,024 cuts toy rows: refused
    result = CliRunner().invoke(app, ["train", "sft", "--config", str(config), "--model", str(tiny_path),
                                      "--out", str(tmp_path / "run"), "--max_steps", "1", "--data.count=4"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "run" / "final" / "model.safetensors").exists()
    state = json.loads(next((tmp_path / "run").rglob("trainer_state.json")).read_text())
    assert state["global_step"] == 1  # the override, not the file's 50
    typo = CliRunner().invoke(app, ["train", "sft", "--config", str(config), "--out", str(tmp_path / "y"),
                                    "--data.cuont", "4"])
    assert typo.exit_code == 2 and "cuont" in typo.output
    wrong = CliRunner().invoke(app, ["train", "rl", "--config", str(config), "--out", str(tmp_path / "x")])
    assert wrong.exit_code == 2 and "not rl" in wrong.output


def test_vllm_shaped_generation_feeds_the_importance_sampling_correction(tiny_path, tiny, toy_ids, tmp_path):
    """TRL's loss with vLLM multiplies by a ratio of trained to sampling probabilities; the batch must carry it.

    No vLLM here: generation keeps the transformers path but reports sampling log-probabilities as vLLM does.
    """
    from types import SimpleNamespace

    settings = _rl_settings(tiny_path, toy_ids)
    trainer = ReinforcePPTrainer(str(tiny_path), settings, grpo_config(settings, tmp_path),
                                 rl_data(settings, tmp_path / "data"), tiny[0])
    transformers_generate = trainer._generate_single_turn
    trainer.vllm_generation = SimpleNamespace(max_completion_length=settings.max_turn_tokens, generation_kwargs={})

    def vllm_like(prompts, images, fields, n):
        trainer.use_vllm = False
        with trainer._turn_budget(trainer.vllm_generation.max_completion_length):
            ids, _ = transformers_generate(prompts, images, fields, n)
        trainer.use_vllm = True
        return ids, [[-1.0] * len(row) for row in ids]

    trainer._generate_single_turn = vllm_like
    trainer.use_vllm, trainer.vllm_importance_sampling_correction = True, True
    trainer._stop_at_end_of_turn(trainer.eos_token_ids)
    assert trainer.vllm_generation.generation_kwargs["stop_token_ids"] == trainer.eos_token_ids
    rows = [trainer.train_dataset[0]] * 2 + [trainer.train_dataset[1]] * 2
    trainer.model.train()
    batch = trainer._generate_and_score_completions(rows)
    policy = batch["tool_mask"].bool()
    assert (batch["sampling_per_token_logps"][policy] == -1.0).all()
    assert batch["sampling_per_token_logps"][~policy].isnan().all()
    ratio = batch["importance_sampling_ratio"]
    assert ratio.shape in ((4, 1), batch["completion_ids"].shape)  # per sequence or per token, as TRL is set
    assert (ratio >= 0).all() and (ratio <= trainer.vllm_importance_sampling_clip_max).all()
    trainer.current_gradient_accumulation_steps = 1  # set by the training loop, which this test does not run
    loss = trainer.compute_loss(trainer.model, batch)
    assert torch.isfinite(loss)
