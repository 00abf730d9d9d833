"""``sttgym view``: a run's episodes in the browser (docs/viewer.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from sttgym.cli.app import app


@app.command("view")
def view(run_dir: Path = typer.Argument(..., help="A run directory written by sttgym eval --out."),
         out: Optional[Path] = typer.Option(None, help="Write the page to this HTML file (self-contained: open it "
                                            "anywhere) instead of serving it."),
         host: str = typer.Option("127.0.0.1", help="Address to serve on (the default is reachable only from "
                                  "this machine)."),
         port: int = typer.Option(8000, help="Port to serve on; 0 picks a free one."),
         page: int = typer.Option(1, min=1, help="With --out: which page of a run too large for one (the page "
                                  "says how many there are; served, ?page=N)."),
         open_browser: bool = typer.Option(False, "--open", help="Open the page in the default browser."),
         verbose: bool = typer.Option(False, "--verbose", help="Log every request.")) -> None:
    """Browse a run's episodes: filters, the conversation, the simulated clock with its triggers, the checklist."""
    from sttgym.viewer import NotARun, make_server, write_page

    try:
        if out is not None:
            typer.echo(f"wrote {write_page(run_dir, out, page)}")
            return
        server = make_server(run_dir, host, port, verbose=verbose)
    except NotARun as exc:
        raise typer.BadParameter(str(exc), param_hint="RUN_DIR") from exc
    except OSError as exc:
        typer.echo(f"cannot {'write ' + str(out) if out else f'serve on {host}:{port}'}: {exc.strerror or exc}",
                   err=True)
        raise typer.Exit(1) from exc
    url = f"http://{server.server_address[0]}:{server.server_address[1]}/"
    typer.echo(f"serving {run_dir} at {url} (Ctrl-C to stop; reload to see new episodes)")
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
