"""A run directory's episodes as the viewer's data, and the self-contained page that shows them.

The page is one HTML file: the CSS and JS of ``assets/`` inlined, and the run embedded as JSON in a
``<script type="application/json">`` element, escaped so that no text from a model or a tool can end
that element. The page's script builds every element with text nodes, never markup, so a tool result
or a reply holding ``<script>`` shows as the text it is.

Each episode is reduced to what the page shows: its facets (domain, conflict, level, condition,
outcome, failure modes), the steps (the action, its result, the simulated clock after it, the
trigger events it set off, and for a model the turn's text, reasoning and tokens), the checklist
verdicts and the trigger log. ScrambleTool episodes have no checklist, clock or triggers: their
facet ``domain`` is ``ScrambleTool``, ``condition`` the ScrambleTool condition, and the per-task
outcomes take the checklist's place.
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any

from sttgym.user import USER_TOOL

__all__ = ["NotARun", "load_run", "episode_view", "build_page", "write_page"]

ASSETS = Path(__file__).with_name("assets")
DATA_MARK, STYLE_MARK, SCRIPT_MARK, TITLE_MARK = "{{data}}", "/*{{style}}*/", "/*{{script}}*/", "{{title}}"


class NotARun(ValueError):
    """The directory is not a run written by ``sttgym eval``."""


def load_run(run_dir: str | os.PathLike) -> dict:
    """The viewer's data of a run directory: its name, suite, agent and every episode (file order)."""
    from sttgym.evaluation.runner import CONFIG, TRAJECTORIES, load_records

    run_dir = Path(run_dir)
    config_path, path = run_dir / CONFIG, run_dir / TRAJECTORIES
    if not run_dir.is_dir():
        raise NotARun(f"{run_dir} is not a directory; give a run directory written by sttgym eval --out")
    if not config_path.is_file() and not path.is_file():
        raise NotARun(f"{run_dir} is not a run: it holds neither {CONFIG} nor {TRAJECTORIES} "
                      f"(sttgym eval --out {run_dir} writes them)")
    try:
        config = json.loads(config_path.read_text(encoding="utf-8")) if config_path.is_file() else {}
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise NotARun(f"{config_path} is not readable JSON ({exc})") from exc
    if not isinstance(config, dict):
        raise NotARun(f"{config_path} does not hold a run's settings")
    records = list(load_records(path).values())
    agent = records[0].get("agent") if records else config.get("agent")
    return {"run": run_dir.resolve().name, "suite": config.get("suite", "arena"), "agent": agent or "?",
            "model": config.get("model"), "user_tool": USER_TOOL, "episodes": [episode_view(r) for r in records]}


def episode_view(record: dict) -> dict:
    """What the page needs of one episode record (see the module docstring)."""
    from sttgym.evaluation.diagnostics import diagnose

    info = record.get("info") or {}
    messages = [m for m in record.get("messages") or [] if isinstance(m, dict)]
    arena = "domain" in record
    outcome = "error" if record.get("error") else "pass" if record.get("success") else "fail"
    family, _, name = str(record.get("env_id", "")).partition("/")
    # A model's turns line up with the steps: one assistant message per turn, except a turn whose
    # request failed, which adds no message and ends the episode.
    turns = record.get("turn_log") or []
    said = [m for m in messages if m.get("role") == "assistant"] if "turn_log" in record else []
    steps = record.get("steps") or []
    view = {
        "key": record["key"], "env_id": record.get("env_id"), "seed": record.get("seed"), "run": record.get("run"),
        "domain": record.get("domain") if arena else family,
        "conflict": record.get("conflict"), "conflict_name": record.get("conflict_name"),
        "level": record.get("difficulty"), "solvable": record.get("solvable"),
        "condition": record.get("condition") if arena else name,
        "reward": record.get("reward", 0.0), "outcome": outcome,
        "modes": diagnose(record) if arena and outcome == "fail" else [],
        "calls": record.get("calls"), "turns": record.get("turns"), "seconds": record.get("seconds"),
        "error": record.get("error"), "truncated": record.get("truncated"),
        "start": record.get("start_time"), "end": info.get("clock"),
        "system": next((m.get("content") for m in messages if m.get("role") == "system"), None),
        "request": next((m.get("content") for m in messages if m.get("role") == "user"), None),
        "steps": [_step(s, said[i] if i < len(said) else None, turns[i] if i < len(turns) else None)
                  for i, s in enumerate(steps) if isinstance(s, dict)],
        "checklist": info.get("checklist") or [], "triggers": info.get("trigger_log") or [],
        "timing": record.get("trigger_timing") or {}, "mutating": record.get("mutating_tools") or [],
        "tasks": info.get("tasks") or [], "usage": record.get("usage"), "memory": record.get("memory"),
    }
    return {k: v for k, v in view.items() if v is not None}


def _step(step: dict, message: dict | None, turn: dict | None) -> dict:
    action = step.get("action")
    action = action if isinstance(action, dict) else {"content": str(action)}
    out: dict[str, Any] = {"result": step.get("observation"), "clock": step.get("clock"),
                           "events": step.get("events") or []}
    if "name" in action:
        out["call"] = {"name": str(action["name"]), "arguments": action.get("arguments")}
    elif "violation" in action:
        out["violation"] = str(action["violation"])
    else:
        out["reply"] = str(action.get("content", ""))
    if message is not None and message.get("content") and message["content"] != out.get("reply"):
        out["text"] = message["content"]
    reasoning = (message or {}).get("reasoning_content") or (turn or {}).get("reasoning")
    if reasoning:
        out["reasoning"] = reasoning
    if turn is not None:
        out["tokens"] = [turn.get("prompt_tokens"), turn.get("completion_tokens")]
    return {k: v for k, v in out.items() if v is not None}


def _embedded(data: Any) -> str:
    """``data`` as JSON that cannot close the script element holding it, nor open a comment in it."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), default=str)
    # Outside strings JSON has none of these characters; inside one, the escape reads back the same.
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def build_page(run_dir: str | os.PathLike) -> str:
    """The viewer's page of a run directory, as HTML text (raises :class:`NotARun`)."""
    data = load_run(run_dir)
    page = (ASSETS / "page.html").read_text(encoding="utf-8")
    title = html.escape(f"{data['run']} · {data['agent']} · sttgym")
    for mark, value in ((STYLE_MARK, (ASSETS / "viewer.css").read_text(encoding="utf-8")),
                        (SCRIPT_MARK, (ASSETS / "viewer.js").read_text(encoding="utf-8")),
                        (TITLE_MARK, title), (DATA_MARK, _embedded(data))):
        page = page.replace(mark, value, 1)
    return page


def write_page(run_dir: str | os.PathLike, out: str | os.PathLike) -> Path:
    """Write the page of ``run_dir`` to the file ``out`` (its folder is made) and return the path."""
    out = Path(out)
    page = build_page(run_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out
