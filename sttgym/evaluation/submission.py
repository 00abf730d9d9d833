"""Is a run directory a result others can trust? What ``sttgym report --validate`` checks before results are shared.

A submission is a run directory as ``sttgym eval`` writes it: ``config.json`` (the agent, the
model, the suite and the frozen manifest it measured), ``trajectories.jsonl`` (one record per
episode) and ``summary.json`` (the tables). It is valid when it measured a whole frozen
manifest under its protocol (each id's first instance, or every instance with ``--full``; no ``--limit``, no
task file), holds exactly one record per planned episode with no
backend errors left, every line a whole record consistent with itself (the runner's ``Record``: no
line set aside), and the summary is what the records give.
"""

from __future__ import annotations

import json
from pathlib import Path

from sttgym.evaluation.runner import CONFIG, SUMMARY, TRAJECTORIES, EvalConfig, Runner, load_records
from sttgym.evaluation.summary import summarise

__all__ = ["validate_run"]


def validate_run(run_dir: str | Path) -> list[str]:
    """Every reason ``run_dir`` is not a valid submission; an empty list when it is one."""
    run_dir = Path(run_dir)
    try:
        config = EvalConfig.from_dict(json.loads((run_dir / CONFIG).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError) as exc:
        return [f"{CONFIG}: not a config sttgym eval wrote ({exc})"]
    problems = []
    if config.limit is not None:
        problems.append(f"a partial run (--limit {config.limit}): a submission measures the whole manifest")
    if config.tasks:
        problems.append(f"measured the instances of {config.tasks}, not a frozen manifest")
    runner = Runner(config, run_dir)
    planned = {e.key: e for e in runner.episodes()}
    set_aside: list[str] = []  # lines that are not whole records (load_records says why)
    records = load_records(runner.path, set_aside)
    problems += [f"{TRAJECTORIES} {line}" for line in set_aside]
    missing, extra = sorted(set(planned) - set(records)), sorted(set(records) - set(planned))
    if missing:
        problems.append(f"{len(missing)} planned episodes have no record (first: {missing[0]}); resume the run")
    if extra:
        problems.append(f"{len(extra)} records belong to no planned episode (first: {extra[0]})")
    errored = sorted(k for k, r in records.items() if k in planned and r.get("error"))
    if errored:
        problems.append(f"{len(errored)} episodes ended on an error (first: {errored[0]}); resume with --retry-errors")
    problems += _summary_problems(run_dir, runner, config)
    return problems


def _summary_problems(run_dir: Path, runner: Runner, config: EvalConfig) -> list[str]:
    try:
        stored = json.loads((run_dir / SUMMARY).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [f"{SUMMARY}: unreadable ({exc}); rebuild it with sttgym report"]
    rebuilt = json.loads(json.dumps(summarise(runner.records(), config.suite, config.k, config.label, config.weights)))
    differ = sorted(k for k in set(stored) | set(rebuilt) if stored.get(k) != rebuilt.get(k))
    if differ:
        return [f"{SUMMARY} is not what the records give (differs in {', '.join(differ[:6])}); "
                "rebuild it with sttgym report"]
    return []
