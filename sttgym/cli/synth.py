"""``sttgym synth``: new environments and tasks from user requests, with any OpenAI-compatible endpoint.

``sttgym synth filter|environment|validate|inject|assess --work DIR --base-url URL --model M`` runs one
stage over a work directory (resuming where it stopped), ``all`` runs them in order, and
``import`` turns artifacts in the STT-Arena paper's shapes into a bundle. Register a bundle
for every other command with ``STTGYM_BUNDLES=path/to/bundle sttgym ...`` (see docs/synthesis.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

import typer
from rich.table import Table

from sttgym.cli.app import app, make_console, progress

console = make_console()
synth_app = typer.Typer(help="Synthesize environments and tasks from user requests with an LLM (docs/synthesis.md).",
                        no_args_is_help=True)
app.add_typer(synth_app, name="synth")

_STAGES = {
    "filter": "Keep the requests that are stateful and can host a spatio-temporal conflict.",
    "environment": "Design and write each kept request's world; audit and load it in the sandbox.",
    "validate": "Run generated test configurations against each world (functional validation).",
    "inject": "Conflict assignment, blueprints, the dynamic world, each task's query, profile, state and trigger.",
    "assess": "Checklists, plan agent, dual-agent invariants, check agent, validity rules, consistency audit; "
              "write the bundles.",
}


def _stage_command(stages: tuple[str, ...]) -> Callable:
    def command(work: Path = typer.Option(..., "--work", help="The work directory (created; resumed when it exists)."),
                base_url: Optional[str] = typer.Option(None, help="OpenAI-compatible endpoint, e.g. "
                                                       "http://localhost:8000/v1 (key from OPENAI_API_KEY)."),
                model: Optional[str] = typer.Option(None, help="The served model's name."),
                requests: Optional[Path] = typer.Option(None, help="Requests to add: JSONL rows {\"id\", "
                                                        "\"request\"}, or one request per line."),
                attempts: int = typer.Option(2, help="Tries per item when an answer breaks its format."),
                temperature: float = typer.Option(0.2, help="Sampling temperature."),
                reasoning_effort: Optional[str] = typer.Option(None, help="A served reasoning model's effort: low, "
                                                               "medium or high (sent instead of a temperature)."),
                max_tokens: Optional[int] = typer.Option(None, help="Tokens per answer (default: the server's)."),
                workers: int = typer.Option(8, help="Requests in flight at once."),
                request_timeout: float = typer.Option(300.0, help="Seconds to wait for one answer."),
                max_retries: int = typer.Option(6, help="Retries of one request on rate limits, timeouts and "
                                                "server errors."),
                conflict: Optional[list[str]] = typer.Option(None, help="Build only these conflict types of the "
                                                             "assigned ones (repeatable; default: all)."),
                level: Optional[list[str]] = typer.Option(None, help="Build only these levels (repeatable; default: "
                                                          "all).")) -> None:
        from sttgym.synth.llm import Asker
        from sttgym.synth.pipeline import Pipeline

        try:
            asker = None
            if model:
                from sttgym.models.openai_backend import OpenAIModel

                backend = OpenAIModel(model, base_url=base_url, timeout=request_timeout, max_retries=max_retries,
                                      max_workers=workers, reasoning_effort=reasoning_effort)
                asker = Asker(backend, work / "log.jsonl", attempts=attempts, temperature=temperature,
                              max_tokens=max_tokens)
            pipeline = Pipeline(work, asker, provenance={"model": model, "base_url": base_url},
                                conflicts=tuple(conflict or ()), levels=tuple(level or ()))
            if requests is not None:
                console.print(f"{pipeline.add_requests(requests)} new request(s) in {work}")
            with progress(console) as display:
                pipeline.say = lambda line: display.console.print(line, soft_wrap=True)
                bar = display.add_task("synth", total=len(stages))
                for stage in stages:
                    display.update(bar, description=f"synth {stage}")
                    pipeline.run_stage(stage)
                    display.update(bar, advance=1)
        except (ValueError, OSError) as exc:
            console.print(f"[red]{exc}[/red]", soft_wrap=True)
            raise typer.Exit(1) from None
        summary = pipeline.summary()
        _print(summary)
        if summary["unanswered"]:
            console.print(f"[yellow]{len(summary['unanswered'])} item(s) got no answer from the endpoint; run the "
                          "same command again to retry them[/yellow]", soft_wrap=True)
        if summary["unanswered"] or ("assess" in stages and not summary["bundles"]):
            raise typer.Exit(1)

    return command


for _name, _help in _STAGES.items():
    synth_app.command(_name, help=_help)(_stage_command((_name,)))
synth_app.command("all", help="Every stage in order: filter, environment, validate, inject, assess.")(
    _stage_command(tuple(_STAGES)))


def _print(summary: dict) -> None:
    if summary["rejected"]:
        table = Table(title=f"rejected candidates ({len(summary['rejected'])})")
        for column in ("item", "stage", "step", "reason"):
            table.add_column(column, overflow="fold")
        for row in summary["rejected"]:
            table.add_row(row["item"], row["stage"], row["step"], str(row["reason"])[:300])
        console.print(table)
    if summary["usage"]:
        usage = Table(title="model usage per stage (all runs over this work directory)")
        for column in ("stage", "calls", "prompt tokens", "completion tokens", "waiting for the model (s)",
                       "stage wall time (s)"):
            usage.add_column(column)
        for stage, row in summary["usage"].items():
            usage.add_row(stage, f"{row['calls']:g}", f"{row['prompt_tokens']:g}", f"{row['completion_tokens']:g}",
                          f"{row['seconds']:.1f}", f"{row['wall_seconds']:.1f}")
        console.print(usage)
    console.print(f"{summary['requests']} request(s), {summary['scenarios']} scenario(s), "
                  f"{summary['accepted']} accepted, {len(summary['rejected'])} rejected")
    for bundle in summary["bundles"]:
        console.print(f"bundle: {bundle}   (STTGYM_BUNDLES={bundle} sttgym validate --domain "
                      f"{Path(bundle).name} --seeds 1)", soft_wrap=True)


@synth_app.command("import")
def import_artifacts(source: Path = typer.Argument(..., help="A directory with env.py (a class taking init_config), "
                                                   "blueprint.json and checks.py, as in the STT-Arena paper."),
                     out: Path = typer.Option(..., "--out", help="The bundle directory to write."),
                     name: Optional[str] = typer.Option(None, help="The domain name (default: Synth<class name>).")
                     ) -> None:
    """Turn a paper-style environment class, blueprint and check functions into a bundle (audited, sandboxed)."""
    from sttgym.synth.importer import import_paper

    try:
        path, rejected = import_paper(source, out, name)
    except (ValueError, OSError) as exc:
        console.print(f"[red]{exc}[/red]", soft_wrap=True)
        raise typer.Exit(1) from None
    for item, reason in rejected.items():
        console.print(f"[yellow]rejected {item}[/yellow]: {reason}", soft_wrap=True)
    console.print(f"bundle: {path}")
