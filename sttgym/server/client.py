"""A gymnasium env whose episodes run on an ``sttgym serve`` server.

Only the standard library speaks to the server (one keep-alive connection per env), so a trainer
needs no server dependencies to roll out against envs on other machines.
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.parse
from typing import Any

import gymnasium as gym

from sttgym.spaces import AnyText, ToolCallSpace
from sttgym.tools import ToolSpec

__all__ = ["RemoteEnv", "RemoteError"]


class RemoteError(RuntimeError):
    """The server refused a request (``code``: e.g. FACTORY_ERROR, SESSION_ERROR, TOO_LARGE) or could not be reached."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"{code}: {message}" if status else message)
        self.status, self.code, self.message = status, code, message


def _runs_on_the_server(**arguments: Any) -> dict:
    raise RuntimeError("a remote env's tools run on the server: step the env instead")


class RemoteEnv(gym.Env):
    """``env_id`` (any STTArena or ScrambleTool id) served at ``url``, under ``wrappers``.

    Observations, actions, rewards and infos are those of ``gym.make(env_id, **kwargs)`` under the
    same wrappers locally: a seeded episode is the same episode. The env holds one server session,
    opened by the first ``reset`` and reset again for each episode; ``close()`` ends it (a session
    left idle longer than the server's ttl is closed by the server, and the next ``reset`` opens a
    new one).

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
        self._address = (parts.scheme, parts.hostname, parts.port, parts.path.rstrip("/"))
        self._connection: http.client.HTTPConnection | None = None
        self.session_id: str | None = None
        self._state: dict | None = None  # GET /state of this episode, fetched when first needed
        self._task: Any = None
        self.observation_space = AnyText()
        self.action_space = AnyText() if any(w["name"] == "TextActions" for w in self.wrappers) else ToolCallSpace([])

    # ------------------------------------------------------------------ gymnasium

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        super().reset(seed=seed)
        request: dict[str, Any] = {"seed": seed, "options": options}
        reply = None
        if self.session_id is not None:
            try:
                reply = self._call("POST", "/reset", {**request, "session_id": self.session_id})
            except RemoteError as exc:
                if exc.code != "SESSION_ERROR":
                    raise  # an expired session is replaced below: a reset starts afresh anyway
        if reply is None:
            reply = self._call("POST", "/reset", {**request, "env_id": self.env_id, "kwargs": self.env_kwargs,
                                                  "wrappers": self.wrappers})
        self.session_id, self._state, self._task = reply["session_id"], None, None
        if isinstance(self.action_space, ToolCallSpace):
            self.action_space = ToolCallSpace(reply["info"].get("tools", []))
        return reply["observation"], reply["info"]

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict]:
        if self.session_id is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        reply = self._call("POST", "/step", {"session_id": self.session_id, "action": action})
        self._state = None  # step counts and tools move on
        return reply["observation"], reply["reward"], reply["terminated"], reply["truncated"], reply["info"]

    def close(self) -> None:
        if self.session_id is not None:
            try:
                self._call("POST", "/close", {"session_id": self.session_id})
            except RemoteError:
                pass  # a server that is gone, or a session it already closed: nothing left to free
            self.session_id = None
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    # ------------------------------------------------------------------ the harness's view

    def state(self) -> dict:
        """The session as the server describes it: spec, episode and step counts, tools (and task, if privileged)."""
        if self.session_id is None:
            raise gym.error.ResetNeeded("call reset() before reading the state")
        if self._state is None:
            self._state = self._call("GET", f"/state?session_id={urllib.parse.quote(self.session_id)}")
        return self._state

    @property
    def task(self) -> Any:
        """The :class:`~sttgym.task.Task` being played (arena ids; None for ScrambleTool), from a privileged server."""
        if self._task is None:
            state = self.state()
            if "task" not in state:
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

    def _call(self, method: str, path: str, body: dict | None = None) -> dict:
        payload = None if body is None else json.dumps(body, ensure_ascii=False, default=str).encode()
        headers = {"Content-Type": "application/json"} if payload is not None else {}
        for attempt in range(2):
            fresh = self._connection is None
            if fresh:
                scheme, host, port, _ = self._address
                kind = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
                self._connection = kind(host, port, timeout=self.timeout)
            try:
                if fresh:
                    self._connection.connect()
                    # http.client sends headers and body in two writes: with Nagle's algorithm the body waits
                    # for the server's delayed ACK of the headers, 40 ms a step.
                    self._connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._connection.request(method, self._address[3] + path, payload, headers)
                response = self._connection.getresponse()
                data = response.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as exc:
                # The server closed an idle keep-alive connection before reading this request: send it again once.
                self._connection.close()
                self._connection = None
                if fresh or attempt:
                    raise RemoteError(0, "UNREACHABLE", f"the sttgym server at {self.url} closed the connection "
                                                        f"({type(exc).__name__})") from exc
            except OSError as exc:
                self._connection.close()
                self._connection = None
                raise RemoteError(0, "UNREACHABLE", f"cannot reach the sttgym server at {self.url}: {exc}") from exc
        try:
            reply = json.loads(data)
        except ValueError:
            raise RemoteError(response.status, "BAD_REPLY", f"{self.url}{path} answered {response.status} with "
                                                            "something that is not JSON; is it an sttgym server?") from None
        if response.status >= 400:
            error = reply.get("error", {}) if isinstance(reply, dict) else {}
            raise RemoteError(response.status, error.get("code", "HTTP_ERROR"), error.get("message", str(reply)))
        return reply
