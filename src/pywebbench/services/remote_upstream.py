"""The upstream role on its own host: the Go upstream API started there by the same service.

On the upstream host, `python -m pywebbench.services.remote_upstream WORK_DIR BINARY DELAY_S
SIZE` starts UpstreamService (on that host's loopback, as locally), says its port and
version in its ready line on the SSH channel (services/remote_role.py), and holds it until
SIGTERM. The app reaches it only through the app -> upstream link proxy on that host
(services/links.py), where the link's delay is added. On the harness side, `RemoteUpstream` starts it over SSH in its own process
group and reads that line, as `RemoteDb` does for the db role.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from pywebbench.services.upstream import UpstreamService
from pywebbench.services.remote_role import Channel, serve_until_stopped, start_role, stop_on_sigterm
from pywebbench.stage.ssh import RemoteProcess, SshConnection

UPSTREAM_PROBE = b"GET /?delay_ms=0 HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n"
"""An upstream request that does not wait: its round trip is the link's alone."""


@dataclass(frozen=True)
class RemoteUpstreamInfo:
    port: int
    """The upstream's port on its host's loopback."""
    version: str
    delay_s: float
    size_bytes: int


def main(argv: Sequence[str]) -> int:
    work_dir, binary, delay_s, size = Path(argv[0]), Path(argv[1]), float(argv[2]), int(argv[3])
    stop_on_sigterm()
    channel = Channel()
    work_dir.mkdir(parents=True, exist_ok=True)
    with UpstreamService(work_dir / "upstream", binary, delay_s, size, server="std") as up:
        serve_until_stopped(channel, {"port": up.port, "version": up.version})


class RemoteUpstream:
    """`with RemoteUpstream(conn, python, binary, work_dir, delay_s, size) as up:` -> up.info; stopped by its group."""

    def __init__(self, conn: SshConnection, python: str, binary: Path, work_dir: Path, delay_s: float,
                 size_bytes: int, ready_timeout_s: float = 30.0) -> None:
        self.conn = conn
        self.python = python
        self.binary = binary
        self.work_dir = work_dir
        self.delay_s = delay_s
        self.size_bytes = size_bytes
        self.ready_timeout_s = ready_timeout_s
        self._proc: RemoteProcess | None = None
        self.info: RemoteUpstreamInfo | None = None

    def __enter__(self) -> RemoteUpstream:
        self._proc, data = start_role(self.conn, self.python, "pywebbench.services.remote_upstream",
                                      [str(self.binary), repr(self.delay_s), str(self.size_bytes)], role="upstream",
                                      work_dir=self.work_dir, timeout_s=self.ready_timeout_s)
        self.info = RemoteUpstreamInfo(int(data["port"]), str(data["version"]), self.delay_s, self.size_bytes)
        return self

    @property
    def pid(self) -> int | None:
        """The role's process on its host (its group's leader), root of its services' tree."""
        return self._proc.pgid if self._proc is not None else None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._proc is not None:
            self._proc.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
