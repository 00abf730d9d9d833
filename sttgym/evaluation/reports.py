"""Reports in the papers' shapes: markdown tables and matplotlib figures beside ``summary.json``.

Arena (STT-Arena): Table 3 (Pass@1 by level, mean ± std over runs, weighted overall),
Table 2 (the same with average tool calls), results per conflict type (Figure 4), pass@k
(Figure 6), static vs dynamic (Figure 5), the user-simulator ablation (Figure 7) and the
failure-mode counts (section 4.1). Scramble (ScrambleToolBench): Table 2 (completion rate
and tasks solved per condition) and the Table 3 behavioural metrics where available.

Tables take a list of summaries, so ``sttgym report DIR...`` compares agents row by row.
Figures need matplotlib (the ``report`` extra) and are skipped without it; they are drawn
with the Agg backend, so no display is needed.
"""

from __future__ import annotations

import json
from pathlib import Path

from sttgym.evaluation.diagnostics import MODES
from sttgym.task import LEVELS

__all__ = ["arena_tables", "scramble_tables", "write_report", "compare"]

LEVEL_TITLES = {"easy": "Easy", "medium": "Medium", "hard": "Hard", "impossible": "Impossible", "overall": "Overall"}


def _pct(value: float | None, std: float | None = None) -> str:
    if value is None:
        return "–"
    return f"{100 * value:.2f}" + (f" (±{100 * std:.2f})" if std is not None else "")


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def arena_tables(summaries: list[dict]) -> str:
    """Markdown tables for one or more arena summaries (one row per agent)."""
    cols = [*LEVELS, "overall"]
    scheme = {s.get("weights", {}).get("scheme", "suite") for s in summaries}
    basis = ("the paper's task counts (71/67/59/30 of 227)" if scheme == {"paper"} else
             "the number of instances of each level in the suite" if scheme == {"suite"} else "each run's own weights")
    parts = ["## Pass@1 by level (STT-Arena Table 3)",
             "Share of episodes fully solved (every milestone, no failed gate; impossible tasks: the judge's "
             f"pass), in percent, ± the standard deviation over runs; overall weights the levels by {basis}.", "",
             _table(["Agent", *(LEVEL_TITLES[c] for c in cols)],
                    [[s["agent"], *(_pct(s.get(c), s.get("std", {}).get(c)) for c in cols)] for s in summaries]),
             "", "## With average tool calls (STT-Arena Table 2)", "",
             _table(["Agent", *(LEVEL_TITLES[c] for c in cols), "Avg. Calls"],
                    [[s["agent"], *(_pct(s.get(c)) for c in cols),
                      f"{s['avg_calls']:.2f}" if s.get("avg_calls") is not None else "–"] for s in summaries]),
             "", "## Mean checklist score (partial credit)", "",
             "The fraction of checklist milestones that hold, 0 when a gate fails, averaged over episodes: "
             "progress short of full success, which Pass@1 does not count.", "",
             _table(["Agent", *(LEVEL_TITLES[c] for c in cols)],
                    [[s["agent"], *(_pct(s.get("score", {}).get(c), s.get("score_std", {}).get(c)) for c in cols)]
                     for s in summaries])]
    if any(s.get("usage") for s in summaries):
        parts += ["", "## Model usage per episode", "",
                  _table(["Agent", "Prompt tokens", "Completion tokens", "Broken turns"],
                         [[s["agent"], *(f"{s['usage'][k]:.1f}" for k in ("prompt_tokens", "completion_tokens",
                                                                            "violations"))]
                          for s in summaries if s.get("usage")])]
    domains = sorted({d for s in summaries for d in s.get("by_domain", {})})
    if len(domains) > 1 and len(summaries) > 1:  # one agent's per-domain table is in its details below
        parts += ["", "## Pass@1 by domain", "",
                  _table(["Domain", *(s["agent"] for s in summaries)],
                         [[d, *(_pct(s.get("by_domain", {}).get(d, {}).get("pass")) for s in summaries)]
                          for d in domains])]
    for s in summaries:
        parts += _arena_details(s) if len(summaries) == 1 else []
    return "\n".join(parts) + "\n"


def _arena_details(s: dict) -> list[str]:
    parts = ["", "## By conflict type (STT-Arena Figure 4)", "",
             "Pass@1 per level and over all levels, and the mean checklist score.", "",
             _table(["Conflict", "Name", *(LEVEL_TITLES[lvl] for lvl in LEVELS), "All", "Score", "Episodes"],
                    [[c, v["name"], *(_pct(v.get(lvl)) for lvl in LEVELS), _pct(v["pass"]), _pct(v["score"]),
                      str(v["episodes"])] for c, v in s.get("by_conflict", {}).items()])]
    if len(s.get("by_domain", {})) > 1:
        parts += ["", "## By domain", "",
                  "Pass@1 per level and over all levels, and the mean checklist score.", "",
                  _table(["Domain", *(LEVEL_TITLES[lvl] for lvl in LEVELS), "All", "Score", "Episodes"],
                         [[d, *(_pct(v.get(lvl)) for lvl in LEVELS), _pct(v["pass"]), _pct(v["score"]),
                           str(v["episodes"])] for d, v in s["by_domain"].items()])]
    curve, hat = s.get("pass_at_k", {}), s.get("pass_hat_k", {})
    if len(curve) > 1:
        levels = [lvl for lvl in LEVELS if any(lvl in v for v in curve.values())]
        parts += ["", "## pass@k (STT-Arena Figure 6) and pass^k", "",
                  "Unbiased estimators over each instance's attempts (one per run; success is reward 1.0): pass@k, "
                  "the chance that at least one of k attempts succeeds; pass^k (tau-bench's reliability measure), "
                  "the chance that all k do.", "",
                  _table(["k", "pass@k", *(LEVEL_TITLES[lvl] for lvl in levels), "pass^k",
                          *(LEVEL_TITLES[lvl] for lvl in levels)],
                         [[k, _pct(v["overall"]), *(_pct(v.get(lvl)) for lvl in levels),
                           _pct(hat.get(k, {}).get("overall")), *(_pct(hat.get(k, {}).get(lvl)) for lvl in levels)]
                          for k, v in curve.items()])]
    conditions = s.get("conditions", {})
    if len(conditions) > 1:
        cols = [*LEVELS, "overall"]
        parts += ["", "## Conditions (STT-Arena Figures 5 and 7)", "",
                  "dynamic: the benchmark; static: triggers removed, static checklist; no-user: chat_with_user "
                  "removed.", "",
                  _table(["Condition", *(LEVEL_TITLES[c] for c in cols)],
                         [[name, *(_pct(v.get(c)) for c in cols)] for name, v in conditions.items()])]
    modes = s.get("failure_modes", {})
    if modes.get("failed"):
        failed = modes["failed"]
        parts += ["", "## Failure modes of failed episodes (STT-Arena section 4.1)", "",
                  f"{failed} failed episodes (reward below 1.0); a trajectory may show several modes.", "",
                  _table(["Mode", "Episodes", "Share of failures"],
                         [[title, str(modes.get(m, 0)), _pct(modes.get(m, 0) / failed)] for m, title in MODES.items()]
                         + [["(no mode: nothing fired, or none matched)", str(modes.get("unlabelled", 0)),
                             _pct(modes.get("unlabelled", 0) / failed)]])]
    return parts


def scramble_tables(summaries: list[dict]) -> str:
    """ScrambleToolBench Table 2 (completion rate C and tasks solved T per condition), and metrics."""
    names = list(dict.fromkeys(c for s in summaries for c in s.get("conditions", {})))
    header = ["Agent", *(f"{n} {m}" for n in names for m in ("C", "T"))]
    rows = []
    for s in summaries:
        row = [s["agent"]]
        for n in names:
            v = s["conditions"].get(n)
            row += ["–", "–"] if v is None else [f"{v['completion_rate']:.2f}", f"{v['tasks_solved']:.2f}"]
        rows.append(row)
    parts = ["## Completion rate C and tasks solved T (ScrambleToolBench Table 2)", "",
             "C: share of episodes with every task solved; T: tasks solved per episode; means over runs.", "",
             _table(header, rows)]
    for s in summaries:
        metrics = {n: v["metrics"] for n, v in s.get("conditions", {}).items() if "metrics" in v}
        if metrics:
            keys = list(dict.fromkeys(k for m in metrics.values() for k in m if _is_number(m[k])))
            parts += ["", f"## Behavioural metrics of {s['agent']} (ScrambleToolBench Table 3)", "",
                      _table(["Condition", *keys], [[n, *(_number(m.get(k)) for k in keys)] for n, m in metrics.items()])]
    return "\n".join(parts) + "\n"


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number(value) -> str:
    return f"{value:.3g}" if _is_number(value) else "–"


def write_report(out: str | Path, summary: dict) -> list[Path]:
    """Write ``report.md`` and the figures into ``out``; return the paths written."""
    out = Path(out)
    tables = arena_tables([summary]) if summary["suite"] == "arena" else scramble_tables([summary])
    head = (f"# {summary['agent']} on the {summary['suite']} suite\n\n{summary['episodes']} episodes over "
            f"{summary['runs']} run(s); {summary['errors']} ended by a backend error.\n\n")
    written = [out / "report.md"]
    figures = _figures(out, summary)
    links = "".join(f"\n![{p.stem}]({p.name})\n" for p in figures)
    written[0].write_text(head + tables + ("\n## Figures\n" + links if figures else ""), encoding="utf-8")
    return written + figures


def compare(run_dirs: list[str | Path]) -> str:
    """Markdown tables comparing the evaluations saved in ``run_dirs`` (same suite), one row each."""
    summaries = [json.loads((Path(d) / "summary.json").read_text()) for d in run_dirs]
    suites = {s["suite"] for s in summaries}
    if len(suites) != 1:
        raise ValueError(f"cannot compare different suites: {sorted(suites)}")
    return arena_tables(summaries) if suites == {"arena"} else scramble_tables(summaries)


# ------------------------------------------------------------------------ figures


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _figures(out: Path, summary: dict) -> list[Path]:
    plt = _pyplot()
    if plt is None:
        return []
    drawn = []
    if summary["suite"] == "arena":
        drawn.append(_grouped(plt, out / "per_conflict.png", "Pass@1 by conflict type",
                              {"Pass@1": {c: v["pass"] for c, v in summary.get("by_conflict", {}).items()}}))
        curve = summary.get("pass_at_k", {})
        if len(curve) > 1:
            drawn.append(_pass_at_k(plt, out / "pass_at_k.png", curve))
        conditions = summary.get("conditions", {})
        for other, name, title in (("static", "static_vs_dynamic.png", "Static vs dynamic"),
                                   ("no-user", "user_ablation.png", "With and without the user simulator")):
            if other in conditions and "dynamic" in conditions:
                drawn.append(_grouped(plt, out / name, title, {c: conditions[c] for c in ("dynamic", other)}))
    else:
        conditions = summary.get("conditions", {})
        drawn.append(_grouped(plt, out / "scramble_conditions.png", "ScrambleTool conditions",
                              {"completion rate": {n: v["completion_rate"] for n, v in conditions.items()},
                               "tasks solved / 5": {n: v["tasks_solved"] / 5 for n, v in conditions.items()}}))
    return [p for p in drawn if p is not None]


def _save(plt, fig, ax, path: Path, title: str, ylabel: str = "percent") -> Path:
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 100)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _grouped(plt, path: Path, title: str, series: dict[str, dict[str, float]]) -> Path | None:
    """Side-by-side bars in percent: one group per key of the series' dicts, one bar per series."""
    groups = list(dict.fromkeys(k for v in series.values() for k in v))
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(max(4, 1.1 * len(groups) + 2), 3.2))
    width = 0.8 / len(series)
    for i, (name, values) in enumerate(series.items()):
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(groups))]
        ax.bar(xs, [100 * (values.get(g) or 0.0) for g in groups], width, label=name)
    ax.set_xticks(range(len(groups)), groups)
    return _save(plt, fig, ax, path, title)


def _pass_at_k(plt, path: Path, curve: dict[str, dict]) -> Path:
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    ks = [int(k) for k in curve]
    for level in ["overall", *LEVELS]:
        ys = [curve[str(k)].get(level) for k in ks]
        if all(y is not None for y in ys):
            ax.plot(ks, [100 * y for y in ys], marker="o", label=level)
    ax.set_xlabel("k")
    ax.set_xticks(ks)
    return _save(plt, fig, ax, path, "pass@k", "pass@k (percent)")
