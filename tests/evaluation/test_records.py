"""Records are read whole: a trajectories line whose fields are of the wrong type or range, or filed under another
episode's key, is set aside with a message (its episode plays again) and never poisons a resume or a summary."""

from __future__ import annotations

import json
import logging

import pytest
from tests.evaluation.evaltoy import register

from sttgym.evaluation.runner import TRAJECTORIES, EvalConfig, Runner, load_records
from sttgym.evaluation.summary import summarise

SIX = ("key", "condition", "env_id", "seed", "run", "reward")  # all the loader used to check


# Lines that are not whole records, by what is wrong with them, made from a good record and another episode's. Each
# keeps the good record's key, so each would stand in for its episode.
DAMAGE = {
    "a NaN reward": lambda good, other: {**good, "reward": float("nan")},
    "a reward of 7": lambda good, other: {**good, "reward": 7.0, "success": True},
    "an infinite reward": lambda good, other: {**good, "reward": float("inf")},
    "only the six fields": lambda good, other: {k: good[k] for k in SIX},
    "another episode's key": lambda good, other: {**other, "key": good["key"]},
    "success against the reward": lambda good, other: {**good, "success": not good["success"]},
    "a seed as text": lambda good, other: {**good, "seed": str(good["seed"])},
    "a boolean count": lambda good, other: {**good, "calls": True},
    "steps that are not steps": lambda good, other: {**good, "steps": ["x"]},
    "a clock that is no time": lambda good, other: {**good, "info": {**good["info"], "clock": "25:99"}},
    "usage of the wrong type": lambda good, other: {**good, "usage": {"prompt_tokens": "many", "completion_tokens": 1}},
    "an unknown condition": lambda good, other: {**good, "condition": "sideways"},
    "not an object": lambda good, other: [good],
}


def damaged(what: str, good: dict, other: dict) -> str:
    return json.dumps(good)[:50] if what == "torn" else json.dumps(DAMAGE[what](good, other))


KINDS = [*DAMAGE, "torn"]


@pytest.fixture
def run(tmp_path):
    register()
    config = EvalConfig(domains=["EvalToy"], agent="oracle", runs=1, limit=4)
    return config, tmp_path / "run", Runner(config, tmp_path / "run").run()


def test_every_damaged_line_is_set_aside_saying_why(run, caplog):
    config, out, records = run
    path = out / TRAJECTORIES
    lines = [damaged(what, records[0], records[1]) for what in KINDS]
    with path.open("a", encoding="utf-8") as handle:
        handle.writelines(line + "\n" for line in lines)
    set_aside: list[str] = []
    with caplog.at_level(logging.WARNING, logger="sttgym.runner"):
        loaded = load_records(path, set_aside)
    assert len(set_aside) == len(lines) and loaded == {r["key"]: r for r in records}  # the good record stands
    assert [line.split(":", 1)[0] for line in set_aside] == [f"line {n}" for n in range(5, 5 + len(lines))]
    assert f"{len(lines)} line(s) set aside" in caplog.text
    assert any("reward" in line and "finite" in line for line in set_aside)
    assert any("disagrees with its condition" in line for line in set_aside)


@pytest.mark.parametrize("what", KINDS)
def test_a_damaged_line_never_poisons_a_resume_or_the_summary(run, what):
    config, out, records = run
    lines = (out / TRAJECTORIES).read_text(encoding="utf-8").splitlines()
    # The damaged line replaces the first episode's record: that episode plays again, the rest do not.
    (out / TRAJECTORIES).write_text("\n".join([damaged(what, records[0], records[1]), *lines[1:]]) + "\n",
                                    encoding="utf-8")
    again = Runner(config, out).run()
    assert [r["key"] for r in again] == [r["key"] for r in records] and again[1:] == records[1:]
    assert {**again[0], "seconds": 0} == {**records[0], "seconds": 0}
    summary = summarise(again, "arena", label="oracle")
    assert summary["episodes"] == 4 and 0.0 <= summary["overall"] <= 1.0
