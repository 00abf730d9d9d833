"""The HTTP server (FastAPI + uvicorn): reset, step, state and close of sttgym envs, one session per client.

Request and reply shapes follow OpenEnv's HTTP server (``POST /reset`` with ``seed``, ``POST /step``
with ``action``, replies with ``observation``, ``reward`` and ``done``, ``GET /state``, ``/health``,
``/metadata``), with the session id in the body: OpenEnv keeps HTTP calls stateless and sessions on
its WebSocket, while an sttgym episode lives across many HTTP calls. Every error is a JSON body
``{"error": {"code", "message"}}``; a traceback stays in the server's log. See docs/server.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import threading
from typing import Any, Iterator

import gymnasium as gym
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException
from starlette.responses import Response

from sttgym.server.sessions import NAMESPACES, WRAPPERS, ServeError, Sessions

__all__ = ["create_app", "serve", "running", "MAX_REQUEST_BYTES", "REQUEST_TIMEOUT_S"]

MAX_REQUEST_BYTES = 1 << 20  # an action is a few KB; a stored task to replay, tens of KB
MAX_WRAPPERS = 8
REQUEST_TIMEOUT_S = 10.0  # a request arrives whole (headers and body) within this, or its connection is closed
log = logging.getLogger("sttgym.server")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt field is an error, not silently ignored


class WrapperSpec(_Strict):
    name: str = Field(description="one of the sttgym.wrappers (GET /metadata lists them)")
    kwargs: dict[str, Any] = Field(default_factory=dict)


class ResetRequest(_Strict):
    """Without ``session_id``: open a session on ``env_id`` (``gym.make(env_id, **kwargs)`` under ``wrappers``)."""

    session_id: str | None = None
    env_id: str | None = None
    kwargs: dict[str, Any] = Field(default_factory=dict)
    wrappers: list[WrapperSpec] = Field(default_factory=list, max_length=MAX_WRAPPERS)
    seed: int | None = Field(default=None, ge=0)
    options: dict[str, Any] | None = None


class StepRequest(_Strict):
    session_id: str
    action: Any = Field(description="what env.step takes: a tool call, a reply, or (under TextActions) text")


class CloseRequest(_Strict):
    session_id: str


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


def create_app(max_sessions: int = 256, ttl: float = 600.0, max_request_bytes: int = MAX_REQUEST_BYTES,
               privileged: bool = False) -> FastAPI:
    """The server's ASGI app.

    Args:
        max_sessions: sessions held at once (beyond, an ended episode's session gives up its slot, else 503).
        ttl: seconds a session may sit idle before it is closed (a vanished client's env is freed).
        max_request_bytes: the largest request body accepted (413 beyond).
        privileged: let ``GET /state`` return the task being played (its solution included), for
            harnesses that run the privileged reference agents or record harness facts; never for a
            server whose clients are the agents under test.
    """
    sessions = Sessions(max_sessions, ttl)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        async def reap() -> None:
            while True:
                await asyncio.sleep(min(max(ttl / 4, 0.05), 30.0))
                closed = await asyncio.to_thread(sessions.reap)
                if closed:
                    log.info("closed %d idle session(s)", closed)

        reaper = asyncio.create_task(reap())
        try:
            yield
        finally:
            reaper.cancel()
            await asyncio.to_thread(sessions.close_all)

    app = FastAPI(title="sttgym", description="sttgym environments over HTTP (see docs/server.md)", lifespan=lifespan)

    @app.exception_handler(ServeError)
    async def refused(request: Request, exc: ServeError) -> Response:
        return _error(exc.status, exc.code, exc.message)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        problems = exc.errors()
        if any(p.get("type") == "json_invalid" for p in problems):
            return _error(400, "INVALID_JSON", "the request body is not valid JSON")
        where = "; ".join(f"{'.'.join(str(part) for part in p['loc'][1:]) or 'body'}: {p['msg']}" for p in problems[:5])
        return _error(422, "VALIDATION_ERROR", where)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 400:  # FastAPI's own: a body its JSON reader gave up on (nested too deep)
            return _error(400, "INVALID_JSON", "the request body is not JSON the server can read (nested too deep?)")
        return _error(exc.status_code, "NOT_FOUND" if exc.status_code == 404 else "HTTP_ERROR", str(exc.detail))

    @app.exception_handler(Exception)
    async def crashed(request: Request, exc: Exception) -> Response:
        log.exception("unexpected error on %s", request.url.path)
        return _error(500, "INTERNAL_ERROR", f"{type(exc).__name__} (details in the server's log)")

    def run(session_lock: threading.Lock, call: Any, *args: Any) -> Any:
        """``call(*args)`` on a session's env; the env's own exception becomes an EXECUTION_ERROR."""
        with session_lock:
            try:
                return call(*args)
            except ServeError:
                raise
            except Exception as exc:
                log.exception("the env raised")
                raise ServeError(500, "EXECUTION_ERROR", f"the environment raised {type(exc).__name__}: {exc}") from None

    @app.post("/reset")
    def reset(request: ResetRequest) -> Response:
        """Start an episode: in a new session on ``env_id``, or again in ``session_id``'s env."""
        if request.session_id is None:
            if request.env_id is None:
                raise ServeError(422, "VALIDATION_ERROR", "give env_id to open a session, or the session_id to reset")
            session = sessions.open(request.env_id, request.kwargs,
                                    [w.model_dump() for w in request.wrappers])
        else:
            if request.env_id is not None or request.kwargs or request.wrappers:
                raise ServeError(422, "VALIDATION_ERROR", "a session keeps the env it was opened on; reset it with "
                                                          "only seed and options, or open a new session")
            session = sessions.get(request.session_id)
        try:
            observation, info = run(session.lock, session.reset, request.seed, request.options)
        except ServeError:
            if request.session_id is None:  # nobody holds the id of a session whose first reset failed
                sessions.close(session.id)
            raise
        return _reply({"session_id": session.id, "observation": observation, "info": info, "reward": None,
                       "done": False})

    @app.post("/step")
    def step(request: StepRequest) -> Response:
        session = sessions.get(request.session_id)
        observation, reward, terminated, truncated, info = run(session.lock, session.step, request.action)
        return _reply({"session_id": session.id, "observation": observation, "reward": reward,
                       "done": terminated or truncated, "terminated": terminated, "truncated": truncated,
                       "info": info})

    @app.get("/state")
    def state(session_id: str) -> Response:
        session = sessions.get(session_id)
        return _reply(run(session.lock, session.state, privileged))

    @app.post("/close")
    def close(request: CloseRequest) -> Response:
        return _reply({"session_id": request.session_id, "closed": sessions.close(request.session_id)})

    @app.get("/health")
    def health() -> Response:
        return _reply({"status": "healthy", "sessions": len(sessions), "max_sessions": max_sessions})

    @app.get("/metadata")
    def metadata() -> Response:
        from sttgym import __version__

        return _reply({"name": "sttgym", "version": __version__,
                       "description": "Gymnasium tool-use environments for LLM agents under spatio-temporal dynamics",
                       "env_ids": sorted(i for i in gym.registry if i.partition("/")[0] in NAMESPACES),
                       "wrappers": sorted(WRAPPERS), "privileged": privileged,
                       "limits": {"max_sessions": max_sessions, "session_ttl_s": ttl,
                                  "max_request_bytes": max_request_bytes, "max_wrappers": MAX_WRAPPERS}})

    app.add_middleware(_BoundedBody, limit=max_request_bytes)
    return app


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

    uvicorn.run(create_app(**settings), host=host, port=port, log_level=log_level, timeout_keep_alive=30,
                http=_timed_protocol(request_timeout))


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
    server = uvicorn.Server(uvicorn.Config(create_app(**settings), log_level="warning", timeout_keep_alive=30,
                                           http=_timed_protocol(request_timeout)))
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
