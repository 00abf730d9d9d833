"""sttgym environments as a service: ``sttgym serve`` and a client that is itself a gymnasium env.

- :mod:`sttgym.server.app`: the HTTP server (FastAPI + uvicorn, the ``serve`` extra);
- :mod:`sttgym.server.sessions`: sessions of served envs, independent of HTTP;
- :class:`RemoteEnv` (:mod:`sttgym.server.client`): an env whose episodes run on a server, with the
  standard library only, also made by ``gym.make("sttgym/Remote", url=..., env_id=...)``.

See docs/server.md.
"""

from sttgym.server.client import RemoteEnv, RemoteError

__all__ = ["RemoteEnv", "RemoteError"]
