"""A private nginx: `GET /static` as the machine's baseline, and optionally a proxy to the app.

It listens in the protocol asked for (catalog/protocols.py): h1, h2c by prior knowledge (`listen
... http2`), or TLS with the run's certificate (`ssl`, and `http2` for h2-tls, offered by ALPN),
and proxies HTTP/1.1 keep-alive to the app whatever it speaks to the client. nginx 1.22 answers
only HTTP/2 on an h2c port (an HTTP/1.1 request gets nothing it can read), so an h2c nginx also
listens in HTTP/1.1 on a second port, the same server, for its readiness and the harness's checks.
"""

from __future__ import annotations

import grp
import http.client
import os
import pwd
import ssl
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from pywebbench.catalog.protocols import Protocol, TlsFiles
from pywebbench.stage.tools import locate
from pywebbench.core.procs import ManagedProcess, free_port
from pywebbench.services import Service, HOST, tool_output, wait_until

BINARY = locate("nginx") or "/usr/sbin/nginx"  # where doctor looks too
STATIC_PATH = "/static"
DEFAULT_STATIC_BODY = b"Hello World!"
READY_TIMEOUT_S = 20.0
_TEMP_DIRS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")


@dataclass(frozen=True)
class NginxInfo:
    """What a started nginx exposes, and what a result records about it."""

    host: str
    port: int
    version: str
    config_text: str  # the nginx.conf we wrote
    workers: int
    upstream_port: int | None
    protocol: Protocol = Protocol.H1
    """What `port` speaks to the client (the upstream is HTTP/1.1 in the clear whatever it is)."""
    check_port: int | None = None
    """Where it answers HTTP/1.1 (over TLS if `protocol` is TLS): `port` itself, but an h2c's second port."""

    @property
    def static_url(self) -> str:
        return f"{self.protocol.scheme}://{self.host}:{self.port}{STATIC_PATH}"

    @property
    def h1_port(self) -> int:
        """The port the harness's HTTP/1.1 checks ask."""
        return self.port if self.check_port is None else self.check_port


class NginxService(Service[NginxInfo]):
    """`with NginxService(work_dir, static_body=b"...", upstream_port=app_port) as nginx:`."""

    what = "nginx"

    def __init__(
        self,
        work_dir: Path,
        *,
        static_body: bytes | None = None,
        upstream_port: int | None = None,
        upstream_host: str = HOST,
        workers: int = 1,
        upstream_keepalive: int = 1024,
        protocol: Protocol = Protocol.H1,
        tls: TlsFiles | None = None,
    ) -> None:
        super().__init__()
        if workers < 0:  # 0: worker_processes auto (workers=auto), nginx's own count
            raise ValueError(f"workers must be >= 0, got {workers}")
        if protocol.tls and tls is None:
            raise ValueError(f"nginx over {protocol.value} needs the run's certificate and key")
        self.protocol = protocol
        self.tls = tls if protocol.tls else None
        self.work_dir = work_dir.resolve()  # nginx reads -p/-c/-e relative to its prefix
        self.static_body = DEFAULT_STATIC_BODY if static_body is None else static_body
        self.upstream_port = upstream_port
        self.upstream_host = upstream_host
        """Where the app listens: loopback here, the app host's address when nginx is placed on a host."""
        self.workers = workers
        self.upstream_keepalive = upstream_keepalive
        self._argv: list[str] = []

    def __enter__(self) -> NginxService:
        with ExitStack() as stack:
            for name in _TEMP_DIRS:
                (self.work_dir / "temp" / name).mkdir(parents=True, exist_ok=True)
            (self.work_dir / "static.txt").write_bytes(self.static_body)
            port = free_port(HOST)
            check = free_port(HOST) if self.protocol is Protocol.H2C else port
            text = self.render_config(port, check)
            conf = self.work_dir / "nginx.conf"
            conf.unlink(missing_ok=True)
            conf.touch(mode=0o600)  # the master reads it as us; no one else needs to
            conf.write_text(text)
            # -p/-c/-e: prefix, config and the startup error log all ours; without -e nginx
            # first opens its compiled-in /var/log/nginx/error.log.
            argv = [BINARY, "-p", str(self.work_dir), "-c", str(conf), "-e", str(self.work_dir / "error.log")]
            proc = ManagedProcess(argv, env={}, log_dir=self.work_dir, name="nginx")
            stack.enter_context(proc)
            self._proc = proc
            self._argv = argv
            self._pids.append(proc.pid)
            wait_until(lambda: _serves(check, len(self.static_body), self.tls is not None), proc=proc,
                       timeout_s=READY_TIMEOUT_S, what="nginx", log=self.work_dir / "error.log")
            self._info = NginxInfo(HOST, port, tool_output([BINARY, "-v"]), text, self.workers, self.upstream_port,
                                   self.protocol, None if check == port else check)
            self._stack = stack.pop_all()
        return self

    def restart(self) -> str:
        """The same config and port; a killed master leaves its workers behind, stopped with its group."""
        info = self.info
        proc = self._replace(ManagedProcess(self._argv, env={}, log_dir=self.work_dir,
                                            name=f"nginx-restart{self._restarts + 1}"))
        wait_until(lambda: _serves(info.h1_port, len(self.static_body), self.tls is not None), proc=proc,
                   timeout_s=READY_TIMEOUT_S, what="nginx", log=self.work_dir / "error.log")
        return f"from its config, port {info.port}"

    def render_config(self, port: int, check_port: int | None = None) -> str:
        """nginx.conf listening on `port` in the service's protocol (and in HTTP/1.1 on
        `check_port` as well, where it differs: an h2c port answers HTTP/2 only)."""
        work = self.work_dir
        temp = work / "temp"
        # As root, workers would default to `nobody`, who may not reach work_dir; they run as
        # the harness's own user instead, like the app servers do.
        user = f"user {_current_user()};\n" if os.geteuid() == 0 else ""
        upstream, proxy = self._proxy_blocks()
        return f"""\
# Written by pywebbench for a private nginx; every run rewrites it.
{user}daemon off;
master_process on;
worker_processes {self.workers or "auto"};
pid {work / "nginx.pid"};
error_log {work / "error.log"} warn;

events {{
    worker_connections 10240;
}}

http {{
    access_log off;
    client_body_temp_path {temp / "client_body"};
    proxy_temp_path {temp / "proxy"};
    fastcgi_temp_path {temp / "fastcgi"};
    uwsgi_temp_path {temp / "uwsgi"};
    scgi_temp_path {temp / "scgi"};
    types {{ }}
    default_type application/octet-stream;
    sendfile on;
    tcp_nodelay on;
    keepalive_timeout 75s;
    # The default (1000) would make the load generator reconnect every 1000 requests.
    keepalive_requests 1000000;
{upstream}
    server {{
{self._listen(port, check_port)}        server_name localhost;

        location = {STATIC_PATH} {{
            alias {work / "static.txt"};
            default_type "text/plain; charset=utf-8";
        }}
{proxy}    }}
}}
"""

    def _proxy_blocks(self) -> tuple[str, str]:
        """The upstream and the location that proxies to the app (HTTP/1.1, kept alive), or none."""
        upstream = proxy = ""
        if self.upstream_port is not None:
            upstream = f"""
    upstream app {{
        server {self.upstream_host}:{self.upstream_port};
        # Idle connections kept per worker: above the load's concurrency, nginx would close
        # and reopen app connections mid-run.
        keepalive {self.upstream_keepalive};
        keepalive_requests 1000000;
    }}
"""
            proxy = """
        location / {
            proxy_pass http://app;
            # Keep-alive to the app: HTTP/1.1 and no "Connection: close" from nginx.
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
        }
"""
        return upstream, proxy

    def _listen(self, port: int, check_port: int | None) -> str:
        flags = "".join(f" {flag}" for flag, on in (("ssl", self.protocol.tls), ("http2", self.protocol.http2)) if on)
        lines = f"        listen {HOST}:{port}{flags} backlog=4096;\n"
        if self.protocol is Protocol.H2C:
            if check_port is not None and check_port != port:
                lines += f"        listen {HOST}:{check_port} backlog=4096;\n"  # HTTP/1.1, for the checks
            # nginx 1.22's HTTP/2 in the clear with sendfile stalls each answer about 40 ms (184 req/s
            # at 8 connections against 8,000 without it, measured here): its DATA frames go out
            # from memory instead.
            lines += "        sendfile off;\n"
        if self.tls is not None:
            # The run's own certificate (stage/tls.py); h2load verifies none. Sessions are not
            # resumed: each of a window's connections makes its full handshake once, at its start.
            lines += (f"        ssl_certificate {self.tls.certificate};\n"
                      f"        ssl_certificate_key {self.tls.key};\n"
                      "        ssl_protocols TLSv1.2 TLSv1.3;\n")
        return lines


def _current_user() -> str:
    return f"{pwd.getpwuid(os.geteuid()).pw_name} {grp.getgrgid(os.getegid()).gr_name}"


def _serves(port: int, length: int, tls: bool = False) -> bool:
    conn = http.client.HTTPConnection(HOST, port, timeout=2)
    if tls:  # the run's self-signed certificate, not verified (as h2load and the checks do not)
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        conn = http.client.HTTPSConnection(HOST, port, timeout=2, context=context)
    try:
        conn.request("GET", STATIC_PATH)
        response = conn.getresponse()
        return response.status == 200 and len(response.read()) == length
    except OSError:
        return False
    finally:
        conn.close()

