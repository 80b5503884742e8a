"""The backing services a run needs, started once, shared by every trial, stopped at the end.

Which services start follows from the workloads: PostgreSQL and pgbouncer for /db, /api and
/posts (and, with db "sqlite", a SQLite file /posts reads instead); the Go upstream for /upstream. Each is a context manager on one ExitStack, so a
failed start unwinds what had started. This object also knows every right answer the
workloads are checked against, and the PWB_* environment each app is given.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
import threading
import urllib.request
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import Any

import jinja2
import psycopg

from pywebbench.catalog.model import Stack
from pywebbench.catalog.servers import APPS_DIR
from pywebbench.plan.options import RunOptions, ServiceSettings
from pywebbench.plan.sessions import Plan, needs_of
from pywebbench.stage.reference import GoBinaries, build_go_binaries
from pywebbench.results.model import ServiceRecord, TrialSpec
from pywebbench.services.nginx import DEFAULT_STATIC_BODY
from pywebbench.services.pg_cache import forget, kept_cluster
from pywebbench.services.pgbouncer import PgBouncerService
from pywebbench.services.postgres import PostgresConfig, PostgresService
from pywebbench.services import ServiceError
from pywebbench.services.sqlite import fill_sqlite, read_posts
from pywebbench.services.upstream import UpstreamService
from pywebbench.services.watchdog import Watchdog
from pywebbench.catalog.workloads import Expected, Needs, api_body, posts_body

TEMPLATES = APPS_DIR / "templates"


@dataclass(frozen=True)
class BackingConfig:
    """What to start: the services' settings from the run's options, and what the plan needs."""

    needs: frozenset[Needs]
    settings: ServiceSettings = field(default_factory=lambda: RunOptions().services)
    cpus: tuple[int, ...] = ()
    """Where the upstream runs: on 2 CPUs, the generator's CPU, so the stack's stays its own."""
    measure_upstream_ceiling: bool = True
    go_reference: bool = False
    """Build the Go reference server too (a go:net-http stack is in the run)."""
    postgres_sessions: int | None = None
    """PostgreSQL's session limit when a sweep raises pgbouncer's cap above max_db_sessions."""
    lanes: int = 1
    """Live servers at once (interleaved, duet): each gets its own pgbouncer database entry."""
    loaded_at_once: int = 1
    """Servers under load at the same time (2 in a duet)."""
    database_url: str = ""
    """A person's own app (the `app` command) gets DATABASE_URL: "postgres" straight to the
    private PostgreSQL, "pgbouncer" through pgbouncer; "" gives none."""


def backing_config(plan: Plan, options: RunOptions, points: Iterable[Iterable[tuple[str, Any]]],
                   lanes: int = 0, database_url: str = "") -> BackingConfig:
    """The services a plan needs, set from its options; `points` are the sweep's (a raised
    max_db_sessions among them lifts PostgreSQL's own limit); `lanes`, the live servers a
    job may hold at once beyond the plan's stacks (--tune's candidates)."""
    caps = [int(v) for point in points for k, v in point if k == "max_db_sessions"]
    return BackingConfig(
        needs=needs_of(plan), settings=options.services, cpus=plan.split.loadgen,
        go_reference=any(s.stack.server.native == "go-reference" for s in plan.sessions),
        postgres_sessions=max(caps) if caps else None,
        lanes=max(1, len({s.label for s in plan.sessions}), lanes) if options.method.paired else 1,
        loaded_at_once=options.method.loaded_at_once,
        database_url=database_url,
    )


def render_template() -> bytes:
    """The page every app renders, rendered here too, so answers can be compared."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)
    context = json.loads((TEMPLATES / "context.json").read_text())
    return env.get_template("page.html").render(**context).encode()


class Backing:
    def __init__(self, config: BackingConfig, cache_dir: Path) -> None:
        self.config = config
        self.cache_dir = cache_dir
        self.postgres: PostgresService | None = None
        self.pgbouncer: PgBouncerService | None = None
        self.upstream: UpstreamService | None = None
        self.go: GoBinaries | None = None
        self._stack = ExitStack()
        self._pgbouncer_stack = ExitStack()
        self._upstream_stack = ExitStack()
        self._work: Path | None = None
        self._expected = Expected(cpu_size=config.settings.cpu_size)
        self._lookup: psycopg.Connection[Any] | None = None
        self._lookup_lock = threading.Lock()
        self.template_file: Path | None = None
        self.sqlite_file: Path | None = None

    @property
    def work_dir(self) -> Path:
        if self._work is None:
            raise RuntimeError("backing services are not started")
        return self._work

    def __enter__(self) -> Backing:
        with ExitStack() as stack:
            # Under the system temp dir: PostgreSQL runs as its own user and must reach it, so
            # 0711: searchable, not listable; each service's own directory inside is 0700.
            self._work = Path(tempfile.mkdtemp(prefix="pywebbench-services-"))
            self._work.chmod(0o711)
            stack.callback(shutil.rmtree, self._work, True)
            self.template_file = self._work / "template.html"
            self.template_file.write_bytes(render_template())
            expected: dict[str, Any] = {"template_body": self.template_file.read_bytes(),
                                        "static_body": DEFAULT_STATIC_BODY}
            if Needs.DATABASE in self.config.needs:
                expected.update(self._start_database(stack))
            if Needs.UPSTREAM in self.config.needs or self.config.go_reference:
                self.go = build_go_binaries(self.cache_dir / "go")
            if Needs.UPSTREAM in self.config.needs:
                assert self.go is not None
                up = self._start_upstream(self.config.settings.upstream_delay_s)
                stack.callback(self._upstream_stack.close)
                with urllib.request.urlopen(up.url, timeout=10) as response:
                    expected["upstream_body"] = response.read()
            self._expected = Expected(cpu_size=self.config.settings.cpu_size, **expected)
            self._stack = stack.pop_all()
        return self

    def _start_database(self, stack: ExitStack) -> dict[str, Any]:
        """PostgreSQL, pgbouncer (and the SQLite file): the right answers of the DB workloads."""
        settings, config = self.config.settings, self.config
        sessions = max(settings.max_db_sessions, config.postgres_sessions or 0)
        # Lanes loaded at once, plus the one whose sessions are closing after its window;
        # every lane when app-side pools hold their sessions while idle.
        sessions *= config.lanes if settings.db_pool else min(config.lanes, config.loaded_at_once + 1)
        pg_config = PostgresConfig(rows=settings.db_rows, max_db_sessions=sessions)
        self.postgres = pg = self._start_postgres(stack, pg_config)
        self._start_pgbouncer(settings.max_db_sessions)
        stack.callback(self._pgbouncer_stack.close)
        self._lookup = stack.enter_context(psycopg.connect(pg.info.dsn, autocommit=True))
        rows = self._lookup.execute("SELECT a, b FROM bench WHERE a <= 300 ORDER BY a").fetchall()
        expected: dict[str, Any] = {"posts_body": posts_body(rows), "api_body": api_body([r for r in rows if r[0] <= 100]),
                                    "db_row": self._db_row}
        if settings.db == "sqlite":
            self.sqlite_file = self.work_dir / "posts.sqlite3"
            fill_sqlite(self.sqlite_file, settings.db_rows, pg.config.seed)
            # The expected answer comes from the file the apps read; PostgreSQL's rows
            # must agree, or /posts would not be the same question on both databases.
            from_file = read_posts(self.sqlite_file)
            if from_file != [(a, b) for a, b in rows]:
                raise ServiceError(f"the SQLite file {self.sqlite_file} does not hold PostgreSQL's /posts rows")
            expected["posts_body"] = posts_body(from_file)
        return expected

    def _start_postgres(self, stack: ExitStack, config: PostgresConfig) -> PostgresService:
        """The kept cluster for these rows when this run can hold it (services/pg_cache.py),
        else a fresh one in the run's work directory; a kept one that fails to start is
        forgotten and a fresh one made."""
        kept = stack.enter_context(kept_cluster(config.rows, config.seed))
        if kept is not None:
            try:
                return stack.enter_context(PostgresService(kept, config))
            except ServiceError:
                forget(kept)
        return stack.enter_context(PostgresService(self.work_dir / "postgres", config))

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stack.close()
        self._work = None

    def _start_pgbouncer(self, max_db_sessions: int) -> PgBouncerService:
        assert self.postgres is not None
        self._pgbouncer_stack.close()
        bouncer = PgBouncerService(self.work_dir / f"pgbouncer-{max_db_sessions}", self.postgres.info,
                                   max_db_sessions=max_db_sessions, lanes=self.config.lanes)
        self.pgbouncer = self._pgbouncer_stack.enter_context(bouncer)
        return bouncer

    def _start_upstream(self, delay_s: float) -> UpstreamService:
        assert self.go is not None
        self._upstream_stack.close()
        up = UpstreamService(self.work_dir / f"upstream-{delay_s:g}", self.go.upstream, delay_s,
                             self.config.settings.upstream_size, cpus=self.config.cpus, server="std")
        self.upstream = self._upstream_stack.enter_context(up)
        if self.config.measure_upstream_ceiling:
            up.measure_ceiling(2.0, 1000, wrk_cpus=self.config.cpus or None,
                               work_dir=self.work_dir / f"ceiling-{delay_s:g}")
        return up

    def retune(self, max_db_sessions: int | None, upstream_delay_s: float | None) -> list[ServiceRecord]:
        """Restart pgbouncer or the upstream when a sweep point changes their knob.

        PostgreSQL and its loaded table stay: only the cheap services restart. Returns the
        records of what was restarted, so the results say what each point ran against.
        """
        changed: list[ServiceRecord] = []
        if (max_db_sessions is not None and self.pgbouncer is not None
                and max_db_sessions != self.pgbouncer.info.max_db_sessions):
            self._start_pgbouncer(max_db_sessions)
            changed += [r for r in self.records() if r.name == "pgbouncer"]
        if (upstream_delay_s is not None and self.upstream is not None
                and abs(upstream_delay_s - self.upstream.delay_s) > 1e-12):
            self._start_upstream(upstream_delay_s)
            changed += [r for r in self.records() if r.name == "upstream"]
        return changed

    def _db_row(self, key: int) -> str | None:
        assert self._lookup is not None and self.postgres is not None
        sql = "SELECT b FROM bench WHERE a = %s"
        with self._lookup_lock:
            try:
                row = self._lookup.execute(sql, (key,)).fetchone()
            except psycopg.OperationalError:  # PostgreSQL was restarted (the watchdog): once more
                self._lookup.close()
                self._lookup = self._stack.enter_context(psycopg.connect(self.postgres.info.dsn, autocommit=True))
                row = self._lookup.execute(sql, (key,)).fetchone()
        return None if row is None else str(row[0])

    def watch(self, dog: Watchdog) -> None:
        """Put every backing service under the watchdog (whichever instance a retune started)."""
        dog.watch("postgres", lambda: _PostgresThenPgBouncer(self) if self.postgres is not None else None)
        dog.watch("pgbouncer", lambda: self.pgbouncer)
        dog.watch("upstream", lambda: self.upstream)

    @property
    def expected(self) -> Expected:
        return self._expected

    def app_environment(self, stack: Stack, spec: TrialSpec | None = None, lane: int | None = None) -> dict[str, str]:
        """The PWB_* variables of CONTRACT.md for one stack's app; a sweep point's knobs win."""
        settings = self.config.settings
        db_delay = spec.db_delay_s if spec is not None and spec.db_delay_s is not None else settings.db_delay_s
        db_pool = spec.db_pool if spec is not None and spec.db_pool is not None else settings.db_pool
        cpu_size = spec.cpu_size if spec is not None and spec.cpu_size is not None else settings.cpu_size
        env = {
            "PWB_DRIVER": stack.driver,
            "PWB_DB_DELAY": repr(db_delay),
            "PWB_DB_ROWS": str(settings.db_rows),
            "PWB_DB_POOL": str(db_pool),
            "PWB_CPU_SIZE": str(cpu_size),
        }
        if spec is not None:
            env.update(dict(spec.app_env))
        if self.pgbouncer is not None:
            env["PWB_DSN"] = self.pgbouncer.dsn(lane)
        if self.upstream is not None:
            env["PWB_UPSTREAM_URL"] = self.upstream.url
        if stack.db == "sqlite" and stack.server.native is None:
            if self.sqlite_file is None:
                raise RuntimeError(f"{stack.id} reads SQLite but no SQLite file was made")
            env["PWB_DB"] = "sqlite"
            env["PWB_SQLITE_PATH"] = str(self.sqlite_file)
        if self.template_file is not None:
            env["PWB_TEMPLATE_RENDERED"] = str(self.template_file)  # the Go reference serves these bytes
        url = self.database_url(lane)
        if url is not None:
            env["DATABASE_URL"] = url
        return env

    def database_url(self, lane: int | None = None) -> str | None:
        """DATABASE_URL for a person's own app (BackingConfig.database_url), or None."""
        if self.config.database_url == "pgbouncer" and self.pgbouncer is not None:
            return self.pgbouncer.dsn(lane)
        if self.config.database_url == "postgres" and self.postgres is not None:
            return self.postgres.info.dsn
        return None

    def db_sessions(self, lane: int | None = None) -> int | None:
        return None if self.pgbouncer is None else self.pgbouncer.server_sessions(lane)

    def reset_between_sessions(self) -> None:
        """Seed 000's habit: every trial starts from an empty pool."""
        if self.pgbouncer is not None:
            self.pgbouncer.reset_pool()

    def secrets(self) -> tuple[str, ...]:
        """This run's service passwords: what must never reach a results file or a report."""
        found = []
        if self.postgres is not None:
            found.append(self.postgres.info.password)
        if self.pgbouncer is not None:
            found.append(self.pgbouncer.admin_password)
        return tuple(s for s in found if s)

    def records(self) -> list[ServiceRecord]:
        """What the results keep about each service, every password in it replaced by ***."""
        return [_redacted(r, self.secrets()) for r in self._records()]

    def _records(self) -> list[ServiceRecord]:
        out: list[ServiceRecord] = []
        if self.postgres is not None:
            info = self.postgres.info
            out.append(ServiceRecord("postgresql", info.version, {
                "rows": info.rows, "seed": info.seed, "load_seconds": info.load_seconds,
                "max_connections": info.max_connections, "config": info.config_text}))
        if self.pgbouncer is not None:
            b = self.pgbouncer.info
            out.append(ServiceRecord("pgbouncer", b.version, {
                "max_db_sessions": b.max_db_sessions, "pool_mode": b.pool_mode, "auth_type": b.auth_type,
                "lanes": self.config.lanes, "config": b.config_text}))
        if self.sqlite_file is not None:
            out.append(ServiceRecord("sqlite", sqlite3.sqlite_version, {
                "file": self.sqlite_file.name, "rows": len(read_posts(self.sqlite_file)),
                "seed": self.postgres.info.seed if self.postgres is not None else None}))
        if self.upstream is not None:
            out.append(ServiceRecord("upstream", self.upstream.version, self.upstream.config()))
        if self.go is not None:
            out.append(ServiceRecord("go", self.go.go_version, {"pgx": self.go.pgx_version, "platform": self.go.platform}))
        return out


class _PostgresThenPgBouncer:
    """PostgreSQL for the watchdog: after a crash PgBouncer refuses logins for
    server_login_retry (15 s), so it restarts too, from its config, once PostgreSQL is back."""

    def __init__(self, backing: Backing) -> None:
        self.backing = backing

    def poll(self) -> int | None:
        return self.backing.postgres.poll() if self.backing.postgres is not None else None

    def restart(self) -> str:
        assert self.backing.postgres is not None
        how = self.backing.postgres.restart()
        if self.backing.pgbouncer is not None:
            self.backing.pgbouncer.restart()
            how += ", and pgbouncer with it"
        return how


REDACTED = "***"


def redact(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text


def _redacted(record: ServiceRecord, secrets: tuple[str, ...]) -> ServiceRecord:
    # Today no config text holds a password (pgbouncer's are in its userlist, which is not
    # recorded); this keeps it so if a config ever names one.
    config = {k: redact(v, secrets) if isinstance(v, str) else v for k, v in record.config.items()}
    return replace(record, version=redact(record.version, secrets), config=config)


class PeakSampler:
    """Samples a gauge on a thread while load runs and keeps the peak (seed 000's #DB column)."""

    def __init__(self, read: Callable[[], int | None], interval_s: float = 0.05) -> None:
        self.read = read
        self.interval_s = interval_s
        self.peak: int | None = None
        self.error: str | None = None
        """The first failed read, reported as a check on the trial (its peak is then partial)."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                value = self.read()
            except Exception as exc:  # a failed sample must not kill the trial: the first cause is kept
                value = None
                if self.error is None:
                    self.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
            if value is not None:
                self.peak = value if self.peak is None else max(self.peak, value)
            self._stop.wait(self.interval_s)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
