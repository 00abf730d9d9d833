"""``sttgym serve``: sttgym envs as an OpenEnv environment server, each session's tools over MCP (docs/server.md)."""

from __future__ import annotations

from typing import Optional

import typer

from sttgym.cli.app import app


@app.command("serve")
def serve(host: str = typer.Option("127.0.0.1", help="Address to listen on (0.0.0.0: every interface)."),
          port: int = typer.Option(8000, min=0, max=65535, help="Port to listen on (0: a free one)."),
          env_id: Optional[str] = typer.Option(None, help="What a reset that names no env plays, e.g. "
                                               "STTArena/ColdChain-T2-medium (a reset may still name any id)."),
          max_sessions: int = typer.Option(256, min=1, help="WebSocket sessions held at once (beyond: refused, "
                                           "CAPACITY_REACHED)."),
          ttl: float = typer.Option(600.0, min=0.001, help="Seconds a session may sit idle before it is closed."),
          max_request_bytes: int = typer.Option(1 << 20, min=1024, help="Largest request body or WebSocket message "
                                                "accepted."),
          request_timeout: float = typer.Option(10.0, min=0.1, help="Seconds a request may take to arrive, headers "
                                                "and body; a slower client is disconnected."),
          privileged: bool = typer.Option(False, "--privileged", help="Let the state return the task played, "
                                          "solution included: for a harness running the oracle/nominal agents or "
                                          "`sttgym eval --server`, never for a server the tested agents can reach."),
          log_level: str = typer.Option("info", help="uvicorn's log level: debug, info, warning, error.")) -> None:
    """Serve every STTArena and ScrambleTool id (and wrapper stack) as an OpenEnv environment, tools over MCP."""
    from sttgym.server.sessions import ServeError

    try:
        from sttgym.server.app import serve as run

        # The app is built, and the default id checked against the registry, before anything listens.
        run(host=host, port=port, log_level=log_level, request_timeout=request_timeout, env_id=env_id,
            max_sessions=max_sessions, ttl=ttl, max_request_bytes=max_request_bytes, privileged=privileged)
    except ImportError as exc:
        raise typer.BadParameter(f"the server needs the serve extra: pip install 'sttgym[serve]' ({exc})") from exc
    except ServeError as exc:
        raise typer.BadParameter(exc.message, param_hint="--env-id") from None
