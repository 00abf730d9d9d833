"""No code from data: an env id read from a file, a dataset, a config, a request, a bundle or an environment variable
is checked against the registry before use, so a module prefix (``this:STTArena/...``, which has gymnasium import
``this``) imports nothing, anywhere."""

from __future__ import annotations

import json
import sys

import pytest
from typer.testing import CliRunner

import sttgym
from sttgym.cli import app
from sttgym.registry import load_plugins, registered_arena_id, registered_id

CANARY = "sttgym_import_canary"  # a module on the path whose import leaves a mark: no entry point may import it
VALID = "STTArena/ColdChain-T2-medium"
PREFIXED = [f"{CANARY}:{VALID}", f"this:{VALID}", "os:system", f"{CANARY}:ScrambleTool/All",
            f"sttgym.registry:{CANARY}:{VALID}"]


@pytest.fixture
def canary(tmp_path, monkeypatch):
    """The canary module's folder on sys.path; yields the file its import would write."""
    mark = tmp_path / "imported"
    (tmp_path / f"{CANARY}.py").write_text(f"open({str(mark)!r}, 'w').close()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield mark
    assert not mark.exists() and CANARY not in sys.modules, "the canary module was imported"
    assert "this" not in sys.modules  # nor the Zen of Python


@pytest.mark.parametrize("env_id", PREFIXED)
def test_the_registry_check_refuses_every_module_prefix(env_id, canary):
    with pytest.raises(ValueError, match="module to import|not a registered"):
        registered_id(env_id)
    assert registered_id(f"sttgym:{VALID}") == registered_arena_id(VALID) == VALID  # sttgym itself is no risk


@pytest.mark.parametrize("env_id", PREFIXED)
def test_eval_tasks_refuses_a_row_naming_a_module(env_id, canary, tmp_path):
    rows = tmp_path / "tasks.jsonl"
    rows.write_text(json.dumps({"env_id": env_id, "seed": 0, "task": {}}) + "\n")
    result = CliRunner().invoke(app, ["eval", "--agent", "oracle", "--tasks", str(rows), "--out", str(tmp_path / "r")],
                                env={"COLUMNS": "1000"})  # the error box on one line: the path unbroken
    assert result.exit_code != 0 and "tasks.jsonl:1" in " ".join(result.output.split())
    assert "Beautiful is better than ugly" not in result.output


@pytest.mark.parametrize("env_id", PREFIXED)
def test_training_configs_and_rows_refuse_a_module_prefix(env_id, canary):
    from sttgym.training.config import Instances
    from sttgym.training.data import training_instances

    with pytest.raises(ValueError):
        Instances(count=1, env_ids=[env_id]).ids()
    with pytest.raises(ValueError):
        training_instances(1, [env_id])


@pytest.mark.parametrize("env_id", PREFIXED)
def test_the_server_refuses_a_module_prefix(env_id, canary):
    pytest.importorskip("fastapi")
    from sttgym.server import RemoteEnv, RemoteError
    from sttgym.server.app import running

    with running() as url:
        with pytest.raises(RemoteError) as refused:
            RemoteEnv(url, env_id).reset(seed=0)
    assert refused.value.status == 404 and refused.value.code == "FACTORY_ERROR"


def test_bundles_and_the_bundles_variable_import_nothing(canary, tmp_path, monkeypatch):
    from sttgym.synth.bundle import FORMAT, load_bundle

    for domain in (f"{CANARY}:X", "os:system", "Synth/../x"):
        bundle = tmp_path / domain.replace("/", "_").replace(":", "_")
        bundle.mkdir()
        (bundle / "manifest.json").write_text(json.dumps({"format": FORMAT, "domain": domain, "class_name": "W"}))
        (bundle / "world.py").write_text("")
        (bundle / "tasks.json").write_text("[]")
        with pytest.raises(ValueError, match="CamelCase"):
            load_bundle(bundle)
    monkeypatch.setenv("STTGYM_BUNDLES", f"{CANARY}:{VALID}")  # ids where paths belong: not bundles, nothing run
    loaded, failed = load_plugins()
    assert set(failed) >= {CANARY, VALID} and all("not a bundle" in why for why in failed.values())


def test_manifests_are_named_never_reached_by_a_path(canary):
    from sttgym.manifests import load_manifest

    for name in ("../manifests/arena-v5", "/etc/passwd", "arena-v5/../arena-v5"):
        with pytest.raises(ValueError, match="no benchmark manifest"):
            load_manifest(name)
    assert all(":" not in env_id for env_id, _, _ in load_manifest()["instances"])  # checked as they are read


def test_the_fuzz_command_refuses_a_module_prefix(canary):
    result = CliRunner().invoke(app, ["fuzz", "--actions", "1", "--id", PREFIXED[0]])
    assert result.exit_code == 2 and "unknown" in result.output
    assert sttgym.arena_ids()  # and the real ids are still there
