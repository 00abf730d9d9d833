"""``sttgym eval`` (an agent over a benchmark suite) and ``sttgym report`` (tables from saved runs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from sttgym.cli.app import app, make_console, progress
from sttgym.manifests import MANIFEST

console = make_console()


def finish(runner, config) -> dict:
    """Summarise a runner's records into ``summary.json`` and the report beside it."""
    from sttgym.evaluation.reports import write_report
    from sttgym.evaluation.runner import SUMMARY
    from sttgym.evaluation.summary import summarise

    summary = summarise(runner.records(), config.suite, config.k, config.label, config.weights)
    (runner.out / SUMMARY).write_text(json.dumps(summary, indent=1))
    write_report(runner.out, summary)
    return summary


def _print(summary: dict, out: Path) -> None:
    table = Table(title=f"{summary['agent']} · {summary['suite']} · {summary['episodes']} episodes")
    if summary["suite"] == "arena":
        cols = ["easy", "medium", "hard", "impossible", "overall"]
        for c in ["", *cols]:
            table.add_column(c)
        for name, values, stds in (("Pass@1", summary, summary["std"]),
                                   ("checklist score", summary["score"], summary["score_std"])):
            table.add_row(name, *("–" if values.get(c) is None else f"{100 * values[c]:.2f} ±{100 * stds.get(c, 0):.2f}"
                                  for c in cols))
    else:
        table.add_column("condition")
        table.add_column("completion rate")
        table.add_column("tasks solved")
        for name, v in summary["conditions"].items():
            table.add_row(name, f"{v['completion_rate']:.2f}", f"{v['tasks_solved']:.2f}")
    console.print(table)
    if summary["errors"]:
        console.print(f"[yellow]{summary['errors']} episodes ended on an error "
                      "(see 'error' in the trajectories; --retry-errors plays them again)[/yellow]")
    console.print(f"report: {out / 'report.md'}  summary: {out / 'summary.json'}  "
                  f"trajectories: {out / 'trajectories.jsonl'}")


@app.command("eval")
def evaluate(
    suite: str = typer.Option("arena", help="Benchmark: arena (STT-Arena manifest) or scramble (20 episodes per condition)."),
    manifest: str = typer.Option(MANIFEST, help="Arena: the frozen benchmark version to measure."),
    tasks: Optional[Path] = typer.Option(None, help="Arena: measure the instances of a file written by sttgym export "
                                         "instead of a manifest."),
    agent: Optional[str] = typer.Option(None, help="Reference agent: oracle, nominal, noop, random or cycle-tracing. "
                                        "Default: nominal, unless --model is given."),
    model: Optional[str] = typer.Option(None, help="LLM to evaluate: a checkpoint path or hub name (local "
                                        "transformers), or the served model's name with --base-url."),
    base_url: Optional[str] = typer.Option(None, help="OpenAI-compatible server, e.g. http://localhost:8000/v1 "
                                           "(key from OPENAI_API_KEY)."),
    memory: bool = typer.Option(False, "--memory", help="Use the memory-augmented LLM agent (ScrambleToolBench Appendix A)."),
    runs: Optional[int] = typer.Option(None, min=1, help="Repetitions of every episode; tables give mean ± std over runs "
                                       "[default: 3 for a model, 1 for a reference agent, which plays the same "
                                       "episode every time]."),
    k: int = typer.Option(1, min=1, help="Report pass@1..k (runs is raised to k if lower)."),
    limit: Optional[int] = typer.Option(None, min=1, help="Only the first N instances (of the protocol's)."),
    full: bool = typer.Option(False, "--full", help="Arena: every instance of the manifest (3,600, 10 per id) "
                              "instead of each id's first (360, the default: near the paper's 227 tasks)."),
    seed: int = typer.Option(0, help="Base seed of the LLM's sampling."),
    out: Path = typer.Option(Path("runs/eval"), help="Run directory; an existing one is resumed."),
    domain: Optional[list[str]] = typer.Option(None, help="Arena: only this domain (repeatable: a held-out set)."),
    static: bool = typer.Option(False, "--static", help="Arena: also run every instance without triggers (static ablation)."),
    no_user: bool = typer.Option(False, "--no-user", help="Arena: also run every instance without chat_with_user."),
    thinking: Optional[bool] = typer.Option(None, "--thinking/--no-thinking", help="LLM reasoning mode."),
    reasoning_effort: Optional[str] = typer.Option(None, help="A served reasoning model's effort: low, medium or "
                                                   "high (sent instead of a temperature)."),
    hint: bool = typer.Option(False, "--hint", help="Ablation: tell the model that the world can change while it "
                              "works (the benchmark's prompt, as the paper's, does not)."),
    temperature: float = typer.Option(0.7, help="LLM sampling temperature."),
    max_new_tokens: int = typer.Option(2048, min=1, help="Tokens per LLM turn."),
    workers: int = typer.Option(8, min=1, help="Episodes in flight: threads for a server, the batch for a local model."),
    user: str = typer.Option("rule", help="User simulator: rule or llm."),
    judge: str = typer.Option("rule", help="Impossible-task judge: rule (evidence-based), llm (the paper's two "
                              "criteria) or llm-strict (llm plus the blocking facts and the forbidden-change checks)."),
    sim_model: Optional[str] = typer.Option(None, help="Model of the LLM user/judge (default: the tested model)."),
    sim_base_url: Optional[str] = typer.Option(None, help="Server of --sim-model."),
    retry_errors: bool = typer.Option(False, "--retry-errors", help="On resume, play again the episodes that ended on an error."),
    request_timeout: float = typer.Option(120.0, help="Seconds to wait for one reply from a server (--base-url)."),
    max_retries: int = typer.Option(6, help="Retries of one request on rate limits, timeouts and server errors."),
    weights: str = typer.Option("paper", help="Arena: how overall Pass@1 weights the levels: paper (71/67/59/30 "
                                "of 227 tasks) or suite (each level's instances)."),
    ray: Optional[str] = typer.Option(None, help="Play the episodes on Ray: 'local' starts a Ray instance here, or a "
                                      "cluster address ('auto', 'ray://head:10001'). Same output as a local run."),
    server: Optional[str] = typer.Option(None, help="Play the envs on an `sttgym serve --privileged` server at this "
                                         "URL (same results as locally)."),
) -> None:
    """Evaluate an agent on a benchmark suite; writes trajectories, summary.json, report.md and figures to --out."""
    from sttgym.evaluation.runner import BackendFailing, EvalConfig, Runner

    if model and agent:
        raise typer.BadParameter("give --agent or --model, not both")
    conditions = ("dynamic",) + (("static",) if static else ()) + (("no-user",) if no_user else ())
    try:
        config = EvalConfig(suite=suite, agent=("memory" if memory else "llm") if model else agent or "nominal",
                            model=model, base_url=base_url, runs=runs if runs is not None else (3 if model else 1), k=k, limit=limit, seed=seed, domains=domain or (),
                            conditions=conditions, thinking=thinking, temperature=temperature,
                            max_new_tokens=max_new_tokens, workers=workers, user=user, judge=judge,
                            sim_model=sim_model, sim_base_url=sim_base_url, manifest=manifest,
                            request_timeout=request_timeout, max_retries=max_retries,
                            tasks=str(tasks) if tasks else None, weights=weights, hint=hint,
                            reasoning_effort=reasoning_effort, ray=ray, server=server,
                            protocol="full" if full else "per-id")
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    with progress(console) as display:
        bar = display.add_task(f"{config.label} on {suite}", total=None)
        rewards: list[float] = []

        def advance(record: dict, done: int, total: int) -> None:
            rewards.append(record["reward"])
            display.update(bar, completed=done, total=total,
                            description=f"{config.label} on {suite} · mean score {sum(rewards) / len(rewards):.3f}")

        runner = Runner(config, out, retry_errors=retry_errors, progress=advance)
        try:
            if server and runner.episodes():
                _check_server(server, runner.episodes()[0], config.request_timeout)
            planned = len(runner.episodes())
            display.update(bar, total=planned)
            if model:  # a model's episodes cost tokens: say how many before the first one
                display.console.print(f"{planned} episodes ({len(runner.instances())} instances x {config.runs} "
                                      f"run(s) x {len(conditions)} condition(s)); a run directory resumes where it "
                                      "stopped")
            runner.run()
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from exc
        except BackendFailing as exc:
            console.print(f"[red]{exc}[/red]")
            raise typer.Exit(1) from exc
        except OSError as exc:  # read-only or full disk: every finished episode is already on disk
            console.print(f"[red]cannot write the run to {out}: {exc.strerror or exc}[/red] "
                          "(finished episodes are saved; run again with the same --out to resume)")
            raise typer.Exit(1) from exc
    if not runner.records():
        console.print("[red]no episodes: the suite's manifest is empty (are any domains installed?)[/red]")
        raise typer.Exit(1)
    summary = finish(runner, config)
    _print(summary, out)
    if not summary["episodes"]:
        console.print("[red]nothing could be evaluated: every episode ended on an error[/red]")
        raise typer.Exit(1)


def _check_server(url: str, episode, timeout: float) -> None:
    """Fail in one line, before the run, on a server that cannot play it: unreachable, or not --privileged
    (an evaluation records each episode's task facts, which only a privileged server shares)."""
    from sttgym.server import RemoteEnv

    env = None
    try:
        env = RemoteEnv(url, episode.env_id, timeout=timeout)
        env.reset(seed=episode.seed)
        env.unwrapped.task
    except (RuntimeError, ValueError, OSError) as exc:  # RemoteError is a RuntimeError
        raise typer.BadParameter(str(exc), param_hint="--server") from None
    finally:
        if env is not None:
            env.close()


@app.command("report")
def report(run_dirs: list[Path] = typer.Argument(..., help="Run directories written by sttgym eval."),
           out: Optional[Path] = typer.Option(None, help="Write the comparison tables here (markdown), and the "
                                              "comparison figures beside it."),
           validate: bool = typer.Option(False, "--validate", help="Check that each run is a valid submission (a "
                                         "whole frozen manifest, every episode once, no errors, a summary its "
                                         "records give) and change nothing; exit 1 if one is not.")) -> None:
    """Rebuild each run's summary and report from its trajectories, and compare the runs in one table."""
    from sttgym.evaluation.reports import compare
    from sttgym.evaluation.runner import CONFIG, EvalConfig, Runner

    if validate:
        from sttgym.evaluation.submission import validate_run

        invalid = {run_dir: validate_run(run_dir) for run_dir in run_dirs}
        for run_dir, problems in invalid.items():
            typer.echo(f"{run_dir}: " + ("valid submission" if not problems else f"{len(problems)} problem(s)"))
            for problem in problems[:20]:
                typer.echo(f"  - {problem}")
        if any(invalid.values()):
            raise typer.Exit(1)
        return

    for run_dir in run_dirs:
        try:
            config = EvalConfig.from_dict(json.loads((run_dir / CONFIG).read_text()))
        except (OSError, ValueError, TypeError) as exc:
            raise typer.BadParameter(f"{run_dir} is not a run sttgym eval can read: {exc}") from exc
        finish(Runner(config, run_dir), config)
    tables = compare(run_dirs, figures=out.parent if out else None)
    if out:
        out.write_text(tables, encoding="utf-8")
    typer.echo(tables)  # markdown as it is: never wrapped to a terminal's width, even when piped
