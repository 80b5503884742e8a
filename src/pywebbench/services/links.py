"""Delayed links between roles: a Toxiproxy per host, a proxy per link, a latency toxic each.

This kernel has no netem (`tc qdisc add ... netem`: "Specified qdisc kind is unknown"), so a
user-space proxy carries each link and adds the delay. The whole round trip's delay sits on
the response direction (Toxiproxy's `downstream` stream): every request/response exchange
crosses it once, so one protocol round trip costs exactly the asked delay, in whole
milliseconds (Toxiproxy's unit). Its API listens on the proxy host's loopback only and is
driven over SSH (no remote API without authentication). What the delay really is gets
measured, not assumed: `measure_rtt` times small request/first-byte exchanges through a
proxy from the client's host. The proxy's own CPU is read from /proc on its host, so a
result can say what the mechanism cost.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from pywebbench.stage.ssh import RemoteProcess, SshConnection, SshError

MECHANISM = "toxiproxy latency toxic (downstream), no netem in this kernel"

_API = """
import json, sys, urllib.request
method, path, body = sys.argv[1], sys.argv[2], sys.argv[3]
req = urllib.request.Request("http://127.0.0.1:" + sys.argv[4] + path, data=body.encode() if body else None,
                             method=method, headers={"Content-Type": "application/json"})
try:
    print(urllib.request.urlopen(req, timeout=10).read().decode())
except urllib.error.HTTPError as exc:
    print(exc.read().decode(), file=sys.stderr); sys.exit(1)
"""

_FREE_PORT = "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"

_PING = """
import socket, sys, time
host, port, payload, count = sys.argv[1], int(sys.argv[2]), bytes.fromhex(sys.argv[3]), int(sys.argv[4])
times = []
for _ in range(count):
    with socket.create_connection((host, port), timeout=5) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        start = time.perf_counter()
        s.sendall(payload)
        if not s.recv(1):
            raise SystemExit("closed without answering")
        times.append(time.perf_counter() - start)
print(" ".join(repr(t) for t in times))
"""

PG_SSL_REQUEST = bytes.fromhex("0000000804d2162f")
"""PostgreSQL's SSLRequest: pgbouncer answers one byte ('N'), a round trip with no work behind it."""
HTTP_PROBE = b"GET /hello HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n"
NGINX_PROBE = b"GET /static HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n"
"""What nginx answers itself (its static baseline): the generator -> proxy round trip without the
proxy -> app link and the app behind it."""


@dataclass(frozen=True)
class Link:
    name: str
    listen: str
    """address:port the clients of this link connect to (on the proxy's host)."""
    upstream: str


@dataclass(frozen=True)
class RttMeasurement:
    median_s: float
    min_s: float
    samples: int


class LinkProxies:
    """Toxiproxy on one host: `with LinkProxies(conn, binary, work_dir) as proxies: proxies.add(...)`."""

    def __init__(self, conn: SshConnection, binary: str, work_dir: Path) -> None:
        self.conn = conn
        self.binary = binary
        self.work_dir = work_dir
        self.api_port = 0
        self.links: dict[str, Link] = {}
        self.rtt_ms = 0
        self._proc: RemoteProcess | None = None

    def __enter__(self) -> LinkProxies:
        self.api_port = int(self.conn.run(["python3", "-c", _FREE_PORT], timeout=15).stdout.strip())
        self._proc = self.conn.spawn([self.binary, "-host", "127.0.0.1", "-port", str(self.api_port)],
                                     name=f"toxiproxy-{self.conn.name}", remote_dir=str(self.work_dir),
                                     local_log_dir=self.work_dir, env={"PATH": "/usr/bin:/bin"}, grace_s=2.0)
        for _ in range(100):
            if self._call("GET", "/version", check=False) is not None:
                return self
            if self._proc.poll() is not None:
                break
        self._proc.stop()
        raise SshError(f"toxiproxy did not start on {self.conn.name}")

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._proc is not None:
            self._proc.stop()

    def _call(self, method: str, path: str, body: object = None, *, check: bool = True) -> str | None:
        done = self.conn.run(["python3", "-c", _API, method, path, json.dumps(body) if body is not None else "",
                              str(self.api_port)], check=False, timeout=20)
        if done.returncode != 0:
            if check:
                raise SshError(f"toxiproxy on {self.conn.name}: {method} {path}: {done.stderr.strip()[-200:]}")
            return None
        return done.stdout

    def add(self, name: str, listen: str, upstream: str) -> Link:
        """A proxy from `listen` (on this host) to `upstream`, with a latency toxic at this host's delay."""
        self._call("POST", "/proxies", {"name": name, "listen": listen, "upstream": upstream, "enabled": True})
        self._call("POST", f"/proxies/{name}/toxics", {"name": "delay", "type": "latency", "stream": "downstream",
                                                        "toxicity": 1.0, "attributes": {"latency": self.rtt_ms, "jitter": 0}})
        link = Link(name, listen, upstream)
        self.links[name] = link
        return link

    def set_rtt(self, rtt_s: float) -> None:
        """Every link of this host delayed by `rtt_s` per round trip (whole milliseconds)."""
        ms = round(rtt_s * 1000)
        self.rtt_ms = ms
        for name in self.links:
            self._call("POST", f"/proxies/{name}/toxics/delay", {"attributes": {"latency": ms, "jitter": 0}})

    def remove(self, name: str) -> None:
        """The link's proxy deleted (its server stopped): its port is free again."""
        self.links.pop(name, None)
        self._call("DELETE", f"/proxies/{name}")

    def cpu_seconds(self) -> float:
        """The proxy's CPU time so far (user + system), from /proc on its host."""
        if self._proc is None or self._proc.pgid is None:
            return 0.0
        done = self.conn.run(["sh", "-c", f"cat /proc/{self._proc.pgid}/stat; getconf CLK_TCK"], timeout=15)
        stat, ticks = done.stdout.strip().rsplit("\n", 1)
        fields = stat.rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / int(ticks)


def measure_rtt(client: SshConnection, listen: str, payload: bytes, count: int = 20) -> RttMeasurement:
    """Request-to-first-byte times through `listen`, from the client's host (connects excluded)."""
    host, port = listen.rsplit(":", 1)
    done = client.run(["python3", "-c", _PING, host, port, payload.hex(), str(count)], timeout=60)
    times = [float(t) for t in done.stdout.split()]
    return RttMeasurement(statistics.median(times), min(times), len(times))
