"""Requests a local server still holds after its window: its accept queue and open connections.

Closing the generator's connections does not empty a server's queue: a sync worker blocked on a
slow upstream keeps serving, one by one, the requests the window's connections left queued in
its accept backlog (seed 003: a flask:gunicorn-sync `upstream` window completed 17 requests and
the same server's next window completed none). Such a backlog waits on I/O, so the servers' CPU
does not show it; the kernel's socket table does. Every server-side connection on the server's
port in ESTABLISHED or SYN_RECV is a request queued for the server or in its hands: the table
lists a connection waiting in the accept queue as ESTABLISHED already (the listening socket's
rx_queue counts the same ones again). CLOSE_WAIT is one whose client has gone: it counts while
its receive queue still holds request bytes the server has not read (a request queued behind others);
one the server has read to the end is answered or being answered. bjoern is the case this cannot
tell: it leaves a closed client's last request unread for good (measured: 34-36 CLOSE_WAIT
connections holding 47 bytes each after wrk -c100), which the waits' stall rules end.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
ESTABLISHED, SYN_RECV, CLOSE_WAIT = "01", "03", "08"
HELD = frozenset({ESTABLISHED, SYN_RECV, CLOSE_WAIT})


def pending(ports: Iterable[int], tables: Iterable[Path] = TABLES) -> int:
    """Connections queued for or held by whatever listens on these local ports."""
    return sum(pending_by_port(ports, tables).values())


def pending_by_port(ports: Iterable[int], tables: Iterable[Path] = TABLES) -> dict[int, int]:
    """The same, per port (only ports with some)."""
    wanted = {f"{port:04X}": port for port in ports}
    found: dict[int, int] = {}
    if not wanted:
        return found
    for table in tables:
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 5:
                continue
            port = wanted.get(fields[1].rsplit(":", 1)[-1])
            if port is not None and _queued(fields[3], fields[4]):
                found[port] = found.get(port, 0) + 1
    return found


def _queued(state: str, queues: str) -> bool:
    """A server-side connection that is work still to do (the module's docstring)."""
    if state == CLOSE_WAIT:
        # rx_queue counts the client's FIN as one byte until the server reads the end of stream.
        return int(queues.rsplit(":", 1)[-1], 16) > 1
    return state in HELD
