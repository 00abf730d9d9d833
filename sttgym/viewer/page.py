"""A run directory's episodes as the viewer's data, and the self-contained page that shows them.

The page is one HTML file: the CSS and JS of ``assets/`` inlined, and the run embedded as JSON in a
``<script type="application/json">`` element, escaped so that no text from a model or a tool can end
that element. The template's marks are filled in one pass, so a value that holds a mark (``{{data}}``
in a run's or an agent's name) is never filled in turn. The page's script builds every element with
text nodes, never markup, so a tool result or a reply holding ``<script>`` shows as the text it is.

A run's size is bounded on the page: each text is cut at :data:`MAX_TEXT` characters, saying so, and a
run whose episodes take more than :data:`PAGE_BYTES` is shown in pages (``sttgym view --page N``, or
``?page=N`` from the server), the page saying which episodes it holds. The trajectories file is read a
record at a time; lines the runner's loader sets aside are named on the page.

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
import re
from pathlib import Path
from typing import Any

from sttgym.actions import map_strings
from sttgym.user import USER_TOOL

__all__ = ["NotARun", "load_run", "episode_view", "build_page", "write_page", "MAX_TEXT", "PAGE_BYTES"]

ASSETS = Path(__file__).with_name("assets")
DATA_MARK, STYLE_MARK, SCRIPT_MARK, TITLE_MARK = "{{data}}", "/*{{style}}*/", "/*{{script}}*/", "{{title}}"
_MARKS = re.compile("|".join(re.escape(m) for m in (DATA_MARK, STYLE_MARK, SCRIPT_MARK, TITLE_MARK)))
MAX_TEXT = 20_000  # characters of one text on the page (a result, a reply, a prompt); the rest is cut, saying so
PAGE_BYTES = 16 * 2**20  # the episodes' data one page holds; a larger run is shown in pages


class NotARun(ValueError):
    """The directory is not a run written by ``sttgym eval``."""


def load_run(run_dir: str | os.PathLike, page: int = 1) -> dict:
    """The viewer's data of a run directory: its name, suite, agent, the episodes of page ``page`` (file order),
    where they stand among all (``first``, ``total``, ``pages``) and the lines set aside."""
    from sttgym.evaluation.runner import CONFIG, TRAJECTORIES, iter_records

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
    set_aside: list[str] = []
    # Each episode's view as its page text, a record at a time: what is held is about the pages' size, never the
    # records'. The last record of a key wins, in the place of its first (as load_records keeps them).
    views: dict[str, str] = {}
    agent = None
    for record in iter_records(path, set_aside):
        agent = agent or record["agent"]
        views[record["key"]] = _embedded(episode_view(record))
    pages = _pages(list(views.values()))
    if not 1 <= page <= len(pages):
        raise NotARun(f"{run_dir} has {len(pages)} page(s) of episodes; there is no page {page}")
    first = sum(len(p) for p in pages[:page - 1])
    return {"run": run_dir.resolve().name, "suite": str(config.get("suite", "arena")),
            "agent": str(agent or config.get("agent") or "?"), "model": config.get("model"), "user_tool": USER_TOOL,
            "page": page, "pages": len(pages), "first": first + 1, "total": len(views),
            "set_aside": set_aside[:20], "set_aside_count": len(set_aside),
            "episodes": [json.loads(text) for text in pages[page - 1]]}


def _pages(texts: list[str]) -> list[list[str]]:
    """Episodes' page texts in pages of at most :data:`PAGE_BYTES` each, separators counted (an episode larger
    alone fills a page)."""
    pages: list[list[str]] = [[]]
    size = 0
    for text in texts:
        if pages[-1] and size + len(text) + 1 > PAGE_BYTES:
            pages.append([])
            size = 0
        pages[-1].append(text)
        size += len(text) + 1
    return pages


def _cut(text: str) -> str:
    if len(text) <= MAX_TEXT:
        return text
    return f"{text[:MAX_TEXT]}… [cut: {len(text) - MAX_TEXT:,} more characters, in trajectories.jsonl]"


def episode_view(record: dict) -> dict:
    """What the page needs of one episode record (see the module docstring), every text in it cut at
    :data:`MAX_TEXT` characters. ``record`` is one the runner's loader accepted (its fields typed)."""
    return map_strings(_view(record), _cut)


def _view(record: dict) -> dict:
    from sttgym.evaluation.diagnostics import diagnose

    info = record.get("info") or {}
    messages = [m for m in record.get("messages") or [] if isinstance(m, dict)]
    arena = "domain" in record
    outcome = "error" if record.get("error") else "pass" if record.get("success") else "fail"
    family, _, name = str(record.get("env_id", "")).partition("/")
    # A model's turns line up with the steps: one assistant message per turn, except a turn whose
    # request failed, which adds no message and ends the episode.
    turns = [t if isinstance(t, dict) else {} for t in record.get("turn_log") or []]
    said = [m for m in messages if m.get("role") == "assistant"] if "turn_log" in record else []
    steps = record.get("steps") or []
    label = lambda field: None if record.get(field) is None else str(record[field])  # noqa: E731  (facets are text)
    view = {
        "key": record["key"], "env_id": record.get("env_id"), "seed": record.get("seed"), "run": record.get("run"),
        "domain": label("domain") if arena else family,
        "conflict": label("conflict"), "conflict_name": label("conflict_name"),
        "level": record.get("difficulty"), "solvable": record.get("solvable") is not False,
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


def build_page(run_dir: str | os.PathLike, page: int = 1) -> str:
    """The viewer's page ``page`` of a run directory, as HTML text (raises :class:`NotARun`)."""
    data = load_run(run_dir, page)
    title = "" if data["pages"] == 1 else f" · page {page} of {data['pages']}"
    values = {STYLE_MARK: (ASSETS / "viewer.css").read_text(encoding="utf-8"),
              SCRIPT_MARK: (ASSETS / "viewer.js").read_text(encoding="utf-8"),
              TITLE_MARK: html.escape(f"{data['run']} · {data['agent']}{title} · sttgym"), DATA_MARK: _embedded(data)}
    # One pass over the template: a value holding a mark is inserted as it is, never filled in turn.
    return _MARKS.sub(lambda mark: values[mark.group(0)], (ASSETS / "page.html").read_text(encoding="utf-8"))


def write_page(run_dir: str | os.PathLike, out: str | os.PathLike, page: int = 1) -> Path:
    """Write page ``page`` of ``run_dir`` to the file ``out`` (its folder is made) and return the path."""
    out = Path(out)
    page_text = build_page(run_dir, page)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page_text, encoding="utf-8")
    return out
