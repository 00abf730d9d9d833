"""Fixtures for the training tests: the toy domain's ids and one tiny model for the session."""

from __future__ import annotations

import pytest

pytest.importorskip("trl")


@pytest.fixture(scope="session")
def tiny_path(tmp_path_factory, toy_ids):
    """A tiny offline Qwen3 model whose tokenizer has seen the toy domain."""
    from sttgym.models.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seeds_per_env=4)


@pytest.fixture(scope="session")
def tiny(tiny_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_path), AutoModelForCausalLM.from_pretrained(tiny_path)
