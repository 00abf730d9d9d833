"""Any OpenAI-compatible chat server (vLLM, SGLang, a hosted API) through the ``openai`` SDK.

Tool calls travel natively (``tools`` in the request, ``tool_calls`` in the reply). A
server without a tool or reasoning parser returns the model's raw text; it is then read
as Qwen/Hermes text, like the local backend's output. Rate limits (429), server errors
(5xx), timeouts and dropped connections are retried with exponential backoff; anything
else, and a reply that cannot be read, becomes ``ChatResponse(error=...)``.
"""

from __future__ import annotations

import datetime
import email.utils
import json
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from sttgym.models.base import ChatResponse
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
        max_retries: further attempts after a retryable failure; ``backoff * 2**attempt``
            seconds apart (or the server's ``Retry-After``), at most ``max_backoff``.
        max_workers: requests in flight at once when ``chat`` gets many conversations.
        temperature, max_tokens: defaults that ``chat`` may override.
        reasoning_effort: ``"low"``, ``"medium"`` or ``"high"`` for reasoning models: sent as
            ``reasoning_effort``, with ``max_completion_tokens`` in place of ``max_tokens`` and no
            ``temperature`` (reasoning models reject both).
        client: an ``openai.OpenAI``-like object to use instead of building one.
        sleep: how to wait between attempts (tests pass a recorder).
    """

    batched = False  # one request per conversation: the runner runs episodes in threads

    def __init__(self, model: str, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = 120.0, max_retries: int = 6, backoff: float = 1.0, max_backoff: float = 60.0,
                 max_workers: int = 8, temperature: float = 0.7, max_tokens: int | None = None,
                 reasoning_effort: str | None = None, client: Any = None,
                 sleep: Callable[[float], None] = time.sleep):
        if reasoning_effort not in (None, "low", "medium", "high"):
            raise ValueError(f"reasoning_effort must be low, medium or high, not {reasoning_effort!r}")
        self.name, self.base_url = model, base_url
        self.api_key_env, self.timeout = api_key_env, timeout
        self.max_retries, self.backoff, self.max_backoff = max_retries, backoff, max_backoff
        self.max_workers, self.temperature, self.max_tokens = max_workers, temperature, max_tokens
        self._client, self._sleep, self.reasoning_effort = client, sleep, reasoning_effort

    @property
    def client(self) -> Any:
        if self._client is None:
            from openai import OpenAI

            # The SDK's own retries are off: ours decide what is retryable and record each failure.
            self._client = OpenAI(base_url=self.base_url, api_key=os.environ.get(self.api_key_env) or "EMPTY",
                                  timeout=self.timeout, max_retries=0)
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

        request = self._request(conversation, tools, generation)
        failures: list[str] = []
        for attempt in range(self.max_retries + 1):
            try:
                completion = self.client.chat.completions.create(**request)
            except Exception as exc:
                if not _retryable(exc):
                    if isinstance(exc, openai.APIStatusError):  # the request itself is wrong
                        return ChatResponse(error=self._redacted(f"request rejected: {_describe(exc)}"))
                    # an unreadable body, a bug in a proxy: never fatal to a run
                    return ChatResponse(error=self._redacted(f"malformed response: {type(exc).__name__}: {exc}"[:2000]))
                failures.append(self._redacted(_describe(exc)))
                if attempt < self.max_retries:
                    self._sleep(self._delay(attempt, exc))
                continue
            return read_completion(completion)
        return ChatResponse(error=f"gave up after {len(failures)} attempts: " + "; ".join(failures[-3:]))

    def _delay(self, attempt: int, exc: Exception) -> float:
        """Exponential backoff, or longer when the server asks (``retry-after-ms``, ``retry-after`` in
        seconds or as an HTTP date), never past ``max_backoff``."""
        delay = self.backoff * 2 ** attempt
        response = getattr(exc, "response", None)
        headers = response.headers if response is not None else {}
        asked = _seconds(headers.get("retry-after-ms"), 1000.0) or _seconds(headers.get("retry-after"), 1.0)
        return min(max(delay, asked or 0.0), self.max_backoff)

    def _redacted(self, text: str) -> str:
        """``text`` without the API key: error bodies may echo request headers, and they end up in run outputs."""
        key = os.environ.get(self.api_key_env) or ""
        if len(key) >= 4:
            text = text.replace(key, "[redacted]")
        return _SECRET.sub(lambda m: m.group(1) + "[redacted]", text)


_SECRET = re.compile(r"((?:Bearer|Basic|token)\s+|\bsk-)[A-Za-z0-9._~+/=-]{6,}", re.IGNORECASE)


def _seconds(header: str | None, unit: float) -> float | None:
    """A Retry-After value in seconds: a number of ``unit`` s, or an HTTP date from now; None if unreadable."""
    if not header:
        return None
    try:
        return max(0.0, float(header) / unit)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return max(0.0, (when - datetime.datetime.now(datetime.timezone.utc)).total_seconds())


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
