"""Median SFT step time of the CPU demo's tiny model with TRL's activation recomputation on, as a ratio to off.

    python benchmarks/sft_recompute.py [--steps 12] [--repeats 3] [--out /tmp/sft-recompute]

TRL's ``SFTConfig`` turns ``gradient_checkpointing`` on by default; the tiny configs and the
CPU demo turn it off. Each repeat trains ``--steps`` SFT steps both ways, in turn, from the
same model (the demo's shape) on the same refined CarRental-T1-easy transcripts; the time per
step is TRL's ``train_runtime`` over the steps (loading excluded). Medians over repeats are
reported, and their ratio is the figure to quote.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
from pathlib import Path

from sttgym.models.tiny import build_tiny_model
from sttgym.training.config import SFTSettings
from sttgym.training.sft import train_sft

IDS = ["STTArena/CarRental-T1-easy"]


def step_seconds(model: Path, data: Path | None, out: Path, steps: int, recompute: bool) -> float:
    """Seconds per step of one SFT run in ``out``; ``data``: saved transcripts (None: generate them in ``out``)."""
    saved = {"path": str(data)} if data else {}
    settings = SFTSettings(model=str(model), data={"count": 8 * steps, "env_ids": IDS, **saved},
                           trainer={"bf16": False, "use_cpu": True, "report_to": "none", "save_strategy": "no",
                                    "max_steps": steps, "per_device_train_batch_size": 8, "max_length": 8192,
                                    "learning_rate": 3e-3, "gradient_checkpointing": recompute,
                                    "disable_tqdm": True, "logging_steps": steps})
    shutil.rmtree(out, ignore_errors=True)
    train_sft(settings, out)
    logs = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    return next(log["train_runtime"] for log in logs if "train_runtime" in log) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None, help="work directory (default: a temporary one)")
    args = parser.parse_args()
    work = args.out or Path(tempfile.mkdtemp(prefix="sft-recompute-"))
    model = build_tiny_model(work / "model", vocab_size=1024, hidden_size=128, num_layers=4, intermediate_size=384)
    # The first run generates and saves the transcripts (and warms caches up); every later run reads them.
    first = step_seconds(model, None, work / "warmup", args.steps, recompute=False)
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(args.repeats):
        for recompute in (True, False):
            times[recompute].append(step_seconds(model, work / "warmup" / "data", work / f"run-{recompute}",
                                                 args.steps, recompute))
    on, off = statistics.median(times[True]), statistics.median(times[False])
    print(f"warm-up run (not counted): {first:.2f} s/step")
    print(f"recomputation on : median {on:.2f} s/step over {args.repeats} runs of {args.steps} steps")
    print(f"recomputation off: median {off:.2f} s/step")
    print(f"ratio on/off: {on / off:.2f}x")


if __name__ == "__main__":
    main()
