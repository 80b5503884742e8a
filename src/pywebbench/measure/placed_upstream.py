"""The upstream role across hosts: the Go upstream on its host, behind the app -> upstream link
when that host is not the app's, started again with another delay at an upstream_delay sweep
point (as the local backing restarts its own), the link kept at the same address."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

from pywebbench.measure.remote import free_port
from pywebbench.results.model import ServiceRecord
from pywebbench.services.links import LinkProxies
from pywebbench.services.remote_upstream import RemoteUpstream
from pywebbench.stage.ssh import SshConnection

LINK = "app-upstream"


class PlacedUpstream:
    """`start(delay)` (again at each new delay) -> its record; `url` is what the app calls."""

    def __init__(self, conn: SshConnection, python: str, binary: Path, work_dir: Path, size_bytes: int,
                 address: str, links: LinkProxies | None) -> None:
        self.conn = conn
        self.python = python
        self.binary = binary
        """The Go upstream, staged on its host."""
        self.work_dir = work_dir
        self.size_bytes = size_bytes
        self.address = address
        self.links = links
        """The upstream host's link proxies (None: the app's own host, reached on its loopback)."""
        self.link: str | None = None
        self.url = ""
        self.delay_s: float | None = None
        self.service: RemoteUpstream | None = None
        self._stack = ExitStack()

    def start(self, delay_s: float) -> ServiceRecord:
        """The upstream (again) with `delay_s`, the link re-pointed at it; what ran, for the results."""
        self._stack.close()
        self.service = None
        work = self.work_dir / f"upstream-{delay_s:g}"
        upstream = self._stack.enter_context(RemoteUpstream(self.conn, self.python, self.binary, work, delay_s,
                                                            self.size_bytes))
        assert upstream.info is not None
        self.service, self.delay_s = upstream, delay_s
        where = f"127.0.0.1:{upstream.info.port}"
        if self.links is not None:
            if self.link is None:
                listen = f"{self.address}:{free_port(self.conn, self.address)}"
            else:
                self.links.remove(LINK)
                listen = self.link
            self.link = where = self.links.add(LINK, listen, where).listen
        self.url = f"http://{where}/"
        return ServiceRecord("upstream (placed)", upstream.info.version, {
            "host": self.conn.name, "url": self.url, "delay_s": delay_s, "size_bytes": self.size_bytes,
            "server": "std", "log_dir": str(work)})

    def close(self) -> None:
        self._stack.close()
