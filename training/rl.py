"""REINFORCE++ and REINFORCE++-baseline over multi-turn environment rollouts, on TRL's ``GRPOTrainer``.

``GRPOTrainer`` brings the training loop, the PPO-clipped token-level loss, the reference
model, generation (plain transformers or vLLM), accelerate/DeepSpeed, checkpoints and
logging. :class:`ReinforcePPTrainer` replaces one method, the one that turns a batch of
prompts into scored completions: here a batch of task instances is played to the end by
:class:`~sttgym.training.engine.RolloutEngine` (one tool call per turn, environment tokens
masked out of the loss), and each policy token gets a REINFORCE++ advantage
(:mod:`sttgym.training.reinforce`): the episode's rewards on the turns that earned them,
minus the token-level KL when it goes in the reward, summed from the token on, less the
group's per-turn baseline for REINFORCE++-baseline, and whitened over the global batch. No critic.

One RL step is ``tasks_per_step`` instances times ``rollouts_per_task`` rollouts (TRL's
generation batch, with each instance's rollouts consecutive), and one optimizer update
over them (the gradient is accumulated over micro-batches of ``per_device_train_batch_size``).
With one update per batch the sampling policy is the one updated, so PPO's clipping never
acts; TRL's ``num_iterations: N`` in the trainer section reuses each batch for N updates,
where it does.

Generation stops at the template's end of turn (not only at end-of-sequence, where a base
checkpoint's generation config stops), and each turn is capped at what the episode has left.
With vLLM, the sampler's log-probabilities come back with the tokens and TRL's
importance-sampling correction is computed from them.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from transformers import AutoConfig, AutoTokenizer
from transformers.trainer_utils import get_last_checkpoint
from trl import GRPOConfig, GRPOTrainer
from trl.models.utils import disable_gradient_checkpointing
from accelerate.utils import gather_object
from trl.trainer.utils import pad

from sttgym.models.template import stop_token_ids
from sttgym.training.config import RLSettings, resolve_model, use_threads, world_size
from sttgym.training.data import build_rl_dataset, run_dataset
from sttgym.training.engine import Episode, RolloutEngine, Sample
from sttgym.training.lengths import check_rl
from sttgym.training.reinforce import (importance_ratio, place_rewards, reinforce_pp_advantages, spread_over_turns,
                                       turn_baseline, zero_spread_groups)
from sttgym.training.render import prepare_tokenizer
from sttgym.training.sft import JsonlMetrics

__all__ = ["episode_return", "grpo_config", "ReinforcePPTrainer", "rl_data", "train_rl"]


def episode_return(prompts: list, completions: list, episode_return: list[float], **kwargs: Any) -> list[float]:
    """The reward TRL records for a rollout: the return the environment gave the episode."""
    return list(episode_return)


def grpo_config(settings: RLSettings, out: Path) -> GRPOConfig:
    """TRL's config for a run: the user's ``trainer`` keys plus the ones the RL settings decide."""
    batch = settings.tasks_per_step * settings.rollouts_per_task
    per_device = settings.trainer.get("per_device_train_batch_size", 8)
    if batch % (per_device * world_size()):
        raise ValueError(f"{batch} rollouts per step do not split into micro-batches of {per_device} "
                         f"on {world_size()} processes")
    options = {"report_to": "none", "logging_steps": 1, "disable_dropout": True, **settings.trainer}
    return GRPOConfig(
        output_dir=str(out), **options,
        beta=settings.kl.coef,  # builds the reference model; the trainer zeroes the loss term when KL is in the reward
        num_generations=settings.rollouts_per_task, generation_batch_size=batch,
        gradient_accumulation_steps=batch // (per_device * world_size()),
        max_completion_length=settings.max_turn_tokens, remove_unused_columns=False)


class ReinforcePPTrainer(GRPOTrainer):
    """``GRPOTrainer`` whose completions are whole multi-turn episodes scored with REINFORCE++.

    Args:
        model: checkpoint path or model.
        settings: the run's :class:`~sttgym.training.config.RLSettings`.
        args: TRL's config (see :func:`grpo_config`).
        train_dataset: rows with ``env_id``, ``seed`` and ``prompt`` (:func:`rl_data`).
        processing_class: the tokenizer, with a training template.
        callbacks: extra ``TrainerCallback`` s.
    """

    def __init__(self, model: Any, settings: RLSettings, args: GRPOConfig, train_dataset: Any,
                 processing_class: Any, callbacks: list | None = None):
        super().__init__(model=model, reward_funcs=[episode_return], args=args, train_dataset=train_dataset,
                         processing_class=processing_class, callbacks=callbacks)
        self.settings = settings
        if settings.kl.coef and self.ref_model is None:
            raise ValueError("a KL term needs a separate reference model; PEFT adapters are not supported here")
        if settings.kl.placement == "reward":
            self.beta = 0.0  # the reference model stays; the KL enters through the advantages instead
        self._stop_at_end_of_turn(stop_token_ids(processing_class, self.model))
        self.engine = RolloutEngine(processing_class, self._policy_generate, max_turns=settings.max_turns,
                                    max_turn_tokens=settings.max_turn_tokens,
                                    max_episode_tokens=settings.max_episode_tokens, reward=settings.reward,
                                    agree=self._agree)

    def _stop_at_end_of_turn(self, stops: list[int]) -> None:
        # TRL stops (and cuts completions) at the tokenizer's and the generation config's end-of-sequence ids;
        # a base checkpoint's end of turn is neither.
        self.eos_token_ids = stops
        if self.use_vllm:
            self.vllm_generation.generation_kwargs = {**self.vllm_generation.generation_kwargs, "stop_token_ids": stops}
        else:
            self.generation_config.eos_token_id = stops
            self.generation_kwargs["eos_token_id"] = stops

    def _agree(self, local: list[int]) -> list[int]:
        flags = torch.tensor(local, device=self.accelerator.device)
        return [int(v) for v in self.accelerator.reduce(flags, reduction="max")] if world_size() > 1 else local

    @contextmanager
    def _turn_budget(self, max_new_tokens: int):
        """TRL's generation capped at ``max_new_tokens`` for one round, instead of the per-turn maximum."""
        if self.use_vllm:
            saved = self.vllm_generation.max_completion_length
            self.vllm_generation.max_completion_length = max_new_tokens
        else:
            saved = self.generation_config.max_new_tokens
            self.generation_config.max_new_tokens = self.generation_kwargs["max_new_tokens"] = max_new_tokens
        try:
            yield
        finally:
            if self.use_vllm:
                self.vllm_generation.max_completion_length = saved
            else:
                self.generation_config.max_new_tokens = self.generation_kwargs["max_new_tokens"] = saved

    def _policy_generate(self, prompts: list[list[int]], max_new_tokens: int) -> list[list[int] | Sample]:
        # TRL's single-turn generation (transformers or vLLM) with its sampling settings.
        with self._turn_budget(max_new_tokens):
            ids, logprobs = self._generate_single_turn(prompts, None, {}, 1)
        if logprobs is None:
            return ids
        return [Sample(list(i), [float("nan") if p is None else p for p in lp]) for i, lp in zip(ids, logprobs)]

    def _generate_and_score_completions(self, inputs: list[dict]) -> dict[str, Any]:
        device = self.accelerator.device
        mode = "train" if self.model.training else "eval"
        episodes = self.engine.run([(row["env_id"], int(row["seed"])) for row in inputs])
        batch = self._tensors(episodes, device)
        ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], dim=1)
        attention = torch.cat([batch["prompt_mask"], batch["completion_mask"]], dim=1)
        width = batch["completion_ids"].size(1)
        size = self.args.per_device_train_batch_size
        with torch.no_grad(), disable_gradient_checkpointing(self.model, self.args.gradient_checkpointing_kwargs):
            old = self._get_per_token_logps_and_entropies(self.model, ids, attention, width, batch_size=size)[0]
            reference = None
            if self.ref_model is not None:
                reference = self._get_per_token_logps_and_entropies(self.ref_model, ids, attention, width,
                                                                    batch_size=size)[0]
        # Episode returns of every process, so each task's group is seen whole.
        returns = self._calculate_rewards([{**row, "episode_return": e.reward} for row, e in zip(inputs, episodes)],
                                          [row["prompt"] for row in inputs], [e.messages for e in episodes],
                                          [e.completion_ids for e in episodes])[:, 0]
        mask = batch["tool_mask"].float()
        baseline = None
        if self.settings.algorithm == "reinforce_pp_baseline":
            # Every process's turn rewards, so each task's baseline sees all its rollouts.
            local = slice(self.accelerator.process_index * len(inputs), (self.accelerator.process_index + 1) * len(inputs))
            per_turn = turn_baseline(gather_object([e.turn_rewards for e in episodes]),
                                     self.settings.rollouts_per_task)[local]
            baseline = spread_over_turns(per_turn, [e.turn_ends for e in episodes], mask.cpu()).to(device)
        in_reward = self.settings.kl.placement == "reward" and self.settings.kl.coef != 0.0
        rewards = place_rewards([e.turn_rewards for e in episodes], [e.turn_ends for e in episodes], width).to(device)
        advantages, stats = reinforce_pp_advantages(
            rewards, mask, logprobs=old, ref_logprobs=reference, kl_coef=self.settings.kl.coef if in_reward else 0.0,
            estimator=self.settings.kl.estimator, gamma=self.settings.gamma, baseline=baseline,
            reduce=lambda t: self.accelerator.reduce(t, reduction="sum"))
        stats["zero_spread_groups"] = zero_spread_groups(returns, self.settings.rollouts_per_task)
        if self.use_vllm and self.vllm_importance_sampling_correction:
            batch["importance_sampling_ratio"] = importance_ratio(
                old, batch["sampling_per_token_logps"], batch["completion_mask"] * mask,
                mode=self.vllm_importance_sampling_mode, clip_min=self.vllm_importance_sampling_clip_min,
                clip_max=self.vllm_importance_sampling_clip_max)
        self._log_episodes(mode, episodes, returns, stats)
        batch.update(advantages=advantages, old_per_token_logps=old,
                     num_items_in_batch=self.accelerator.gather(mask.sum()).sum())
        if self.beta != 0.0:
            batch["ref_per_token_logps"] = reference
        return batch

    def _tensors(self, episodes: list[Episode], device: torch.device) -> dict[str, torch.Tensor]:
        """Prompts left-padded and completions right-padded, as ``GRPOTrainer`` lays them out."""
        pad_id = self._tokenizer.pad_token_id

        def stack(rows: list[list[int]], value: int, side: str) -> torch.Tensor:
            return pad([torch.tensor(r, dtype=torch.long) for r in rows], padding_value=value,
                       padding_side=side).to(device)

        prompts = [e.prompt_ids for e in episodes]
        completions = [e.completion_ids for e in episodes]
        return {"prompt_ids": stack(prompts, pad_id, "left"),
                "prompt_mask": stack([[1] * len(p) for p in prompts], 0, "left"),
                "completion_ids": stack(completions, pad_id, "right"),
                "completion_mask": stack([[1] * len(c) for c in completions], 0, "right"),
                "tool_mask": stack([e.policy_mask for e in episodes], 0, "right"),
                "sampling_per_token_logps": pad([torch.tensor(e.sampling_logprobs, dtype=torch.float32) for e in episodes],
                                                padding_value=float("nan"), padding_side="right").to(device)}

    def _log_episodes(self, mode: str, episodes: list[Episode], returns: torch.Tensor, stats: dict) -> None:
        metrics = self._metrics[mode]
        n = len(episodes)
        metrics["episode/return"].append(float(returns.mean()))
        metrics["episode/tool_calls"].append(sum(e.tool_calls for e in episodes) / n)
        metrics["episode/turns"].append(sum(len(e.actions) for e in episodes) / n)
        metrics["episode/violations"].append(sum(e.violations for e in episodes) / n)
        metrics["episode/truncated"].append(sum(e.truncated for e in episodes) / n)
        metrics["episode/tokens"].append(sum(e.length for e in episodes) / n)
        for key, value in stats.items():
            metrics[f"advantage/{key}"].append(value)


def rl_data(settings: RLSettings, folder: Path) -> Any:
    """The instances to train on (see :func:`~sttgym.training.data.run_dataset`)."""
    data = settings.data
    return run_dataset(folder, data.path, lambda: (build_rl_dataset(data.count, data.ids(), start=data.start), None))


def train_rl(settings: RLSettings, out: str | Path, model: str | None = None) -> Path:
    """Run (or resume) RL in ``out``; returns the directory of the final model."""
    use_threads(settings.threads)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    start = resolve_model(model or settings.model, out, settings.tiny)
    tokenizer = prepare_tokenizer(AutoTokenizer.from_pretrained(start))
    tokenizer.padding_side = "left"
    (out / "settings.json").write_text(json.dumps(settings.model_dump(), indent=1))
    data = rl_data(settings, out / "data")
    # Before any weights load: the engine would end a prompt that fills the budget, or cut a turn, without a word.
    check_rl(tokenizer, data, settings, getattr(AutoConfig.from_pretrained(start), "max_position_embeddings", None))
    trainer = ReinforcePPTrainer(start, settings, grpo_config(settings, out), data, tokenizer,
                                 callbacks=[JsonlMetrics(out / "metrics.jsonl")])
    trainer.train(resume_from_checkpoint=get_last_checkpoint(str(out)))
    final = out / "final"
    # Whatever serves the checkpoint (transformers, vLLM) then stops at the end of a turn, not only at end-of-sequence.
    trainer.model.generation_config.eos_token_id = stop_token_ids(tokenizer, trainer.model)
    trainer.save_model(str(final))
    tokenizer.save_pretrained(str(final))
    return final
