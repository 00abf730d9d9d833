"""A tiny OpenAI-compatible chat server on 127.0.0.1 for tests (stdlib only).

``POST /v1/chat/completions`` answers with ``policy(messages)`` (a ChatResponse rendered as
a chat completion, as server-sent events when the request streams), unless a scripted fault
is queued: an HTTP status, a body that is not a completion, or a delay longer than the
client's timeout. The server answers at most
``max_requests`` requests and stops by itself after ``lifetime`` seconds.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

from sttgym.models.base import ChatResponse


def completion(response: ChatResponse, raw_arguments: dict[int, str] | None = None,
               tokens: tuple[int, int] = (21, 7)) -> dict:
    """``response`` as the body of a chat completion; ``raw_arguments`` overrides a call's argument text, ``tokens``
    the usage reported (prompt, completion)."""
    calls = [{"id": f"c{i}", "type": "function",
              "function": {"name": c["name"], "arguments": (raw_arguments or {}).get(i, json.dumps(c["arguments"]))}}
             for i, c in enumerate(response.tool_calls)]
    message = {"role": "assistant", "content": response.content or None}
    if calls:
        message["tool_calls"] = calls
    return {"id": "cmpl-1", "object": "chat.completion", "created": 0, "model": "served",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1], "total_tokens": sum(tokens)}}


def stream_events(body: dict) -> bytes:
    """A chat completion ``body`` as the server-sent events of a streamed one (``"stream": true`` requests)."""
    (choice,) = body["choices"]
    message = choice["message"]
    delta = {"role": "assistant", "content": message["content"] or ""}
    if "tool_calls" in message:
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
    head = {key: body[key] for key in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    chunks = [head | {"choices": [{"index": 0, "delta": delta, "finish_reason": choice["finish_reason"]}]},
              head | {"choices": [], "usage": body["usage"]}]
    return b"".join(f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks) + b"data: [DONE]\n\n"


class FakeServer:
    def __init__(self, policy: Callable[[list[dict]], ChatResponse], max_requests: int = 2000,
                 lifetime: float = 120.0, tokens: Callable[[list[dict], ChatResponse], tuple[int, int]] | None = None,
                 echo_headers: bool = False):
        self.policy, self.max_requests, self.tokens = policy, max_requests, tokens
        self.echo_headers = echo_headers  # a successful reply's text repeats the request's headers, key and all
        self.faults: deque = deque()  # ("status", code[, headers[, message]]) | ("body", text) | ("delay", seconds)
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._timer = threading.Timer(lifetime, self.close)
        self._timer.daemon = True

    def __enter__(self) -> "FakeServer":
        self._thread.start()
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._timer.cancel()
        self.httpd.shutdown()
        self.httpd.server_close()

    def _next(self, body: dict, headers: dict) -> tuple[int, str, dict]:
        with self._lock:
            self.requests.append(body)
            if len(self.requests) > self.max_requests:
                return 400, json.dumps({"error": {"message": "request budget of the test server spent"}}), {}
            fault = self.faults.popleft() if self.faults else None
        if fault is None:
            answer = self._answer(body["messages"])
            if self.echo_headers:
                message = answer["choices"][0]["message"]
                message["content"] = f"{message['content'] or ''} (your request's headers: {headers})"
            return 200, json.dumps(answer), {}
        kind, value, *extra = fault
        if kind == "status":  # ("status", code[, headers[, message]])
            headers = extra[0] if extra else {"Retry-After": "0"}
            message = extra[1] if len(extra) > 1 else f"scripted {value}"
            return value, json.dumps({"error": {"message": message}}), headers
        if kind == "body":
            return 200, value, {}
        time.sleep(value)  # "delay": longer than the client waits
        return 200, json.dumps(self._answer(body["messages"])), {}

    def _answer(self, messages: list[dict]) -> dict:
        response = self.policy(messages)
        return completion(response, tokens=self.tokens(messages, response) if self.tokens else (21, 7))

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                status, text, headers = server._next(body, dict(self.headers))
                streamed = status == 200 and body.get("stream") and '"choices"' in text
                data = stream_events(json.loads(text)) if streamed else text.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "text/event-stream" if streamed else "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up on a delayed answer
                    pass

            def log_message(self, *args):
                pass

        return Handler
