"""Time one SFT step and one RL step on a randomly initialised model of Qwen3-4B's shape.

Nothing is downloaded: the model is built from its config with random weights (saved to a
temporary directory, since the RL trainer loads its reference model from a path), and the
tokenizer is the suite's tiny one, whose ids all fall inside the model's vocabulary. The
SFT step runs TRL's ``SFTTrainer`` through :func:`sttgym.training.sft.tokenize`-shaped rows
(random tokens, assistant mask on the last fifth); the RL step runs the REINFORCE++ trainer
on real environment rollouts (a random policy writes malformed turns, so the episodes run
to their turn cap and every turn generates its full token budget: a worst case).

The setup is the paper configs' (``training/configs/paper-*.yaml``): fp32 master weights
with bf16 autocast, SDPA attention, gradient checkpointing, 4,096 tokens per turn up to
32,768 per episode, and vLLM (colocated) generating the RL turns where it is installed.
Each phase's trainer is freed before the next starts, so the peaks are the phase's own.

Reported per phase: seconds per optimizer step (after a warm-up step), tokens per second,
and peak GPU memory. It was written for a GPU machine and not run where it was written.

    python benchmarks/train_step_gpu.py --out runs/bench              # Qwen3-4B shape, one GPU
    python benchmarks/train_step_gpu.py --shape tiny --turn-tokens 16 --out /tmp/bench  # smoke run on CPU
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import tempfile
import time
from pathlib import Path

import torch
from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM, TrainerCallback

from sttgym.models.tiny import build_tiny_model
from sttgym.training.config import Instances, RLSettings
from sttgym.training.rl import ReinforcePPTrainer, grpo_config, rl_data

SHAPES = {
    # Qwen3-4B (-Base): 36 layers, hidden 2560, 32 query / 8 key-value heads of 128, MLP 9728, tied embeddings.
    "qwen3-4b": dict(vocab_size=151936, hidden_size=2560, intermediate_size=9728, num_hidden_layers=36,
                     num_attention_heads=32, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
                     rope_theta=1_000_000.0, tie_word_embeddings=True),
    "tiny": dict(vocab_size=4096, hidden_size=64, intermediate_size=192, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=16, max_position_embeddings=32768, tie_word_embeddings=True),
}


class StepTimer(TrainerCallback):
    """Wall time of each optimizer step (synchronised with the GPU), and the mean episode length logged by RL."""

    def __init__(self):
        self.times: list[float] = []
        self.episode_tokens: list[float] = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "episode/tokens" in logs:
            self.episode_tokens.append(logs["episode/tokens"])

    def on_step_begin(self, args, state, control, **kwargs):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        self.start = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        self.times.append(time.perf_counter() - self.start)


def peak_gib() -> float | None:
    return torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else None


def reset_peak() -> None:
    gc.collect()  # the previous phase's trainer and models
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def random_model(shape: str, tokenizer, folder: Path, gpu: bool) -> Path:
    """Random weights of ``shape`` saved in fp32: the trainers keep them as master weights."""
    shape_args = {**SHAPES[shape], "vocab_size": max(SHAPES[shape]["vocab_size"], len(tokenizer))}
    config = Qwen3Config(**shape_args, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                         bos_token_id=None)
    with torch.device("cuda" if gpu else "cpu"):
        model = Qwen3ForCausalLM(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    del model
    return folder


def sft_step(path: Path, tokenizer, tokens: int, steps: int, common: dict) -> dict:
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    generator = torch.Generator().manual_seed(0)
    rows = [{"input_ids": torch.randint(10, len(tokenizer), (tokens,), generator=generator).tolist(),
             "assistant_masks": [0] * (tokens - tokens // 5) + [1] * (tokens // 5)} for _ in range(steps)]
    timer = StepTimer()
    args = SFTConfig(output_dir=str(path / "sft-run"), max_steps=steps, per_device_train_batch_size=1,
                     learning_rate=1e-5, max_length=tokens, packing=False, assistant_only_loss=False,
                     save_strategy="no", logging_steps=1, **common)
    reset_peak()
    SFTTrainer(model=str(path), args=args, train_dataset=Dataset.from_list(rows), processing_class=tokenizer,
               callbacks=[timer]).train()
    per_step = sum(timer.times[1:]) / max(1, len(timer.times) - 1)
    return {"tokens_per_step": tokens, "seconds_per_step": per_step, "tokens_per_second": tokens / per_step,
            "peak_gib": peak_gib()}


def rl_step(path: Path, tokenizer, steps: int, tasks: int, rollouts: int, turn_tokens: int, turns: int,
            common: dict) -> dict:
    vllm = {"use_vllm": True, "vllm_mode": "colocate", "vllm_gpu_memory_utilization": 0.35} if (
        torch.cuda.is_available() and importlib.util.find_spec("vllm")) else {}
    settings = RLSettings(model=str(path), data={"count": 4 * tasks, "levels": ["easy"]}, tasks_per_step=tasks,
                          rollouts_per_task=rollouts, max_turns=turns, max_turn_tokens=turn_tokens,
                          max_episode_tokens=32768, kl={"coef": 0.1, "placement": "reward", "estimator": "k1"},
                          trainer={"max_steps": steps, "per_device_train_batch_size": 2, "learning_rate": 1e-6,
                                   "save_strategy": "no", **common, **vllm})
    timer = StepTimer()
    reset_peak()
    trainer = ReinforcePPTrainer(str(path), settings, grpo_config(settings, path / "rl-run"),
                                 rl_data(settings, path / "rl-data"), tokenizer, callbacks=[timer])
    trainer.train()
    per_step = sum(timer.times[1:]) / max(1, len(timer.times) - 1)
    episode_tokens = timer.episode_tokens[-1] * tasks * rollouts
    del trainer
    return {"episodes_per_step": tasks * rollouts, "tokens_per_step": episode_tokens, "seconds_per_step": per_step,
            "tokens_per_second": episode_tokens / per_step, "peak_gib": peak_gib(), "generation": "vllm" if vllm
            else "transformers"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="qwen3-4b")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sft-tokens", type=int, default=32768, help="Sequence length of the SFT step.")
    parser.add_argument("--steps", type=int, default=3, help="Optimizer steps per phase (the first is a warm-up).")
    parser.add_argument("--tasks", type=int, default=8, help="RL tasks per step.")
    parser.add_argument("--rollouts", type=int, default=4, help="RL rollouts per task.")
    parser.add_argument("--turn-tokens", type=int, default=4096, help="RL tokens per turn (the paper's cap).")
    parser.add_argument("--turns", type=int, default=8, help="RL turns per episode (8 full turns fill 32K tokens).")
    args = parser.parse_args()

    gpu = torch.cuda.is_available()
    common = {"bf16": True, "gradient_checkpointing": True} if gpu else {"bf16": False, "use_cpu": True}
    common.update(report_to="none", model_init_kwargs={"dtype": "float32", "attn_implementation": "sdpa"})
    args.out.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(build_tiny_model(args.out / "tokenizer"))
    Instances(count=0, levels=["easy"]).ids()  # fail early when no arena domain is registered
    with tempfile.TemporaryDirectory(dir=args.out) as folder:
        path = random_model(args.shape, tokenizer, Path(folder), gpu)
        report = {"shape": args.shape, "device": torch.cuda.get_device_name() if gpu else "cpu",
                  "sft": sft_step(path, tokenizer, args.sft_tokens, args.steps, common)}
        report["rl"] = rl_step(path, tokenizer, args.steps, args.tasks, args.rollouts, args.turn_tokens, args.turns,
                               common)
    (args.out / "train_step.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
