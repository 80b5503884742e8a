"""What a connection-shape window measured beside its rate and latency (loadgen/shapes.py reads
it from the Go driver): the connections it asked for, held, saw refused and saw closed, the file
limits it ran with, and for idle the server's memory before and once the idle ones were open."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ShapeFigures:
    tool: str
    """The driver that measured it: `shapes idle`, `shapes sse`, `shapes wsecho`."""
    asked: int
    """Connections asked for: the window's --connections (idle's idle ones, sse's clients)."""
    held: int
    """Still open at the window's end."""
    refused: int
    """Never established: the connect failed, the first answer never came or came with a close."""
    closed: int
    """Closed by the server while held (a keep-alive timeout, a worker that gave up)."""
    open_s: float
    """Seconds it took to open them, before the window."""
    nofile: int
    """The driver's file limit (RLIMIT_NOFILE) as it ran, raised to fit the connections."""
    server_nofile: int | None = None
    """The server's file limit as it ran (/proc/PID/limits of its first process; None: not read)."""
    rss_base_kb: int | None = None
    """The server's RSS (its process tree) before any idle connection was opened; None unread."""
    rss_held_kb: int | None = None
    """... once all of them were open."""
    rss_end_kb: int | None = None
    """... at the window's end."""
    sock_pages_base: int | None = None
    """The kernel's TCP socket memory (/proc/net/sockstat `mem`, pages) before they were opened."""
    sock_pages_held: int | None = None
    tcp_inuse_base: int | None = None
    """TCP sockets in use, machine-wide (client and server ends both count on one host)."""
    tcp_inuse_held: int | None = None
    page_kb: int = 4
    """The kernel's page size, for sockstat's pages."""

    @property
    def opened(self) -> int:
        return self.asked - self.refused

    @property
    def rss_per_connection_kb(self) -> float | None:
        """The server's RSS per idle connection: (held - base) / opened."""
        if self.rss_base_kb is None or self.rss_held_kb is None or self.opened <= 0:
            return None
        return (self.rss_held_kb - self.rss_base_kb) / self.opened

    @property
    def socket_kb_per_connection(self) -> float | None:
        """Kernel socket memory per idle connection, both ends of it (one host): (held - base) / opened."""
        if self.sock_pages_base is None or self.sock_pages_held is None or self.opened <= 0:
            return None
        return (self.sock_pages_held - self.sock_pages_base) * self.page_kb / self.opened
