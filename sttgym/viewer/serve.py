"""Serving the viewer's page on localhost with the standard library's HTTP server.

The page is rebuilt when the run's trajectories file changes, so reloading the browser shows the
episodes of a run still in progress; ``?page=N`` serves the pages of a run too large for one.
"""

from __future__ import annotations

import os
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from sttgym.viewer.page import NotARun, build_page

__all__ = ["make_server"]


class _Page:
    """The pages' bytes, each built again only when the trajectories file has changed (the last one built kept)."""

    def __init__(self, run_dir: Path):
        from sttgym.evaluation.runner import TRAJECTORIES

        self.run_dir, self.path = run_dir, run_dir / TRAJECTORIES
        self._lock, self._built = threading.Lock(), (None, None, b"")  # (stamp, page number, body)
        self.get()  # a directory that is not a run fails here, before anything listens

    def get(self, page: int = 1) -> bytes:
        try:
            stat = self.path.stat()
            stamp = (stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            stamp = None
        with self._lock:
            if self._built[:2] != (stamp, page):
                self._built = (stamp, page, build_page(self.run_dir, page).encode("utf-8"))
            return self._built[2]


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"

    def do_GET(self) -> None:  # noqa: N802 (the http.server API)
        where = urllib.parse.urlsplit(self.path)
        pages = urllib.parse.parse_qs(where.query).get("page", ["1"])
        if where.path not in ("/", "/index.html") or not pages[-1].isdigit() or len(pages[-1]) > 6:
            self.send_error(404, "the viewer serves one page, at / (?page=N for the pages of a large run)")
            return
        try:
            body = self.server.page.get(int(pages[-1]))
        except NotARun as exc:  # no such page
            self.send_error(404, str(exc))
            return
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
