"""Can a tiny model learn to copy what it has read, from random strings, in CPU minutes?

The experiments behind docs/training.md ("Copy pretraining" and "What limits the tiny model"),
on the CPU demo's model shape (1,024-token BPE plus the digit runs, 128 wide, 4 layers).
Each trains one fresh model on one synthetic task and prints, every 20 steps, the training
loss and the share of predictable tokens right on held-out rows of three kinds: ``fixed``
(a string of 96 tokens shown twice, the distance copy pretraining trains), ``twice`` (a
string of random length at a random place, shown again right after itself) and ``span`` (a
string copied to a random later place). Only a content look-up (find the earlier occurrence
of the current token, read on) predicts the last two.

    python examples/copy_pretraining.py repeats --mode fixed --steps 280
    python examples/copy_pretraining.py repeats --mode twice --steps 280
    python examples/copy_pretraining.py repeats --mode fixed,twice --steps 600   # 300 of each, in turn
    python examples/copy_pretraining.py repeats --mode mix --steps 600           # both kinds in every batch
    python examples/copy_pretraining.py repeats --mode twice --steps 500 --pool 64   # or --pool 256
    python examples/copy_pretraining.py recall --steps 400 [--copied]            # keys, then their values again
    python examples/copy_pretraining.py digits                                   # digit tokens per oracle transcript

Rows are 192 tokens, batches 32, AdamW at 3e-3 (betas 0.9/0.98, warmup a tenth of the steps);
one thread, about 0.8 s a step. ``--copied`` starts from the demo's copy-pretrained base model.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from sttgym.models.tiny import build_tiny_model, holds_digit, train_steps

ROW = 192
DEMO_SHAPE = {"vocab_size": 1024, "hidden_size": 128, "num_layers": 4, "intermediate_size": 384, "num_heads": 4,
              "num_kv_heads": 2}


def model_and_tokens(work: Path, copy_steps: int):
    """A fresh demo-shaped model (after ``copy_steps`` of copy pretraining), its tokenizer, digit and other ids."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = build_tiny_model(work / f"base-{copy_steps}", copy_steps=copy_steps, **DEMO_SHAPE)
    tokenizer = AutoTokenizer.from_pretrained(path)
    specials = set(tokenizer.all_special_ids)
    kinds = [(i, digit) for i, digit in enumerate(holds_digit(tokenizer)) if i not in specials]
    digits = torch.tensor([i for i, digit in kinds if digit])
    others = torch.tensor([i for i, digit in kinds if not digit])
    return AutoModelForCausalLM.from_pretrained(path), tokenizer, digits, others


def train(model, steps: int, batch, tests: dict, lr: float = 3e-3) -> None:
    """Trains on ``batch(step, generator)``'s rows; prints the loss and each test's share right every 20 steps."""

    def loss_and_right(rows, mask):
        logits = model(rows).logits[:, :-1]
        target, scored = rows[:, 1:], mask[:, 1:]
        loss = torch.nn.functional.cross_entropy(logits[scored], target[scored])
        return loss, float((logits[scored].argmax(-1) == target[scored]).float().mean())

    generator, began = torch.Generator().manual_seed(0), time.perf_counter()

    def report(step: int, loss: float) -> None:
        if (step + 1) % 20 == 0:
            with torch.no_grad():
                right = {name: round(loss_and_right(*rows)[1], 3) for name, rows in tests.items()}
            print(step + 1, f"{time.perf_counter() - began:.0f}s", f"loss {loss:.3f}", right, flush=True)

    train_steps(model, steps, lambda step: loss_and_right(*batch(step, generator))[0], learning_rate=lr, report=report)


def repeats(args) -> None:
    model, _, digits, others = model_and_tokens(args.work, 0)
    if args.pool:  # draw the strings from a few tokens only
        shuffle = torch.Generator().manual_seed(5)
        digits = digits[torch.randperm(len(digits), generator=shuffle)[: args.pool // 2]]
        others = others[torch.randperm(len(others), generator=shuffle)[: args.pool // 2]]

    def draw(shape, g):
        digit = digits[torch.randint(len(digits), shape, generator=g)]
        other = others[torch.randint(len(others), shape, generator=g)]
        return torch.where(torch.rand(shape, generator=g) < 0.5, digit, other)

    def rows_of(kind: str, n: int, g):
        rows, mask = draw((n, ROW), g), torch.zeros(n, ROW, dtype=torch.bool)
        for r in range(n):
            each = ("fixed", "twice")[int(torch.randint(0, 2, (1,), generator=g))] if kind == "mix" else kind
            if each == "fixed":
                span, source, target = ROW // 2, 0, ROW // 2
            elif each == "twice":
                span = int(torch.randint(8, 80, (1,), generator=g))
                source = int(torch.randint(0, ROW - 2 * span + 1, (1,), generator=g))
                target = source + span
            else:
                span = int(torch.randint(6, 40, (1,), generator=g))
                source = int(torch.randint(0, ROW - 2 * span + 1, (1,), generator=g))
                target = int(torch.randint(source + span, ROW - span + 1, (1,), generator=g))
            rows[r, target:target + span] = rows[r, source:source + span]
            mask[r, target + 1:target + span] = True  # the first token of a copy is unpredictable
        return rows, mask

    held_out = torch.Generator().manual_seed(99)
    tests = {kind: rows_of(kind, 64, held_out) for kind in ("fixed", "twice", "span")}
    modes = args.mode.split(",")
    train(model, args.steps, lambda step, g: rows_of(modes[step * len(modes) // args.steps], 32, g), tests)


def recall(args, keys: int = 64, pairs: int = 8) -> None:
    """Rows of filler with ``pairs`` key and digit-run pairs in the first half, each pair again in the second."""
    model, _, digits, others = model_and_tokens(args.work, 280 if args.copied else 0)
    shuffle = others[torch.randperm(len(others), generator=torch.Generator().manual_seed(3))]
    key_ids, filler = shuffle[:keys], shuffle[keys:]

    def rows_of(n: int, g):
        rows, mask = filler[torch.randint(len(filler), (n, ROW), generator=g)], torch.zeros(n, ROW, dtype=torch.bool)
        for r in range(n):
            k = key_ids[torch.randperm(keys, generator=g)[:pairs]]
            v = digits[torch.randint(len(digits), (pairs,), generator=g)]
            first = torch.randperm(ROW // 4, generator=g)[:pairs] * 2
            second = ROW // 2 + torch.randperm(ROW // 4 - 1, generator=g)[:pairs] * 2
            for i in range(pairs):
                rows[r, first[i]], rows[r, first[i] + 1] = k[i], v[i]
                rows[r, second[i]], rows[r, second[i] + 1] = k[i], v[i]
                mask[r, second[i] + 1] = True
        return rows, mask

    tests = {"recall": rows_of(64, torch.Generator().manual_seed(99))}
    train(model, args.steps, lambda step, g: rows_of(32, g), tests)


def digits_per_transcript(args) -> None:
    """Digit-holding tokens in the oracle's turns of each easy feasible task (seed 1,000,003)."""
    import gymnasium as gym

    import sttgym
    from sttgym.agents import OracleAgent
    from sttgym.rollout import rollout
    from sttgym.training.render import render
    from sttgym.training.transcripts import from_trajectory

    _, tokenizer, _, _ = model_and_tokens(args.work, 0)
    digit = holds_digit(tokenizer)
    for env_id in sttgym.arena_ids():
        if env_id.endswith("-easy"):
            transcript = from_trajectory(rollout(gym.make(env_id), OracleAgent(), seed=1_000_003))
            ids, mask = render(tokenizer, transcript.messages, transcript.tools)
            count = sum(1 for i, m in zip(ids, mask) if m and digit[i])
            print(f"{env_id:<32} {count:>3} digit tokens in {transcript.tool_calls} calls")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=Path("runs/copy-pretraining"), help="where the models are built")
    parser.add_argument("--threads", type=int, default=1)
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("repeats")
    one.add_argument("--mode", default="twice", help="fixed, twice, span or mix; comma-separated ones run in turn")
    one.add_argument("--steps", type=int, default=280)
    one.add_argument("--pool", type=int, default=0, help="draw the strings from this many tokens (0: all)")
    two = commands.add_parser("recall")
    two.add_argument("--steps", type=int, default=400)
    two.add_argument("--copied", action="store_true", help="start from the copy-pretrained base model")
    commands.add_parser("digits")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    {"repeats": repeats, "recall": recall, "digits": digits_per_transcript}[args.command](args)


if __name__ == "__main__":
    main()
