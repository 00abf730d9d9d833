"""The distributed path on CPU: two processes (gloo) play and train one REINFORCE++-baseline step together.

Each process plays its share of the batch in lock-step with the other (agreeing on prompt counts
and budgets every round), the group baseline gathers every process's turn rewards, and the
accelerate configs for GPUs are well-formed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from sttgym.training.config import CONFIG_DIR


def test_two_processes_train_one_rl_step_together(tiny_path, tmp_path):
    config = tmp_path / "rl.yaml"
    config.write_text(json.dumps({
        "kind": "rl", "model": "unused", "threads": 1, "algorithm": "reinforce_pp_baseline",
        "kl": {"coef": 0.05}, "tasks_per_step": 2, "rollouts_per_task": 2, "max_turns": 3, "max_turn_tokens": 12,
        "max_episode_tokens": 4096, "data": {"count": 8, "levels": ["easy"], "domains": ["ColdChain"]},
        "trainer": {"learning_rate": 1e-4, "max_steps": 1, "per_device_train_batch_size": 1, "bf16": False,
                    "use_cpu": True, "gradient_checkpointing": False, "save_strategy": "no"}}))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(sys.path)}
    result = subprocess.run(
        [sys.executable, "-m", "accelerate.commands.launch", "--cpu", "--num_processes", "2", "--num_machines", "1",
         "--mixed_precision", "no", "--dynamo_backend", "no", "-m", "sttgym", "train", "rl", "--config", str(config),
         "--model", str(tiny_path), "--out", str(tmp_path / "run")],
        capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-4000:]
    (step,) = [m for m in map(json.loads, (tmp_path / "run" / "metrics.jsonl").read_text().splitlines())
               if "episode/return" in m]
    assert step["step"] == 1 and 0.0 <= step["advantage/zero_spread_groups"] <= 1.0
    assert (tmp_path / "run" / "final" / "model.safetensors").exists()


@pytest.mark.parametrize("stage", [2, 3])
def test_the_deepspeed_accelerate_configs(stage):
    config = yaml.safe_load((CONFIG_DIR / "accelerate" / f"zero{stage}.yaml").read_text())
    assert config["distributed_type"] == "DEEPSPEED" and config["deepspeed_config"]["zero_stage"] == stage
    assert config["mixed_precision"] == "bf16"  # bf16 compute; DeepSpeed keeps the fp32 master weights
