"""Training run settings, read from the YAML files in ``training/configs/``.

A file says ``kind: sft`` or ``kind: rl``; every other key maps onto :class:`SFTSettings` or
:class:`RLSettings` (unknown keys are errors, so a typo never trains silently with a default).
``trainer`` holds keyword arguments for TRL's ``SFTConfig`` / ``GRPOConfig`` as they are;
the keys the RL layer derives itself (batch shapes, the KL weight, ...) are refused there.

``model: tiny`` builds the tiny offline model (:func:`sttgym.models.tiny.build_tiny_model`,
with the ``tiny`` arguments) inside the run directory; anything else is a checkpoint path
or a hub name.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from sttgym.manifests import TRAINING_SEED_START
from sttgym.registry import DOMAINS, arena_ids, parse_arena_id, registered_arena_id

__all__ = ["Instances", "SFTSettings", "KLSettings", "RLSettings", "load_settings", "resolve_model", "use_threads",
           "world_size", "CONFIG_DIR"]

CONFIG_DIR = Path(__file__).parent / "configs"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Instances(_Strict):
    """Which training instances: env ids (explicit, or all arena ids filtered by domain and level) and how many."""

    count: int
    env_ids: list[str] | None = None
    domains: list[str] | None = None
    exclude_domains: list[str] | None = None  # held out: e.g. the domains a benchmark run tests generalisation on
    levels: list[str] | None = None
    seed: int = 0  # seeds the noisy expert's choices
    start: int = TRAINING_SEED_START  # first instance seed; must be a training seed
    path: str | None = None  # a dataset saved earlier, used instead of generating one
    min_reward: float = 1.0  # SFT only: transcripts scoring less are left out
    refine: bool = True  # SFT only: False keeps the transcripts as played (the "without refinement" ablation)
    reasoning: bool = True  # SFT only: assistant turns carry short reasoning text beside their calls

    def ids(self) -> list[str]:
        """The env ids these instances are drawn from, in registry order."""
        if self.env_ids:
            return [registered_arena_id(i) for i in self.env_ids]  # never "module:..." ids gym.make would import
        named = {*(self.domains or ()), *(self.exclude_domains or ())}
        if named - set(DOMAINS):
            raise ValueError(f"unknown domain(s) {', '.join(sorted(named - set(DOMAINS)))}; registered: "
                             f"{', '.join(sorted(DOMAINS))}")
        ids = [i for i in arena_ids()
               if (not self.domains or parse_arena_id(i)[0] in self.domains)
               and parse_arena_id(i)[0] not in (self.exclude_domains or ())
               and (not self.levels or parse_arena_id(i)[2] in self.levels)]
        if not ids:
            raise ValueError(f"no registered arena id matches domains={self.domains} "
                             f"exclude_domains={self.exclude_domains} levels={self.levels}")
        return ids


def _runs_remote_code(value: Any) -> bool:
    """Whether a trainer section asks to execute code shipped with a model (at any depth)."""
    if isinstance(value, dict):
        return any(k == "trust_remote_code" and v not in (False, None) or _runs_remote_code(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_runs_remote_code(v) for v in value)
    return False


def _half_precision_weights(trainer: dict[str, Any]) -> str | None:
    """The 16-bit dtype a trainer section loads the weights in, if any."""
    loading = trainer.get("model_init_kwargs") or {}
    dtype = str(loading.get("dtype") or loading.get("torch_dtype"))
    return dtype if dtype.removeprefix("torch.") in ("bfloat16", "float16") else None


class _Trains(_Strict):
    trainer: dict[str, Any] = Field(default_factory=dict)
    # Threads torch computes with in each process: on a few shared cores a small model's matmuls run
    # far slower with several threads than with one, so the CPU configs set 1. None: torch's default.
    threads: int | None = None

    @model_validator(mode="after")
    def _no_remote_code(self):
        if _runs_remote_code(self.trainer):
            raise ValueError("trainer: trust_remote_code would run code from the model's repository; the models "
                             "sttgym trains need none, so a config may not turn it on")
        return self

    @model_validator(mode="after")
    def _master_weights_in_fp32(self):
        # AdamW updates 16-bit weights in 16 bits: at lr 1e-6 most updates round away. DeepSpeed and FSDP keep
        # fp32 master weights of their own; otherwise load fp32 and let bf16 autocast do the compute.
        dtype = _half_precision_weights(self.trainer)
        if dtype and not (self.trainer.get("deepspeed") or self.trainer.get("fsdp")):
            raise ValueError(f"trainer.model_init_kwargs.dtype {dtype} trains 16-bit weights with a plain optimizer, "
                             "where small updates round away; load float32 weights and set bf16: true (mixed "
                             "precision), or use DeepSpeed/FSDP, which keep fp32 master weights")
        return self


class SFTSettings(_Trains):
    kind: Literal["sft"] = "sft"
    model: str
    tiny: dict[str, Any] = Field(default_factory=dict)
    data: Instances = Field(default_factory=lambda: Instances(count=2212))
    global_batch_size: int | None = None  # sets gradient_accumulation_steps over all processes


class KLSettings(_Strict):
    """The token-level KL to the reference policy: in the reward (any estimator) or in the loss (TRL's k3)."""

    coef: float = 0.0
    placement: Literal["reward", "loss"] = "reward"
    estimator: Literal["k1", "k2", "k3"] = "k1"

    @model_validator(mode="after")
    def _loss_uses_k3(self) -> KLSettings:
        if self.placement == "loss" and self.estimator != "k3":
            raise ValueError("a KL term in the loss uses TRL's k3 estimator; set estimator: k3")
        return self


DERIVED = ("beta", "num_generations", "generation_batch_size", "steps_per_generation", "gradient_accumulation_steps",
           "max_completion_length", "remove_unused_columns", "output_dir")


class RLSettings(_Trains):
    kind: Literal["rl"] = "rl"
    model: str
    tiny: dict[str, Any] = Field(default_factory=dict)
    data: Instances = Field(default_factory=lambda: Instances(count=8119))
    algorithm: Literal["reinforce_pp", "reinforce_pp_baseline"] = "reinforce_pp"
    kl: KLSettings = Field(default_factory=KLSettings)
    gamma: float = 1.0
    tasks_per_step: int = 32
    rollouts_per_task: int = 4
    max_turns: int = 50
    max_turn_tokens: int = 4096
    max_episode_tokens: int = 32768
    reward: list[dict[str, Any]] | None = None  # reward terms (sttgym.rewards.build_reward); None: the env's reward

    @model_validator(mode="after")
    def _no_derived_trainer_keys(self) -> RLSettings:
        clash = sorted(set(self.trainer) & set(DERIVED))
        if clash:
            raise ValueError(f"trainer keys {clash} are derived from the RL settings; set those instead")
        if self.algorithm == "reinforce_pp_baseline" and self.gamma != 1.0:
            raise ValueError("reinforce_pp_baseline compares undiscounted returns within a group; set gamma: 1")
        return self


def apply_overrides(raw: dict, args: list[str]) -> dict:
    """``raw`` with command-line overrides in TRL's style applied: ``--max_steps 2``, ``--learning_rate=1e-5``.

    A dotted key sets a nested field (``--data.count 64``, ``--kl.coef 0.01``); a key that is not
    a field of the run file is a trainer argument (``trainer: {max_steps: 2}``). Values are read
    as YAML (``2`` is a number, ``true`` a boolean).
    """
    settings = SFTSettings if raw.get("kind") == "sft" else RLSettings
    raw = json.loads(json.dumps(raw))  # a copy: nested sections are changed in place below
    rest = list(args)
    while rest:
        flag = rest.pop(0)
        if not flag.startswith("--") or len(flag) < 3:
            raise ValueError(f"expected --key value, got {flag!r}")
        key, has_value, value = flag[2:].partition("=")
        if not has_value:
            if not rest or rest[0].startswith("--"):
                raise ValueError(f"{flag} needs a value")
            value = rest.pop(0)
        path = key.replace("-", "_").split(".")
        if path[0] not in settings.model_fields:
            path = ["trainer", *path]
        node = raw
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ValueError(f"--{key}: {part} is not a section")
        node[path[-1]] = _scalar(value)
    return raw


def _scalar(text: str) -> Any:
    """A command-line value read as YAML; ``1e-5`` is a number too (YAML 1.1 would keep it a string)."""
    value = yaml.safe_load(text)
    if isinstance(value, str):
        try:
            return float(value) if value.strip().lower() not in ("nan", "inf", "-inf", "infinity") else value
        except ValueError:
            return value
    return value


def load_settings(path: str | Path, overrides: list[str] = ()) -> SFTSettings | RLSettings:
    """Read a run's YAML file, with command-line ``overrides`` (see :func:`apply_overrides`)."""
    raw = apply_overrides(yaml.safe_load(Path(path).read_text()) or {}, list(overrides))
    kind = raw.get("kind")
    if kind not in ("sft", "rl"):
        raise ValueError(f"{path}: 'kind' must be 'sft' or 'rl', not {kind!r}")
    return (SFTSettings if kind == "sft" else RLSettings).model_validate(raw)


def resolve_model(name: str, out: Path, tiny: dict[str, Any]) -> str:
    """The checkpoint to start from: ``tiny`` builds the tiny model under ``out``."""
    if name != "tiny":
        return name
    from sttgym.models.tiny import build_tiny_model

    return str(build_tiny_model(out / "tiny-model", **tiny))


def use_threads(threads: int | None) -> None:
    """Set torch's thread count for this process when a run's settings ask for one."""
    if threads:
        import torch

        torch.set_num_threads(threads)


def world_size() -> int:
    """Processes taking part in training (set by ``accelerate launch`` / ``torchrun``)."""
    return int(os.environ.get("WORLD_SIZE", "1"))
