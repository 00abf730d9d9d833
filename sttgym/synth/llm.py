"""Asking the model: batched requests, answers read against their contract, every exchange logged.

The pipeline talks to any OpenAI-compatible endpoint through the project's backend
(:class:`~sttgym.models.openai_backend.OpenAIModel`: retries, timeouts, requests in flight at
once). An answer that does not meet its template's contract (no JSON, a missing key, no Python
block) is sent back once more with the reason, up to ``attempts`` tries; what is still
malformed is returned with the reason, and the stage rejects that item. An answer the endpoint
never gave (it kept failing past the backend's retries) is returned with ``error`` set instead:
the stage leaves that item for the next run rather than rejecting it.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sttgym.redaction import redact
from sttgym.synth.prompts import CODE, Template

__all__ = ["Answer", "Asker", "read_answer"]

_FENCE = re.compile(r"```(?:python|py)\s*\n(.*?)```", re.DOTALL)
_JSON_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)```", re.DOTALL)


@dataclass
class Answer:
    """A model's answer to one item: ``value`` (the validated contract, or source text), or ``reason`` why it was
    refused, or ``error`` when the endpoint gave none."""

    item: str
    value: Any = None
    reason: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.reason is None and self.error is None


def read_answer(text: str, template: Template) -> tuple[Any, str | None]:
    """``text`` read against ``template``'s contract: ``(value, None)`` or ``(None, reason)``."""
    if template.contract == CODE:
        found = _FENCE.search(text)
        if not found:
            return None, "the answer has no ```python block"
        return found.group(1).strip() + "\n", None
    fenced = _JSON_FENCE.search(text)
    body = fenced.group(1) if fenced else text
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        return None, "the answer holds no JSON object"
    try:
        data = json.loads(body[start:end + 1])
    except json.JSONDecodeError as exc:
        return None, f"the JSON does not parse: {exc}"
    try:
        return template.contract.model_validate(data), None
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'answer'}: {e['msg']}" for e in exc.errors()[:4])
        return None, f"the JSON does not fit the contract: {problems}"


class Asker:
    """Sends templates' conversations to ``model`` and logs each exchange to ``log`` (JSONL).

    ``usage`` accumulates, per stage, the calls made, the tokens the server reported and the
    seconds spent waiting, for the cost figures of a run.
    """

    def __init__(self, model: Any, log: Path, attempts: int = 2, temperature: float = 0.2,
                 max_tokens: int | None = None):
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        self.model, self.log, self.attempts = model, Path(log), attempts
        self.generation = {"temperature": temperature, **({"max_tokens": max_tokens} if max_tokens else {})}
        self.usage: dict[str, dict[str, float]] = {}
        self._lock = threading.Lock()

    def ask(self, stage: str, template: Template, items: dict[str, dict]) -> dict[str, Answer]:
        """One answer per item (``{item: fields}``), all items' requests in flight together."""
        conversations = {item: template.messages(item, **fields) for item, fields in items.items()}
        answers: dict[str, Answer] = {}
        for attempt in range(1, self.attempts + 1):
            pending = [i for i in conversations if i not in answers or answers[i].reason is not None]
            if not pending:
                break
            began = time.perf_counter()
            replies = self.model.chat([conversations[i] for i in pending], **self.generation)
            seconds = time.perf_counter() - began
            for item, reply in zip(pending, replies):
                value, reason = (None, None) if reply.error else read_answer(reply.content, template)
                answers[item] = Answer(item, value, reason, reply.error)
                self._record(stage, template, item, attempt, conversations[item], reply, reason, seconds / len(pending))
                if reply.error:
                    continue  # the backend already retried what can be retried: leave it for the next run
                if reason:  # show the model its answer and why it was refused
                    conversations[item] = conversations[item] + [
                        {"role": "assistant", "content": reply.content},
                        {"role": "user", "content": f"That answer was refused: {reason}. Answer again, following "
                                                    "the required format exactly."}]
        return answers

    def _record(self, stage: str, template: Template, item: str, attempt: int, messages: list[dict], reply: Any,
                reason: str | None, seconds: float) -> None:
        row = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "stage": stage,
               "template": template.name, "item": item, "attempt": attempt, "messages": messages,
               "response": reply.content, "error": reply.error, "refused": reason,
               "prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
               "seconds": round(seconds, 3)}
        with self._lock:
            totals = self.usage.setdefault(stage, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                                                   "seconds": 0.0})
            totals["calls"] += 1
            totals["prompt_tokens"] += reply.prompt_tokens
            totals["completion_tokens"] += reply.completion_tokens
            totals["seconds"] += seconds
            self.log.parent.mkdir(parents=True, exist_ok=True)
            with self.log.open("a", encoding="utf-8") as handle:
                handle.write(redact(json.dumps(row, ensure_ascii=False, default=str)) + "\n")
