"""The viewer in a real headless Chromium driven by Playwright: load a served run, filter, open an
episode, and check what is shown against the run's records.

Needs the ``view`` extra (Playwright's Python package) and a Chromium executable (Debian:
``apt-get install chromium``; ``STTGYM_CHROMIUM`` names another). Without them these tests skip,
unless ``STTGYM_BROWSER_TESTS=require`` (CI sets it), which makes a missing browser a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from urllib.parse import quote

import pytest

from sttgym.evaluation.runner import CONFIG, TRAJECTORIES, load_records
from sttgym.viewer import make_server
from tests.viewer.conftest import IMAGE, SCRIPT

CHROMIUM = os.environ.get("STTGYM_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _unavailable(why: str) -> None:
    if os.environ.get("STTGYM_BROWSER_TESTS") == "require":
        pytest.fail(why)
    pytest.skip(why)


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright is not installed (pip install 'sttgym[view]')")
    if not CHROMIUM:
        _unavailable("no Chromium executable (apt-get install chromium, or set STTGYM_CHROMIUM)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def open_run(browser):
    """Serve a run directory on a free loopback port and load its page; no script error may occur."""
    opened = []

    def load(run, fragment: str = ""):
        server = make_server(run, port=0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        opened.append((server, page, errors))
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/{fragment}", timeout=60_000)
        page.wait_for_selector("body[data-ready='1']", timeout=60_000)
        return page

    yield load
    for server, page, errors in opened:
        page.close()
        server.shutdown()
        server.server_close()
        assert errors == []


def records(run) -> list[dict]:
    return list(load_records(run / TRAJECTORIES).values())


def shown_keys(page) -> list[str]:
    return page.locator("#rows .row").evaluate_all("rows => rows.map(r => r.dataset.key)")


def as_shown(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def test_filter_then_open_an_episode_shows_its_calls_triggers_and_checklist(arena_run, open_run):
    by_key = {r["key"]: r for r in records(arena_run)}
    page = open_run(arena_run)
    assert page.text_content("#shown-count") == str(len(by_key))

    page.select_option("#f-outcome", "fail")
    failed = [k for k, r in by_key.items() if not r["success"]]
    assert page.text_content("#shown-count") == str(len(failed)) and shown_keys(page) == failed
    assert page.text_content("#f-condition option[value='dynamic']") == f"dynamic ({len(failed)})"
    page.select_option("#f-level", "medium")
    (key,) = [k for k in failed if by_key[k]["difficulty"] == "medium"]
    assert shown_keys(page) == [key]

    page.click(f"#rows .row[data-key='{key}']")
    record = by_key[key]
    assert page.text_content("#detail h2").endswith(record["env_id"])
    assert page.url.endswith("#" + quote(key, safe=""))
    assert page.text_content("#outcome").startswith("fail")
    assert (page.locator("#conversation .call-name").all_text_contents()
            == [s["action"]["name"] for s in record["steps"] if "name" in s["action"]])
    assert page.locator("#timeline .tick[data-step]").count() == len(record["steps"])

    fired = {e["trigger"]: i for i, s in enumerate(record["steps"]) for e in s["events"]}
    assert record["info"]["trigger_log"]
    for trigger in record["info"]["trigger_log"]:
        name = trigger["trigger"]
        card = page.text_content(f"#triggers .trigger[data-trigger='{name}']")
        for change in trigger["changes"]:
            assert change["path"] in card and as_shown(change["new"]) in card
        marker = page.locator(f"#timeline .trigger-mark[data-trigger='{name}']")
        assert f"{name} {trigger['at'][11:16]}" in marker.text_content()
        marker.click()
        assert "flash" in page.get_attribute(f"#step-{fired[name]}", "class")
        assert page.locator(f"#step-{fired[name]} .event[data-trigger='{name}']").count() == 1

    verdicts = {row.get_attribute("data-check"): row.locator(".mark").text_content()
                for row in page.locator("#checklist tr[data-check]").all()}
    assert verdicts == {c["name"]: "✓" if c["passed"] else "✗" for c in record["info"]["checklist"]}

    again = open_run(arena_run, "#" + quote(key, safe=""))  # a link to an episode opens it
    assert again.text_content("#detail h2").endswith(record["env_id"])


def test_markup_from_the_model_and_the_tools_shows_as_text(hostile_run, open_run):
    page = open_run(hostile_run)
    assert page.text_content("#conversation .call-name") == SCRIPT
    conversation = page.text_content("#conversation")
    assert f"Let me look. {IMAGE}" in conversation and f"unknown tool '{SCRIPT}'" in conversation
    assert f"thinking {SCRIPT}" in page.text_content("#conversation details.reasoning")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#detail img, #detail script").count() == 0


def test_an_episode_that_ended_on_an_error_says_so_and_is_not_scored(mixed_run, open_run):
    # the runner plays a model's episodes in threads: the records come in the order they finished
    played, failed = sorted(records(mixed_run), key=lambda r: bool(r["error"]))
    assert failed["error"] and not played["error"]
    page = open_run(mixed_run)
    assert "1 ended on an error (not scored)" in page.text_content("#stats")
    page.select_option("#f-outcome", "error")
    assert shown_keys(page) == [failed["key"]]
    page.click("#rows .row")
    assert page.text_content("#outcome").startswith("error")
    assert failed["error"] in page.text_content("#detail .card.error")


def test_a_scramble_episode_shows_its_tasks_and_curriculum(scramble_run, open_run):
    (record,) = records(scramble_run)
    page = open_run(scramble_run)
    assert page.locator("#checklist tr .mark").all_text_contents() == [
        "✓" if t["solved"] else "✗" for t in record["info"]["tasks"]]
    starts = sum(e.get("type") == "task_start" for s in record["steps"] for e in s["events"])
    assert page.locator("#timeline .phase").count() == starts
    assert page.locator("#conversation .call-name").count() == record["calls"]


def test_thousands_of_episodes_load_and_only_the_rows_in_view_are_drawn(arena_run, tmp_path, open_run, monkeypatch):
    # one page of them, however long the nominal plan's episodes grow (paging has a test of its own)
    monkeypatch.setattr("sttgym.viewer.page.PAGE_BYTES", 64 * 2**20)
    base = records(arena_run)
    run = tmp_path / "big"
    run.mkdir()
    (run / CONFIG).write_bytes((arena_run / CONFIG).read_bytes())
    with (run / TRAJECTORIES).open("w", encoding="utf-8") as handle:
        for n in range(2000):
            record = base[n % len(base)]
            handle.write(json.dumps({**record, "seed": n, "key": f"{record['condition']}|{record['env_id']}|{n}|0"}) + "\n")
    started = time.perf_counter()
    page = open_run(run)
    assert time.perf_counter() - started < 30  # about 1 s on 2 shared cores: a bound for a loaded CI machine
    assert page.text_content("#shown-count") == "2000"
    assert page.locator("#rows .row").count() < 60
    page.evaluate("document.getElementById('list').scrollTop = 1e9")
    # Drawn on the scroll event. (A locator waits without eval, which the page's CSP forbids to wait_for_function.)
    page.locator("#rows .row[data-key*='|1999|']").wait_for()
    assert page.locator("#rows .row").count() < 60
    page.select_option("#f-condition", "static")
    assert page.text_content("#shown-count") == "1000"
    page.locator("#f-search").press_sequentially("seed 1999")  # key by key, as a person types
    assert page.text_content("#shown-count") == "1" and page.input_value("#f-search") == "seed 1999"
    page.click("#f-clear")
    assert page.text_content("#shown-count") == "2000" and page.input_value("#f-condition") == ""


def test_names_holding_template_marks_and_lines_set_aside_leave_a_working_page(arena_run, tmp_path, open_run):
    """A run or agent named with the template's marks blanked the page; what the loader sets aside is named."""
    base = records(arena_run)
    run = tmp_path / "run {{data}}"
    run.mkdir()
    (run / CONFIG).write_bytes((arena_run / CONFIG).read_bytes())
    damaged = {**base[0], "info": {**base[0]["info"], "clock": "2024-13-45T99:99"}}  # no time: set aside
    with (run / TRAJECTORIES).open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps({**r, "agent": "{{data}} /*{{script}}*/"}) + "\n" for r in base)
        handle.write(json.dumps(damaged) + "\n")
    page = open_run(run)
    assert page.text_content("#shown-count") == str(len(base))
    assert "{{data}}" in page.text_content("#run-title") and "1 line(s)" in page.text_content("#notice")
    for index in range(len(base)):  # every episode opens (the pageerror check in open_run)
        page.locator("#rows .row").nth(index).click()
        assert page.locator("#detail .episode-head").count() == 1


def test_a_run_too_large_for_one_page_says_which_episodes_it_shows(arena_run, tmp_path, open_run, monkeypatch):
    from sttgym.viewer import page as viewer

    base = records(arena_run)
    monkeypatch.setattr(viewer, "PAGE_BYTES", len(viewer._embedded(viewer.episode_view(base[0]))) * 3)
    page = open_run(arena_run, "?page=2")
    said = page.text_content("#notice")
    assert said.startswith("page 2 of ") and f"of {len(base)}" in said and "--page N" in said
