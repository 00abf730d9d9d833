"""``sttgym list`` and ``sttgym validate``: what is registered, and whether every task holds up."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from sttgym.cli.app import app
from sttgym.registry import DOMAINS, arena_ids, parse_arena_id
from sttgym.task import CONFLICTS, LEVELS

console = Console()


@app.command("list")
def list_ids(domain: str = typer.Option(None, help="Only this domain."),
             plain: bool = typer.Option(False, help="One id per line, nothing else.")) -> None:
    """Print the registered environment ids, grouped by domain, conflict type and level."""
    import gymnasium as gym

    ids = arena_ids(domain)
    others = sorted(i for i in gym.registry if i.startswith("ScrambleTool/"))
    if plain:
        for env_id in ids + others:
            print(env_id)
        return
    for name in sorted(d for d in DOMAINS if domain is None or d == domain):
        table = Table(title=f"STTArena/{name}", show_lines=False)
        table.add_column("conflict")
        for level in LEVELS:
            table.add_column(level)
        for conflict, title in CONFLICTS.items():
            row = [f"{conflict} {title}"]
            for level in LEVELS:
                row.append(f"{name}-{conflict}-{level}" if (conflict, level) in DOMAINS[name].scenarios else "")
            if any(row[1:]):
                table.add_row(*row)
        console.print(table)
    if others and domain is None:
        console.print("ScrambleTool: " + ", ".join(others))
    console.print(f"{len(ids) + (len(others) if domain is None else 0)} environment ids")


@app.command()
def validate(domain: str = typer.Option(None, help="Only this domain."),
             env_id: list[str] = typer.Option(None, "--id", help="Only these ids (repeatable)."),
             seeds: int = typer.Option(5, help="Seeds per task, from --seed on."),
             seed: int = typer.Option(0, help="First seed."),
             out: Path = typer.Option(None, help="Write the report as JSON here.")) -> None:
    """Check every task's invariants: oracle 1.0, nominal disrupted, static nominal 1.0, no-op at the floor."""
    from sttgym.validation import level_call_medians, validate as run_validation

    ids = list(env_id) if env_id else arena_ids(domain)
    for i in ids:
        parse_arena_id(i)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        bar = progress.add_task("validating", total=len(ids))

        def advance(report):
            progress.update(bar, advance=1, description=report.env_id)
            if not report.ok:
                progress.console.print(f"[red]FAIL[/red] {report.env_id}")
                for p in report.problems:
                    progress.console.print(f"    {p}")

        reports, problems = run_validation(ids, range(seed, seed + seeds), progress=advance)
    medians = level_call_medians(reports)
    bad = [r for r in reports if not r.ok]
    for p in problems:
        console.print(f"[red]FAIL[/red] {p}")
    console.print("median oracle calls by level: " + ", ".join(f"{k} {v:g}" for k, v in medians.items()))
    console.print(f"{len(reports) - len(bad)}/{len(reports)} tasks valid over {seeds} seeds each")
    if out:
        out.write_text(json.dumps({"tasks": [r.__dict__ for r in reports], "problems": problems,
                                   "median_oracle_calls": medians}, indent=1))
    if bad or problems:
        raise typer.Exit(1)
