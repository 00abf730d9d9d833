"""``sttgym serve``: sttgym envs as an OpenEnv environment server, with each session's tools over MCP.

The app is OpenEnv's (:func:`openenv.core.env_server.create_fastapi_app`): sessions on the WebSocket
``/ws`` (reset, step, state, close, one env per connection), stateless ``POST /reset``, ``POST /step``
and ``GET /state``, ``/schema``, ``/health``, ``/metadata`` and its JSON-RPC ``/mcp``. sttgym adds
``GET /envs`` (what may be played), ``/episodes/{token}/mcp`` (a session's tools to MCP clients,
:mod:`sttgym.server.mcp_tools`), bounds on requests, and errors as ``{"error": {"code", "message"}}``
with tracebacks kept in the server's log. See docs/server.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import socket
import threading
from typing import Any, Iterator

import gymnasium as gym
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.routing import Route

from sttgym.server.sessions import NAMESPACES, WRAPPERS, ServeError

__all__ = ["create_app", "serve", "running", "MAX_REQUEST_BYTES", "REQUEST_TIMEOUT_S"]

MAX_REQUEST_BYTES = 1 << 20  # an action is a few KB; a stored task to replay, tens of KB
REQUEST_TIMEOUT_S = 10.0  # a request arrives whole (headers and body) within this, or its connection is closed
log = logging.getLogger("sttgym.server")


def _reply(payload: dict, status: int = 200) -> Response:
    # json.dumps directly: FastAPI's encoder walks every nested info value, a good part of a step's cost
    text = json.dumps(payload, ensure_ascii=False, default=str)
    try:
        body = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate an agent sent, echoed in an info field: escaped, it reads back
        body = json.dumps(payload, ensure_ascii=True, default=str).encode("ascii")
    return Response(body, status_code=status, media_type="application/json")


def _error(status: int, code: str, message: str) -> Response:
    return _reply({"error": {"code": code, "message": message}}, status)


class _BoundedBody:
    """ASGI middleware: a request body over ``limit`` bytes is answered 413 before the app reads it."""

    def __init__(self, app: Any, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope["headers"]).get(b"content-length", b"0")
        too_large = not declared.isdigit() or int(declared) > self.limit
        body, more = b"", not too_large
        while more:  # chunked bodies declare no length: count what arrives
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            too_large = len(body) > self.limit
            more = message.get("more_body", False) and not too_large
        if too_large:
            response = _error(413, "TOO_LARGE", f"the request body is larger than {self.limit} bytes")
            return await response(scope, receive, send)
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def create_app(env_id: str | None = None, max_sessions: int = 256, ttl: float = 600.0,
               max_request_bytes: int = MAX_REQUEST_BYTES, privileged: bool = False) -> FastAPI:
    """The server's ASGI app, on OpenEnv's app factory.

    Args:
        env_id: what a reset that names no env plays (a reset may name any sttgym id).
        max_sessions: WebSocket sessions held at once (beyond, a new one is refused: CAPACITY_REACHED).
        ttl: seconds a session may sit idle before OpenEnv's reaper closes it.
        max_request_bytes: the largest request body or WebSocket message accepted.
        privileged: let the state return the task being played (its solution included), for harnesses
            that run the privileged reference agents or record harness facts; never for a server whose
            clients are the agents under test.
    """
    from openenv.core.env_server import ConcurrencyConfig, create_fastapi_app

    from sttgym import __version__
    from sttgym.server.environment import (MAX_WRAPPERS, Settings, SttgymAction, SttgymEnvironment,
                                           SttgymObservation, SttgymState)
    from sttgym.server.mcp_tools import EpisodeMCP
    from sttgym.server.sessions import build_env

    if env_id is not None:
        build_env(env_id, {}, []).close()  # a bad default is the operator's error now, not each client's later
    settings = Settings(env_id=env_id, privileged=privileged)
    app = create_fastapi_app(functools.partial(SttgymEnvironment, settings), SttgymAction, SttgymObservation,
                             concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=ttl),
                             env_name="sttgym", state_cls=SttgymState, mode="simulation")
    app.title, app.version = "sttgym", __version__
    app.contact = app.license_info = None  # the factory names OpenEnv's own
    app.description = "sttgym environments as an OpenEnv environment (see docs/server.md)"

    @app.exception_handler(ServeError)
    async def refused(request: Request, exc: ServeError) -> Response:
        return _error(exc.status, exc.code, exc.message)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        problems = exc.errors()
        if any(p.get("type") == "json_invalid" for p in problems):
            return _error(400, "INVALID_JSON", "the request body is not valid JSON")
        return _error(422, "VALIDATION_ERROR", _where(problems, skip=1))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 400:  # FastAPI's own: a body its JSON reader gave up on (nested too deep)
            return _error(400, "INVALID_JSON", "the request body is not JSON the server can read (nested too deep?)")
        if exc.status_code == 422 and isinstance(exc.detail, list):  # OpenEnv's: an action its model refused
            return _error(422, "VALIDATION_ERROR", "action: " + _where(exc.detail, skip=0))
        return _error(exc.status_code, "NOT_FOUND" if exc.status_code == 404 else "HTTP_ERROR", str(exc.detail))

    @app.exception_handler(Exception)
    async def crashed(request: Request, exc: Exception) -> Response:
        log.exception("unexpected error on %s", request.url.path)
        return _error(500, "INTERNAL_ERROR", f"{type(exc).__name__} (details in the server's log)")

    @app.get("/envs", tags=["Environment Info"], summary="What a reset may name")
    def envs() -> Response:
        return _reply({"env_ids": sorted(i for i in gym.registry if i.partition("/")[0] in NAMESPACES),
                       "default_env_id": env_id, "wrappers": sorted(WRAPPERS), "privileged": privileged,
                       "limits": {"max_sessions": max_sessions, "session_ttl_s": ttl,
                                  "max_request_bytes": max_request_bytes, "max_wrappers": MAX_WRAPPERS}})

    mcp = EpisodeMCP(settings.episodes)
    app.router.routes.append(Route("/episodes/{token}/mcp", mcp, methods=["GET", "POST", "DELETE"]))
    openenv_lifespan = app.router.lifespan_context  # runs OpenEnv's startup (its idle-session reaper)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        async with openenv_lifespan(app), mcp.run():
            yield

    app.router.lifespan_context = lifespan
    app.add_middleware(_BoundedBody, limit=max_request_bytes)
    return app


def _where(problems: list, skip: int) -> str:
    """Pydantic's errors as one line naming each field (``skip``: leading parts of the location, e.g. "body")."""
    return "; ".join(f"{'.'.join(str(part) for part in p['loc'][skip:]) or 'body'}: {p['msg']}"
                     for p in problems[:5])


def _timed_protocol(timeout: float) -> type:
    """uvicorn's HTTP/1.1 protocol with a deadline on each request's arrival: from a connection's opening, or a
    request's first byte, to its last, at most ``timeout`` seconds; a client slower than that (a slowloris, a
    stalled upload) is disconnected. uvicorn itself bounds only the idle time between requests."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    received = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR)  # what the client was to send has come

    class TimedProtocol(H11Protocol):
        deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self.deadline is None:  # the next request on a kept-alive connection begins
                self._arm()
            super().data_received(data)
            if self.conn.their_state in received:
                self._disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def handle_websocket_upgrade(self, event: h11.Request) -> None:
            # The opening request has come whole; the WebSocket's messages are bounded in size by uvicorn
            # (ws_max_size), and its idle session by OpenEnv's reaper.
            self._disarm()
            super().handle_websocket_upgrade(event)

        def _arm(self) -> None:
            self.deadline = self.loop.call_later(timeout, self._too_slow)

        def _disarm(self) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None

        def _too_slow(self) -> None:
            self.deadline = None
            if not self.transport.is_closing():
                log.info("closed a connection whose request did not arrive within %g s", timeout)
                self.transport.close()

    return TimedProtocol


def serve(host: str = "127.0.0.1", port: int = 8000, log_level: str = "info",
          request_timeout: float = REQUEST_TIMEOUT_S, **settings: Any) -> None:
    """Run the server until interrupted (``sttgym serve``); ``settings`` go to :func:`create_app`."""
    import uvicorn

    uvicorn.run(create_app(**settings), host=host, port=port, log_level=log_level,
                **_uvicorn_settings(request_timeout, settings))


def _uvicorn_settings(request_timeout: float, settings: dict[str, Any]) -> dict[str, Any]:
    return {"timeout_keep_alive": 30, "http": _timed_protocol(request_timeout),
            "ws_max_size": settings.get("max_request_bytes", MAX_REQUEST_BYTES)}


@contextlib.contextmanager
def running(host: str = "127.0.0.1", request_timeout: float = REQUEST_TIMEOUT_S, **settings: Any) -> Iterator[str]:
    """A server on a free port in a background thread, for tests and notebooks; yields its URL.

    The socket is bound before uvicorn starts, so the port cannot be taken in between.
    """
    import uvicorn

    # IPPROTO_TCP named: asyncio sets TCP_NODELAY on accepted connections only when the listening socket says TCP
    # (with proto 0 every reply would wait 40 ms for the client's delayed ACK).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    server = uvicorn.Server(uvicorn.Config(create_app(**settings), log_level="warning",
                                           **_uvicorn_settings(request_timeout, settings)))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the sttgym server did not start (see its log)")
            threading.Event().wait(0.01)
        yield f"http://{host}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
