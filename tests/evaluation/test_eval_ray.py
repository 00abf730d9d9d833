"""sttgym eval --ray: the same records as a local run, from a local Ray instance with two workers."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

ray = pytest.importorskip("ray")

from sttgym.cli import app  # noqa: E402
from sttgym.evaluation.runner import TRAJECTORIES, load_records  # noqa: E402

TIMING = {"seconds"}  # wall time is the only field a run may not repeat


@pytest.fixture(scope="module")
def two_workers():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _records(path):
    return {k: {f: v for f, v in r.items() if f not in TIMING} for k, r in load_records(path / TRAJECTORIES).items()}


@pytest.mark.parametrize("agent", ["oracle", "nominal"])
def test_a_ray_run_records_what_a_local_run_does(two_workers, tmp_path, agent):
    args = ["eval", "--agent", agent, "--domain", "ColdChain", "--domain", "Hotel", "--limit", "10", "--static"]
    local = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "local")])
    on_ray = CliRunner().invoke(app, [*args, "--ray", "auto", "--out", str(tmp_path / "ray")])
    assert local.exit_code == 0 and on_ray.exit_code == 0, on_ray.output
    assert _records(tmp_path / "ray") == _records(tmp_path / "local")
    assert len(_records(tmp_path / "ray")) == 20  # ten instances, dynamic and static
    assert (tmp_path / "ray" / "summary.json").read_text() == (tmp_path / "local" / "summary.json").read_text()


def test_training_data_on_ray_equals_the_local_data(two_workers, tmp_path):
    from datasets import load_from_disk

    args = ["train", "data", "--domain", "ColdChain", "--level", "easy", "--sft", "6", "--rl", "5"]
    local = CliRunner().invoke(app, [*args, "--workers", "1", "--out", str(tmp_path / "local")])
    on_ray = CliRunner().invoke(app, [*args, "--ray", "auto", "--out", str(tmp_path / "ray")])
    assert local.exit_code == 0 and on_ray.exit_code == 0, on_ray.output
    for part in ("sft", "rl"):
        assert load_from_disk(str(tmp_path / "ray" / part)).to_list() == load_from_disk(
            str(tmp_path / "local" / part)).to_list()
