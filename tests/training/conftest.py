"""Fixtures for the training tests: the toy domain's ids and one tiny model for the session."""

from __future__ import annotations

import importlib

import pytest

pytest.importorskip("trl")


def _verifiers_here() -> bool:
    try:
        importlib.import_module("verifiers.v1")
    except ImportError:
        return False
    return True


# Where verifiers is not installed (the main environment: see tests/verifiers_env.sh), its tests run in
# the verifiers environment instead, from test_verifiers_env.py; where it is, they run here.
collect_ignore = [] if _verifiers_here() else ["test_verifiers_adapter.py"]


@pytest.fixture(scope="session")
def tiny_path(tmp_path_factory, toy_ids):
    """A tiny offline Qwen3 model whose tokenizer has seen the toy domain."""
    from sttgym.models.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seeds_per_env=4)


@pytest.fixture(scope="session")
def tiny(tiny_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_path), AutoModelForCausalLM.from_pretrained(tiny_path)
