"""Chat-model backends: local transformers models and OpenAI-compatible servers (imported lazily)."""

from __future__ import annotations

import importlib
from typing import Any

from sttgym.models.base import ChatModel, ChatResponse

__all__ = ["ChatModel", "ChatResponse", "TransformersModel", "OpenAIModel", "load_model"]

# Backends are imported on first use, so ``import sttgym`` never pulls in torch, transformers or openai.
_LAZY = {"TransformersModel": "sttgym.models.transformers_backend", "OpenAIModel": "sttgym.models.openai_backend"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_model(name_or_path: str, base_url: str | None = None, **options: Any) -> ChatModel:
    """A model by name: served at ``base_url`` (OpenAI-compatible) when given, else loaded locally."""
    if base_url:
        return __getattr__("OpenAIModel")(name_or_path, base_url=base_url, **options)
    return __getattr__("TransformersModel")(name_or_path, **options)
