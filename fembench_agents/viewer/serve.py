"""`view --serve`: the written site over HTTP on loopback, for browsers or
tools that prefer http:// to file://. Never listens beyond 127.0.0.1."""

from __future__ import annotations

import functools
import os
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class names it so
        pass


def site_server(directory: str | os.PathLike[str], port: int = 0) -> ThreadingHTTPServer:
    """A server for `directory` on 127.0.0.1 (`port` 0: any free port); the
    caller runs `serve_forever()` and closes it."""
    handler = functools.partial(_QuietHandler, directory=os.fspath(directory))
    return ThreadingHTTPServer(("127.0.0.1", port), handler)
