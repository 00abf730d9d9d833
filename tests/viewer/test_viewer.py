"""The viewer's page builder, server and command, without a browser (tests/viewer/test_viewer_browser.py has one)."""

from __future__ import annotations

import json
import re
import threading
import urllib.error
import urllib.request
from datetime import datetime

import pytest
from typer.testing import CliRunner

from sttgym.cli import app
from sttgym.evaluation.diagnostics import diagnose
from sttgym.evaluation.runner import TRAJECTORIES, load_records
from sttgym.viewer import NotARun, build_page, load_run, make_server
from sttgym.viewer.page import episode_view
from tests.viewer.conftest import IMAGE, SCRIPT


def records(run) -> list[dict]:
    return list(load_records(run / TRAJECTORIES).values())


def embedded(page: str) -> dict:
    match = re.search(r'<script id="run-data" type="application/json">(.*?)</script>', page, re.S)
    return json.loads(match.group(1))


def test_the_page_embeds_every_episode_and_reads_back_as_the_run(arena_run):
    page = build_page(arena_run)
    data = embedded(page)
    assert data == json.loads(json.dumps(load_run(arena_run)))
    assert [e["key"] for e in data["episodes"]] == [r["key"] for r in records(arena_run)]
    assert "{{" not in page and "/*{{" not in page  # every placeholder filled
    assert 'src="http' not in page and "href=\"http" not in page  # self-contained: nothing fetched


def test_an_arena_episode_carries_its_facets_clock_triggers_and_checklist(arena_run):
    for record in records(arena_run):
        view = episode_view(record)
        assert (view["domain"], view["conflict"], view["level"], view["condition"]) == (
            record["domain"], record["conflict"], record["difficulty"], record["condition"])
        assert view["outcome"] == ("pass" if record["success"] else "fail")
        assert view["modes"] == diagnose(record)
        assert [s.get("call", {}).get("name") for s in view["steps"]] == [s["action"].get("name") for s in record["steps"]]
        clocks = [datetime.fromisoformat(s["clock"]) for s in view["steps"]]
        assert clocks == sorted(clocks) and datetime.fromisoformat(view["start"]) <= clocks[0]
        assert view["checklist"] == record["info"]["checklist"]
        fired = [e["trigger"] for s in view["steps"] for e in s["events"]]
        assert fired == [t["trigger"] for t in record["info"]["trigger_log"]]
        assert bool(fired) == (record["condition"] == "dynamic")
    assert {episode_view(r)["outcome"] for r in records(arena_run)} == {"pass", "fail"}


def test_a_model_turn_keeps_its_text_reasoning_and_tokens_beside_its_step(hostile_run):
    (view,) = load_run(hostile_run)["episodes"]
    first, last = view["steps"]
    assert first["call"]["name"] == SCRIPT and first["text"] == f"Let me look. {IMAGE}"
    assert first["reasoning"] == f"thinking {SCRIPT}" and first["tokens"] == [10, 5]
    assert SCRIPT in first["result"]  # the env's error names the unknown tool
    assert last["reply"] == "Task Completed" and "text" not in last and "reasoning" not in last
    assert view["system"].startswith("You are") and view["request"].startswith("Hi")


def test_markup_in_model_or_tool_text_cannot_leave_the_data_element(hostile_run):
    page = build_page(hostile_run)
    assert page.count("<script") == 2 and page.count("</script") == 2  # the data element and the code
    assert "<img" not in page
    assert embedded(page)["episodes"][0]["steps"][0]["call"]["name"] == SCRIPT


def test_a_scramble_episode_shows_its_tasks_in_place_of_a_checklist(scramble_run):
    (record,) = records(scramble_run)
    view = episode_view(record)
    assert (view["domain"], view["condition"]) == ("ScrambleTool", record["env_id"].split("/")[1])
    assert view["tasks"] == record["info"]["tasks"] and len(view["tasks"]) == 5
    assert view["checklist"] == [] and view["modes"] == [] and "level" not in view
    assert all("clock" not in s for s in view["steps"])
    assert any(e.get("type") == "task_start" for s in view["steps"] for e in s["events"])


def test_errored_and_clockless_records_still_render(arena_run):
    record = records(arena_run)[0]
    for step in record["steps"]:
        del step["clock"]  # runs written before steps carried the clock
    errored = {**record, "error": "backend down", "steps": [], "messages": [], "info": {}}
    assert all("clock" not in s for s in episode_view(record)["steps"])
    view = episode_view(errored)
    assert view["outcome"] == "error" and view["steps"] == [] and view["checklist"] == [] and "request" not in view


def test_a_directory_that_is_not_a_run_is_refused_clearly(tmp_path):
    with pytest.raises(NotARun, match="not a directory"):
        load_run(tmp_path / "missing")
    with pytest.raises(NotARun, match="neither config.json nor trajectories.jsonl"):
        load_run(tmp_path)
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(NotARun, match="not readable JSON"):
        load_run(tmp_path)
    result = CliRunner().invoke(app, ["view", str(tmp_path / "missing")])
    said = " ".join(result.output.replace("│", " ").split())  # the error box wraps where the path's length puts it
    assert result.exit_code == 2 and "not a directory" in said and "Traceback" not in result.output


def test_view_out_writes_a_self_contained_page(arena_run, tmp_path):
    target = tmp_path / "pages" / "run.html"
    result = CliRunner().invoke(app, ["view", str(arena_run), "--out", str(target)])
    assert result.exit_code == 0, result.output
    assert embedded(target.read_text(encoding="utf-8"))["agent"] == "nominal"


def test_the_server_serves_the_page_and_rebuilds_it_as_the_run_grows(arena_run, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    lines = (arena_run / TRAJECTORIES).read_text(encoding="utf-8").splitlines(keepends=True)
    (run / "config.json").write_bytes((arena_run / "config.json").read_bytes())
    (run / TRAJECTORIES).write_text(lines[0], encoding="utf-8")
    server = make_server(run, port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d/" % server.server_address[1]
    try:
        with urllib.request.urlopen(url) as reply:
            assert reply.headers["Content-Type"].startswith("text/html")
            assert len(embedded(reply.read().decode())["episodes"]) == 1
        with (run / TRAJECTORIES).open("a", encoding="utf-8") as handle:
            handle.writelines(lines[1:3])
        with urllib.request.urlopen(url) as reply:
            assert len(embedded(reply.read().decode())["episodes"]) == 3
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(url + "trajectories.jsonl")
        assert missing.value.code == 404  # nothing of the run directory is served but the page
    finally:
        server.shutdown()
        server.server_close()


def test_a_port_in_use_is_a_clear_error(arena_run):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = CliRunner().invoke(app, ["view", str(arena_run), "--port", str(taken.getsockname()[1])])
    assert result.exit_code == 1 and "cannot serve on 127.0.0.1:" in result.output and "Traceback" not in result.output


def _copy_run(source, target, change=lambda record: record, extra_lines=()):
    """A run directory at ``target`` holding ``source``'s records, each passed through ``change``."""
    target.mkdir(parents=True)
    (target / "config.json").write_bytes((source / "config.json").read_bytes())
    lines = [json.dumps(change(r)) + "\n" for r in records(source)] + list(extra_lines)
    (target / TRAJECTORIES).write_text("".join(lines), encoding="utf-8")
    return target


def test_template_marks_in_run_and_agent_names_stay_text(arena_run, tmp_path):
    hostile = "{{data}} /*{{script}}*/ {{title}} </title><script>window.__pwned = 3</script>"
    run = _copy_run(arena_run, tmp_path / "run {{data}}", lambda r: {**r, "agent": hostile})
    page = build_page(run)
    data = embedded(page)  # the data element is whole: a mark in a name was never filled in turn
    assert data["agent"] == hostile and data["run"] == "run {{data}}" and len(data["episodes"]) == len(records(run))
    title = re.search(r"<title>(.*?)</title>", page, re.S).group(1)
    assert "<script>" not in title and "&lt;script&gt;" in title and "{{data}}" in title
    assert page.count('<script id="run-data"') == 1 and "<script" not in page.split('<script id="run-data"')[0]


def test_lines_that_are_not_whole_records_are_set_aside_and_named_on_the_page(arena_run, tmp_path):
    first = records(arena_run)[0]
    bad = [json.dumps({**first, "reward": float("nan")}) + "\n",  # json writes NaN, and reads it back
           json.dumps({**first, "info": {**first["info"], "clock": "2024-13-45T99:99"}}) + "\n",
           json.dumps({**first, "steps": [{**first["steps"][0], "clock": 5}]}) + "\n", "{torn\n"]
    run = _copy_run(arena_run, tmp_path / "run", extra_lines=bad)
    data = load_run(run)
    assert data["set_aside_count"] == 4 and len(data["episodes"]) == len(records(arena_run))
    assert any("reward" in line and "finite" in line for line in data["set_aside"])
    assert any("info.clock" in line for line in data["set_aside"]) and any("steps.0.clock" in line
                                                                           for line in data["set_aside"])
    assert data["episodes"][0] == episode_view(first)  # the good record of that key stands


def test_a_large_run_is_paged_and_long_texts_are_cut_saying_so(arena_run, tmp_path, monkeypatch):
    from sttgym.viewer import page as viewer

    long = "y" * 50_000
    run = _copy_run(arena_run, tmp_path / "run",
                    lambda r: {**r, "steps": [{**s, "observation": long} for s in r["steps"]]})
    whole = load_run(run)
    assert whole["pages"] == 1 and all(len(s["result"]) < 21_000 and s["result"].endswith(
        "[cut: 30,000 more characters, in trajectories.jsonl]") for e in whole["episodes"] for s in e["steps"])
    monkeypatch.setattr(viewer, "PAGE_BYTES", len(viewer._embedded(whole["episodes"][0])) * 2)
    first, second = load_run(run), load_run(run, page=2)
    assert first["pages"] == second["pages"] > 1 and first["total"] == second["total"] == len(whole["episodes"])
    assert second["first"] == len(first["episodes"]) + 1
    pages = [load_run(run, page=n)["episodes"] for n in range(1, first["pages"] + 1)]
    assert [e["key"] for p in pages for e in p] == [e["key"] for e in whole["episodes"]]  # every one, once, in order
    assert all(len(viewer._embedded(p)) <= viewer.PAGE_BYTES for p in pages)
    with pytest.raises(NotARun, match="no page"):
        load_run(run, page=first["pages"] + 1)
    server = make_server(run, port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d/" % server.server_address[1]
    try:
        with urllib.request.urlopen(url + "?page=2") as reply:
            assert embedded(reply.read().decode())["episodes"] == json.loads(json.dumps(second["episodes"]))
        for wrong in ("?page=0", "?page=x", f"?page={first['pages'] + 1}"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(url + wrong)
            assert refused.value.code == 404
    finally:
        server.shutdown()
        server.server_close()
    out = tmp_path / "page2.html"
    assert CliRunner().invoke(app, ["view", str(run), "--out", str(out), "--page", "2"]).exit_code == 0
    assert embedded(out.read_text(encoding="utf-8"))["page"] == 2
