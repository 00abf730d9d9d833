"""SFT on refined transcripts: a thin layer over TRL's ``SFTTrainer``.

The conversations are rendered here, with :func:`~sttgym.training.render.render` (the
rendering RL uses too), into ``input_ids`` and ``assistant_masks``; ``SFTTrainer`` then does
what it does with a tokenized dataset: it turns the mask into labels (the loss is on the
assistant's tokens only), packs to ``max_length`` if asked, and trains. Rows longer than
``max_length``, which TRL would cut or drop, are refused first
(:func:`~sttgym.training.lengths.check_sft`). A run directory holds the dataset it trained on
(``data/``, reused when the run resumes), TRL's checkpoints, ``metrics.jsonl`` and the final
model in ``final/``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from transformers import AutoTokenizer, TrainerCallback
from transformers.trainer_utils import get_last_checkpoint

from sttgym.models.template import stop_token_ids
from sttgym.training.config import Instances, SFTSettings, resolve_model, use_threads, world_size
from sttgym.training.data import build_sft_dataset, run_dataset
from sttgym.training.lengths import check_sft
from sttgym.training.render import prepare_tokenizer, render

__all__ = ["JsonlMetrics", "tokenize", "sft_data", "train_sft"]


class JsonlMetrics(TrainerCallback):
    """Appends every log the trainer emits to a JSON-lines file, with its step and epoch."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def on_log(self, args: Any, state: Any, control: Any, logs: dict | None = None, **kwargs: Any) -> None:
        if state.is_world_process_zero and logs:
            with self.path.open("a") as f:
                f.write(json.dumps({"step": state.global_step, "epoch": state.epoch, **logs}) + "\n")


def tokenize(dataset: Any, tokenizer: Any, assistant_only: bool = True) -> Any:
    """Rows of conversations -> ``input_ids`` (and ``assistant_masks`` for an assistant-only loss)."""
    def row(example: dict) -> dict:
        ids, mask = render(tokenizer, example["messages"], example["tools"])
        return {"input_ids": ids, "assistant_masks": mask} if assistant_only else {"input_ids": ids}

    return dataset.map(row, remove_columns=dataset.column_names)


def sft_data(instances: Instances, folder: Path) -> Any:
    """The transcripts to train on (see :func:`~sttgym.training.data.run_dataset`)."""
    def build() -> tuple[Any, dict]:
        dataset, stats = build_sft_dataset(instances.count, instances.ids(), seed=instances.seed,
                                           start=instances.start, min_reward=instances.min_reward,
                                           refine=instances.refine, reasoning=instances.reasoning)
        return dataset, stats.summary()

    return run_dataset(folder, instances.path, build)


def train_sft(settings: SFTSettings, out: str | Path, model: str | None = None) -> Path:
    """Run (or resume) SFT in ``out``; returns the directory of the final model."""
    from trl import SFTConfig, SFTTrainer

    use_threads(settings.threads)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    start = resolve_model(model or settings.model, out, settings.tiny)
    tokenizer = prepare_tokenizer(AutoTokenizer.from_pretrained(start))
    options = {"report_to": "none", **settings.trainer}
    assistant_only = bool(options.pop("assistant_only_loss", True))
    if settings.global_batch_size:
        per_step = options.get("per_device_train_batch_size", 8) * world_size()
        options["gradient_accumulation_steps"] = max(1, settings.global_batch_size // per_step)
    # The mask is already in the data; TRL's own flag would ask for untokenized conversations.
    args = SFTConfig(output_dir=str(out), assistant_only_loss=False, **options)
    dataset = tokenize(sft_data(settings.data, out / "data"), tokenizer, assistant_only)
    check_sft(dataset, args.max_length)  # SFTConfig's default max_length too, before TRL cuts or drops a row
    trainer = SFTTrainer(model=start, args=args, train_dataset=dataset, processing_class=tokenizer,
                         callbacks=[JsonlMetrics(out / "metrics.jsonl")])
    trainer.train(resume_from_checkpoint=get_last_checkpoint(str(out)))
    final = out / "final"
    # Whatever serves the checkpoint (transformers, vLLM) then stops at the end of a turn, not only at end-of-sequence.
    trainer.model.generation_config.eos_token_id = stop_token_ids(tokenizer, trainer.model)
    trainer.save_model(str(final))
    tokenizer.save_pretrained(str(final))
    return final
