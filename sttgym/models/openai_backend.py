"""Any OpenAI-compatible chat server (vLLM, SGLang, a hosted API) through the ``openai`` SDK.

Tool calls travel natively (``tools`` in the request, ``tool_calls`` in the reply). A
server without a tool or reasoning parser returns the model's raw text; it is then read
as Qwen/Hermes text, like the local backend's output. The SDK retries rate limits (429),
408/409, server errors (5xx), timeouts and dropped connections, with jittered exponential
backoff that honours the server's ``Retry-After`` (up to two minutes) and ``x-should-retry``;
what still fails, and a reply that cannot be read, becomes ``ChatResponse(error=...)``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sttgym.actions import encodable, map_strings
from sttgym.models.base import ChatResponse
from sttgym.redaction import redact, watch
from sttgym.models.parsing import TOOL_CALL_OPEN, parse_tool_calls, split_reasoning

__all__ = ["OpenAIModel"]

_MESSAGE_KEYS = {"role", "content", "tool_calls", "tool_call_id", "name"}


def api_message(message: dict) -> dict:
    """``message`` as the chat-completions API accepts it (fields it does not know, like reasoning, dropped)."""
    out = {k: v for k, v in message.items() if k in _MESSAGE_KEYS}
    if out.get("role") != "tool":
        out.pop("tool_call_id", None)
        if out.get("role") != "user":
            out.pop("name", None)
    if out.get("tool_calls"):
        out["tool_calls"] = [{"id": c.get("id", f"call_{i}"), "type": "function",
                              "function": {"name": c["function"]["name"], "arguments": _as_json(c["function"])}}
                             for i, c in enumerate(out["tool_calls"])]
    return out


def _as_json(function: dict) -> str:
    arguments = function.get("arguments", {})
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


class OpenAIModel:
    """A :class:`~sttgym.models.base.ChatModel` over an OpenAI-compatible endpoint.

    Args:
        model: the model name the server knows.
        base_url: the server's ``/v1`` URL; None for the SDK's default (``OPENAI_BASE_URL`` or OpenAI).
        api_key_env: environment variable holding the key (servers that need none get ``"EMPTY"``).
        timeout: seconds one request may take.
        max_retries: further attempts after a retryable failure (the SDK's ``max_retries``).
        max_workers: requests in flight at once when ``chat`` gets many conversations.
        temperature, max_tokens: defaults that ``chat`` may override.
        reasoning_effort: ``"low"``, ``"medium"`` or ``"high"`` for reasoning models: sent as
            ``reasoning_effort``, with ``max_completion_tokens`` in place of ``max_tokens`` and no
            ``temperature`` (reasoning models reject both).
        client: an ``openai.OpenAI``-like object to use instead of building one.
    """

    batched = False  # one request per conversation: the runner runs episodes in threads

    def __init__(self, model: str, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = 120.0, max_retries: int = 6, max_workers: int = 8, temperature: float = 0.7,
                 max_tokens: int | None = None, reasoning_effort: str | None = None, client: Any = None):
        if reasoning_effort not in (None, "low", "medium", "high"):
            raise ValueError(f"reasoning_effort must be low, medium or high, not {reasoning_effort!r}")
        self.name, self.base_url = model, base_url
        self.api_key_env, self.timeout = api_key_env, timeout
        self.max_retries, self.max_workers = max_retries, max_workers
        self.temperature, self.max_tokens = temperature, max_tokens
        self._client, self.reasoning_effort = client, reasoning_effort
        watch(api_key_env)  # its value is redacted from everything a run writes

    @property
    def client(self) -> Any:
        if self._client is None:
            from openai import OpenAI

            self._client = OpenAI(base_url=self.base_url, api_key=os.environ.get(self.api_key_env) or "EMPTY",
                                  timeout=self.timeout, max_retries=self.max_retries)
        return self._client

    def chat(self, conversations: list[list[dict]], tools: list[dict] | None = None,
             **generation: Any) -> list[ChatResponse]:
        """One assistant turn per conversation, up to ``max_workers`` requests at a time.

        ``generation`` may set ``temperature``, ``max_tokens``, ``seed``, ``top_p`` and
        ``thinking`` (sent as ``chat_template_kwargs.enable_thinking``, which vLLM and SGLang
        pass to the template).
        """
        if len(conversations) <= 1:
            return [self._one(c, tools, generation) for c in conversations]
        with ThreadPoolExecutor(min(self.max_workers, len(conversations))) as pool:
            return list(pool.map(lambda c: self._one(c, tools, generation), conversations))

    def _request(self, conversation: list[dict], tools: list[dict] | None, generation: dict) -> dict:
        request: dict[str, Any] = {"model": self.name, "messages": [api_message(m) for m in conversation]}
        if self.reasoning_effort:
            request["reasoning_effort"] = self.reasoning_effort
        else:
            request["temperature"] = float(generation.get("temperature", self.temperature))
        if tools:
            request["tools"] = tools
        max_tokens = generation.get("max_tokens", generation.get("max_new_tokens", self.max_tokens))
        if max_tokens is not None:
            request["max_completion_tokens" if self.reasoning_effort else "max_tokens"] = int(max_tokens)
        for key in ("seed", "top_p"):
            if generation.get(key) is not None:
                request[key] = generation[key]
        if generation.get("thinking") is not None:
            request["extra_body"] = {"chat_template_kwargs": {"enable_thinking": bool(generation["thinking"])}}
        return request

    def _one(self, conversation: list[dict], tools: list[dict] | None, generation: dict) -> ChatResponse:
        import openai

        try:
            completion = self.client.chat.completions.create(**self._request(conversation, tools, generation))
        except (openai.APIConnectionError, openai.APIStatusError) as exc:
            if _retryable(exc):  # the SDK's retries ran out (or the server said not to retry)
                return ChatResponse(error=self._redacted(f"gave up after {self.max_retries} retries: {_describe(exc)}"))
            return ChatResponse(error=self._redacted(f"request rejected: {_describe(exc)}"),
                                context_full=_CONTEXT_FULL.search(str(exc)) is not None)
        except Exception as exc:  # an unreadable body, a bug in a proxy: never fatal to a run
            return ChatResponse(error=self._redacted(f"malformed response: {type(exc).__name__}: {exc}"[:2000]))
        return received(read_completion(completion))

    def _redacted(self, text: str) -> str:
        """An error's text without the API key, nor anything shaped like a credential: error bodies echo request
        headers, and they end up in run outputs."""
        return _SECRET.sub(lambda m: m.group(1) + "[redacted]", redact(text))


def received(response: ChatResponse) -> ChatResponse:
    """A model's reply as the run may keep it: the configured secrets redacted (a server may echo the request's
    headers in a reply that succeeded) and every string UTF-8-encodable (a lone surrogate would fail the next
    request that sends it back)."""
    clean = lambda text: redact(encodable(text))  # noqa: E731
    return dataclasses.replace(response, content=clean(response.content), reasoning=clean(response.reasoning),
                               raw=clean(response.raw), tool_calls=map_strings(response.tool_calls, clean))


# How OpenAI-compatible servers (OpenAI, vLLM, SGLang, llama.cpp, TGI) say a prompt does not fit the context.
_CONTEXT_FULL = re.compile(r"context[_ ]length[_ ]exceeded|maximum context length|context (?:window|size|length) "
                           r"(?:is |of )?(?:exceeded|too small)|exceeds? (?:the )?(?:model'?s? )?(?:maximum |available )?context|"
                           r"prompt is too long|too many tokens|input is too long", re.IGNORECASE)
_SECRET = re.compile(r"((?:Bearer|Basic|token)\s+|\bsk-)[A-Za-z0-9._~+/=-]{6,}", re.IGNORECASE)


def _retryable(exc: Exception) -> bool:
    """Rate limits, timeouts, conflicts, server errors and dropped connections are worth another try."""
    import openai

    if isinstance(exc, (openai.RateLimitError, openai.APIConnectionError)):  # timeouts are connection errors
        return True
    return isinstance(exc, openai.APIStatusError) and (exc.status_code in (408, 409) or exc.status_code >= 500)


def _describe(exc: Exception) -> str:
    status = getattr(exc, "status_code", None)
    return f"{type(exc).__name__}" + (f" {status}" if status else "") + f": {str(exc)[:300]}"


def read_completion(completion: Any) -> ChatResponse:
    """A chat completion as a :class:`ChatResponse`; an unusable one as ``ChatResponse(error=...)``."""
    try:
        message = completion.choices[0].message
        content = message.content or ""
        reasoning = getattr(message, "reasoning_content", None) or getattr(message, "reasoning", None) or ""
        if not isinstance(content, str) or not isinstance(reasoning, str):
            raise TypeError("content and reasoning must be strings")
        if not reasoning:  # a server without a reasoning parser leaves <think> in the content
            reasoning, content = split_reasoning(content)
        calls, malformed = [], []
        for call in message.tool_calls or []:
            name, raw = call.function.name, call.function.arguments or "{}"
            try:
                arguments = json.loads(raw) if isinstance(raw, str) else raw
            except (json.JSONDecodeError, RecursionError):
                arguments = None
            if isinstance(arguments, dict) and isinstance(name, str) and name:
                # The server's id goes back with the result: some APIs accept only the ids they issued.
                calls.append({"name": name, "arguments": arguments,
                              **({"id": call.id} if isinstance(getattr(call, "id", None), str) and call.id else {})})
            else:  # kept as text so the agent can tell the model its call was malformed
                malformed.append(f'{TOOL_CALL_OPEN}{{"name": {json.dumps(name)}, "arguments": {raw}}}</tool_call>')
        if not message.tool_calls:  # a server without a tool parser leaves the calls in the text
            calls, content = parse_tool_calls(content)
        usage = getattr(completion, "usage", None)
        return ChatResponse(
            content="\n".join([content, *malformed]).strip(), tool_calls=calls, reasoning=reasoning,
            raw=json.dumps(completion.model_dump(), default=str)[:100_000] if hasattr(completion, "model_dump") else "",
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0))
    except (AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
        return ChatResponse(error=f"malformed response: {type(exc).__name__}: {exc}"[:2000])
