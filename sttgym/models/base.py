"""The one small interface every chat-model backend implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["ChatResponse", "ChatModel"]


@dataclass
class ChatResponse:
    """One assistant turn.

    ``tool_calls`` are ``{"name": str, "arguments": dict}``, with the server's ``"id"`` when it gave
    one; ``error`` is set (and the rest left empty) when the backend could not produce a usable
    turn, so a run records it and goes on instead of crashing. ``context_full`` says that error is
    the conversation outgrowing the model's context: the model's own limit, so the episode ends
    there and is scored (as one that ran out of turns is), not set aside as an infrastructure fault.
    """

    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    reasoning: str = ""
    raw: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None
    context_full: bool = False


class ChatModel(Protocol):
    """Generates the next assistant turn for each of many conversations at once."""

    def chat(self, conversations: list[list[dict]], tools: list[dict] | None = None,
             **generation: Any) -> list[ChatResponse]:
        ...
