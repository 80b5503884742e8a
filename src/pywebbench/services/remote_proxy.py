"""The proxy role on its host: a private nginx in front of one launched app server.

On the proxy host, `python -m pywebbench.services.remote_proxy WORK_DIR UPSTREAM_HOST
UPSTREAM_PORT` starts NginxService (the same config as the local `--topology nginx`, on
that host's loopback) proxying to UPSTREAM_HOST:UPSTREAM_PORT, says its port and version in
its ready line on the SSH channel (services/remote_role.py) and holds it until SIGTERM. One
nginx per launched server: an interleaved launch keeps many servers up at once, and a fixed
upstream per nginx keeps each one's config what the local topology writes. The generators reach it through the
generator -> proxy link on that host; it reaches the app through the proxy -> app link
(or directly when the app runs on the same host).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from pywebbench.services.nginx import NginxService
from pywebbench.services.remote_role import Channel, serve_until_stopped, start_role, stop_on_sigterm
from pywebbench.stage.ssh import RemoteProcess, SshConnection


@dataclass(frozen=True)
class RemoteProxyInfo:
    port: int
    """nginx's port on its host's loopback."""
    version: str


def main(argv: Sequence[str]) -> int:
    work_dir, upstream_host, upstream_port = Path(argv[0]), argv[1], int(argv[2])
    stop_on_sigterm()
    channel = Channel()
    work_dir.mkdir(parents=True, exist_ok=True)
    with NginxService(work_dir / "nginx", upstream_port=upstream_port, upstream_host=upstream_host) as nginx:
        serve_until_stopped(channel, {"port": nginx.info.port, "version": nginx.info.version})


class RemoteProxy:
    """`with RemoteProxy(conn, python, work_dir, upstream_host, upstream_port) as proxy:` -> proxy.info."""

    def __init__(self, conn: SshConnection, python: str, work_dir: Path, upstream_host: str, upstream_port: int,
                 ready_timeout_s: float = 30.0) -> None:
        self.conn = conn
        self.python = python
        self.work_dir = work_dir
        self.upstream = (upstream_host, upstream_port)
        self.ready_timeout_s = ready_timeout_s
        self.process: RemoteProcess | None = None
        self.info: RemoteProxyInfo | None = None

    def __enter__(self) -> RemoteProxy:
        self.process, data = start_role(self.conn, self.python, "pywebbench.services.remote_proxy",
                                        [self.upstream[0], str(self.upstream[1])], role="proxy",
                                        work_dir=self.work_dir, timeout_s=self.ready_timeout_s)
        self.info = RemoteProxyInfo(int(data["port"]), str(data["version"]))
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.process is not None:
            self.process.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
