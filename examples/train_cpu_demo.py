"""Train a tiny agent on CPU and measure it: SFT on refined transcripts, then REINFORCE++.

Everything runs offline on a couple of CPU cores, in about 90 minutes on the shared machine it was
last measured on, and some 30 more for the sampled evaluations (docs/training.md has the timings):

1. build a tiny Qwen3 model and its tokenizer from the suite itself (no download), reading ids
   and standalone numbers as slots (``LOT-<e0>``, ``#<e0>``: sttgym.models.slots), and pretrain
   it to repeat random strings (docs/training.md says what that does and does not teach);
2. evaluate it, greedily, on held-out instances: seeds 0-19 (below the training range) of
   three easy ColdChain tasks;
3. SFT on refined, replay-verified noisy-expert transcripts of *training* instances of
   the same tasks;
4. REINFORCE++ from the SFT model on training instances of the same tasks;
5. evaluate the SFT model and the RL model on the same held-out instances, greedily and sampling
   at the RL temperature (``eval_samples`` times each).

    python examples/train_cpu_demo.py --out runs/cpu-demo
    python examples/train_cpu_demo.py --out /tmp/cpu-smoke --quick     # the minutes-long smoke run
    python examples/train_cpu_demo.py --out runs/cr --ids STTArena/CarRental-T1-easy --max-turns 12
    python examples/train_cpu_demo.py --out runs/short --set rl_steps=8 --set 'eval_seeds=[0,1,2,3,4,5]'
    # RL alone from the first run's models, on one task, scored on all three (per task, too)
    python examples/train_cpu_demo.py --out runs/rl-s3 --from runs/cpu-demo --set 'rl_ids=["STTArena/ColdChain-S3-easy"]'

The table reports, per model: the mean reward, the success rate (reward 1), the share of
turns that were one readable tool call or the final reply, the shares of tool calls that
fit a tool's schema and that the world carried out, tool calls per episode, and, teacher-forced
on the oracle's transcripts of the same instances, the shares of the assistant's tokens the model
predicts right: those holding a digit or a slot (ids and times, which must be copied) and the
others; then each stage's reward gain over the one before, paired on the same episodes, with
its 95% bootstrap interval, over all held-out episodes and per task (RL may train on some of
the tasks only: ``rl_ids``), greedy and sampled. ``results.json`` keeps them with the time each
stage took.

What to expect: a model of about a million parameters learns the protocol (one well-formed
call per turn to a real tool with the right argument names, then the final reply), the usual
order of calls, and, with slots, to copy ids and the quantity asked for: teacher-forced it
writes 99% of those tokens right. Greedily, the SFT model completes about half of the 60
held-out episodes; RL's 30 steps raise the reward by about 0.2 greedily and 0.1 sampled, both
with intervals that clear zero (docs/training.md, "Number slots", has the runs and what RL
learned).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import asdict, dataclass, replace
from dataclasses import fields as dataclass_fields
from pathlib import Path

import gymnasium as gym

import sttgym  # noqa: F401  (registers the ids)
from sttgym.evaluation.summary import bootstrap
from sttgym.manifests import BENCHMARK_SEEDS
from sttgym.models.tiny import build_tiny_model
from sttgym.training.config import RLSettings, SFTSettings
from sttgym.training.data import training_instances
from sttgym.training.engine import copy_accuracy, evaluate_policy, rl_readiness
from sttgym.training.rl import train_rl
from sttgym.training.sft import train_sft


@dataclass(frozen=True)
class Plan:
    """The knobs of a demo run."""

    # ColdChain: its calls carry about a fifth of the digits CarRental's do (ids and times
    # a tiny model must copy; docs/training.md), so more of them can come out right.
    ids: tuple[str, ...] = ("STTArena/ColdChain-S3-easy", "STTArena/ColdChain-S2-easy",
                            "STTArena/ColdChain-T1-easy")
    vocab: int = 4096  # with slots, a larger BPE shortens transcripts (and SFT steps) more than it widens the softmax
    hidden: int = 128
    layers: int = 4
    copy_steps: int = 280
    entity_slots: int = 64  # ids read as one slot token each (sttgym.models.slots); 0: as digit runs
    number_slots: bool = True  # standalone integers (the doses asked for) read as slots too: #<e0>
    sft_transcripts: int = 1200
    reasoning: bool = False  # reasoning text beside the calls: prose a model this small cannot use, yet must learn
    sft_epochs: float = 1.0
    sft_batch: int = 8
    sft_lr: float = 3e-3
    rl_ids: tuple[str, ...] = ()  # the tasks RL trains on; empty: all of ``ids`` (held-out scores cover ``ids`` either way)
    rl_steps: int = 30
    tasks_per_step: int = 4
    rollouts_per_task: int = 4  # groups of 2 left S2 worse off; of 4, no task lost (docs/training.md, "Number slots")
    rl_lr: float = 1e-4
    eval_seeds: tuple[int, ...] = tuple(range(20))
    eval_samples: int = 4  # the SFT and RL models are also scored sampling at the RL temperature, this many times each
    max_turns: int = 16
    max_turn_tokens: int = 64


# The fields that shape the base and SFT models: a run may reuse another's models (``--from``) only if these agree.
BEFORE_RL = ("ids", "vocab", "hidden", "layers", "copy_steps", "entity_slots", "number_slots", "sft_transcripts",
             "reasoning", "sft_epochs", "sft_batch", "sft_lr")
# What a run recorded before a field existed did instead (its results.json lacks the field).
UNRECORDED = {"number_slots": False}

FULL = Plan()
QUICK = replace(FULL, ids=FULL.ids[:2], hidden=64, layers=2, copy_steps=4, sft_transcripts=8, sft_batch=4, rl_steps=1,
                tasks_per_step=2, rollouts_per_task=2, eval_seeds=BENCHMARK_SEEDS[:1], eval_samples=2, max_turns=3,
                max_turn_tokens=24)
# TRL turns activation recomputation on by default: memory a tiny model does not need, for 1.1x the time
# per step (benchmarks/sft_recompute.py).
CPU = {"bf16": False, "use_cpu": True, "report_to": "none", "save_strategy": "no", "gradient_checkpointing": False}
RL_TEMPERATURE = 1.0


def run(out: Path, plan: Plan, force_rl: bool = False, reuse: Path | None = None) -> dict:
    """The whole demonstration; returns (and writes) the scores and the stage times.

    With ``reuse``, the output folder of an earlier run with the same :data:`BEFORE_RL` fields, its base and
    SFT models are evaluated again and RL starts from its SFT model, so RL variants cost RL alone.
    """
    out.mkdir(parents=True, exist_ok=True)
    ids = list(plan.ids)
    held_out = [(env_id, seed) for seed in plan.eval_seeds for env_id in ids]
    caps = {"max_turns": plan.max_turns, "max_turn_tokens": plan.max_turn_tokens}
    seconds: dict[str, float] = {}
    scores: dict[str, dict] = {}

    def measure(model: Path, sampled: bool = True) -> dict:
        score = {**evaluate_policy(str(model), held_out, **caps), **copy_accuracy(str(model), held_out)}
        if sampled and plan.eval_samples:  # the policy RL trains is the sampled one; its greedy path may lag
            score["sampled"] = evaluate_policy(str(model), held_out, samples=plan.eval_samples,
                                               temperature=RL_TEMPERATURE, **caps)
        return score

    def timed(name: str, work):
        began = time.perf_counter()
        result = work()
        seconds[name] = round(time.perf_counter() - began, 1)
        print(f"[{name}] {seconds[name]}s", flush=True)
        return result

    if reuse:
        base, sft_model = reuse / "base", reuse / "sft" / "final"
    else:
        base = timed("build", lambda: build_tiny_model(out / "base", vocab_size=plan.vocab, hidden_size=plan.hidden,
                                                       num_layers=plan.layers, intermediate_size=3 * plan.hidden,
                                                       num_heads=plan.hidden // 32 or 2,
                                                       num_kv_heads=plan.hidden // 64 or 1, copy_steps=plan.copy_steps,
                                                       entity_slots=plan.entity_slots, number_slots=plan.number_slots))
    scores["base"] = timed("eval base", lambda: measure(base, sampled=False))  # the sampled scores judge RL

    if not reuse:
        sft = SFTSettings(model=str(base), data={"count": plan.sft_transcripts, "env_ids": ids,
                                                 "reasoning": plan.reasoning},
                          trainer={**CPU, "num_train_epochs": plan.sft_epochs, "learning_rate": plan.sft_lr,
                                   "lr_scheduler_type": "constant_with_warmup", "warmup_steps": 10,
                                   "per_device_train_batch_size": plan.sft_batch,
                                   "max_length": 8192, "logging_steps": 5})
        sft_model = timed("sft", lambda: train_sft(sft, out / "sft"))
    scores["sft"] = timed("eval sft", lambda: measure(sft_model))

    # RL learns from reward differences between a task's rollouts: measure them before paying for RL.
    rl_ids = list(plan.rl_ids or ids)
    samples = training_instances(2 * len(rl_ids), rl_ids)
    readiness = timed("readiness", lambda: rl_readiness(str(sft_model), samples, samples=plan.rollouts_per_task * 2,
                                                        **caps))
    print(f"[readiness] {readiness}", flush=True)
    if readiness["spread"] == 0.0 and not force_rl:
        return record(out, plan, held_out, scores, seconds, readiness, reuse,
                      rl_skipped="no sampled rollouts of a task scored differently: every RL gradient would be 0")

    rl = RLSettings(model=str(sft_model), data={"count": 8 * plan.tasks_per_step * plan.rl_steps, "env_ids": rl_ids},
                    algorithm="reinforce_pp", kl={"coef": 0.05, "placement": "reward", "estimator": "k1"},
                    tasks_per_step=plan.tasks_per_step, rollouts_per_task=plan.rollouts_per_task,
                    max_turns=plan.max_turns, max_turn_tokens=plan.max_turn_tokens, max_episode_tokens=8192,
                    reward=[{"term": "checklist"}, {"term": "impossible_judge"}, {"term": "progress"},
                            {"term": "format", "penalty": 0.1}],
                    trainer={**CPU, "max_steps": plan.rl_steps, "learning_rate": plan.rl_lr,
                             "per_device_train_batch_size": plan.tasks_per_step, "temperature": RL_TEMPERATURE})
    rl_model = timed("rl", lambda: train_rl(rl, out / "rl"))
    scores["rl"] = timed("eval rl", lambda: measure(rl_model))
    return record(out, plan, held_out, scores, seconds, readiness, reuse)


def record(out: Path, plan: Plan, held_out: list, scores: dict, seconds: dict, readiness: dict, reuse: Path | None,
           **extra) -> dict:
    """The run's results, written to ``results.json`` in ``out``."""
    results = {"plan": asdict(plan), "held_out": held_out, "scores": scores, "gains": gains(scores, held_out),
               "seconds": seconds, "readiness": readiness, "total_seconds": round(sum(seconds.values()), 1),
               **({"models_from": str(reuse)} if reuse else {}), **extra}
    (out / "results.json").write_text(json.dumps(results, indent=1))
    return results


def gain(before: dict, after: dict, keep: list[bool] | None = None) -> dict:
    """``after``'s reward minus ``before``'s on the same held-out episodes (those ``keep`` marks, if given), with
    its 95% paired bootstrap interval."""
    pairs = [pair for i, pair in enumerate(zip(before["rewards"], after["rewards"])) if keep is None or keep[i]]
    interval = bootstrap(pairs, lambda rows: statistics.fmean(b - a for a, b in rows))
    return {"gain": statistics.fmean(b - a for a, b in pairs), "ci95": list(interval)}


def gains(scores: dict, held_out: list) -> dict:
    """Each stage against the one before it (SFT over the base model, RL over SFT), over all held-out episodes
    and per task (``by_task``): a gain on the tasks RL trained on may be paid for on the others. Stages scored
    sampling as well are compared that way too (``"rl - sft, sampled"``)."""
    stages = [name for name in ("base", "sft", "rl") if name in scores]
    tasks = sorted({env_id for env_id, _ in held_out})

    def change(before: dict, after: dict) -> dict:
        return {**gain(before, after), "by_task": {task: gain(before, after, [env_id == task for env_id, _ in held_out])
                                                   for task in tasks}}

    greedy = {f"{b} - {a}": change(scores[a], scores[b]) for a, b in zip(stages, stages[1:])}
    sampled = {f"{b} - {a}, sampled": change(scores[a]["sampled"], scores[b]["sampled"])
               for a, b in zip(stages, stages[1:]) if "sampled" in scores[a] and "sampled" in scores[b]}
    return {**greedy, **sampled}


def table(results: dict) -> str:
    keys = ("reward", "success", "readable_turns", "valid_calls", "accepted_calls", "tool_calls", "digit_tokens",
            "other_tokens")
    lines = [f"{'model':<13}" + "".join(f"{k:>16}" for k in keys)]
    for name, score in results["scores"].items():
        lines.append(f"{name:<13}" + "".join(f"{score[k]:>16.3f}" for k in keys))
    for name, score in results["scores"].items():
        if "sampled" in score:
            lines.append(f"{name + ', sampled':<13}"
                         + "".join(f"{score['sampled'][k]:>16.3f}" if k in score["sampled"] else f"{'':>16}"
                                   for k in keys))
    trained = results["plan"]["rl_ids"] or results["plan"]["ids"]
    for name, change in results["gains"].items():
        lines.append(f"reward {name}: {interval(change)}")
        for task, part in change["by_task"].items():
            mark = " (RL trained on it)" if name.startswith("rl - sft") and task in trained else ""
            lines.append(f"    {task}{mark}: {interval(part)}")
    lines.append(f"{len(results['held_out'])} held-out episodes; total {results['total_seconds']}s"
                 + (f" (base and SFT models from {results['models_from']})" if "models_from" in results else ""))
    if "rl_skipped" in results:
        lines.append(f"RL skipped: {results['rl_skipped']} (--force-rl runs it anyway)")
    return "\n".join(lines)


def interval(change: dict) -> str:
    low, high = change["ci95"]
    return f"{change['gain']:+.3f} (95% paired bootstrap interval {low:+.3f} to {high:+.3f})"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("runs/cpu-demo"))
    parser.add_argument("--quick", action="store_true", help="A minutes-long smoke run with tiny numbers.")
    parser.add_argument("--ids", type=lambda text: tuple(text.split(",")),
                        help="Comma-separated env ids to train and evaluate on instead of the plan's.")
    parser.add_argument("--max-turns", type=int, help="Turns per episode, instead of the plan's.")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="Change a field of the plan, the value read as JSON (--set rl_steps=40 --set reasoning=true).")
    parser.add_argument("--from", dest="reuse", type=Path, metavar="DIR",
                        help="Reuse the base and SFT models of an earlier run's --out DIR (same plan up to RL): "
                             "evaluate them again and run RL alone.")
    parser.add_argument("--force-rl", action="store_true",
                        help="Run RL even when the SFT model's sampled rollouts show no reward spread.")
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL
    plan = replace(plan, ids=args.ids or plan.ids, max_turns=args.max_turns or plan.max_turns)
    fields = {f.name for f in dataclass_fields(Plan)}
    for item in args.set:
        name, _, text = item.partition("=")
        if name not in fields:
            parser.error(f"--set {item}: the plan has no field {name!r} (it has {', '.join(sorted(fields))})")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            parser.error(f"--set {item}: {text!r} is not a JSON value")
        plan = replace(plan, **{name: tuple(value) if isinstance(value, list) else value})
    unknown = [env_id for env_id in plan.ids + plan.rl_ids if env_id not in gym.registry]
    if unknown:
        parser.error(f"unknown env ids: {', '.join(unknown)}")
    if not set(plan.rl_ids) <= set(plan.ids):
        parser.error(f"rl_ids must be among the ids SFT trains on ({', '.join(plan.ids)})")
    if args.reuse:
        problem = reuse_problem(args.reuse, plan)
        if problem:
            parser.error(f"--from {args.reuse}: {problem}")
    results = run(args.out, plan, args.force_rl, args.reuse)
    print(table(results))
    return results


def reuse_problem(earlier: Path, plan: Plan) -> str | None:
    """Why the models of the run in ``earlier`` cannot stand in for this plan's base and SFT models (None: they can)."""
    try:
        before = json.loads((earlier / "results.json").read_text())["plan"]
    except (OSError, ValueError, KeyError):
        return "no results.json of a finished run there"
    if not (earlier / "sft" / "final" / "model.safetensors").exists():
        return "no SFT model there (sft/final)"
    now = asdict(plan)
    differ = [name for name in BEFORE_RL if json.dumps(before.get(name, UNRECORDED.get(name))) != json.dumps(now[name])]
    return f"its plan differs before RL in {', '.join(differ)}" if differ else None


if __name__ == "__main__":
    main()
