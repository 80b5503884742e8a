"""Where a run's roles run, as the runner asks it: the `Placement` interface, and the local one.

The runner starts, fronts and samples every server through a placement and never asks which it
has. `LocalPlacement` (the default) keeps every role on this machine: the app's launcher for its
kind, nginx in front under `--topology nginx`, #DB sampled from the local pgbouncer, the load
from the run's generator with its ceiling measured here. `HostPlacement` (measure/placement.py,
`--hosts` or `--topology netns`) puts them on other hosts over SSH, behind links.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Protocol

from pywebbench.catalog.protocols import protocol_of
from pywebbench.loadgen.base import LoadGenerator, LoadRequest
from pywebbench.measure.accounting import Accountant, GroupUsage
from pywebbench.measure.ceiling import CeilingReading, GeneratorCeiling, no_ceiling
from pywebbench.measure.launchers import Launcher, RunningServer, app_role, launcher_for
from pywebbench.measure.settle import settle_load
from pywebbench.measure.shape_ceiling import ShapeCeiling
from pywebbench.plan.protocol_plan import nginx_fronts
from pywebbench.plan.sessions import Session
from pywebbench.results.model import ServiceRecord, TrialSpec
from pywebbench.services.backing import Backing, PeakSampler
from pywebbench.services.nginx import NginxService
from pywebbench.services.watchdog import Watchdog
from pywebbench.stage.tls import tls_material


@dataclass(frozen=True)
class Front:
    """Where a launched server's load goes, for as long as it runs."""

    host: str
    port: int
    proxy_role: str | None = None
    """The accounting role of an nginx in front whose CPU is read here (`--topology nginx` on one host)."""
    check_port: int | None = None
    """Where the harness's HTTP/1.1 checks ask, if not `port`: an h2c nginx answers HTTP/2 only there."""

    @property
    def h1_port(self) -> int:
        return self.port if self.check_port is None else self.check_port


class PeakReading(Protocol):
    """A #DB sampler after its window: the peak, or None and why."""

    peak: int | None
    error: str | None


@dataclass(frozen=True)
class LoadSettings:
    """What the load tools are made from: the run's generator and how the ceiling is recorded."""

    generator: str
    keepalive: bool
    timeout_s: float
    ceiling_dir: Path
    on_record: Callable[[ServiceRecord], None]
    on_ceiling_seconds: Callable[[float], None]


@dataclass(frozen=True)
class LoadTools:
    """The window's load, the settle before it, and the generator's ceiling for its validity check."""

    generator: LoadGenerator
    settle: Callable[[LoadRequest, float, Path], None] = settle_load
    ceiling: Callable[[TrialSpec], CeilingReading] = no_ceiling


class Placement(Protocol):
    """What the runner asks of wherever the roles are."""

    def load_tools(self, generator: LoadGenerator, settings: LoadSettings) -> LoadTools:
        """The load tools for this placement (made once, before the runner)."""
        ...

    def app_environment(self, env: dict[str, str]) -> dict[str, str]:
        """The app's environment with the addresses of the services as the app's host reaches them."""
        ...

    def launcher(self, session: Session, env_path: Path | None) -> Launcher:
        ...

    def front(self, server: RunningServer, session: Session, label: str) -> AbstractContextManager[Front]:
        """Where the load goes while `server` runs (the server itself, a proxy, a link)."""
        ...

    def retune(self, session: Session) -> list[ServiceRecord]:
        """This launch's point set on the placement's own parts (link delays); their records."""
        ...

    def take_pending(self) -> list[ServiceRecord]:
        """Records made since the last call (a link's RTT measured as a server's front opened)."""
        ...

    def reset_pool(self) -> None:
        """Seed 000's empty pool between launches, where the db role is the placement's."""
        ...

    def db_peak(self, lane: int | None) -> AbstractContextManager[PeakReading] | None:
        """A sampler of the lane's server sessions for one window (None: no pgbouncer to read)."""
        ...

    def usage(self, server: RunningServer) -> dict[str, GroupUsage]:
        """Read at a window's edges: the usage of the roles this placement accounts itself (the
        window's server as "app", the db's, the upstream's, on their hosts); empty where this
        machine's accountant reads every role. The window takes the difference
        (accounting.usage_between) and never asks where the roles are."""
        ...

    def reenroll(self) -> None:
        """After the watchdog restarted something: its new processes into their accounting roles."""
        ...


class LocalPlacement:
    """Every role on this machine."""

    def __init__(self, backing: Backing | None, topology: str, run_dir: Path, watchdog: Watchdog,
                 accountant: Accountant) -> None:
        self.backing = backing
        self.topology = topology
        self.run_dir = run_dir
        self.watchdog = watchdog
        self.accountant = accountant
        self._proxies: dict[str, NginxService] = {}
        """Live nginx proxies by accounting role, enrolled again after the watchdog restarts one."""

    def load_tools(self, generator: LoadGenerator, settings: LoadSettings) -> LoadTools:
        nginx = GeneratorCeiling(
            generator, settings.ceiling_dir, keepalive=settings.keepalive, timeout_s=settings.timeout_s,
            on_record=settings.on_record, on_seconds=settings.on_ceiling_seconds, tls_dir=self.run_dir / "tls")
        # a connection shape's ceiling is its own load against a server that costs nothing
        return LoadTools(generator, partial(settle_load, generator=settings.generator), ShapeCeiling(
            nginx, generator, settings.ceiling_dir, keepalive=settings.keepalive, timeout_s=settings.timeout_s,
            on_record=settings.on_record, on_seconds=settings.on_ceiling_seconds))

    def app_environment(self, env: dict[str, str]) -> dict[str, str]:
        return env

    def launcher(self, session: Session, env_path: Path | None) -> Launcher:
        return launcher_for(session.stack, env_path, self.backing.go if self.backing is not None else None)

    def front(self, server: RunningServer, session: Session, label: str) -> AbstractContextManager[Front]:
        if not nginx_fronts(session.stack, self.topology):
            return nullcontext(Front(server.host, server.port))
        return self._nginx_front(server, session, label)

    @contextmanager
    def _nginx_front(self, server: RunningServer, session: Session, label: str) -> Iterator[Front]:
        """Seed 000's layout: the generator talks to nginx, nginx to the app (HTTP/1.1 in the clear
        whatever the window's protocol: nginx terminates TLS and HTTP/2 with the run's certificate)."""
        protocol = protocol_of(session.trials[0].protocol)
        tls = tls_material(self.run_dir / "tls") if protocol.tls else None  # the launchers' one, per run
        with NginxService(self.run_dir / "logs" / f"{label}.proxy", upstream_port=server.port,
                          protocol=protocol, tls=tls) as proxy:
            role = "nginx-" + app_role(session.label)
            watched = f"the nginx proxy of {session.label}"
            self.watchdog.watch(watched, lambda: proxy)
            self._proxies[role] = proxy
            try:
                self.accountant.enroll(role, proxy.root_pids())
                yield Front(server.host, proxy.info.port, role, proxy.info.check_port)
            finally:  # unwatched before the proxy stops on purpose
                self._proxies.pop(role, None)
                self.watchdog.unwatch(watched)

    def retune(self, session: Session) -> list[ServiceRecord]:
        return []  # the backing services' knobs are the runner's to set, here and on any placement

    def take_pending(self) -> list[ServiceRecord]:
        return []

    def reset_pool(self) -> None:
        pass  # the local pgbouncer's pool is the backing services' (Backing.reset_between_sessions)

    def db_peak(self, lane: int | None) -> AbstractContextManager[PeakReading] | None:
        backing = self.backing
        if backing is None:
            return None
        return PeakSampler(lambda: backing.db_sessions(lane))

    def usage(self, server: RunningServer) -> dict[str, GroupUsage]:
        return {}  # every role is this machine's accountant's

    def reenroll(self) -> None:
        for role, proxy in self._proxies.items():
            self.accountant.enroll(role, proxy.root_pids())
