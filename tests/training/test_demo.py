"""The CPU demonstration, in its minutes-long smoke version."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from sttgym.manifests import BENCHMARK_SEEDS, is_training_seed
from sttgym.training.data import load_dataset

DEMO = Path(__file__).resolve().parents[2] / "examples" / "train_cpu_demo.py"


def load_demo():
    spec = importlib.util.spec_from_file_location("train_cpu_demo", DEMO)
    demo = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = demo  # dataclasses look their module up there
    spec.loader.exec_module(demo)
    return demo


def test_quick_demo_trains_and_evaluates_on_held_out_instances(tmp_path):
    demo = load_demo()
    ids = ["STTArena/CarRental-T1-easy", "STTArena/ColdChain-S3-easy"]
    results = demo.main(["--out", str(tmp_path), "--quick", "--ids", ",".join(ids)])

    readiness = results["readiness"]
    assert 0.0 <= readiness["spread"] <= 1.0 and readiness["pass@4"] >= readiness["sampled_success"]
    if readiness["spread"] == 0.0:  # the gate: RL would get only zero gradients, so it is not run
        assert list(results["scores"]) == ["base", "sft"] and "rl_skipped" in results
    else:
        assert list(results["scores"]) == ["base", "sft", "rl"]
    held_out = [tuple(i) for i in results["held_out"]]
    assert sorted({env_id for env_id, _ in held_out}) == ids
    for score in results["scores"].values():
        assert score["episodes"] == len(held_out)
        assert 0.0 <= score["reward"] <= 1.0 and 0.0 <= score["readable_turns"] <= 1.0
        assert 0.0 <= score["digit_tokens"] <= 1.0 and 0.0 <= score["other_tokens"] <= 1.0
    assert all(seed in BENCHMARK_SEEDS for _, seed in held_out)
    for data in [tmp_path / "sft" / "data"] + ([tmp_path / "rl" / "data"] if "rl" in results["scores"] else []):
        trained_on = {(row["env_id"], row["seed"]) for row in load_dataset(data)}
        assert trained_on and all(is_training_seed(seed) for _, seed in trained_on)
        assert not trained_on & set(held_out)
    assert (tmp_path / "rl" / "final" / "model.safetensors").exists() == ("rl" in results["scores"])
    assert "held-out episodes" in demo.table(results)
    stages = list(results["scores"])
    sampled = [name for name in stages if "sampled" in results["scores"][name]]
    assert sampled == stages[1:]  # the base model is scored greedily only
    for name in sampled:
        assert results["scores"][name]["sampled"]["episodes"] == 2 * len(held_out)
        assert len(results["scores"][name]["sampled"]["rewards"]) == len(held_out)
    assert list(results["gains"]) == ([f"{b} - {a}" for a, b in zip(stages, stages[1:])]
                                      + [f"{b} - {a}, sampled" for a, b in zip(sampled, sampled[1:])])
    assert all(sorted(change["by_task"]) == ids for change in results["gains"].values())

    # RL alone, from the models just trained, on one of the two tasks
    again = demo.main(["--out", str(tmp_path / "again"), "--quick", "--ids", ",".join(ids), "--from", str(tmp_path),
                       "--set", f'rl_ids=["{ids[1]}"]'])
    assert again["models_from"] == str(tmp_path) and "build" not in again["seconds"] and "sft" not in again["seconds"]
    assert not (tmp_path / "again" / "base").exists() and not (tmp_path / "again" / "sft").exists()
    assert again["scores"]["sft"]["rewards"] == results["scores"]["sft"]["rewards"]  # the same model, greedy
    assert again["scores"]["sft"]["sampled"] == results["scores"]["sft"]["sampled"]  # and sampled from one seed
    if "rl" in again["scores"]:
        assert {row["env_id"] for row in load_dataset(tmp_path / "again" / "rl" / "data")} == {ids[1]}
        shown = demo.table(again)
        assert f"{ids[1]} (RL trained on it)" in shown and f"{ids[0]} (RL trained on it)" not in shown


def test_a_gain_is_paired_over_the_same_episodes_with_its_interval():
    demo = load_demo()
    change = demo.gain({"rewards": [0.0, 0.5, 1.0, 1.0]}, {"rewards": [1.0, 0.5, 1.0, 1.0]})
    assert change["gain"] == 0.25
    low, high = change["ci95"]
    assert 0.0 <= low < 0.25 < high <= 1.0  # one episode of four improved: the interval reaches down to no gain
    same = demo.gain({"rewards": [0.2, 0.9, 0.4]}, {"rewards": [0.2, 0.9, 0.4]})
    assert same == {"gain": 0.0, "ci95": [0.0, 0.0]}  # identical episodes: no gain and no doubt about it


def test_gains_are_reported_per_task_as_well():
    demo = load_demo()
    held_out = [("A", 0), ("B", 0), ("A", 1), ("B", 1)]
    scores = {"sft": {"rewards": [0.0, 1.0, 0.0, 1.0]}, "rl": {"rewards": [1.0, 0.0, 1.0, 0.0]}}
    change = demo.gains(scores, held_out)["rl - sft"]
    assert change["gain"] == 0.0  # one task won what the other lost
    assert change["by_task"]["A"] == {"gain": 1.0, "ci95": [1.0, 1.0]}
    assert change["by_task"]["B"] == {"gain": -1.0, "ci95": [-1.0, -1.0]}


def test_sampled_scores_are_compared_apart_from_the_greedy_ones():
    demo = load_demo()
    held_out = [("A", 0), ("A", 1)]
    scores = {"base": {"rewards": [0.0, 0.0]},  # scored greedily only: no sampled comparison with it
              "sft": {"rewards": [1.0, 0.0], "sampled": {"rewards": [0.25, 0.0]}},
              "rl": {"rewards": [1.0, 0.0], "sampled": {"rewards": [0.75, 0.5]}}}
    changes = demo.gains(scores, held_out)
    assert list(changes) == ["sft - base", "rl - sft", "rl - sft, sampled"]
    assert changes["rl - sft"]["gain"] == 0.0 and changes["rl - sft, sampled"]["gain"] == 0.5


def test_models_are_reused_only_from_a_finished_run_with_the_same_plan_before_rl(tmp_path, capsys):
    demo = load_demo()
    assert "no results.json" in demo.reuse_problem(tmp_path, demo.FULL)
    earlier = dataclasses.asdict(demo.FULL)
    del earlier["number_slots"]  # a run from before the field existed: it read numbers as digits
    (tmp_path / "results.json").write_text(json.dumps({"plan": earlier}))
    assert "no SFT model" in demo.reuse_problem(tmp_path, demo.FULL)
    (tmp_path / "sft" / "final").mkdir(parents=True)
    (tmp_path / "sft" / "final" / "model.safetensors").write_bytes(b"")
    digits = dataclasses.replace(demo.FULL, number_slots=False)
    assert demo.reuse_problem(tmp_path, dataclasses.replace(digits, rl_steps=8, eval_seeds=(0, 1))) is None
    assert "vocab" in demo.reuse_problem(tmp_path, dataclasses.replace(digits, vocab=1024))
    assert "number_slots" in demo.reuse_problem(tmp_path, demo.FULL)
    with pytest.raises(SystemExit):
        demo.main(["--out", str(tmp_path / "new"), "--from", str(tmp_path), "--set", "hidden=64"])
    assert "hidden" in capsys.readouterr().err and not (tmp_path / "new").exists()
    with pytest.raises(SystemExit):
        demo.main(["--out", str(tmp_path / "new"), "--set", 'rl_ids=["STTArena/CarRental-T1-easy"]'])
    assert "rl_ids" in capsys.readouterr().err and not (tmp_path / "new").exists()


def test_the_demo_refuses_an_unknown_id_before_building_anything(tmp_path, capsys):
    with pytest.raises(SystemExit):
        load_demo().main(["--out", str(tmp_path), "--ids", "STTArena/CarRental-T1-easy,STTArena/Nowhere-T1-easy"])
    assert "STTArena/Nowhere-T1-easy" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_plan_fields_are_set_from_the_command_line_and_bad_ones_refused(tmp_path, capsys, monkeypatch):
    demo = load_demo()
    seen = []
    monkeypatch.setattr(demo, "run", lambda out, plan, force_rl, reuse: seen.append(plan) or {})
    monkeypatch.setattr(demo, "table", lambda results: "")
    demo.main(["--out", str(tmp_path), "--set", "rl_steps=40", "--set", "eval_seeds=[0, 1]", "--set", "reasoning=true"])
    assert (seen[0].rl_steps, seen[0].eval_seeds, seen[0].reasoning) == (40, (0, 1), True)
    for bad in ["rl_stepz=40", "rl_steps=forty"]:
        with pytest.raises(SystemExit):
            demo.main(["--out", str(tmp_path), "--set", bad])
        assert bad in capsys.readouterr().err
