"""``sttgym train data|sft|rl``: training data at scale, SFT on refined transcripts, REINFORCE++ RL.

``--config`` takes a YAML file or the name of one bundled in ``sttgym/training/configs``
(``paper-sft``, ``tiny-rl``, ...). A run writes into ``--out``: its data, TRL checkpoints,
``metrics.jsonl`` and ``final/``; started again with the same ``--out`` it resumes from its
last checkpoint. torch, transformers and trl come with the ``train`` extra and are imported
only when a command runs.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import os
import time
from pathlib import Path
from types import ModuleType
from typing import Optional

import typer

from sttgym.agents.llm import LLMAgent
from sttgym.cli.app import app, make_console
from sttgym.cluster import ray_session
from sttgym.models import load_model

console = make_console()
train_app = typer.Typer(help="Train agents: data, SFT on refined transcripts, REINFORCE++ RL on the environments.",
                        no_args_is_help=True)
app.add_typer(train_app, name="train")

CONFIG_HELP = "YAML run file, or the name of a bundled one (paper-sft, paper-rl, tiny-sft, tiny-rl)."


def _load(module: str) -> ModuleType:
    """Import a training module, or stop with a hint to install the train extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        console.print(f"[red]training needs the train extra ({exc.name} is missing): pip install 'sttgym[train]'[/red]")
        raise typer.Exit(2) from None


OVERRIDES = {"allow_extra_args": True, "ignore_unknown_options": True}  # --max_steps 2, as TRL's scripts take


def _settings(config: str, kind: str, overrides: list[str] = ()):
    settings_module = _load("sttgym.training.config")
    bundled = settings_module.CONFIG_DIR
    path = Path(config)
    if not path.exists() and (bundled / f"{config}.yaml").exists():
        path = bundled / f"{config}.yaml"
    if not path.exists():
        names = ", ".join(sorted(p.stem for p in bundled.glob("*.yaml")))
        console.print(f"[red]no config {config!r}; bundled: {names}[/red]")
        raise typer.Exit(2)
    try:
        settings = settings_module.load_settings(path, overrides)
    except ValueError as exc:  # pydantic's ValidationError included: the config or an override does not fit
        console.print(f"[red]{path}: {exc}[/red]")
        raise typer.Exit(2) from None
    if settings.kind != kind:
        console.print(f"[red]{path} is a {settings.kind} config, not {kind}[/red]")
        raise typer.Exit(2)
    return settings


@train_app.command("sft", context_settings=OVERRIDES)
def sft(ctx: typer.Context, config: str = typer.Option(..., "--config", help=CONFIG_HELP),
        model: str = typer.Option(None, "--model", help="Start from this checkpoint instead of the config's."),
        out: Path = typer.Option(..., "--out", help="Run directory (resumes when it holds checkpoints).")) -> None:
    """Supervised fine-tuning on refined expert transcripts (assistant-only loss).

    Any further --key value overrides the config: --max_steps 2 (a trainer argument), --data.count 64."""
    settings = _settings(config, "sft", ctx.args)
    console.print(f"final model: {_load('sttgym.training.sft').train_sft(settings, out, model)}")


@train_app.command("rl", context_settings=OVERRIDES)
def rl(ctx: typer.Context, config: str = typer.Option(..., "--config", help=CONFIG_HELP),
       model: str = typer.Option(None, "--model", help="Start from this checkpoint (usually the SFT model)."),
       out: Path = typer.Option(..., "--out", help="Run directory (resumes when it holds checkpoints).")) -> None:
    """REINFORCE++ (or REINFORCE++-baseline) on multi-turn environment rollouts.

    Any further --key value overrides the config: --max_steps 2 (a trainer argument), --kl.coef 0.01."""
    settings = _settings(config, "rl", ctx.args)
    console.print(f"final model: {_load('sttgym.training.rl').train_rl(settings, out, model)}")


@train_app.command("data")
def data(out: Path = typer.Option(..., "--out", help="Writes sft/ and rl/ datasets and stats.json here."),
         sft_count: int = typer.Option(2212, "--sft", help="Refined SFT transcripts to make."),
         rl_count: int = typer.Option(8119, "--rl", help="RL task instances to list."),
         domain: list[str] = typer.Option(None, "--domain", help="Only these domains (repeatable)."),
         hold_out: list[str] = typer.Option(None, "--hold-out",
                                            help="Never these domains (repeatable): keep them for testing."),
         level: list[str] = typer.Option(None, "--level", help="Only these levels (repeatable)."),
         seed: int = typer.Option(0, "--seed", help="Seeds the noisy expert (or the LLM's sampling)."),
         rollout_model: str = typer.Option(None, "--rollout-model",
                                           help="Imperfect transcripts from this LLM, not the noisy expert."),
         refiner_model: str = typer.Option(None, "--refiner-model", help="Refine with this LLM, not the rules."),
         base_url: str = typer.Option(None, "--base-url", help="OpenAI-compatible server of the models above."),
         min_reward: float = typer.Option(1.0, "--min-reward", help="Keep transcripts scoring at least this."),
         refine: bool = typer.Option(True, "--refine/--no-refine",
                                     help="Refine the transcripts; --no-refine keeps them as played (the paper's "
                                          "'SFT without refinement' ablation), still filtered by --min-reward."),
         reasoning: bool = typer.Option(True, "--reasoning/--no-reasoning",
                                        help="Give assistant turns short reasoning text beside their tool calls."),
         workers: int = typer.Option(os.cpu_count() or 1, "--workers",
                                     help="Processes that play instances (the noisy expert and rule refiner only; "
                                          "the data are the same for any number)."),
         ray: Optional[str] = typer.Option(None, "--ray", help="Play the instances on Ray instead: 'local' starts a "
                                           "Ray instance here, or a cluster address ('auto', 'ray://head:10001'). "
                                           "The data are the same.")) -> None:
    """Make the training data: imperfect transcripts refined and replay-verified, and RL instances."""
    datasets = _load("sttgym.training.data")
    try:
        ids = _load("sttgym.training.config").Instances(count=0, domains=domain or None, exclude_domains=hold_out or None,
                                                         levels=level or None).ids()
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    options = {}
    if workers < 1:
        raise typer.BadParameter("--workers must be at least 1")
    if rollout_model:
        model = load_model(rollout_model, base_url)
        options["agent"] = lambda rng: LLMAgent(model, seed=int(rng.integers(2**31)))
    if refiner_model:
        if not refine:
            raise typer.BadParameter("--refiner-model refines; it cannot go with --no-refine")
        options["refiner"] = _load("sttgym.training.refine").LLMRefiner(load_model(refiner_model, base_url),
                                                                         temperature=0.0)
    if ray is not None and options:
        raise typer.BadParameter("--ray plays the noisy expert and rule refiner only (a model is not shared)")
    if ray is not None and importlib.util.find_spec("ray") is None:
        raise typer.BadParameter("--ray needs Ray: pip install 'sttgym[ray]'")
    # one connection for both datasets
    with contextlib.nullcontext() if ray is None else ray_session(ray):
        began = time.perf_counter()
        sft_set, stats = datasets.build_sft_dataset(sft_count, ids, seed=seed, min_reward=min_reward,
                                                    workers=1 if options else workers, refine=refine,
                                                    reasoning=reasoning, ray=ray, **options)
        sft_seconds = time.perf_counter() - began
        datasets.save_dataset(sft_set, out / "sft")
        began = time.perf_counter()
        rl_set = datasets.build_rl_dataset(rl_count, ids, workers=workers, ray=ray)
        rl_seconds = time.perf_counter() - began
    datasets.save_dataset(rl_set, out / "rl")
    spread = {"sft": datasets.distribution(sft_set), "rl": datasets.distribution(rl_set)}
    report = {"env_ids": len(ids), "sft": {**stats.summary(), "seconds": round(sft_seconds, 2)},
              "rl": {"instances": len(rl_set), "seconds": round(rl_seconds, 2)}, "distribution": spread}
    (out / "stats.json").write_text(json.dumps(report, indent=1))
    try:
        datasets.distribution_figure(out / "distribution.png", spread)
    except ImportError:  # matplotlib comes with the report extra; stats.json holds the same counts
        console.print("no distribution.png: pip install 'sttgym[report]' for figures")
    sft = report["sft"]
    shape = (f"tool calls per transcript {sft['avg_tool_calls_before']:.2f} -> {sft['avg_tool_calls_after']:.2f} "
             f"after refinement ({stats.refined} refined)" if refine
             else f"unrefined (--no-refine), {sft['avg_tool_calls_after']:.2f} tool calls per transcript")
    text = (f"; {sft['calls_with_text']:.0%} of calls with reasoning text ({sft['avg_text_words']:.1f} words)"
            if reasoning else "; no reasoning text")
    console.print(f"SFT: {stats.kept} transcripts from {stats.attempted} instances in {sft_seconds:.1f}s; "
                  f"{shape}{text}")
    console.print(f"RL: {len(rl_set)} instances in {rl_seconds:.1f}s over {len(ids)} env ids -> {out}")
