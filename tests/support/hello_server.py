"""A stdlib-only HTTP server standing in for a stack in fast runner tests.

--mode ok: answers /hello like every benchmark app; wrong: answers with the wrong body;
die: exits at start with a message on stderr; fork: forks a child that also lingers, to
prove the whole process group is stopped.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--mode", default="ok", choices=["ok", "wrong", "die", "fork"])
    args = parser.parse_args()
    if args.mode == "die":
        print("boom: cannot import the app", file=sys.stderr)
        sys.exit(3)
    if args.mode == "fork" and os.fork() == 0:
        while True:  # a worker that only a group kill reaches
            time.sleep(1)
    body = b"Hello World!" if args.mode != "wrong" else b"Hello, World"

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms ACK wait between them

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
