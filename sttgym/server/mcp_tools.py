"""A session's tools over the Model Context Protocol (streamable HTTP, the ``mcp`` package's server).

``/episodes/{token}/mcp`` serves the tools of the session whose reset answered that path (in the
observation's ``metadata["mcp"]``): ``tools/list`` gives each tool with its JSON schema, and each
``tools/call`` is one step of the episode, answered with the observation as text and, in the
result's ``_meta["sttgym"]``, the step's reward, end flags and info (the final one holds the
checklist). OpenEnv's own ``POST /mcp`` speaks a JSON-RPC subset that MCP clients cannot use
(no ``initialize``), so this endpoint is the one for MCP clients.
"""

from __future__ import annotations

import contextlib
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.responses import JSONResponse

from sttgym.server.environment import Episodes, SttgymAction, SttgymEnvironment
from sttgym.server.sessions import ServeError

__all__ = ["EpisodeMCP"]


class EpisodeMCP:
    """The ASGI app of ``/episodes/{token}/mcp``; :meth:`run` must wrap the server's lifetime."""

    def __init__(self, episodes: Episodes):
        self.episodes = episodes
        server: Server = Server("sttgym")

        @server.list_tools()
        async def list_tools() -> list[types.Tool]:
            env = self._episode(server)
            listing = await anyio.to_thread.run_sync(env.tool_listing)
            return [types.Tool(name=t["name"], description=t.get("description", ""), inputSchema=t["parameters"])
                    for t in listing]

        # The env checks arguments itself, as it does locally: a bad call is an observation, and a step.
        @server.call_tool(validate_input=False)
        async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
            env = self._episode(server)
            try:
                step = await anyio.to_thread.run_sync(env.step, SttgymAction(name=name, arguments=arguments))
            except ServeError as exc:
                return types.CallToolResult(content=[types.TextContent(type="text", text=str(exc))], isError=True)
            result = step.info.get("result")
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=step.text)],
                isError=isinstance(result, dict) and "error" in result,
                _meta={"sttgym": {"reward": step.reward, "done": step.done, "terminated": step.terminated,
                                  "truncated": step.truncated, "info": step.info}})

        # Stateless JSON replies: the episode lives in the OpenEnv session, so an MCP session holds nothing.
        self.manager = StreamableHTTPSessionManager(server, json_response=True, stateless=True)

    def _episode(self, server: Server) -> SttgymEnvironment:
        request = server.request_context.request
        env = self.episodes.get(request.path_params["token"]) if isinstance(request, Request) else None
        if env is None:
            raise ValueError("this episode's session has closed")
        return env

    def run(self) -> contextlib.AbstractAsyncContextManager[None]:
        return self.manager.run()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if self.episodes.get(scope["path_params"]["token"]) is None:
            response = JSONResponse({"error": {"code": "SESSION_ERROR", "message": "no open session has this MCP "
                                               "path (closed, expired, or never opened)"}}, status_code=404)
            return await response(scope, receive, send)
        await self.manager.handle_request(scope, receive, send)
