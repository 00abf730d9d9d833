"""``sttgym serve``: every sttgym env over HTTP, for rollouts from other machines (docs/server.md)."""

from __future__ import annotations

import typer

from sttgym.cli.app import app


@app.command("serve")
def serve(host: str = typer.Option("127.0.0.1", help="Address to listen on (0.0.0.0: every interface)."),
          port: int = typer.Option(8000, min=1, max=65535, help="Port to listen on."),
          max_sessions: int = typer.Option(256, min=1, help="Sessions held at once (beyond: the least recently used ended episode's slot is reused; "
                                     "when all are mid-episode, 503)."),
          ttl: float = typer.Option(600.0, min=0.001, help="Seconds a session may sit idle before it is closed."),
          max_request_bytes: int = typer.Option(1 << 20, min=1024, help="Largest request body accepted (413 beyond)."),
          request_timeout: float = typer.Option(10.0, min=0.1, help="Seconds a request may take to arrive, headers "
                                                "and body; a slower client is disconnected."),
          privileged: bool = typer.Option(False, "--privileged", help="Let GET /state return the task played, "
                                          "solution included: for a harness running the oracle/nominal agents or "
                                          "`sttgym eval --server`, never for a server the tested agents can reach."),
          log_level: str = typer.Option("info", help="uvicorn's log level: debug, info, warning, error.")) -> None:
    """Serve reset/step/close of every STTArena and ScrambleTool id (and wrapper stack) over HTTP."""
    try:
        from sttgym.server.app import serve as run
    except ImportError as exc:
        raise typer.BadParameter(f"the server needs the serve extra: pip install 'sttgym[serve]' ({exc})") from exc
    run(host=host, port=port, log_level=log_level, request_timeout=request_timeout, max_sessions=max_sessions, ttl=ttl,
        max_request_bytes=max_request_bytes, privileged=privileged)
