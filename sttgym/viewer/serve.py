"""Serving the viewer's page on localhost with the standard library's HTTP server.

The page is rebuilt when the run's trajectories file changes, so reloading the browser shows the
episodes of a run still in progress.
"""

from __future__ import annotations

import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from sttgym.viewer.page import build_page

__all__ = ["make_server"]


class _Page:
    """The page's bytes, built again only when the trajectories file has changed."""

    def __init__(self, run_dir: Path):
        from sttgym.evaluation.runner import TRAJECTORIES

        self.run_dir, self.path = run_dir, run_dir / TRAJECTORIES
        self._lock, self._stamp, self._body = threading.Lock(), None, b""
        self.get()  # a directory that is not a run fails here, before anything listens

    def get(self) -> bytes:
        try:
            stat = self.path.stat()
            stamp = (stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            stamp = None
        with self._lock:
            if stamp != self._stamp or not self._body:
                self._body, self._stamp = build_page(self.run_dir).encode("utf-8"), stamp
            return self._body


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"

    def do_GET(self) -> None:  # noqa: N802 (the http.server API)
        if self.path.split("?", 1)[0] not in ("/", "/index.html"):
            self.send_error(404, "the viewer serves one page, at /")
            return
        try:
            body = self.server.page.get()
        except (OSError, ValueError) as exc:  # the run directory went away or was overwritten
            self.send_error(500, f"cannot read the run: {exc}")
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:  # noqa: A002 (the http.server API)
        if self.server.verbose:
            super().log_message(format, *args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    page: _Page
    verbose: bool


def make_server(run_dir: str | os.PathLike, host: str = "127.0.0.1", port: int = 0,
                verbose: bool = False) -> ThreadingHTTPServer:
    """An HTTP server of ``run_dir``'s page at ``http://host:port/`` (port 0: a free one; read
    ``server.server_address``). Call ``serve_forever()`` on it; ``verbose`` logs each request.
    Raises :class:`~sttgym.viewer.page.NotARun` for a directory that is not a run, and
    ``OSError`` when the port cannot be bound."""
    page = _Page(Path(run_dir))
    server = _Server((host, port), _Handler)
    server.page, server.verbose = page, verbose
    return server
