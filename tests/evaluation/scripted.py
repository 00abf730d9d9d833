"""Scripted chat models for tests: each turn is computed from the conversation, no weights involved."""

from __future__ import annotations

import json
import re
import threading
import time
from typing import Callable

from sttgym.models.base import ChatResponse

Policy = Callable[[list[dict]], ChatResponse]


class ScriptedModel:
    """A ChatModel whose answer to each conversation is ``policy(conversation)``; it logs every call."""

    def __init__(self, policy: Policy, batched: bool = False, delay: float = 0.0):
        self.policy, self.batched, self.delay = policy, batched, delay
        self.calls: list[dict] = []
        self._lock = threading.Lock()

    def chat(self, conversations, tools=None, **generation):
        with self._lock:
            self.calls.append({"size": len(conversations), "tools": tools, "generation": generation,
                               "system": conversations[0][0]["content"] if conversations[0] else ""})
        if self.delay:
            time.sleep(self.delay)
        return [self.policy(c) for c in conversations]


def call(name: str, **arguments) -> ChatResponse:
    return ChatResponse(tool_calls=[{"name": name, "arguments": arguments}], prompt_tokens=10, completion_tokens=5)


def text(content: str) -> ChatResponse:
    return ChatResponse(content=content, prompt_tokens=10, completion_tokens=3)


def locker_ids(conversation: list[dict]) -> tuple[str, str]:
    """The locker and parcel named in the toy domain's request (the first user message)."""
    query = next(m["content"] for m in conversation if m["role"] == "user")
    return re.search(r"locker (L\d+)", query).group(1), re.search(r"parcel (P\d+)", query).group(1)


def nominal_policy(conversation: list[dict]) -> ChatResponse:
    """The toy task's blind plan: read the locker, reserve it, finish."""
    locker, parcel = locker_ids(conversation)
    done = sum(1 for m in conversation if m["role"] == "assistant")
    if done == 0:
        return call("get_locker", locker_id=locker)
    if done == 1:
        return call("reserve_locker", locker_id=locker, parcel_id=parcel)
    return text("Task Completed")


def last_tool_result(conversation: list[dict]) -> dict:
    tool = [m for m in conversation if m["role"] == "tool"]
    return json.loads(tool[-1]["content"]) if tool else {}
