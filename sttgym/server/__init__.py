"""sttgym environments as a service: ``sttgym serve`` and a client that is itself a gymnasium env.

- :mod:`sttgym.server.app`: the server, on OpenEnv's app factory (the ``serve`` extra);
- :mod:`sttgym.server.environment`: an sttgym env as an OpenEnv environment (typed action, observation, state);
- :mod:`sttgym.server.mcp_tools`: each session's tools over MCP;
- :mod:`sttgym.server.sessions`: what a session may build (ids, typed keywords, wrappers), independent of HTTP;
- :class:`RemoteEnv` (:mod:`sttgym.server.client`): an env whose episodes run on a server, over OpenEnv's
  WebSocket with the standard library only, also made by ``gym.make("sttgym/Remote", url=..., env_id=...)``.

See docs/server.md.
"""

from sttgym.server.client import RemoteEnv, RemoteError

__all__ = ["RemoteEnv", "RemoteError"]
