"""The benchmark as data: the frozen manifest, exported tasks that replay exactly, the judge's calibration."""

import json
from importlib import resources

import gymnasium as gym
import pytest
from typer.testing import CliRunner

import sttgym
from sttgym.agents import OracleAgent
from sttgym.cli import app
from sttgym.evaluation.calibration import calibration_items, judge_rates
from sttgym.manifests import (BENCHMARK_SEEDS, MANIFEST, arena_manifest, digest, export_rows, load_manifest,
                              playable, task_of)
from sttgym.judge import RuleJudge
from sttgym.registry import DOMAINS

LIBRARY_DOMAINS = sorted(d for d, dom in DOMAINS.items() if dom.world.__module__.startswith("sttgym.envs."))
IDS = [i for d in LIBRARY_DOMAINS for i in sttgym.arena_ids(d)]
MANIFESTS = sorted(p.name[:-5] for p in resources.files("sttgym").joinpath("data/manifests").iterdir())


def test_the_default_manifest_freezes_ten_seeds_of_every_library_id():
    instances = load_manifest(MANIFEST)["instances"]
    assert {(i, s) for i, s, _ in instances} == {(i, s) for i in IDS for s in BENCHMARK_SEEDS}


@pytest.mark.parametrize("name", MANIFESTS)
def test_a_frozen_manifest_still_builds_exactly_the_instances_it_froze(name):
    manifest = load_manifest(name)
    if not playable(manifest):  # frozen by an earlier release: this one must refuse to measure it
        with pytest.raises(ValueError, match=f"{name} was frozen by sttgym {manifest['release']}.*--tasks"):
            arena_manifest(name=name)
        return
    changed = [(i, s) for i, s, d in manifest["instances"] if digest(task_of(i, s)) != d]
    assert not changed, f"{len(changed)} {name} instances changed (e.g. {changed[:3]}): freeze a new manifest version"


def test_the_default_manifest_is_this_release_s_and_an_older_release_s_is_refused_with_the_way_back(monkeypatch):
    assert playable(load_manifest(MANIFEST))
    import sttgym.manifests as manifests

    old = {**load_manifest(MANIFEST), "name": "arena-old", "release": "0.0.1"}
    monkeypatch.setattr(manifests, "load_manifest", lambda name: old)
    with pytest.raises(ValueError, match=r"arena-old was frozen by sttgym 0\.0\.1.*sttgym==0\.0\.1.*--tasks"):
        arena_manifest(name="arena-old")


def test_a_domain_outside_the_manifest_is_measured_live_and_an_unknown_manifest_is_a_clear_error(toy_ids):
    assert arena_manifest(["Toy"]) == [(i, s) for s in (0, 1, 2) for i in toy_ids]
    with pytest.raises(ValueError, match="no benchmark manifest 'arena-v0'"):
        arena_manifest(name="arena-v0")


def test_a_held_out_set_of_domains_mixes_frozen_and_live_instances_and_names_unknown_domains(toy_ids):
    frozen = [(i, s) for i, s in arena_manifest() if i.startswith("STTArena/ColdChain-")]
    assert arena_manifest(["ColdChain", "Toy"]) == frozen + arena_manifest(["Toy"])
    with pytest.raises(ValueError, match="unknown domain.*Nowhere.*registered: .*ColdChain"):
        arena_manifest(["ColdChain", "Nowhere"])


@pytest.mark.parametrize("env_id", IDS)
def test_an_exported_task_replays_the_oracle_exactly(env_id):
    (row,) = export_rows([(env_id, 0)])
    row = json.loads(json.dumps(row))  # as it comes back from the file
    live = sttgym.rollout(gym.make(env_id), OracleAgent(), seed=0)
    stored = sttgym.rollout(gym.make(env_id), OracleAgent(), seed=123, options={"task": row["task"]})
    assert stored.messages == live.messages and stored.reward == live.reward == 1.0
    assert stored.info["trigger_log"] == live.info["trigger_log"]


def test_instances_an_earlier_release_exported_still_load_and_play_under_this_releases_rules():
    """tests/data/arena-v3-sample.jsonl: one instance per domain as sttgym 0.1.0 exported it from arena-v3 (each
    one this release builds differently). A stored task is data, scored by the release that plays it: its oracle
    still solves it, and its stale nominal plan (which 0.1.0 scored 0) still falls short under 0.4.0's rules."""
    from pathlib import Path

    from sttgym.agents import NominalAgent

    rows = [json.loads(line) for line in
            (Path(__file__).parent.parent / "data" / "arena-v3-sample.jsonl").read_text().splitlines()]
    assert {r["env_id"].split("/")[1].split("-")[0] for r in rows} == set(LIBRARY_DOMAINS)
    # 0.4.0 gave Warehouse's dock bookings records of their own: its tasks stored before play with their release
    rows = [r for r in rows if not r["env_id"].startswith("STTArena/Warehouse-")]
    for row in rows:
        assert row["digest"] != digest(task_of(row["env_id"], row["seed"]))  # an instance this release changed
        assert row["rewards_0_1_0"] == {"oracle": 1.0, "nominal": 0.0}
        oracle = sttgym.rollout(gym.make(row["env_id"]), OracleAgent(), seed=row["seed"], options={"task": row["task"]})
        nominal = sttgym.rollout(gym.make(row["env_id"]), NominalAgent(), seed=row["seed"], options={"task": row["task"]})
        assert oracle.reward == 1.0 and nominal.reward < 1.0, row["env_id"]


def test_export_then_eval_from_the_file(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["export", "--out", str(tmp_path / "x"), "--no-hf", "--train", "3",
                                 "--domain", "CarShare"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "x" / f"{MANIFEST}.jsonl").read_text().splitlines()]
    train = [json.loads(line) for line in (tmp_path / "x" / "train.jsonl").read_text().splitlines()]
    assert [(r["env_id"], r["seed"]) for r in rows] == arena_manifest(["CarShare"])
    assert {r["split"] for r in rows} == {"benchmark"}
    assert len(train) == 3 and {r["split"] for r in train} == {"train"}
    env_id = rows[0]["env_id"]
    subset = tmp_path / "one.jsonl"
    subset.write_text("\n".join(json.dumps(r) for r in rows if r["env_id"] == env_id))
    result = runner.invoke(app, ["eval", "--agent", "oracle", "--tasks", str(subset), "--runs", "1",
                                 "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["episodes"] == len(BENCHMARK_SEEDS) and summary["overall"] == 1.0


@pytest.mark.parametrize("reply_set", ["heldout", "review2", "test", "review", "dev"])
def test_the_rule_judge_meets_its_calibration_targets(reply_set):
    impossible = [i for i in IDS if i.endswith("-impossible")][::3]  # three stories of every domain; the CLI runs all
    items = calibration_items(impossible, name=reply_set)
    rates = judge_rates(RuleJudge(), items)
    assert rates["tasks"] >= 10 and rates["items"] >= 150
    assert {i.label for i in items} == {True, False} and len({i.kind for i in items}) >= 8
    assert rates["false_positive_rate"] <= 0.05 and rates["false_negative_rate"] <= 0.10, rates["errors"][:5]
    english = rates["by_language"]["en"]  # and English alone, where the sets have other languages too
    assert english["false_positive_rate"] <= 0.05 and english["false_negative_rate"] <= 0.10


def _names(task) -> set[str]:
    """The digit-free entity keys and entity names of a task's world: drawn names, and any fixed vocabulary."""
    containers = [c for c in task.initial_state.values() if isinstance(c, dict)]
    keys = {key for c in containers for key in c if isinstance(key, str) and not any(ch.isdigit() for ch in key)}
    return keys | {e["name"] for c in containers for e in c.values() if isinstance(e, dict) and isinstance(e.get("name"), str)
                   and not any(ch.isdigit() for ch in e["name"])}


def test_every_library_domain_draws_training_names_from_another_pool():
    for domain in LIBRARY_DOMAINS:
        instances = {split: [_names(task_of(env_id, seed)) for env_id in sttgym.arena_ids(domain)[::9] for seed in seeds]
                     for split, seeds in (("benchmark", range(6)), ("train", range(1_000_000, 1_000_006)))}
        fixed = set.intersection(*instances["benchmark"], *instances["train"])  # e.g. car classes, in every world
        drawn = {split: set().union(*found) - fixed for split, found in instances.items()}
        assert drawn["benchmark"] and not drawn["benchmark"] & drawn["train"], domain


def test_a_stored_task_replays_only_in_its_own_env():
    (row,) = export_rows([(IDS[0], 0)])
    other = gym.make(IDS[1])
    with pytest.raises(ValueError, match="replay it in"):
        other.reset(options={"task": row["task"]})


def test_a_stored_task_naming_what_its_world_lacks_is_refused_before_it_runs():
    (row,) = export_rows([(IDS[0], 0)])
    task = row["task"]
    task["checklist"][0]["holds"] = {"name": "all_of", "args": {"preds": [{"name": "no_such_check", "args": {}}]}}
    task["triggers"][0]["effect"][0]["args"]["unexpected"] = 1
    with pytest.raises(ValueError, match="no predicate 'no_such_check'") as caught:
        gym.make(IDS[0]).reset(options={"task": task})
    assert "unknown ['unexpected']" in str(caught.value)
