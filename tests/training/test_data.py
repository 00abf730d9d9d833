"""Training data: training seeds only, TRL's conversational format, datasets that round-trip."""

from __future__ import annotations

import json

import pytest

from sttgym.manifests import BENCHMARK_SEEDS, TRAINING_SEED_START, arena_manifest
from sttgym.training.data import (build_rl_dataset, build_sft_dataset, load_dataset, save_dataset,
                                  training_instances)


def test_instances_are_round_robin_and_disjoint_from_the_benchmark(toy_ids):
    instances = training_instances(7, list(toy_ids))
    assert instances[:4] == [(toy_ids[0], TRAINING_SEED_START), (toy_ids[1], TRAINING_SEED_START),
                             (toy_ids[0], TRAINING_SEED_START + 1), (toy_ids[1], TRAINING_SEED_START + 1)]
    assert not set(instances) & set(arena_manifest())
    assert all(seed not in BENCHMARK_SEEDS for _, seed in training_instances(500, list(toy_ids)))
    with pytest.raises(ValueError, match="benchmark range"):
        training_instances(3, list(toy_ids), start=0)


def test_sft_dataset_format_and_round_trip(toy_ids, tmp_path):
    dataset, stats = build_sft_dataset(12, list(toy_ids), seed=3)
    assert len(dataset) == stats.kept == 12
    assert stats.summary()["avg_tool_calls_after"] < stats.summary()["avg_tool_calls_before"]
    for row in dataset:
        assert row["seed"] >= TRAINING_SEED_START and row["reward"] == 1.0
        assert [m["role"] for m in row["messages"][:2]] == ["system", "user"]
        assert row["messages"][-1] == {**row["messages"][-1], "role": "assistant", "content": "Task Completed"}
        calls = [c for m in row["messages"] if m["tool_calls"] for c in m["tool_calls"]]
        assert calls and all(isinstance(json.loads(c["function"]["arguments"]), dict) for c in calls)
        assert {t["function"]["name"] for t in json.loads(row["tools"])} >= {c["function"]["name"] for c in calls}
    loaded = load_dataset(save_dataset(dataset, tmp_path / "sft"))
    assert loaded.to_list() == dataset.to_list()
    again, _ = build_sft_dataset(12, list(toy_ids), seed=3)
    assert again.to_list() == dataset.to_list()


def test_rl_dataset_rows_open_the_episode(toy_ids):
    dataset = build_rl_dataset(5, list(toy_ids))
    assert [(r["env_id"], r["seed"]) for r in dataset] == training_instances(5, list(toy_ids))
    row = dataset[0]
    assert [m["role"] for m in row["prompt"]] == ["system", "user"] and "locker" in row["prompt"][1]["content"]
    task = json.loads(row["task"])
    assert task["conflict"] == "T1" and not {"difficulty", "solvable"} & set(task)  # nothing tells the level


def test_llm_rollouts_feed_the_same_pipeline(toy_ids, tiny):
    from sttgym.agents.llm import LLMAgent
    from sttgym.models.transformers_backend import TransformersModel

    model = TransformersModel(model=tiny[1], tokenizer=tiny[0], device="cpu")
    dataset, stats = build_sft_dataset(2, [toy_ids[0]], agent=lambda rng: LLMAgent(model, max_new_tokens=4),
                                       min_reward=0.0, env_kwargs={"max_turns": 3})
    assert stats.attempted == 2 and len(dataset) == 2
    for row in dataset:  # the untrained model's unreadable turns are not kept as actions
        assert [m["role"] for m in row["messages"]][:2] == ["system", "user"]
        assert row["tool_calls"] == sum(bool(m.get("tool_calls")) for m in row["messages"])


@pytest.mark.parametrize("bad, problem", [("os:STTArena/Toy-T1-easy", "names a module to import"),
                                          ("STTArena/Nope-T1-easy", "not a registered STTArena id")])
def test_ids_from_configs_and_rows_never_import_code(toy_ids, bad, problem):
    with pytest.raises(ValueError, match=problem):
        training_instances(2, [bad])
    assert training_instances(1, ["sttgym:" + toy_ids[0]]) == [(toy_ids[0], TRAINING_SEED_START)]


def test_a_held_out_domain_never_reaches_the_training_data(toy_ids, tmp_path):
    from typer.testing import CliRunner

    from sttgym.cli import app
    from sttgym.training.config import Instances

    ids = Instances(count=0, exclude_domains=["ColdChain"]).ids()
    assert "STTArena/CarRental-T1-easy" in ids and not [i for i in ids if i.startswith("STTArena/ColdChain-")]
    with pytest.raises(ValueError, match="unknown domain.*Atlantis"):
        Instances(count=0, exclude_domains=["Atlantis"]).ids()
    from sttgym.registry import DOMAINS

    held = sorted(d for d, dom in DOMAINS.items() if dom.world.__module__.startswith("sttgym.envs."))
    out = tmp_path / "data"
    result = CliRunner().invoke(app, ["train", "data", "--out", str(out), "--sft", "4", "--rl", "30",
                                      *(f"--hold-out={d}" for d in held)])
    assert result.exit_code == 0, result.output
    rows = [row for part in ("sft", "rl") for row in load_dataset(out / part).to_list()]
    assert len(rows) == 34 and not {r["env_id"].split("/")[1].split("-")[0] for r in rows} & set(held)
    bad = CliRunner().invoke(app, ["train", "data", "--out", str(out), "--hold-out", "Atlantis"])
    assert bad.exit_code != 0 and "unknown domain" in bad.output


def test_parallel_workers_make_exactly_the_rows_of_one_process(toy_ids):
    from sttgym.training.data import rl_records, sft_records

    ids = list(toy_ids)
    assert list(sft_records(6, ids, seed=2, workers=2)) == list(sft_records(6, ids, seed=2))
    assert list(rl_records(20, ids, workers=2)) == list(rl_records(20, ids))
    with pytest.raises(ValueError, match="workers"):
        next(sft_records(2, ids, workers=2, agent=lambda rng: None))


def test_reasoning_adds_text_beside_the_same_calls(toy_ids):
    from sttgym.training.data import sft_records

    plain = list(sft_records(6, list(toy_ids), seed=5, reasoning=False))
    narrated = list(sft_records(6, list(toy_ids), seed=5))
    def turns(rows):
        return [[m for m in row["messages"] if m.get("tool_calls")] for row in rows]

    assert [[m["tool_calls"] for m in row] for row in turns(plain)] == \
        [[m["tool_calls"] for m in row] for row in turns(narrated)]
    assert any(m["content"] for row in turns(narrated) for m in row)
    assert not any(m["content"] for row in turns(plain) for m in row)


def test_no_refine_keeps_the_transcripts_as_played(toy_ids, tmp_path):
    from typer.testing import CliRunner

    from sttgym.cli import app
    from sttgym.training.data import sft_records
    from sttgym.training.refine import RuleRefiner

    kept, _ = build_sft_dataset(6, list(toy_ids), seed=4, refine=False)
    assert all(r["refinements"] == [] and r["tool_calls"] == r["original_tool_calls"] and r["reward"] >= 1.0
               for r in kept)
    # on the same instances (every one kept), the unrefined rows make more calls
    refined, refined_stats = build_sft_dataset(12, list(toy_ids), seed=4, min_reward=0.0)
    played, played_stats = build_sft_dataset(12, list(toy_ids), seed=4, min_reward=0.0, refine=False)
    assert not played_stats.summary()["refine"] and refined_stats.summary()["refine"]
    assert [(r["env_id"], r["seed"]) for r in played] == [(r["env_id"], r["seed"]) for r in refined]
    assert [r["tool_calls"] for r in played] == [r["original_tool_calls"] for r in refined]
    assert played_stats.summary()["avg_tool_calls_after"] > refined_stats.summary()["avg_tool_calls_after"]
    out = tmp_path / "data"
    result = CliRunner().invoke(app, ["train", "data", "--out", str(out), "--sft", "3", "--rl", "2", "--no-refine",
                                      "--no-reasoning", "--domain", "Toy", "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert "unrefined" in result.output
    stats = json.loads((out / "stats.json").read_text())["sft"]
    assert stats["refine"] is False and stats["reasoning"] is False and stats["refined"] == 0
    with pytest.raises(ValueError, match="no refiner"):
        next(sft_records(2, list(toy_ids), refine=False, refiner=RuleRefiner()))


def test_domain_draws_the_data_from_chosen_domains_only(toy_ids, tmp_path):
    from typer.testing import CliRunner

    from sttgym.cli import app

    out = tmp_path / "data"
    result = CliRunner().invoke(app, ["train", "data", "--out", str(out), "--sft", "2", "--rl", "40",
                                      "--domain", "Toy", "--domain", "CarRental", "--workers", "1"])
    assert result.exit_code == 0, result.output
    rows = [row for part in ("sft", "rl") for row in load_dataset(out / part).to_list()]
    assert {r["env_id"].split("/")[1].split("-")[0] for r in rows} == {"Toy", "CarRental"}
    assert set(json.loads((out / "stats.json").read_text())["distribution"]["rl"]["domain"]) == {"Toy", "CarRental"}
    assert (out / "distribution.png").exists()
    clash = CliRunner().invoke(app, ["train", "data", "--out", str(out), "--domain", "Toy", "--hold-out", "Toy"])
    assert clash.exit_code != 0 and "no registered arena id" in clash.output


def test_run_files_switch_refinement_and_reasoning(toy_ids, tmp_path):
    from sttgym.training.config import Instances
    from sttgym.training.sft import sft_data

    dataset = sft_data(Instances(count=2, env_ids=list(toy_ids), refine=False, reasoning=False), tmp_path / "data")
    stats = json.loads((tmp_path / "data" / "stats.json").read_text())
    assert stats["refine"] is False and stats["reasoning"] is False and stats["calls_with_text"] == 0.0
    assert all(row["refinements"] == [] for row in dataset)


def test_the_training_data_distribution_counts_rows_and_is_drawn(tmp_path):
    from sttgym.training.data import distribution, distribution_figure

    rows = [{"env_id": "STTArena/Hotel-T2-easy", "tool_calls": 7}, {"env_id": "STTArena/Hotel-S1-hard", "tool_calls": 7},
            {"env_id": "STTArena/Airline-T2-impossible", "tool_calls": 12}]
    sft = distribution(rows)
    assert sft == {"domain": {"Airline": 1, "Hotel": 2}, "conflict": {"S1": 1, "T2": 2},
                   "level": {"easy": 1, "hard": 1, "impossible": 1}, "tool_calls": {7: 2, 12: 1}}
    rl = distribution([{"env_id": r["env_id"]} for r in rows])
    assert "tool_calls" not in rl
    figure = distribution_figure(tmp_path / "d.png", {"sft": sft, "rl": rl})
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
