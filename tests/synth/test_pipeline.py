"""sttgym synth end to end, offline: a loopback OpenAI-compatible server replays scripted model outputs
(tests/synth/scripted) for seven requests, two of which become environments outside the built-in domains."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import gymnasium as gym
import pytest
from typer.testing import CliRunner

import sttgym

from sttgym.cli import app
from sttgym.registry import DOMAINS
from sttgym.synth.bundle import load_bundle, write_bundle
from sttgym.synth.llm import read_answer
from sttgym.synth.pipeline import Pipeline
from sttgym.synth.prompts import PROMPTS, PROMPTS_HASH
from tests.models.fake_server import FakeServer
from tests.synth import scripted

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "synth_import"
# What the scripted run must reject, where, and a phrase of the reason.
EXPECTED_REJECTIONS = {
    ("poem", "filter", "filter_stateful"): "not stateful",
    ("playlist", "filter", "filter_sensitive"): "no spatio-temporal conflict",
    ("ferry", "environment", "static_world"): "syntax error at line 16",
    ("marina", "environment", "static_world"): "unsafe code (audit): line 1: import os",
    ("museum", "validate", "functional"): "the tool raised KeyError",
    ("library/T3-easy", "assess", "dual_agent"): "never fires",
    ("parking/S2-easy", "assess", "rules"): "oracle scored 0.500",
}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The scripted run: ``synth filter`` first, then ``synth all`` resuming it; the work directory and server."""
    work = tmp_path_factory.mktemp("synth") / "work"
    before = set(DOMAINS)
    with FakeServer(scripted.replay, tokens=scripted.tokens) as server:
        common = ["--work", str(work), "--base-url", server.url, "--model", "scripted"]
        first = CliRunner().invoke(app, ["synth", "filter", *common, "--requests", str(scripted.REQUESTS)])
        assert first.exit_code == 0, first.output
        after_filter = json.loads((work / "summary.json").read_text())
        result = CliRunner().invoke(app, ["synth", "all", *common])
        assert result.exit_code == 0, result.output
        yield {"work": work, "server": server, "output": result.output, "common": common,
               "after_filter": after_filter, "summary": json.loads((work / "summary.json").read_text())}
    for name in set(DOMAINS) - before:  # leave the registry as the other tests expect it
        for env_id in [i for i in gym.registry if i.startswith(f"STTArena/{name}-")]:
            del gym.registry[env_id]
        del DOMAINS[name]


def test_the_run_writes_a_bundle_per_environment_and_lists_every_rejected_candidate(run):
    summary = run["summary"]
    assert [Path(b).name for b in summary["bundles"]] == ["SynthCityLibrary", "SynthHarbourParking"]
    found = {(r["item"], r["stage"], r["step"]): r["reason"] for r in summary["rejected"]}
    assert set(found) == set(EXPECTED_REJECTIONS)
    for key, phrase in EXPECTED_REJECTIONS.items():
        assert phrase in found[key], (key, found[key])
    assert summary["accepted"] == 4 and summary["scenarios"] == 6
    assert json.loads((run["work"] / "rejected.json").read_text()) == summary["rejected"]
    assert "rejected candidates (7)" in run["output"] and "museum" in run["output"]
    # the filter stage alone rejected only what the filters reject
    assert {r["item"] for r in run["after_filter"]["rejected"]} == {"poem", "playlist"}


def test_every_exchange_is_logged_and_a_malformed_answer_is_sent_back_with_its_reason(run):
    log = [json.loads(line) for line in (run["work"] / "log.jsonl").read_text().splitlines()]
    assert len(log) == len(run["server"].requests) == sum(u["calls"] for u in run["summary"]["usage"].values())
    attempts = [row for row in log if row["template"] == "blueprint" and row["item"] == "parking/ST1-easy"]
    assert [row["attempt"] for row in attempts] == [1, 2]
    assert "does not parse" in attempts[0]["refused"] and attempts[1]["refused"] is None
    retried = attempts[1]["messages"]
    assert retried[-1]["role"] == "user" and "refused" in retried[-1]["content"]
    assert all(row["prompt_tokens"] > 0 for row in log)
    audit = next(row for row in log if row["template"] == "auditor" and row["item"] == "parking/T2-medium")
    assert '"call": "cancel_reservation"' in audit["messages"][1]["content"]  # the auditor reads the oracle's run
    artifact = json.loads((run["work"] / "requests" / "library" / "dual_agent" / "S1-easy.json").read_text())
    assert artifact["ok"] and artifact["value"]["fired_at"] == artifact["value"]["intended"] == 2
    assert artifact["value"]["changes"] == [{"path": "copies.CP-88120.branch", "old": "BR-NORTH", "new": "BR-EASTGATE"}]
    assert (run["work"] / "requests" / "library" / "dynamic.py").read_text().count("@predicate") == 3


def test_running_again_resumes_without_asking_the_model(run):
    asked = len(run["server"].requests)
    manifest = run["work"] / "bundles" / "SynthCityLibrary" / "manifest.json"
    written = manifest.read_text()
    again = CliRunner().invoke(app, ["synth", "all", *run["common"]])
    assert again.exit_code == 0, again.output
    assert len(run["server"].requests) == asked and manifest.read_text() == written
    summary = json.loads((run["work"] / "summary.json").read_text())
    assert summary["rejected"] == run["summary"]["rejected"] and summary["bundles"] == run["summary"]["bundles"]


def test_the_bundles_pass_validate_and_evaluate_with_the_reference_agents(run, tmp_path):
    bundles = ":".join(run["summary"]["bundles"])
    runner = CliRunner()
    for domain in ("SynthCityLibrary", "SynthHarbourParking"):
        checked = runner.invoke(app, ["validate", "--domain", domain, "--seeds", "1"], env={"STTGYM_BUNDLES": bundles})
        assert checked.exit_code == 0, checked.output
        assert "2/2 tasks valid" in checked.output
    for agent, expected in (("oracle", 1.0), ("nominal", 0.0)):
        out = tmp_path / agent
        played = runner.invoke(app, ["eval", "--agent", agent, "--domain", "SynthCityLibrary", "--domain",
                                     "SynthHarbourParking", "--out", str(out)], env={"STTGYM_BUNDLES": bundles})
        assert played.exit_code == 0, played.output
        summary = json.loads((out / "summary.json").read_text())
        assert summary["episodes"] == 4 and summary["score"]["overall"] == expected  # per id, its first instance


def test_a_manifest_records_provenance_and_every_stage_verdict(run):
    manifest = json.loads((run["work"] / "bundles" / "SynthHarbourParking" / "manifest.json").read_text())
    provenance = manifest["provenance"]
    assert provenance["model"] == "scripted" and provenance["base_url"] == run["server"].url
    assert provenance["prompts_hash"] == PROMPTS_HASH and provenance["request_id"] == "parking"
    assert provenance["started"] <= provenance["written"]
    assert manifest["ids"] == ["STTArena/SynthHarbourParking-ST1-easy", "STTArena/SynthHarbourParking-T2-medium"]
    assert set(manifest["verdicts"]["T2-medium"].values()) == {"passed"}
    assert "oracle scored 0.500" in manifest["verdicts"]["S2-easy"]["rules"]
    assert manifest["verdicts"]["S2-easy"]["auditor"] == "not run"
    assert manifest["validate_problems"] == []


def test_a_bundle_id_picks_one_of_its_stored_instances_by_seed(run, tmp_path):
    source = run["work"] / "bundles" / "SynthHarbourParking"
    manifest = json.loads((source / "manifest.json").read_text())
    task = json.loads((source / "tasks.json").read_text())[0]
    variant = {**task, "query": task["query"].replace("Hello", "Good afternoon")}
    write_bundle(tmp_path / "b", "SynthTwoInstances", (source / "world.py").read_text(), manifest["class_name"],
                 [task, variant], {}, {})
    domain = sttgym.load_bundle(tmp_path / "b", isolate=False)  # exported lazily by the package
    env_id = f"STTArena/{domain.name}-ST1-easy"
    queries = [gym.make(env_id).reset(seed=seed)[0] for seed in range(8)]
    assert queries == [gym.make(env_id).reset(seed=seed)[0] for seed in range(8)]
    assert set(queries) == {task["query"], variant["query"]}


@pytest.mark.parametrize("text, template, reason", [
    ("I think it is stateful.", "filter_stateful", "holds no JSON object"),
    ('{"analysis": "x", "stateful": tru}', "filter_stateful", "does not parse"),
    ('```json\n{"analysis": "x"}\n```', "filter_stateful", "stateful: Field required"),
    ('{"analysis": "x", "dependency": "joint", "conflicts": ["T9"], "keep": true}', "filter_sensitive",
     "unknown conflict codes"),
    ("class World: pass", "class_code", "no ```python block"),
])
def test_an_answer_that_breaks_its_contract_is_refused_with_the_reason(text, template, reason):
    value, why = read_answer(text, PROMPTS[template])
    assert value is None and reason in why


def test_an_item_the_endpoint_never_answers_is_left_for_the_next_run_not_rejected(tmp_path):
    from sttgym.models.openai_backend import OpenAIModel
    from sttgym.synth.llm import Asker

    with FakeServer(scripted.replay) as server:
        server.faults.append(("status", 400))  # not retryable: the backend gives up on that request at once
        model = OpenAIModel("scripted", base_url=server.url, max_workers=1)
        pipeline = Pipeline(tmp_path / "work", Asker(model, tmp_path / "work" / "log.jsonl"), say=lambda line: None)
        pipeline.add_requests(scripted.REQUESTS)
        pipeline.filter()
        missing = [u["item"] for u in pipeline.unanswered]
        assert len(missing) == 1 and pipeline.artifact(missing[0], "filter_stateful") is None
        assert missing[0] not in {r["item"] for r in pipeline.summary()["rejected"]}
        again = Pipeline(tmp_path / "work", Asker(model, tmp_path / "work" / "log.jsonl"), say=lambda line: None)
        again.filter()
        assert again.unanswered == [] and again.artifact(missing[0], "filter_stateful") is not None


def _library(run) -> tuple[Pipeline, type]:
    pipeline = Pipeline(run["work"], isolate=False, say=lambda line: None)
    return pipeline, pipeline.world("library", "dynamic")


@pytest.mark.parametrize("change, reason", [
    (lambda c: c["calls"][0].update(expect="failure"), "expected failure"),
    (lambda c: c["calls"].__setitem__(slice(None), c["calls"][:4]), "tools never run successfully"),
    (lambda c: c["calls"][1].update(arguments={"book_id": 7}), "does not fit the schema"),
    (lambda c: c["calls"][1].update(name="renew_loan"), "no tool 'renew_loan'"),
])
def test_functional_validation_holds_each_call_to_its_declared_outcome(run, change, reason):
    from sttgym.synth.checks import functional
    from sttgym.synth.prompts import TestConfigs

    pipeline, world = _library(run)
    configs = pipeline.value("library", "test_configs")
    assert functional(world, TestConfigs.model_validate(configs).configs)[1] is None
    change(configs["configs"][0])
    assert reason in functional(world, TestConfigs.model_validate(configs).configs)[1]


@pytest.mark.parametrize("change, reason", [
    (lambda d, c: d["trigger"].update(activation=["get_copy"]), "activation may name only tools that change"),
    (lambda d, c: d["trigger"]["when"].update(name="copy_is_late"), "no predicate 'copy_is_late'"),
    (lambda d, c: d["oracle"][0]["arguments"].update(card="M-5521"), "unknown argument(s) 'card'"),
    (lambda d, c: c.update(checklist=[]), "a solvable task needs a checklist"),
])
def test_assembly_refuses_pieces_that_do_not_make_a_task(run, change, reason):
    from sttgym.synth.checks import assemble
    from sttgym.synth.prompts import Checklist, NominalPlan, TaskData

    pipeline, world = _library(run)
    data, checklist = pipeline.value("library", "task_data", "S1-easy"), pipeline.value("library", "checklist", "S1-easy")
    plan = NominalPlan.model_validate(pipeline.value("library", "plan_agent", "S1-easy"))
    assert assemble(world, TaskData.model_validate(data), Checklist.model_validate(checklist), plan, "S1", "easy")[1] \
        is None
    change(data, checklist)
    task, why = assemble(world, TaskData.model_validate(data), Checklist.model_validate(checklist), plan, "S1", "easy")
    assert task is None and reason in why


def test_conflicts_and_levels_choose_which_assigned_scenarios_are_built(run):
    assert Pipeline(run["work"]).scenarios("parking") == ["ST1-easy", "T2-medium", "S2-easy"]
    assert Pipeline(run["work"], levels=("medium",)).scenarios("parking") == ["T2-medium"]
    assert Pipeline(run["work"], conflicts=("S2", "ST1")).scenarios("parking") == ["ST1-easy", "S2-easy"]
    with pytest.raises(ValueError, match="unknown conflict types or levels"):
        Pipeline(run["work"], levels=("trivial",))


def test_a_model_stage_without_a_model_is_a_clear_error(tmp_path):
    pipeline = Pipeline(tmp_path / "work", say=lambda line: None)
    pipeline.add_requests(scripted.REQUESTS)
    with pytest.raises(ValueError, match="needs a model"):
        pipeline.filter()


def test_paper_artifacts_import_as_a_bundle_and_a_broken_blueprint_is_left_out(tmp_path):
    source = tmp_path / "paper"
    shutil.copytree(EXAMPLE, source)
    items = json.loads((source / "blueprint.json").read_text())
    broken = {**items[0], "scenario_id": "broken", "conflict_type": "S1",
              "concrete_mutations": [{**items[0]["concrete_mutations"][0], "old_value": "delayed"}]}
    (source / "blueprint.json").write_text(json.dumps([*items, broken]))
    result = CliRunner().invoke(app, ["synth", "import", str(source), "--out", str(tmp_path / "bundle")])
    assert result.exit_code == 0, result.output
    assert "rejected broken" in result.output and "old value 'delayed'" in result.output
    world = (tmp_path / "bundle" / "world.py").read_text()
    assert "@tool(mutates=True, cost=2)\n    def book_passengers" in world and "@tool\n    def get_sailing" in world
    assert "getattr" not in world and "env.state.get('bookings', {})" in world
    domain = load_bundle(tmp_path / "bundle", isolate=False)
    from sttgym.agents import OracleAgent
    from sttgym.rollout import rollout

    try:
        assert rollout(gym.make(f"STTArena/{domain.name}-ST1-easy"), OracleAgent(), seed=0).reward == 1.0
    finally:
        del DOMAINS[domain.name]


def test_a_directory_that_is_not_a_bundle_is_refused_and_reported_by_the_command_line(tmp_path):
    with pytest.raises(ValueError, match="not a bundle"):
        load_bundle(tmp_path)
    listed = CliRunner().invoke(app, ["list", "--plain"], env={"STTGYM_BUNDLES": str(tmp_path)})
    assert listed.exit_code == 0 and "failed to load" in listed.output and "STTArena/ColdChain-T1-easy" in listed.output


def test_synth_without_requests_says_what_is_missing(tmp_path):
    result = CliRunner().invoke(app, ["synth", "filter", "--work", str(tmp_path / "work"), "--model", "m",
                                      "--base-url", "http://127.0.0.1:9/v1"])
    assert result.exit_code == 1 and "holds no requests" in result.output
