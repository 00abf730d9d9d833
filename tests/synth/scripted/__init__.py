"""Scripted model outputs for the synthesis pipeline, replayed by a loopback OpenAI-compatible server.

``<request id>/<template>[@<conflict>-<level>][.<attempt>].md`` is what the model answers to that template for
that item (the ``Item:`` line of the prompt); ``.<attempt>`` files script a first answer the pipeline must refuse
and the repaired one. ``requests.jsonl`` holds the requests: two environments outside the built-in domains (a
city library, a harbour car park) and the bad candidates the pipeline must reject.
"""

from __future__ import annotations

import re
from pathlib import Path

from sttgym.models.base import ChatResponse
from sttgym.synth.prompts import PROMPTS

HERE = Path(__file__).resolve().parent
REQUESTS = HERE / "requests.jsonl"
_ITEM = re.compile(r"^Item: (\S+)", re.MULTILINE)
_TEMPLATES = {t.system: name for name, t in PROMPTS.items()}


def answer_file(messages: list[dict]) -> Path | None:
    """The scripted answer to a conversation: by its template, item and attempt."""
    template = _TEMPLATES.get(messages[0]["content"])
    found = _ITEM.search(messages[1]["content"]) if len(messages) > 1 else None
    if template is None or found is None:
        return None
    rid, _, key = found.group(1).partition("/")
    stem = f"{template}@{key}" if key else template
    attempt = 1 + sum(m["role"] == "assistant" for m in messages)
    for name in (f"{stem}.{attempt}.md", f"{stem}.md"):
        if (HERE / rid / name).exists():
            return HERE / rid / name
    return None


def replay(messages: list[dict]) -> ChatResponse:
    found = answer_file(messages)
    return ChatResponse(content=found.read_text(encoding="utf-8") if found else "(nothing scripted for this prompt)")


def tokens(messages: list[dict], response: ChatResponse) -> tuple[int, int]:
    """Token counts as a server would report them, estimated at four characters a token."""
    return sum(len(m["content"] or "") for m in messages) // 4, len(response.content) // 4
