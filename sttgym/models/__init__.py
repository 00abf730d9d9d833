"""Chat-model backends: local transformers models and OpenAI-compatible servers (imported lazily)."""

from sttgym.models.base import ChatModel, ChatResponse

__all__ = ["ChatModel", "ChatResponse"]
