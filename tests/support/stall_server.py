"""A stdlib-only HTTP server that answers /hello at once, except for one freeze.

--stall-after seconds after it starts listening, it stops answering for --stall-for seconds:
every request that arrives in that window is held until the window ends, as a server
frozen by a GC pause or a blocked event loop would hold it. A closed-loop client stalls
with it and records only a few slow requests; an open-loop client keeps its schedule, and
the requests it meant to send during the freeze show the wait (coordinated omission).
"""

from __future__ import annotations

import argparse
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BODY = b"Hello World!"


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that resets its connections at the end of its run is not news."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--stall-after", type=float, default=1.0, help="seconds after listening")
    parser.add_argument("--stall-for", type=float, default=1.0, help="seconds the freeze lasts")
    args = parser.parse_args()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out as two writes; with Nagle on, the second waits for the
        # client's delayed ACK (~40 ms), which would swamp the latencies this server is for.
        disable_nagle_algorithm = True

        def do_GET(self) -> None:
            wait = stall_end - time.monotonic()
            if time.monotonic() >= stall_start and wait > 0:
                time.sleep(wait)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            self.wfile.write(BODY)

        def log_message(self, *args: object) -> None:
            pass

    server = QuietServer(("127.0.0.1", args.port), Handler)
    # The clock starts once the port is bound, so a client started when the port answers
    # meets the freeze --stall-after seconds into its run.
    stall_start = time.monotonic() + args.stall_after
    stall_end = stall_start + args.stall_for
    server.serve_forever()


if __name__ == "__main__":
    main()
