"""A gymnasium env whose episodes run on an ``sttgym serve`` server, over OpenEnv's WebSocket protocol.

Only the standard library speaks to the server (one WebSocket per env, :class:`_WebSocket`), so a
trainer needs no server dependencies to roll out against envs on other machines.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import socket
import ssl
import struct
import urllib.parse
from typing import Any

import gymnasium as gym

from sttgym.spaces import AnyText, ToolCallSpace
from sttgym.tools import ToolSpec

__all__ = ["RemoteEnv", "RemoteError"]


class RemoteError(RuntimeError):
    """The server refused a request (``code``: e.g. FACTORY_ERROR, SESSION_ERROR, VALIDATION_ERROR) or could not be
    reached (UNREACHABLE)."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"{code}: {message}" if status else message)
        self.status, self.code, self.message = status, code, message


def _runs_on_the_server(**arguments: Any) -> dict:
    raise RuntimeError("a remote env's tools run on the server: step the env instead")


class _Closed(Exception):
    """The server closed the WebSocket."""


class _WebSocket:
    """A WebSocket client (RFC 6455) for text messages: what OpenEnv's ``/ws`` speaks, and no more."""

    _GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    def __init__(self, scheme: str, host: str, port: int | None, path: str, timeout: float):
        port = port or (443 if scheme == "https" else 80)
        sock = socket.create_connection((host, port), timeout=timeout)
        # Each message is one small write; with Nagle's algorithm it would wait for the previous one's ACK.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if scheme == "https":
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
        self.sock, self.buffer = sock, b""
        key = base64.b64encode(os.urandom(16))
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     f"Sec-WebSocket-Key: {key.decode()}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        accept = base64.b64encode(hashlib.sha1(key + self._GUID).digest()).decode()
        if lines[0].split(" ")[1:2] != ["101"] or headers.get("sec-websocket-accept") != accept:
            sock.close()
            raise RemoteError(0, "BAD_REPLY", f"{host}:{port}{path} answered {lines[0]!r}, not a WebSocket; is it an "
                                              "sttgym (OpenEnv) server?")

    def send(self, text: str) -> None:
        self._frame(0x1, text.encode("utf-8", "surrogatepass"))

    def receive(self) -> str:
        message = b""
        while True:
            first, second = self._read(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack("!H", self._read(2))[0]
            elif length == 127:
                length = struct.unpack("!Q", self._read(8))[0]
            payload, opcode = self._read(length), first & 0x0F
            if opcode == 0x8:
                raise _Closed()
            if opcode == 0x9:
                self._frame(0xA, payload)
            elif opcode in (0x0, 0x1):
                message += payload
                if first & 0x80:
                    return message.decode("utf-8")

    def close(self) -> None:
        try:
            self._frame(0x8, struct.pack("!H", 1000))
        except OSError:
            pass  # already gone
        self.sock.close()

    def _frame(self, opcode: int, payload: bytes) -> None:
        n = len(payload)
        length = bytes([0x80 | n]) if n < 126 else (bytes([0x80 | 126]) + struct.pack("!H", n) if n < 1 << 16
                                                    else bytes([0x80 | 127]) + struct.pack("!Q", n))
        mask = os.urandom(4)  # a client masks every frame (RFC 6455 5.3)
        key = (mask * (n // 4 + 1))[:n]
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(n, "big")
        self.sock.sendall(bytes([0x80 | opcode]) + length + mask + masked)

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            self._fill()
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def _fill(self) -> None:
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise _Closed()
        self.buffer += chunk


class RemoteEnv(gym.Env):
    """``env_id`` (any STTArena or ScrambleTool id) served at ``url``, under ``wrappers``.

    Observations, rewards, infos and end flags are those of ``gym.make(env_id, **kwargs)`` under the
    same wrappers locally: a seeded episode is the same episode. Actions are the server's typed ones:
    a tool call ``{"name", "arguments"}``, a reply ``{"content"}``, or text under TextActions; any other
    shape raises :class:`RemoteError` (VALIDATION_ERROR) instead of being answered by the env. The env
    holds one OpenEnv session (a WebSocket), opened by the first ``reset`` and reset again for each
    episode; ``close()`` ends it (the server also closes a session idle for longer than its ttl; the
    next ``reset`` then opens a new one).

    Args:
        url: the server, e.g. ``http://gpu-box:8000``.
        env_id: the id to play, e.g. ``STTArena/ColdChain-T2-medium``.
        wrappers: sttgym wrappers the server stacks on the env, innermost first: names, or
            ``(name, kwargs)`` pairs, e.g. ``[("MappingDrift", {"fraction": 0.25})]``.
        timeout: seconds to wait for one reply.
        **kwargs: keyword arguments of ``gym.make`` on the server (JSON values: ``dynamics=False``,
            ``max_turns=20``, ``max_episode_steps=10``, ``user="none"``).

    The privileged reference agents (oracle, nominal) read :attr:`task`, which a server started
    with ``--privileged`` returns.
    """

    metadata = {"render_modes": []}

    def __init__(self, url: str, env_id: str, wrappers: list | tuple = (), timeout: float = 60.0, **kwargs: Any):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{url!r} is not an http(s) URL of an sttgym server")
        self.url, self.env_id, self.env_kwargs, self.timeout = url, env_id, kwargs, timeout
        self.wrappers = [{"name": w, "kwargs": {}} if isinstance(w, str) else {"name": w[0], "kwargs": dict(w[1])}
                         for w in wrappers]
        self._address = (parts.scheme, parts.hostname, parts.port, parts.path.rstrip("/") + "/ws")
        self._socket: _WebSocket | None = None
        self.episode_id: str | None = None
        self._state: dict | None = None  # the session's state this episode, fetched when first needed
        self._task: Any = None
        self.observation_space = AnyText()
        self.action_space = AnyText() if any(w["name"] == "TextActions" for w in self.wrappers) else ToolCallSpace([])

    # ------------------------------------------------------------------ gymnasium

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        super().reset(seed=seed)
        request = {"env_id": self.env_id, "kwargs": self.env_kwargs, "wrappers": self.wrappers, "seed": seed,
                   "options": options}
        try:
            reply = self._call("reset", request)
        except RemoteError as exc:
            if exc.code != "SESSION_ERROR":
                raise
            self._disconnect()  # the server closed the idle session: a reset starts afresh anyway
            reply = self._call("reset", request)
        observation = reply["observation"]
        self.episode_id, self._state, self._task = observation["metadata"]["episode_id"], None, None
        if isinstance(self.action_space, ToolCallSpace):
            self.action_space = ToolCallSpace(observation["info"].get("tools", []))
        return observation["text"], observation["info"]

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict]:
        if self._socket is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        reply = self._call("step", {"text": action} if isinstance(action, str) else action)
        self._state = None  # step counts and tools move on
        observation = reply["observation"]
        return observation["text"], float(reply["reward"]), observation["terminated"], observation["truncated"], \
            observation["info"]

    def close(self) -> None:
        if self._socket is not None:
            try:
                self._socket.send(json.dumps({"type": "close"}))
            except OSError:
                pass  # a server that is gone: nothing left to free
            self._disconnect()

    # ------------------------------------------------------------------ the harness's view

    def state(self) -> dict:
        """The session as the server describes it: spec, episode and step counts, tools (and task, if privileged)."""
        if self._socket is None:
            raise gym.error.ResetNeeded("call reset() before reading the state")
        if self._state is None:
            self._state = self._call("state")
        return self._state

    @property
    def task(self) -> Any:
        """The :class:`~sttgym.task.Task` being played (arena ids; None for ScrambleTool), from a privileged server."""
        if self._task is None:
            state = self.state()
            if not state["privileged"]:
                raise RuntimeError(f"the server at {self.url} does not share tasks; start it with --privileged to run "
                                   "the oracle or nominal agent, or to record harness facts in an evaluation")
            if state["task"] is not None:
                from sttgym.task import Task  # pydantic: past the core

                self._task = Task.model_validate(state["task"])
        return self._task

    @property
    def tools(self) -> dict[str, ToolSpec]:
        """The base env's tools this episode (the seam ``tool_env(env).tools`` of a local env), as specs."""
        return {t["name"]: ToolSpec(t["name"], t.get("description", ""), t.get("parameters", {}), t["mutates"],
                                    t["cost"], func=_runs_on_the_server) for t in self.state()["tools"]}

    # ------------------------------------------------------------------ transport

    def _call(self, kind: str, data: Any = None) -> dict:
        """One OpenEnv message (reset, step, state) and its reply's data."""
        message = json.dumps({"type": kind} if data is None else {"type": kind, "data": data}, ensure_ascii=False,
                             default=str)
        try:
            if self._socket is None:
                self._socket = _WebSocket(*self._address, timeout=self.timeout)
            self._socket.send(message)
            reply = json.loads(self._socket.receive())
        except (_Closed, OSError) as exc:
            self._disconnect()
            raise RemoteError(0, "UNREACHABLE", f"cannot reach the sttgym server at {self.url}, or it closed the "
                                                f"session ({type(exc).__name__}: {exc})") from exc
        if reply.get("type") == "error":
            raise _refusal(reply.get("data", {}))
        if not isinstance(reply.get("data"), dict):
            raise RemoteError(0, "BAD_REPLY", f"{self.url} answered {kind!r} with {str(reply)[:200]}")
        return reply["data"]

    def _disconnect(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None


_CODED = re.compile(r"^([A-Z_]+) \((\d{3})\): (.*)$", re.S)  # sttgym.server.sessions.ServeError's text


def _refusal(data: dict) -> RemoteError:
    """The error a WebSocket error frame reports, with the status the same refusal has over HTTP. OpenEnv reports an
    environment's exception as EXECUTION_ERROR with its text, which for sttgym's refusals leads with the precise
    code and status; a message OpenEnv's models refused carries pydantic's errors."""
    code, message = data.get("code", "ERROR"), str(data.get("message", data))
    coded = _CODED.match(message)
    if code == "EXECUTION_ERROR" and coded:
        return RemoteError(int(coded[2]), coded[1], coded[3])
    if data.get("errors"):
        message = "; ".join(f"{'.'.join(map(str, e.get('loc', ()))) or 'action'}: {e.get('msg')}"
                            for e in data["errors"][:5])
    status = {"VALIDATION_ERROR": 422, "CAPACITY_REACHED": 503, "INVALID_JSON": 400}.get(code, 500)
    return RemoteError(status, code, message)
