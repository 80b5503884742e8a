"""Roles on their hosts for one run (`--hosts`, `--topology netns`): what the runner asks of them.

A `HostPlacement` opens one SSH connection per host, starts the db role (PostgreSQL and
pgbouncer, services/remote_db.py) and the upstream role (the Go upstream API,
services/remote_upstream.py) on their hosts, each in its own process group stopped with the
run, and puts a Toxiproxy link in front of each thing crossed between hosts: app -> db on the
db host, app -> upstream on the upstream host (the app's PWB_UPSTREAM_URL names the link),
generator -> app on the app host (one proxy per launched server, so every generator host
reaches it at the same address). A role no host takes runs on the app host, reached on its
loopback without a link. With `--topology nginx` the proxy role puts one nginx per launched
server on its host, between a generator -> proxy and a proxy -> app link
(measure/placed_proxy.py). Every link goes through its proxy at every sweep point, 0 ms included, so points differ only by
the delay. The runner asks it for the app's launcher (`RemoteLauncher`), for the address the
load goes to (`front`), and at each launch for the point's delay (`retune`), which it sets on
every link and then measures; each measurement is a service record of the results.

Before a role starts on its host, what it runs is staged there (stage/staging.py, one
`HostStage` per host): Toxiproxy, the Go upstream, pywebbench's source and the roles' python,
and at each launch the stack's environment and the apps.

The app's CPU is read on its host (measure/remote.py: its process group in /proc at the
window's edges); #DB is sampled on the db host (services/remote_db.py), with one pgbouncer
database per lane as locally, and a max_db_sessions sweep starts pgbouncer again there with
each point's cap. What is not wired yet, and said so in the results' placement record: the
upstream's ceiling on its host. The generator role is
measure/placed_load.py.
"""

from __future__ import annotations

import platform
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pywebbench.loadgen.base import LoadGenerator
from pywebbench.loadgen.remote import RemoteWrk
from pywebbench.measure.ceiling import no_ceiling
from pywebbench.measure.placed_load import PlacedGenerator
from pywebbench.measure.placed_proxy import ProxyHost, proxied_front
from pywebbench.measure.placed_upstream import PlacedUpstream
from pywebbench.measure.accounting import GroupUsage
from pywebbench.measure.launchers import RunningServer
from pywebbench.catalog.servers import APPS_DIR
from pywebbench.measure.roles import Front, LoadSettings, LoadTools
from pywebbench.measure.remote import RemoteLauncher, free_port, machine_info, tree_usage
from pywebbench.plan.hosts import Role
from pywebbench.plan.sessions import Session
from pywebbench.results.model import ServiceRecord
from pywebbench.services.links import HTTP_PROBE, MECHANISM, PG_SSL_REQUEST, LinkProxies, RttMeasurement, measure_rtt
from pywebbench.services.remote_db import RemoteDb, RemotePeak
from pywebbench.services.remote_upstream import UPSTREAM_PROBE
from pywebbench.stage.envs import cache_root
from pywebbench.stage.ssh import SshConnection, SshError, SshTarget
from pywebbench.stage.staging import HostStage

APP_CPU = ("the app's CPU read over SSH on its host, from /proc for its server's process group at each window's "
           "edges (RSS at the window's end, not a peak); the db and upstream roles' likewise for each role's whole "
           "process tree on its host (roles db and upstream); the generators' from wrk's own rusage")


@dataclass(frozen=True)
class PlacedHost:
    """A host of the run and the roles it takes."""

    name: str
    address: str
    roles: tuple[Role, ...]
    target: SshTarget
    uv: str | None = None
    """Where uv is on that host (None: found on its PATH or in ~/.local/bin, ~/.cargo/bin)."""
    offline: bool = False
    """No route to a package index (the netns rig): uv builds there from its cache."""


@dataclass(frozen=True)
class UpstreamRole:
    """The upstream the app's /upstream calls, started on the upstream role's host."""

    binary: Path
    """The Go upstream built here (stage/reference), staged onto its host."""
    delay_s: float
    size_bytes: int


@dataclass(frozen=True)
class PlacementConfig:
    needs_db: bool
    db_rows: int
    db_sessions: int
    rtt_s: float
    """The delay of a point that sets none (--rtt, or 0)."""
    toxiproxy: Path
    upstream: UpstreamRole | None = None
    """Set when a workload calls the upstream."""
    proxy: bool = False
    """nginx in front of each server (--topology nginx), on the proxy role's host."""
    db_lanes: int = 1
    """pgbouncer database entries, one per server live at once (the local backing's lanes)."""
    db_largest_cap: int | None = None
    """The largest max_db_sessions a sweep sets (PostgreSQL's limit on the db host is sized for it)."""


class HostPlacement:
    """`with HostPlacement(hosts, work_dir, config) as placed:` every role's host reached and ready
    (the runner's `Placement` across hosts, measure/roles.py)."""

    def __init__(self, hosts: Sequence[PlacedHost], work_dir: Path, config: PlacementConfig,
                 mode: str) -> None:
        self.hosts = tuple(hosts)
        self.work_dir = work_dir
        self.config = config
        self.mode = mode
        """netns or hosts: how the hosts were made."""
        self.conns: dict[str, SshConnection] = {}
        self.machines: dict[str, dict[str, Any]] = {}
        self.db_link: str | None = None
        self._dsn: str | None = None
        self._remote_db: RemoteDb | None = None
        self._upstream: PlacedUpstream | None = None
        self._db_links: LinkProxies | None = None
        self._app_links: LinkProxies | None = None
        self._proxy_links: LinkProxies | None = None
        self._stack = ExitStack()
        self.stages: dict[str, HostStage] = {}
        self._rtt_s: float | None = None
        self._point = ""
        self.pending: list[ServiceRecord] = []
        self.on_record: Callable[[ServiceRecord], None] = self.pending.append
        """Where records made when a server's front closes go (execute sets the results writer)."""
        self.generators: tuple[RemoteWrk, ...] = ()

    def host_of(self, role: Role) -> PlacedHost:
        found = [h for h in self.hosts if role in h.roles]
        return found[0] if found else self.host_of(Role.APP)

    def __enter__(self) -> HostPlacement:
        try:
            self._open()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _open(self) -> None:
        control = Path(tempfile.mkdtemp(prefix="pwb-ssh-"))  # a socket path must be short
        self._stack.callback(shutil.rmtree, control, True)
        for host in self.hosts:
            self.conns[host.name] = self._stack.enter_context(SshConnection(host.target, control, host.name))
            self.stages[host.name] = HostStage(self.conns[host.name], host.uv, offline=host.offline)
        for host in self.hosts:
            self.machines[host.name] = {"address": host.address, "roles": [r.value for r in host.roles],
                                        **machine_info(self.conns[host.name])}
        _same_arch(self.machines)
        app, db = self.host_of(Role.APP), self.host_of(Role.DB)
        links = self.work_dir / "links"
        proxy = self.host_of(Role.PROXY) if self.config.proxy else app
        if self.config.proxy:
            self._role_python(proxy.name)  # staged now, so the placement record lists it
            self._proxy_links = self._stack.enter_context(
                LinkProxies(self.conns[proxy.name], self._toxiproxy(proxy.name), links / "proxy"))
        if self.config.needs_db:
            db_dir = Path(tempfile.mkdtemp(prefix="pwb-db-"))
            db_dir.chmod(0o755)  # PostgreSQL's own user must reach its directory
            self._stack.callback(shutil.rmtree, db_dir, True)
            conn = self.conns[db.name]
            remote_db = self._stack.enter_context(RemoteDb(conn, self._role_python(db.name), db_dir, self.config.db_rows,
                                                           self.config.db_sessions, lanes=self.config.db_lanes,
                                                           largest_cap=self.config.db_largest_cap))
            self._remote_db = remote_db
            assert remote_db.info is not None
            self._db_links = self._stack.enter_context(LinkProxies(conn, self._toxiproxy(db.name), links / "db"))
            port = free_port(conn, db.address)
            link = self._db_links.add("app-db", f"{db.address}:{port}", f"127.0.0.1:{remote_db.info.port}")
            self.db_link = link.listen
            self._dsn = remote_db.info.dsn.replace(f"@127.0.0.1:{remote_db.info.port}/", f"@{link.listen}/")
        if self.config.upstream is not None:
            self._start_upstream(self.config.upstream, links)
        self._app_links = self._stack.enter_context(
            LinkProxies(self.conns[app.name], self._toxiproxy(app.name), links / "app"))
        self.generators = tuple(RemoteWrk(self.conns[h.name], str(self.work_dir / "generators" / h.name))
                                for h in self.hosts if Role.GENERATOR in h.roles)

    def _start_upstream(self, role: UpstreamRole, links: Path) -> None:
        """The upstream on its host; across hosts, behind the app -> upstream link there."""
        host, app = self.host_of(Role.UPSTREAM), self.host_of(Role.APP)
        conn = self.conns[host.name]
        proxies = None if host.name == app.name else self._stack.enter_context(
            LinkProxies(conn, self._toxiproxy(host.name), links / "upstream"))
        upstream = PlacedUpstream(conn, self._role_python(host.name), Path(self.stages[host.name].file(role.binary)),
                                  self.work_dir, role.size_bytes, host.address, proxies)
        self._stack.callback(upstream.close)
        self._upstream = upstream
        self.pending.append(upstream.start(role.delay_s))

    def _toxiproxy(self, host: str) -> str:
        return self.stages[host].file(self.config.toxiproxy)

    def _role_python(self, host: str) -> str:
        return self.stages[host].role_python()

    def staged(self) -> list[dict[str, object]]:
        return [item for stage in self.stages.values() for item in stage.staged]

    # -- what the runner asks ------------------------------------------------------------------

    def load_tools(self, generator: LoadGenerator, settings: LoadSettings) -> LoadTools:
        """wrk on the generator hosts instead of `generator`; no ceiling (nginx on this machine says
        nothing of theirs). The placement record goes to the results now, later ones as made."""
        self.attach(settings.on_record)
        placed = PlacedGenerator(self.generators)
        return LoadTools(placed, placed.settle, no_ceiling)

    def reenroll(self) -> None:
        pass  # the roles on other hosts are read there by process group, not enrolled here

    def app_environment(self, env: dict[str, str]) -> dict[str, str]:
        """The app's environment with its DSN and upstream URL through their links (or its host's loopback)."""
        dsn = self._dsn
        if dsn is not None and "PWB_DSN" in env:  # the lane's own database entry, as the local DSN names it
            dsn = dsn.rsplit("/", 1)[0] + "/" + env["PWB_DSN"].rsplit("/", 1)[1]
        placed = {"PWB_DSN": dsn, "PWB_UPSTREAM_URL": self._upstream.url if self._upstream is not None else None}
        return {**env, **{k: v for k, v in placed.items() if v is not None and k in env}}

    def usage(self, server: RunningServer) -> dict[str, GroupUsage]:
        """The app's server (its process group on the app host) and the db and upstream roles
        (each role's whole process tree) so far on their hosts; a role unread is left out."""
        app = server.group_usage() if server.group_usage is not None else None
        out: dict[str, GroupUsage] = {"app": app} if app is not None else {}
        remote_upstream = self._upstream.service if self._upstream is not None else None
        for role, service, where in (("db", self._remote_db, Role.DB), ("upstream", remote_upstream, Role.UPSTREAM)):
            pid = service.pid if service is not None else None
            usage = tree_usage(self.conns[self.host_of(where).name], pid) if pid is not None else None
            if usage is not None:
                out[role] = usage
        return out

    def reset_pool(self) -> None:
        """Seed 000's habit on the db host: the next launch starts from an empty pool."""
        if self._remote_db is not None:
            self._remote_db.reset_pool()

    def db_peak(self, lane: int | None) -> RemotePeak | None:
        """Seed 000's #DB for one window, sampled on the db host (None: no db role)."""
        return self._remote_db.peak(lane) if self._remote_db is not None else None

    def launcher(self, session: Session, env_path: Path | None) -> RemoteLauncher:
        if env_path is None:
            raise RuntimeError(f"{session.stack.id} is a native server: only Python stacks run on another host yet")
        app = self.host_of(Role.APP)
        stage = self.stages[app.name]
        before = len(stage.staged)
        remote_env = stage.environment(env_path, cache_root() / "wheelhouse")
        apps = stage.tree(APPS_DIR, "apps")
        if len(stage.staged) > before:
            self.pending.append(ServiceRecord("staging", "ssh", {"staged": stage.staged[before:]}))
        return RemoteLauncher(self.conns[app.name], app.address, f"{remote_env}/bin/python",
                              str(self.work_dir / "app"), Path(remote_env),
                              paths=((str(env_path), remote_env), (str(APPS_DIR), apps)))

    @contextmanager
    def front(self, server: RunningServer, session: Session, label: str) -> Iterator[Front]:
        """The generator -> app link in front of a server: where the load goes, for as long as it runs."""
        if self._proxy_links is not None:
            with self._proxied_front(server, label) as (host, port):
                yield Front(host, port)
            return
        assert self._app_links is not None
        app = self.host_of(Role.APP)
        conn = self.conns[app.name]
        name = "gen-app-" + label.replace(":", "_").replace("/", "_")
        port = free_port(conn, app.address)
        link = self._app_links.add(name, f"{app.address}:{port}", f"{server.host}:{server.port}")
        try:
            if self.generators:  # measured from a generator host, as the load crosses it
                self._record_rtt(name, measure_rtt(self.generators[0].conn, link.listen, HTTP_PROBE, count=10),
                                 self.generators[0].conn.name)
            yield Front(app.address, port)
        finally:
            try:
                self._app_links.remove(name)
            except SshError:
                pass  # the proxy itself is stopped with the run

    def _proxied_front(self, server: RunningServer, label: str) -> AbstractContextManager[tuple[str, int]]:
        assert self._proxy_links is not None
        host = self.host_of(Role.PROXY)
        proxy = ProxyHost(host.name, host.address, self.conns[host.name], self._proxy_links,
                          host.name == self.host_of(Role.APP).name)
        return proxied_front(proxy, server, label.replace(":", "_").replace("/", "_"), python=self._role_python(host.name),
                             work_dir=self.work_dir / "proxy", on_rtt=self._record_rtt, on_record=self.on_record,
                             generator=self.generators[0].conn if self.generators else None)

    def retune(self, session: Session) -> list[ServiceRecord]:
        """This point's delay on every link, then the app -> db round trip measured."""
        spec = session.trials[0] if session.trials else None
        rtt = spec.rtt_s if spec is not None and spec.rtt_s is not None else self.config.rtt_s
        self._point = f"rtt={rtt * 1000:g}ms"
        capped = self._retune_cap(session) + self._retune_upstream(session)
        if rtt == self._rtt_s:
            return capped
        for proxies in self._links():
            proxies.set_rtt(rtt)
        self._rtt_s = rtt
        records = self.take_pending() + capped
        if self.db_link is not None:
            app = self.host_of(Role.APP)
            records.append(self._rtt_record("app-db", measure_rtt(self.conns[app.name], self.db_link, PG_SSL_REQUEST),
                                            app.name))
        if self._upstream is not None and self._upstream.link is not None:
            app = self.host_of(Role.APP)
            records.append(self._rtt_record("app-upstream", measure_rtt(self.conns[app.name], self._upstream.link,
                                                                        UPSTREAM_PROBE), app.name))
        return records

    def _retune_cap(self, session: Session) -> list[ServiceRecord]:
        """A max_db_sessions point: pgbouncer started again on the db host, the app -> db link re-pointed."""
        caps = {t.max_db_sessions for t in session.trials if t.max_db_sessions is not None}
        db = self._remote_db
        if db is None or not caps or max(caps) == db.sessions or self._db_links is None or self.db_link is None:
            return []
        info = db.set_cap(max(caps))
        self._db_links.remove("app-db")
        self._db_links.add("app-db", self.db_link, f"127.0.0.1:{info.port}")
        self._dsn = info.dsn.replace(f"@127.0.0.1:{info.port}/", f"@{self.db_link}/")
        return [ServiceRecord("pgbouncer (placed)", "", {"host": self.host_of(Role.DB).name,
                                                        "max_db_sessions": db.sessions, "port": info.port})]

    def _retune_upstream(self, session: Session) -> list[ServiceRecord]:
        """An upstream_delay point: the upstream started again on its host with that delay."""
        delays = {t.upstream_delay_s for t in session.trials if t.upstream_delay_s is not None}
        if self._upstream is None or not delays or max(delays) == self._upstream.delay_s:
            return []
        return [self._upstream.start(max(delays))]

    def _links(self) -> tuple[LinkProxies, ...]:
        upstream = self._upstream.links if self._upstream is not None else None
        return tuple(p for p in (self._db_links, upstream, self._app_links, self._proxy_links) if p is not None)

    def _record_rtt(self, link: str, measured: RttMeasurement, client: str) -> None:
        self.pending.append(self._rtt_record(link, measured, client))

    def take_pending(self) -> list[ServiceRecord]:
        """RTT records made during a launch (the generator link), for the runner's writer."""
        taken, self.pending = self.pending, []
        return taken

    def _rtt_record(self, link: str, measured: RttMeasurement, client: str) -> ServiceRecord:
        kind = next((k for k in ("gen-app", "gen-proxy", "proxy-app") if link.startswith(f"{k}-")), link)
        return ServiceRecord(f"link {kind}", "toxiproxy", {
            "link": link, "point": self._point, "rtt_set_ms": (self._rtt_s or 0.0) * 1000,
            "rtt_measured_ms": measured.median_s * 1000, "rtt_min_ms": measured.min_s * 1000,
            "samples": measured.samples, "measured_from": client, "mechanism": MECHANISM,
            "proxy_cpu_s": self.proxy_cpu_s(),
        })

    def proxy_cpu_s(self) -> float | None:
        """The link proxies' CPU so far, summed over their hosts (what delaying the links cost)."""
        try:
            return sum(p.cpu_seconds() for p in self._links())
        except (SshError, ValueError, IndexError):
            return None

    def attach(self, write: Callable[[ServiceRecord], None]) -> None:
        """The placement record written, and later records (made as a server's front closes) sent to `write`."""
        write(ServiceRecord("placement", self.mode, self.describe()))
        self.on_record = write

    def describe(self) -> dict[str, Any]:
        """The placement record of the results header: each role's host, each host's machine."""
        placed = (Role.GENERATOR, Role.APP, Role.DB) + ((Role.UPSTREAM,) if self.config.upstream is not None else ()) \
            + ((Role.PROXY,) if self.config.proxy else ())
        roles = {r.value: [h.name for h in self.hosts if r in h.roles] or [self.host_of(Role.APP).name]
                 for r in placed}
        return {"mode": self.mode, "roles": roles, "hosts": self.machines, "delay_mechanism": MECHANISM,
                "staged": self.staged(),
                "cpu_accounting": APP_CPU,
                "not_wired": ["the upstream's ceiling on its host (the one recorded is of this machine's own "
                              "upstream, which gives the expected answer)"]}


def _same_arch(machines: dict[str, dict[str, Any]]) -> None:
    """Toxiproxy and the Go upstream are built here and staged as they are: every host must run them."""
    here = platform.machine()
    for name, machine in machines.items():
        if machine["arch"] and machine["arch"] != here and machine["roles"] != [Role.GENERATOR.value]:
            raise SshError(f"{name} is {machine['arch']} and this machine {here}: the binaries staged there "
                           "(Toxiproxy, the Go upstream) are built here")
