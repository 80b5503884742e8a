"""A plain HTTP server standing where an app stands behind nginx: it answers every GET with its
name ("behind"), on a free port of 127.0.0.1, in a thread of the test."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from pywebbench.measure.launchers import RunningServer


@contextmanager
def behind_server(*, http11: bool = False) -> Iterator[RunningServer]:
    """`http11`: keep-alive HTTP/1.1, as nginx's proxy speaks to an app; else http.server's HTTP/1.0."""
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if http11 else "HTTP/1.0"

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "6")
            self.end_headers()
            self.wfile.write(b"behind")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield RunningServer(server.server_address[1], (), lambda: True, lambda: "")
    finally:
        server.shutdown()
        server.server_close()
