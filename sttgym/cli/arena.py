"""``sttgym list`` and ``sttgym validate``: what is registered, and whether every task holds up."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from sttgym.cli.app import app, make_console, progress
from sttgym.manifests import MANIFEST
from sttgym.registry import CONFLICTS, DOMAINS, LEVELS, arena_ids, parse_arena_id

console = make_console()


def _known(domain: str | None) -> None:
    if domain is not None and domain not in DOMAINS:
        raise typer.BadParameter(f"no domain {domain!r}; registered: {', '.join(sorted(DOMAINS)) or 'none'} "
                                 "(a domain of your own package registers through an sttgym.domains entry point)")


@app.command("list")
def list_ids(domain: str = typer.Option(None, help="Only this domain."),
             plain: bool = typer.Option(False, help="One id per line, nothing else.")) -> None:
    """Print the registered environment ids, grouped by domain, conflict type and level."""
    import gymnasium as gym

    _known(domain)
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
def validate(domain: list[str] = typer.Option(None, help="Only this domain (repeatable)."),
             env_id: list[str] = typer.Option(None, "--id", help="Only these ids (repeatable)."),
             seeds: int = typer.Option(10, help="Seeds per task, from --seed on."),
             seed: int = typer.Option(0, help="First seed."),
             out: Path = typer.Option(None, help="Write the report as JSON here.")) -> None:
    """Check every task against the benchmark's rules, and print the adversarial probe panel's scores."""
    from sttgym.validation import (domain_table, level_call_medians, probe_table, validate as run_validation,
                                   weighted_probe_scores)

    for name in domain or ():
        _known(name)
    ids = list(env_id) if env_id else [i for name in domain or [None] for i in arena_ids(name)]
    for i in ids:
        parse_arena_id(i)
    if not ids:
        raise typer.BadParameter("no arena ids to validate: no domain is registered")
    with progress(console) as display:
        bar = display.add_task("validating", total=len(ids))

        def advance(report):
            display.update(bar, advance=1, description=report.env_id)
            if not report.ok:
                display.console.print(f"[red]FAIL[/red] {report.env_id}")
                for p in report.problems:
                    display.console.print(f"    {p}")

        reports, problems = run_validation(ids, range(seed, seed + seeds), progress=advance)
    medians = level_call_medians(reports)
    probes = probe_table(reports)
    bad = [r for r in reports if not r.ok]
    weighted = weighted_probe_scores(reports)
    table = Table(title="probe panel: mean score (exploits must stay at most 0.1 overall)")
    columns = [lvl for lvl in (*LEVELS, "overall") if any(lvl in row for row in probes.values())]
    for column in ["probe", *columns, "paper weights"]:
        table.add_column(column)
    for name, row in probes.items():
        table.add_row(name, *(f"{row[c]:.3f}" if c in row else "–" for c in columns), f"{weighted[name]:.3f}")
    console.print(table)
    domains = domain_table(reports)
    if len(domains) > 1:
        by_domain = Table(title="per domain: mean scores over every id and seed, median oracle calls per level")
        seen = {c for row in domains.values() for c in row}
        columns = [c for c in next(iter(domains.values())) if not c.startswith("calls")] + \
            [f"calls {lvl}" for lvl in LEVELS if f"calls {lvl}" in seen]
        short = {"always-refuse": "refuse", "keyword-stuffer": "stuffer", "blind-writer": "blind",
                 "mutation-spammer": "spammer", "reread-nominal": "reread", "asking-reread": "asking",
                 "writes-then-reads": "wr-rd", "reread-after-failure": "rr-fail", "reread-every-write": "rr-every",
                 "ask-then-act-or-refuse": "ask-act", "explore-then-refuse": "exp-ref", "refuse-feasible": "ref-feas",
                 "solvability": "solv",
                 "collateral": "coll", **{f"calls {lvl}": f"calls:{lvl[0].upper()}"
                                                                               for lvl in LEVELS}}
        for column in ["domain", *columns]:
            by_domain.add_column(short.get(column, column))
        by_domain.caption = "columns: " + ", ".join(
            f"{short[c]} = {c}" for c in columns if c in short and not c.startswith("calls"))
        for name, row in domains.items():
            by_domain.add_row(name, *("–" if c not in row else f"{row[c]:g}" if c.startswith(("valid", "ids", "calls"))
                                      else f"{row[c]:.2f}" for c in columns))
        console.print(by_domain)
    for p in problems:
        console.print(f"[red]FAIL[/red] {p}")
    console.print("median oracle calls by level: " + ", ".join(f"{k} {v:g}" for k, v in medians.items()))
    profiles = [p for r in reports for p in r.prefix_scores]
    console.print(f"stopping after a prefix of the oracle's plan (first seed of each feasible id): "
                  f"{sum(0 < p < 1 for p in profiles)} of {len(profiles)} prefixes earn partial credit")
    console.print(f"{len(reports) - len(bad)}/{len(reports)} tasks valid over {seeds} seeds each")
    if out:
        out.write_text(json.dumps({"tasks": [r.__dict__ for r in reports], "problems": problems,
                                   "median_oracle_calls": medians, "probes": probes}, indent=1))
    if bad or problems:
        raise typer.Exit(1)


@app.command()
def export(out: Path = typer.Option(Path("runs/export"), help="Directory for the JSONL files (and the dataset)."),
           manifest: str = typer.Option(MANIFEST, help="The benchmark manifest to export."),
           domain: list[str] = typer.Option(None, help="Only this domain's instances (repeatable)."),
           train: int = typer.Option(0, help="Also export this many training instances (training seeds and names)."),
           hf: bool = typer.Option(True, "--hf/--no-hf", help="Also save a Hugging Face dataset (needs `datasets`).")
           ) -> None:
    """Write benchmark (and training) instances, one row per instance with its task as JSON text, replayable by
    sttgym eval --tasks or env.reset(options={"task": row["task"]})."""
    from sttgym.manifests import arena_manifest, export_rows

    try:
        splits = {manifest: arena_manifest(domain or (), name=manifest)}
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    if train:
        from sttgym.training.data import training_instances

        splits["train"] = training_instances(train)
    out.mkdir(parents=True, exist_ok=True)
    with progress(console) as display:
        for name, instances in splits.items():
            bar = display.add_task(f"exporting {name}", total=len(instances))
            rows = []
            with (out / f"{name}.jsonl").open("w", encoding="utf-8") as handle:
                for row in export_rows(instances):
                    # Text reads back exactly through any JSON loader: datasets.load_dataset("json") would parse a task's
                    # time strings into datetimes and give its free-form parts (world state, arguments) one schema.
                    row = {**row, "task": json.dumps(row["task"], ensure_ascii=False)}
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                    rows.append(row)
                    display.update(bar, advance=1)
            console.print(f"{name}: {len(rows)} instances -> {out / (name + '.jsonl')}")
            if hf:
                _save_dataset(rows, out / name)


def _save_dataset(rows: list[dict], path: Path) -> None:
    try:
        import datasets
    except ImportError:
        console.print("[yellow]`datasets` is not installed: skipped the Hugging Face copy (pip install datasets)[/yellow]")
        return
    datasets.Dataset.from_list(rows).save_to_disk(str(path))
    console.print(f"  dataset -> {path}")


@app.command("calibrate-judge")
def calibrate_judge(judge: str = typer.Option("rule", help="rule, or llm (with --model and --base-url)."),
                    model: str = typer.Option(None, help="The LLM judge's model."),
                    base_url: str = typer.Option(None, help="OpenAI-compatible server of --model."),
                    seed: int = typer.Option(0, help="The instance of each impossible task to use."),
                    reply_set: str = typer.Option("test", "--set", help="heldout (v2's rules) or test (v1's), never "
                                                  "used to tune the rule judge; review or dev (see docs/benchmark.md)."),
                    out: Path = typer.Option(None, help="Write the rates and every misjudged reply here (JSON).")
                    ) -> None:
    """Measure an impossible-task judge's false-positive and false-negative rates on the labelled reply set."""
    from sttgym.evaluation.calibration import calibration_items, judge_rates
    from sttgym.judge import RuleJudge
    from sttgym.judge.llm import LLMJudge

    if judge == "rule":
        chosen = RuleJudge()
    elif judge in ("llm", "llm-strict"):
        if not model:
            raise typer.BadParameter(f"--judge {judge} needs --model")
        from sttgym.models import load_model

        chosen = LLMJudge(load_model(model, base_url), strict=judge == "llm-strict")
    else:
        raise typer.BadParameter(f"unknown judge {judge!r}: rule, llm or llm-strict")
    try:
        items = calibration_items([i for i in arena_ids() if i.endswith("-impossible")], seed, reply_set)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    if not items:
        console.print("[red]no impossible tasks registered[/red]")
        raise typer.Exit(1)
    rates = judge_rates(chosen, items)
    console.print(f"{judge} judge on the {reply_set} set, {rates['items']} replies over {rates['tasks']} impossible tasks: "
                  f"false positives {100 * rates['false_positive_rate']:.1f}%, "
                  f"false negatives {100 * rates['false_negative_rate']:.1f}%")
    for language, part in rates["by_language"].items():
        console.print(f"  {language:<18} {part['items']} replies: false positives {100 * part['false_positive_rate']:.1f}%, "
                      f"false negatives {100 * part['false_negative_rate']:.1f}%")
    for kind, accuracy in rates["accuracy_by_kind"].items():
        console.print(f"  {kind:<18} {100 * accuracy:.1f}% judged as labelled")
    if out:
        out.write_text(json.dumps(rates, indent=1, ensure_ascii=False))


@app.command()
def freeze(name: str = typer.Argument(..., help="The new manifest's name, e.g. arena-v2."),
           domain: list[str] = typer.Option(None, help="Only these domains (repeatable); default: every registered one."),
           force: bool = typer.Option(False, "--force", help="Overwrite an existing manifest of that name.")) -> None:
    """Freeze the registered arena ids over the benchmark seeds as a new, versioned manifest (maintainers)."""
    from importlib import resources

    from sttgym.manifests import freeze_manifest

    path = Path(str(resources.files("sttgym").joinpath(f"data/manifests/{name}.json")))
    if path.exists() and not force:
        raise typer.BadParameter(f"{path} exists: a frozen benchmark does not change; pick a new name (or --force)")
    ids = [i for d in (domain or [None]) for i in arena_ids(d)]
    if not ids:
        raise typer.BadParameter("no arena ids registered for those domains")
    manifest = freeze_manifest(name, ids)
    rows = ",\n".join("  " + json.dumps(row) for row in manifest["instances"])  # one instance a line: diffs read well
    path.write_text(f'{{"name": {json.dumps(name)}, "release": {json.dumps(manifest["release"])},\n'
                    f' "instances": [\n{rows}\n]}}\n')
    console.print(f"{name}: {len(manifest['instances'])} instances -> {path}")


@app.command("fuzz")
def fuzz_command(actions: int = typer.Option(100_000, help="Hostile actions in all, spread over ids and stacks."),
                 env_id: list[str] = typer.Option(None, "--id", help="Only these ids (repeatable); default: every "
                                                  "registered arena and ScrambleTool id."),
                 stack: list[str] = typer.Option(None, help="Only these wrapper stacks (repeatable): plain, "
                                                 "obfuscate, drift, failure, window, all."),
                 seed: int = typer.Option(0, help="Seeds the actions and the instances."),
                 out: Path = typer.Option(None, help="Write the report (every finding) as JSON here.")) -> None:
    """Step every environment with hostile actions; fail if one raises, or a refused action changes the world."""
    import gymnasium as gym

    from sttgym.fuzz import STACKS, fuzz

    ids = list(env_id) if env_id else arena_ids() + sorted(i for i in gym.registry if i.startswith("ScrambleTool/"))
    stacks = list(stack) if stack else list(STACKS)
    unknown = sorted(set(stacks) - set(STACKS)) + sorted(i for i in ids if i not in gym.registry)
    if unknown:
        raise typer.BadParameter(f"unknown stack(s) or id(s): {', '.join(unknown)}")
    per_env = -(-actions // (len(ids) * len(stacks)))  # at least the actions asked for
    with progress(console) as display:
        bar = display.add_task("hostile actions", total=per_env * len(ids) * len(stacks))
        report = fuzz(ids, per_env, stacks, seed, progress=lambda n: display.update(bar, advance=n))
    summary = report.summary()
    console.print(json.dumps(summary, indent=1))
    for finding in report.findings[:20]:
        console.print(f"[red]FAIL[/red] {finding}")
    if out:
        out.write_text(json.dumps({**summary, "exceptions": report.exceptions, "state_changes": report.state_changes,
                                   "oversized": report.oversized, "unencodable": report.unencodable}, indent=1))
    if not report.ok:
        raise typer.Exit(1)
