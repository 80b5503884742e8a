"""The proxy role across hosts: nginx on its host between the generators and one launched server.

The load path is generator -> (gen-proxy link) -> nginx on the proxy host -> (proxy-app
link) -> the server on the app host; both links are Toxiproxy proxies on the proxy host with
the point's delay, like every link between hosts. When the proxy role shares the app host,
nginx talks to the server directly (nothing is crossed). nginx's CPU on its host is read
from its process group when the server's front closes, and recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from pywebbench.measure.launchers import RunningServer
from pywebbench.measure.remote import group_usage
from pywebbench.results.model import ServiceRecord
from pywebbench.services.links import HTTP_PROBE, NGINX_PROBE, LinkProxies, RttMeasurement, measure_rtt
from pywebbench.services.remote_proxy import RemoteProxy
from pywebbench.stage.ssh import SshConnection, SshError

_FREE_PORT = "import socket,sys; s=socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1])"


@dataclass(frozen=True)
class ProxyHost:
    name: str
    address: str
    conn: SshConnection
    links: LinkProxies
    shares_app_host: bool


@contextmanager
def proxied_front(proxy: ProxyHost, server: RunningServer, name: str, *, python: str, work_dir: Path,
                  generator: SshConnection | None, on_rtt: Callable[[str, RttMeasurement, str], None],
                  on_record: Callable[[ServiceRecord], None]) -> Iterator[tuple[str, int]]:
    """nginx on the proxy host in front of `server`: yields where the generators send the load."""
    conn = proxy.conn
    with ExitStack() as stack:
        upstream = (server.host, server.port)
        if not proxy.shares_app_host:
            inner = proxy.links.add(f"proxy-app-{name}", f"127.0.0.1:{_free_port(conn, '127.0.0.1')}",
                                    f"{server.host}:{server.port}")
            stack.callback(_remove, proxy.links, inner.name)
            upstream = ("127.0.0.1", int(inner.listen.rsplit(":", 1)[1]))
            on_rtt(inner.name, measure_rtt(conn, inner.listen, HTTP_PROBE, count=10), proxy.name)
        nginx = stack.enter_context(RemoteProxy(conn, python, work_dir / name, *upstream))
        assert nginx.info is not None and nginx.process is not None
        stack.callback(_record_usage, nginx, proxy, name, upstream, on_record)  # before nginx stops
        port = _free_port(conn, proxy.address)
        outer = proxy.links.add(f"gen-proxy-{name}", f"{proxy.address}:{port}", f"127.0.0.1:{nginx.info.port}")
        stack.callback(_remove, proxy.links, outer.name)
        if generator is not None:  # measured from a generator host, as the load crosses it
            on_rtt(outer.name, measure_rtt(generator, outer.listen, NGINX_PROBE, count=10), generator.name)
        yield proxy.address, port


def _record_usage(nginx: RemoteProxy, proxy: ProxyHost, name: str, upstream: tuple[str, int],
                  on_record: Callable[[ServiceRecord], None]) -> None:
    assert nginx.info is not None and nginx.process is not None
    pgid = nginx.process.pgid
    usage = group_usage(proxy.conn, pgid) if pgid is not None else None
    on_record(ServiceRecord("proxy (placed)", nginx.info.version, {
        "host": proxy.name, "server": name, "upstream": f"{upstream[0]}:{upstream[1]}",
        "cpu_s": usage.cpu_s if usage is not None else None,
        "rss_mb": usage.rss_mb if usage is not None else None,
        "cpu_note": "nginx's process group on its host, from its start to the end of the server's last window",
    }))


def _remove(links: LinkProxies, name: str) -> None:
    try:
        links.remove(name)
    except SshError:
        pass  # the link proxy itself is stopped with the run


def _free_port(conn: SshConnection, address: str) -> int:
    return int(conn.run(["python3", "-c", _FREE_PORT, address], timeout=15).stdout.strip())
