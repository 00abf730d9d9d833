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
import math
import statistics
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
    parts += _arena_details(summaries[0]) if len(summaries) == 1 else _arena_comparison(summaries)
    parts += _distribution(summaries[0])
    return "\n".join(parts) + "\n"


def _arena_comparison(summaries: list[dict]) -> list[str]:
    """The per-run sections of :func:`_arena_details`, with a column (or row) per run."""
    agents = [s["agent"] for s in summaries]
    conflicts = list(dict.fromkeys(c for s in summaries for c in s.get("by_conflict", {})))
    parts = ["", "## Pass@1 by conflict type (STT-Arena Figure 4)", "",
             _table(["Conflict", *agents], [[c, *(_pct(s.get("by_conflict", {}).get(c, {}).get("pass")) for s in summaries)]
                                            for c in conflicts])]
    ks = list(dict.fromkeys(k for s in summaries for k in s.get("pass_at_k", {})))
    if len(ks) > 1:
        parts += ["", "## pass@k and pass^k over all levels (STT-Arena Figure 6)", "",
                  _table(["k", *(f"{a} pass@k" for a in agents), *(f"{a} pass^k" for a in agents)],
                         [[k, *(_pct(s.get("pass_at_k", {}).get(k, {}).get("overall")) for s in summaries),
                           *(_pct(s.get("pass_hat_k", {}).get(k, {}).get("overall")) for s in summaries)] for k in ks])]
    conditions = list(dict.fromkeys(c for s in summaries for c in s.get("conditions", {})))
    if len(conditions) > 1:
        parts += ["", "## Overall Pass@1 per condition (STT-Arena Figures 5 and 7)", "",
                  "dynamic: the benchmark (with the run's user simulator); static: triggers removed; no-user: "
                  "chat_with_user removed.", "",
                  _table(["Agent", *conditions], [[s["agent"], *(_pct(s.get("conditions", {}).get(c, {}).get("overall"))
                                                                for c in conditions)] for s in summaries])]
    pairs = _thinking_pairs(summaries)
    if pairs:
        parts += ["", "## Thinking vs not (STT-Arena Figure 8)", "",
                  _table(["Model", "Without thinking", "With thinking"],
                         [[model, _pct(off.get("overall")), _pct(on.get("overall"))] for model, (off, on) in pairs.items()])]
    if any(s.get("failure_modes", {}).get("failed") for s in summaries):
        parts += ["", "## Failure modes of failed episodes (STT-Arena section 4.1)", "",
                  "Episodes showing each mode, as a share of the run's failed episodes.", "",
                  _table(["Agent", "Failed", *MODES.values()],
                         [[s["agent"], str(m.get("failed", 0)), *(_pct(m.get(k, 0) / m["failed"]) if m.get("failed")
                                                                   else "–" for k in MODES)]
                          for s in summaries for m in [s.get("failure_modes", {})]])]
    return parts


def _thinking_pairs(summaries: list[dict]) -> dict[str, tuple[dict, dict]]:
    """model -> (its run without thinking, its run with), for models run both ways (configs read by :func:`compare`)."""
    runs: dict[str, dict[bool, dict]] = {}
    for s in summaries:
        config = s.get("config", {})
        if config.get("model") and config.get("agent") == "llm":
            runs.setdefault(config["model"], {})[bool(config.get("thinking"))] = s
    return {model: (both[False], both[True]) for model, both in runs.items() if len(both) == 2}


def _distribution(s: dict) -> list[str]:
    """STT-Arena Figures 9 and 10: the evaluated instances by level and by conflict type (of the first run)."""
    counts, conflicts = s.get("counts", {}), s.get("by_conflict", {})
    if not counts:
        return []
    runs = max(s.get("runs", 1), 1)
    return ["", "## The benchmark evaluated (STT-Arena Figures 9 and 10)", "",
            _table(["Level", "Instances"], [[LEVEL_TITLES[lvl], str(counts.get(lvl, 0))] for lvl in LEVELS]), "",
            _table(["Conflict", "Name", "Instances"],
                   [[c, v.get("name", ""), str(v["episodes"] // runs)] for c, v in conflicts.items()])]


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
    """ScrambleToolBench's tables: Table 2 (completion rate C and tasks solved T per condition, memory runs with
    their paired change), Table 3's metrics, Table 4 (cost per task position against the analytic references),
    Table 5 (chain following with its test), Figure 2's intervals and Appendix D's counterfactual."""
    names = list(dict.fromkeys(c for s in summaries for c in s.get("conditions", {})))
    header = ["Agent", *(f"{n} {m}" for n in names for m in ("C", "T"))]
    paired = _memory_pairs(summaries)
    rows = []
    for s in summaries:
        base = paired.get(id(s))
        row = [s["agent"]]
        for n in names:
            v, b = s["conditions"].get(n), (base or {}).get("conditions", {}).get(n)
            row += ["–", "–"] if v is None else [_with_delta(v, b, "completion_rate"), _with_delta(v, b, "tasks_solved")]
        rows.append(row)
    plain = [s for s in summaries if s.get("config", {}).get("agent") != "memory"]
    for label, group in (("Mean without memory", plain), ("Mean of memory runs", [s for s in summaries if id(s) in paired])):
        if len(summaries) > 1 and group:
            rows.append([f"*{label}* ({len(group)})", *(_mean_cell(group, n, f, paired) for n in names
                                                        for f in ("completion_rate", "tasks_solved"))])
    parts = ["## Completion rate C and tasks solved T (ScrambleToolBench Table 2)", "",
             "C: share of episodes with every task solved; T: tasks solved per episode; means over runs." +
             (" A memory run shows in brackets its paired change from the same model without memory." if paired else ""),
             "", _table(header, rows)]
    parts += _behaviour_table(summaries)
    for s in summaries:
        metrics = {n: v["metrics"] for n, v in s.get("conditions", {}).items() if "metrics" in v}
        if metrics:
            keys = list(dict.fromkeys(k for m in metrics.values() for k in m if _is_number(m[k])))
            parts += ["", f"## Every behavioural metric of {s['agent']}", "",
                      _table(["Metric", *metrics], [[k, *(_number(m.get(k)) for m in metrics.values())] for k in keys])]
    parts += _position_costs(summaries) + _chain_table(summaries) + _effort_table(summaries)
    return "\n".join(parts) + "\n"


def _mean_cell(group: list[dict], condition: str, field: str, paired: dict[int, dict]) -> str:
    """The mean of ``field`` over ``group``'s runs of ``condition``, with the mean paired change for memory runs."""
    values = [s["conditions"][condition][field] for s in group if condition in s.get("conditions", {})]
    if not values:
        return "–"
    bases = [paired[id(s)]["conditions"][condition][field] for s in group
             if id(s) in paired and condition in paired[id(s)].get("conditions", {}) and condition in s["conditions"]]
    change = f" ({statistics.fmean(values) - statistics.fmean(bases):+.2f})" if len(bases) == len(values) and bases else ""
    return f"{statistics.fmean(values):.2f}{change}"


SCRAMBLED = ("Base", "Drift", "Failure", "Window", "All")


def _behaviour_table(summaries: list[dict]) -> list[str]:
    """ScrambleToolBench Table 3 across runs: action efficiency per condition, retry rates under failures, the
    failure modes over the scrambled conditions, stale calls under drift."""
    def metric(s: dict, condition: str, key: str):
        return s.get("conditions", {}).get(condition, {}).get("metrics", {}).get(key)

    rows = []
    for s in summaries:
        if not any("metrics" in v for v in s.get("conditions", {}).values()):
            continue
        modes = {k: [metric(s, c, k) for c in SCRAMBLED if metric(s, c, k) is not None]
                 for k in ("budget_exhaustion", "early_exit")}
        rows.append([s["agent"], *(_number(metric(s, c, "action_efficiency")) for c in ("Unscrambled", *SCRAMBLED)),
                     *(_pct(metric(s, c, k)) for c in ("Failure", "All")
                       for k in ("immediate_retry_rate", "persistent_retry_rate")),
                     *(_pct(statistics.fmean(v)) if v else "–" for v in modes.values()),
                     *(_number(metric(s, c, "stale_calls_total")) for c in ("Drift", "All"))])
    if not rows:
        return []
    return ["", "## Behavioural metrics (ScrambleToolBench Table 3)", "",
            "Action efficiency: mean total actions of the episodes with every task solved (– without any); retry "
            "rates: timeouts retried at once / at some later point; failure modes: failed episodes ending on a spent "
            "budget or the agent's exit, averaged over the scrambled conditions; stale calls: calls to an identifier "
            "a drift moved, still shaped for the function that left it.", "",
            _table(["Agent", *(f"Eff. {c}" for c in ("Unscr.", *SCRAMBLED)), "Imm. retry Failure", "Pers. retry Failure",
                    "Imm. retry All", "Pers. retry All", "Budget exh.", "Early exit", "Stale Drift", "Stale All"], rows)]


def _memory_pairs(summaries: list[dict]) -> dict[int, dict]:
    """id(memory run) -> the run of the same model (and settings) without memory, among ``summaries``."""
    def key(s: dict) -> tuple:
        c = s.get("config", {})
        return c.get("model"), c.get("thinking"), c.get("reasoning_effort"), c.get("base_url")
    plain = {key(s): s for s in summaries if s.get("config", {}).get("agent") == "llm"}
    return {id(s): plain[key(s)] for s in summaries if s.get("config", {}).get("agent") == "memory" and key(s) in plain}


def _with_delta(value: dict, base: dict | None, field: str) -> str:
    text = f"{value[field]:.2f}"
    return text if base is None else f"{text} ({value[field] - base[field]:+.2f})"


REFERENCE_CONDITIONS = ("Base", "Drift")  # Table 4 sets the scrambled baseline beside mapping drift


def _position_costs(summaries: list[dict]) -> list[str]:
    """ScrambleToolBench Table 4 and Appendix D's Table 6: mean actions per task position under Base and Drift,
    the solving reference, the compared cost (task 1: the total; later: the overhead beyond solving), its reference
    (full discovery; Eq. 2) and their ratio; then the same with application-level failures charged nothing."""
    ref = _references()
    parts = []
    for title, series in (("Mean action cost per task position (ScrambleToolBench Table 4)", "actions"),
                          ("Counterfactual: application-level failures after the schema was known charged nothing "
                           "(ScrambleToolBench Appendix D, Table 6)", "adjusted")):
        for s in summaries:
            per = {c: s.get("conditions", {}).get(c, {}).get("metrics", {}).get("per_position", {}).get(series)
                   for c in REFERENCE_CONDITIONS}
            if not per["Drift"]:
                continue
            rows: list[list] = []
            for i, drift in enumerate(per["Drift"]):
                base = per["Base"][i] if per["Base"] and i < len(per["Base"]) else None
                solve = None if i == 0 else ref["solve_reference"]
                compared = None if drift is None else drift - (solve or 0)
                reference = ref["task1_reference"] if i == 0 else ref["expected_recovery"]
                rows.append([str(i + 1), base, drift, solve, compared, reference])
            if len(rows) > 1:
                rows.append(["2-5 avg.", *(_mean_or_none([r[j] for r in rows[1:]]) for j in range(1, 6))])
            rows = [[*r, r[4] / r[5] if r[4] is not None and r[5] else None] for r in rows]
            rows = [[r[0], *map(_number, r[1:])] for r in rows]
            parts += ["", f"## {title}: {s['agent']}", "",
                      f"Episodes with an early exit left out; budget-failed attempts included. Task 1's reference is "
                      f"full discovery plus the submission ({ref['task1_reference']:.0f}); later tasks compare the "
                      f"overhead beyond the {ref['solve_reference']:.0f}-action solve with Eq. 2 "
                      f"({ref['expected_recovery']:.2f}); blind search would cost {ref['blind_search_recovery']:.0f}.",
                      "", _table(["Task", "Base", "Drift", "Solve ref.", "Compared", "Reference", "Ratio"], rows)]
            slopes = {c: s["conditions"][c]["metrics"].get("position_slope") for c in REFERENCE_CONDITIONS
                      if "metrics" in s.get("conditions", {}).get(c, {})}
            if series == "actions" and slopes:
                parts += ["", "Slope of actions over positions 2-5: " +
                          ", ".join(f"{c} {_number(v)}" for c, v in slopes.items()) + " (negative: the agent gets cheaper)."]
    return parts


def _mean_or_none(values: list) -> float | None:
    return None if any(v is None for v in values) or not values else statistics.fmean(values)


def _references() -> dict[str, float]:
    """The analytic references of the registered Drift condition (28 functions, 7 moved, 4 per task)."""
    import gymnasium as gym

    from sttgym.evaluation.scramble_metrics import scramble_references

    return scramble_references(gym.make("ScrambleTool/Drift"))


def _chain_table(summaries: list[dict]) -> list[str]:
    """ScrambleToolBench Table 5: chain following under drift against a random pick, with the test's p-value."""
    rows = []
    for s in summaries:
        for condition, v in s.get("conditions", {}).items():
            m = v.get("metrics", {})
            if m.get("chain_opportunities"):
                rows.append([s["agent"], condition, str(m["chain_opportunities"]), _pct(m["chain_follow_rate"]),
                             _pct(m["chain_random_rate"]), _number(m.get("chain_p_value"))])
    if not rows:
        return []
    return ["", "## Following the recovery chain (ScrambleToolBench Table 5)", "",
            "Follows: share of opportunities (a first call, in a task, to a moved identifier used before) on which the "
            "agent calls the identifier the answering function came from within three calls; Random: a uniform pick "
            "among the identifiers it had used; p: two-sided test of follows against random.", "",
            _table(["Agent", "Condition", "Opportunities", "Follows", "Random", "p"], rows)]


def _effort_table(summaries: list[dict]) -> list[str]:
    """ScrambleToolBench Figure 2 as a table: T, C and token cost with their 95% intervals, failures by cause."""
    rows = []
    for s in summaries:
        for condition, v in s.get("conditions", {}).items():
            if condition not in REFERENCE_CONDITIONS or "completion_rate_ci" not in v:
                continue
            cost = v.get("completion_tokens_per_solved_task")
            rows.append([s["agent"], condition, f"{v['tasks_solved']:.2f} {_interval(v.get('tasks_solved_ci'))}",
                         f"{v['completion_rate']:.2f} {_interval(v['completion_rate_ci'])}",
                         "–" if cost is None else f"{cost:.0f} {_interval(v.get('completion_tokens_per_solved_task_ci'), 0)}",
                         str(v["failures"]["budget"]), str(v["failures"]["early_exit"])])
    if not rows:
        return []
    return ["", "## Tasks, completion and tokens per solved task (ScrambleToolBench Figure 2)", "",
            "T and the token cost with 95% bootstrap intervals over episodes, C with its Wilson interval; the token "
            "cost counts every episode's completion tokens, failed ones included, over the tasks solved. Failed "
            "episodes by cause: a task's budget ran out, or the agent quit. Run a model at --reasoning-effort "
            "low, medium and high and compare the runs for the paper's ablation.", "",
            _table(["Agent", "Condition", "T", "C", "Tokens / solved task", "Budget", "Quit"], rows)]


def _interval(bounds, digits: int = 2) -> str:
    return f"[{bounds[0]:.{digits}f}, {bounds[1]:.{digits}f}]" if bounds else ""


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
    if summary["suite"] == "arena" and summary.get("resolution"):
        head += _resolution(summary["resolution"]) + "\n\n"
    written = [out / "report.md"]
    figures = _figures(out, summary)
    links = "".join(f"\n![{p.stem}]({p.name})\n" for p in figures)
    written[0].write_text(head + tables + ("\n## Figures\n" + links if figures else ""), encoding="utf-8")
    return written + figures


def _resolution(half: dict[str, float]) -> str:
    """What the set's size can resolve, from the half-widths of Pass@1's 95% intervals."""
    levels = ", ".join(f"{LEVEL_TITLES[lvl].lower()} ±{100 * half[lvl]:.1f}" for lvl in LEVELS if lvl in half)
    overall = half.get("overall", 0.0)
    return (f"Resolution: Pass@1's 95% intervals are about ±{100 * overall:.1f} points overall ({levels}). Two "
            f"agents whose overall Pass@1 differs by less than about {100 * overall * math.sqrt(2):.0f} points are "
            "not told apart by this set; `sttgym eval --full` measures every instance of the manifest (10 per id) "
            "for finer comparisons.")


def compare(run_dirs: list[str | Path], figures: str | Path | None = None) -> str:
    """Markdown tables comparing the evaluations saved in ``run_dirs`` (same suite), one row each; with
    ``figures``, the comparison figures are drawn into that directory and linked below the tables."""
    summaries = []
    for d in run_dirs:
        summary = json.loads((Path(d) / "summary.json").read_text())
        config = Path(d) / "config.json"
        summaries.append({**summary, "config": json.loads(config.read_text()) if config.exists() else {}})
    suites = {s["suite"] for s in summaries}
    if len(suites) != 1:
        raise ValueError(f"cannot compare different suites: {sorted(suites)}")
    tables = arena_tables(summaries) if suites == {"arena"} else scramble_tables(summaries)
    if figures is None:
        return tables
    Path(figures).mkdir(parents=True, exist_ok=True)
    drawn = _comparison_figures(Path(figures), summaries)
    return tables + ("\n## Figures\n" + "".join(f"\n![{p.stem}]({p.name})\n" for p in drawn) if drawn else "")


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
        drawn.append(_distribution_figure(plt, out / "benchmark.png", summary))
    else:
        conditions = summary.get("conditions", {})
        drawn.append(_grouped(plt, out / "scramble_conditions.png", "ScrambleTool conditions",
                              {"completion rate": {n: v["completion_rate"] for n, v in conditions.items()},
                               "tasks solved / 5": {n: v["tasks_solved"] / 5 for n, v in conditions.items()}}))
        drawn.append(_effort_figure(plt, out / "intervals.png", [summary]))
    return [p for p in drawn if p is not None]


def _comparison_figures(out: Path, summaries: list[dict]) -> list[Path]:
    """The figures of several runs: STT-Arena Figures 3-8, or ScrambleToolBench Table 2 and Figure 2."""
    plt = _pyplot()
    if plt is None:
        return []
    agents = {s["agent"]: s for s in summaries}
    if summaries[0]["suite"] != "arena":
        return [p for p in (
            _grouped(plt, out / "completion_by_model.png", "Episode completion rate C per condition",
                     {a: {n: v["completion_rate"] for n, v in s.get("conditions", {}).items()} for a, s in agents.items()}),
            _effort_figure(plt, out / "intervals_by_model.png", summaries)) if p is not None]
    cols = [*LEVELS, "overall"]
    drawn = [_grouped(plt, out / "models.png", "Pass@1 by level (Figure 3)",
                      {a: {LEVEL_TITLES[c]: s.get(c) for c in cols if s.get(c) is not None} for a, s in agents.items()}),
             _grouped(plt, out / "conflicts_by_model.png", "Pass@1 by conflict type (Figure 4)",
                      {a: {c: v["pass"] for c, v in s.get("by_conflict", {}).items()} for a, s in agents.items()})]
    if any(len(s.get("conditions", {})) > 1 for s in summaries):
        drawn.append(_grouped(plt, out / "conditions_by_model.png", "Overall Pass@1 per condition (Figures 5, 7)", {c: {a: s.get("conditions", {}).get(c, {}).get("overall")
                                                        for a, s in agents.items()}
                                                    for c in dict.fromkeys(c for s in summaries
                                                                           for c in s.get("conditions", {}))}))
    if any(len(s.get("pass_at_k", {})) > 1 for s in summaries):
        fig, ax = plt.subplots(figsize=(5, 3.4))
        for i, (a, s) in enumerate(agents.items()):
            curve = s.get("pass_at_k", {})
            if len(curve) > 1:  # shrinking markers keep runs on the same line visible
                ax.plot([int(k) for k in curve], [100 * v["overall"] for v in curve.values()], label=a,
                        marker="osD^vx"[i % 6], markersize=max(10 - 1.5 * i, 3), fillstyle="none" if i % 2 else "full")
        ax.set_xlabel("k")
        ax.xaxis.get_major_locator().set_params(integer=True)
        drawn.append(_save(plt, fig, ax, out / "pass_at_k_by_model.png", "pass@k, all levels (Figure 6)", "pass@k (percent)"))
    pairs = _thinking_pairs(summaries)
    if pairs:
        drawn.append(_grouped(plt, out / "thinking.png", "Thinking vs not (Figure 8)",
                              {"without thinking": {m: off.get("overall") for m, (off, _) in pairs.items()},
                               "with thinking": {m: on.get("overall") for m, (_, on) in pairs.items()}}))
    return [p for p in drawn if p is not None]


def _distribution_figure(plt, path: Path, summary: dict) -> Path | None:
    """STT-Arena Figures 9 and 10: instances by level and by conflict type."""
    counts, conflicts = summary.get("counts", {}), summary.get("by_conflict", {})
    if not counts:
        return None
    runs = max(summary.get("runs", 1), 1)
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.2))
    left.bar([LEVEL_TITLES[lvl] for lvl in LEVELS], [counts.get(lvl, 0) for lvl in LEVELS], color="tab:blue")
    left.set_title("Instances by level")
    right.bar(list(conflicts), [v["episodes"] // runs for v in conflicts.values()], color="tab:orange")
    right.set_title("Instances by conflict type")
    for ax in (left, right):
        ax.set_ylabel("instances")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _effort_figure(plt, path: Path, summaries: list[dict]) -> Path | None:
    """ScrambleToolBench Figure 2: per run and condition (Base, Drift), T and C with their intervals, the token cost
    per solved task, and the failed episodes by cause."""
    rows = [(f"{s['agent']} · {c}", v) for s in summaries for c, v in s.get("conditions", {}).items()
            if c in REFERENCE_CONDITIONS and "completion_rate_ci" in v]
    if not rows:
        return None
    fig, axes = plt.subplots(1, 4, figsize=(13, 0.5 * len(rows) + 1.8), sharey=True)
    ys = list(range(len(rows)))
    for ax, field, title in ((axes[0], "tasks_solved", "(a) tasks solved T"), (axes[1], "completion_rate", "(b) completion C"),
                             (axes[2], "completion_tokens_per_solved_task", "(c) tokens per solved task")):
        undefined = all(v.get(field) is None for _, v in rows)
        if undefined:
            ax.text(0.5, 0.5, "undefined: no model tokens,\nor no task solved", transform=ax.transAxes, ha="center",
                    fontsize=8)
        for y, (_, v) in zip(ys, rows):
            if v.get(field) is None:
                if not undefined:  # a row without a value says so, rather than looking like a missing point
                    ax.annotate("undefined", (0, y), xytext=(4, 0), textcoords="offset points", va="center",
                                fontsize=7, color="tab:gray", xycoords=("axes fraction", "data"))
                continue
            low, high = v.get(f"{field}_ci") or (v[field], v[field])
            # A percentile bootstrap interval need not hold the point estimate: a bar never reaches past it.
            ax.errorbar(v[field], y, xerr=[[max(0.0, v[field] - low)], [max(0.0, high - v[field])]], fmt="o", capsize=3,
                        color="tab:blue")
        ax.set_title(title, fontsize=9)
    axes[0].set_xlim(0, 5.2)
    axes[1].set_xlim(0, 1.05)
    axes[2].set_xlim(left=0)
    budget = [v["failures"]["budget"] for _, v in rows]
    quit_ = [v["failures"]["early_exit"] for _, v in rows]
    axes[3].barh(ys, budget, color="tab:red", label="budget spent")
    axes[3].barh(ys, quit_, left=budget, color="tab:gray", label="quit")
    axes[3].set_title("(d) failed episodes by cause", fontsize=9)
    axes[3].legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)
    axes[3].xaxis.get_major_locator().set_params(integer=True)
    axes[0].set_yticks(ys, [label for label, _ in rows], fontsize=8)
    axes[0].invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _save(plt, fig, ax, path: Path, title: str, ylabel: str = "percent") -> Path:
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 108)  # room for the labels of full bars
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))  # outside: bars may reach 100
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
    labelled = len(groups) * len(series) <= 60  # beyond that, the numbers would overlap; the tables hold them
    for i, (name, values) in enumerate(series.items()):
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(groups))]
        heights = [float("nan") if values.get(g) is None else 100 * values[g] for g in groups]  # missing: no bar
        bars = ax.bar(xs, heights, width, label=name)
        if labelled:  # a 0 must read as 0, not as a missing bar
            ax.bar_label(bars, labels=["" if h != h else f"{h:.0f}" for h in heights], fontsize=6, padding=1)
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
