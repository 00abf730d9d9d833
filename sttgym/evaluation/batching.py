"""Batched generation for episodes that run in threads: the lock-step rollout of a local model.

Each episode runs in its own thread with the ordinary :func:`sttgym.rollout`; its agent's
``model.chat`` call lands here and waits. When every episode in flight is waiting, one of
them generates for all the gathered conversations in one backend call, and each thread
goes on with its own answer. Environment steps thus run between batches, and a finished
episode's thread takes the next one, so the batch stays full until the queue runs dry.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from sttgym.models.base import ChatModel, ChatResponse

__all__ = ["BatchingModel"]


@dataclass
class _Request:
    conversations: list[list[dict]]
    tools: list[dict] | None
    generation: dict
    responses: list[ChatResponse] | None = field(default=None)


class BatchingModel:
    """A :class:`~sttgym.models.base.ChatModel` that pools the calls of many threads into batches.

    A thread calls :meth:`enter` before its episode and :meth:`leave` after it; a batch is
    generated once every entered thread is waiting in :meth:`chat`. Requests are grouped by
    tools and generation options (all but ``seed``), one backend call per group; the group's
    seed is the smallest of its requests', so a batch's sampling depends on its members only.
    """

    batched = True

    def __init__(self, model: ChatModel):
        self.model = model
        self._cond = threading.Condition()
        self._waiting: list[_Request] = []
        self._active = 0
        self._busy = False

    def enter(self) -> None:
        with self._cond:
            self._active += 1

    def leave(self) -> None:
        with self._cond:
            self._active -= 1
            self._cond.notify_all()  # the others may now be all that is left, and all waiting

    def chat(self, conversations: list[list[dict]], tools: list[dict] | None = None,
             **generation: Any) -> list[ChatResponse]:
        request = _Request(conversations, tools, generation)
        with self._cond:
            self._waiting.append(request)
            self._cond.notify_all()
            while request.responses is None:
                if not self._busy and len(self._waiting) >= self._active:
                    batch, self._waiting, self._busy = self._waiting, [], True
                    self._cond.release()
                    try:
                        self._generate(batch)
                    finally:
                        self._cond.acquire()
                        self._busy = False
                        self._cond.notify_all()
                else:
                    self._cond.wait()
        return request.responses

    def _generate(self, batch: list[_Request]) -> None:
        groups: dict[str, list[_Request]] = {}
        for request in batch:
            options = {k: v for k, v in request.generation.items() if k != "seed"}
            key = json.dumps([request.tools, options], sort_keys=True, default=str)
            groups.setdefault(key, []).append(request)
        for members in groups.values():
            conversations = [c for r in members for c in r.conversations]
            generation = dict(members[0].generation)
            seeds = [r.generation["seed"] for r in members if r.generation.get("seed") is not None]
            if seeds:
                generation["seed"] = min(seeds)
            try:
                responses = self.model.chat(conversations, members[0].tools, **generation)
                if len(responses) != len(conversations):
                    raise ValueError(f"backend returned {len(responses)} answers for {len(conversations)}")
            except Exception as exc:  # a backend bug must reach each episode as an error, not kill the threads
                responses = [ChatResponse(error=f"backend raised {type(exc).__name__}: {exc}") for _ in conversations]
            for request in members:
                request.responses, responses = responses[:len(request.conversations)], responses[len(request.conversations):]
