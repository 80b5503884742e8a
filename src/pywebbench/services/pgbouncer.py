"""A private PgBouncer in front of PostgresService, capping the server sessions it opens.

The cap is the knob the seed experiment turned: however many clients (app workers, pool
slots, per-request connections) arrive, at most max_db_sessions reach PostgreSQL and the
rest wait in PgBouncer's queue.
"""

from __future__ import annotations

import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import dict_row

from pywebbench.stage.tools import locate
from pywebbench.core.procs import ManagedProcess, free_port
from pywebbench.services import (
    Service,
    HOST,
    ServiceError,
    check_reachable,
    give_to,
    private_dir,
    tool_output,
    unprivileged_user,
    wait_until,
)
from pywebbench.services.postgres import DATABASE, USER, PostgresInfo, new_password

BINARY = locate("pgbouncer") or "/usr/sbin/pgbouncer"  # where doctor looks too
ADMIN_USER = "pwb_admin"
POOL_MODES = ("session", "transaction", "statement")
AUTH_TYPES = ("md5", "scram-sha-256", "trust")
# How clients prove themselves to PgBouncer. Not SCRAM by default: its 4096 PBKDF2 rounds
# cost ~3 ms of CPU on each side of every connection here (PgBouncer recomputes them from
# the plain-text userlist), so with one connection per request the benchmark would measure
# password hashing, and single-threaded PgBouncer would top out near 300 logins/s. PgBouncer
# still logs in to PostgreSQL with SCRAM, once per pooled server session.
DEFAULT_AUTH_TYPE = "md5"
MAX_CLIENT_CONN = 10_000
READY_TIMEOUT_S = 20.0
# Direct connections kept free beside the pool: probes, the loader, a human with psql.
PROBE_CONNECTIONS = 5


@dataclass(frozen=True)
class PgBouncerInfo:
    """What a started PgBouncer exposes, and what a result records about it."""

    host: str
    port: int
    dsn: str = field(repr=False)  # for apps: PWB_DSN; holds the password
    admin_dsn: str = field(repr=False)  # the admin console (database "pgbouncer")
    version: str
    config_text: str  # the pgbouncer.ini we wrote
    max_db_sessions: int
    pool_mode: str
    auth_type: str  # clients -> PgBouncer; PgBouncer -> PostgreSQL is always SCRAM


@dataclass(frozen=True)
class PoolSnapshot:
    """One SHOW POOLS reading for `bench`: who is served, who waits, what is held."""

    clients_active: int
    clients_waiting: int
    servers_active: int
    servers_idle: int  # idle + used + tested + login: held but not serving a client
    max_wait_s: float

    @property
    def servers(self) -> int:
        return self.servers_active + self.servers_idle


class PgBouncerService(Service[PgBouncerInfo]):
    """`with PgBouncerService(work_dir, pg.info, max_db_sessions=N) as bouncer:` -> bouncer.info.dsn."""

    what = "PgBouncer"

    def __init__(
        self,
        work_dir: Path,
        postgres: PostgresInfo,
        max_db_sessions: int = 100,
        pool_mode: str = "session",
        *,
        auth_type: str = DEFAULT_AUTH_TYPE,
        lanes: int = 1,
    ) -> None:
        super().__init__()
        if lanes < 1:
            raise ValueError(f"lanes must be >= 1, got {lanes}")
        self.lanes = lanes
        """Live servers sharing this PgBouncer (interleaved and duet methods): each gets its own
        database entry, so its own pool and its own cap of max_db_sessions, and sessions an
        idle server holds can never starve the one under load."""
        if pool_mode not in POOL_MODES:
            raise ValueError(f"pool_mode must be one of {', '.join(POOL_MODES)}, got {pool_mode!r}")
        if auth_type not in AUTH_TYPES:
            raise ValueError(f"auth_type must be one of {', '.join(AUTH_TYPES)}, got {auth_type!r}")
        if not 1 <= max_db_sessions <= postgres.max_connections - PROBE_CONNECTIONS:
            raise ValueError(
                f"max_db_sessions must be 1..{postgres.max_connections - PROBE_CONNECTIONS} for a PostgreSQL with "
                f"max_connections = {postgres.max_connections}, got {max_db_sessions}: size PostgresConfig's "
                f"max_db_sessions for the largest value swept"
            )
        self.work_dir = work_dir
        self.postgres = postgres
        self.max_db_sessions = max_db_sessions
        self.pool_mode = pool_mode
        self.auth_type = auth_type
        self.user = unprivileged_user()
        # The admin console can pause and kill pools: its own password, fresh per start.
        self._admin_password = new_password()
        self._admin: psycopg.Connection[Any] | None = None
        self._admin_lock = threading.Lock()

    def __enter__(self) -> PgBouncerService:
        with ExitStack() as stack:
            private_dir(self.work_dir, self.user)
            check_reachable(self.work_dir, self.user)
            port = free_port(HOST)
            config_text = self._write_files(port)
            argv = [BINARY, str(self.work_dir / "pgbouncer.ini")]
            proc = ManagedProcess(argv, env={}, log_dir=self.work_dir, name="pgbouncer", user=self.user)
            self._proc = stack.enter_context(proc)
            self._pids.append(proc.pid)
            admin_dsn = f"postgresql://{ADMIN_USER}:{self._admin_password}@{HOST}:{port}/pgbouncer"
            self._info = PgBouncerInfo(
                HOST, port, f"postgresql://{USER}:{self.postgres.password}@{HOST}:{port}/{DATABASE}", admin_dsn,
                tool_output([BINARY, "--version"]).splitlines()[0], config_text, self.max_db_sessions,
                self.pool_mode, self.auth_type,
            )
            stack.callback(self._forget)
            wait_until(self._answers, proc=proc, timeout_s=READY_TIMEOUT_S, what="PgBouncer")
            self._stack = stack.pop_all()
        return self

    def restart(self) -> str:
        """The same config file and port: apps' DSNs stay right; a new admin connection."""
        info = self.info
        with self._admin_lock:
            if self._admin is not None:
                self._admin.close()
                self._admin = None
        argv = [BINARY, str(self.work_dir / "pgbouncer.ini")]
        proc = self._replace(ManagedProcess(argv, env={}, log_dir=self.work_dir,
                                            name=f"pgbouncer-restart{self._restarts + 1}", user=self.user))
        wait_until(self._answers, proc=proc, timeout_s=READY_TIMEOUT_S, what="PgBouncer")
        return f"from its config, port {info.port}"

    @property
    def admin_password(self) -> str:
        return self._admin_password

    def dsn(self, lane: int | None = None) -> str:
        """The DSN an app uses: `bench`, or its lane's own database entry."""
        return self.info.dsn.rsplit("/", 1)[0] + "/" + lane_database(lane if self.lanes > 1 else None)

    def pools(self) -> PoolSnapshot:
        """SHOW POOLS for `bench`; one round trip on a kept admin connection, cheap to sample."""
        rows = [r for r in self._admin_query("SHOW POOLS") if r["database"] == DATABASE]
        total = {key: sum(int(r[key]) for r in rows) for key in _POOL_KEYS}
        return PoolSnapshot(
            clients_active=total["cl_active"],
            clients_waiting=total["cl_waiting"],
            servers_active=total["sv_active"],
            servers_idle=total["sv_idle"] + total["sv_used"] + total["sv_tested"] + total["sv_login"],
            max_wait_s=max((int(r["maxwait"]) + int(r["maxwait_us"]) / 1e6 for r in rows), default=0.0),
        )

    def server_sessions(self, lane: int | None = None) -> int:
        """Server connections PgBouncer holds right now, in any state: for one lane, or all."""
        names = {lane_database(lane if self.lanes > 1 else None)} if lane is not None else self._databases()
        return sum(1 for r in self._admin_query("SHOW SERVERS") if r["database"] in names)

    def sessions_by_database(self) -> dict[str, int]:
        """Server connections held right now per database entry: every lane in one admin query."""
        counts: dict[str, int] = {}
        for row in self._admin_query("SHOW SERVERS"):
            counts[row["database"]] = counts.get(row["database"], 0) + 1
        return counts

    def _databases(self) -> set[str]:
        return {DATABASE} | ({lane_database(n) for n in range(1, self.lanes + 1)} if self.lanes > 1 else set())

    def reset_pool(self, timeout_s: float = 10.0) -> int:
        """Close every server session so the next trial starts from zero; return clients dropped.

        RECONNECT closes each server session once no client holds it (idle ones at once).
        Clients that still hold one (an app-side pool in session mode) keep it, so after
        `timeout_s` we KILL the database, which drops those clients too, and RESUME it.
        """
        for name in sorted(self._databases()):
            self._admin_query(f"RECONNECT {name}")
        if self._wait_for_no_servers(timeout_s):
            return 0
        snapshot = self.pools()
        dropped = snapshot.clients_active + snapshot.clients_waiting
        for name in sorted(self._databases()):
            self._admin_query(f"KILL {name}")
            self._admin_query(f"RESUME {name}")
        if not self._wait_for_no_servers(timeout_s):
            raise ServiceError(f"PgBouncer still holds {self.server_sessions()} server sessions after KILL")
        return dropped

    def _wait_for_no_servers(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while self.server_sessions() > 0:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def _admin_query(self, sql: str) -> list[dict[str, Any]]:
        # The admin console has no transactions (it refuses psycopg's implicit BEGIN) and
        # speaks only the simple query protocol: autocommit, and a ClientCursor, which always
        # sends one simple Query message.
        with self._admin_lock:
            try:
                if self._admin is None or self._admin.closed:
                    self._admin = psycopg.connect(
                        self.info.admin_dsn, autocommit=True, cursor_factory=psycopg.ClientCursor,
                        row_factory=dict_row, connect_timeout=5,
                    )
                cur = self._admin.execute(sql)
                return cur.fetchall() if cur.description else []
            except psycopg.Error as exc:
                if self._admin is not None:
                    self._admin.close()
                tail = self._proc.stderr_tail() if self._proc is not None else ""
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise ServiceError(f"PgBouncer admin {sql!r} failed: {first}", tail) from exc

    def _answers(self) -> bool:
        try:
            self._admin_query("SHOW VERSION")
        except ServiceError:
            return False
        return True

    def _forget(self) -> None:
        with self._admin_lock:
            if self._admin is not None:
                self._admin.close()
                self._admin = None
        self._info = None
        self._proc = None

    def _write_files(self, port: int) -> str:
        userlist = self.work_dir / "userlist.txt"
        # Plain-text passwords (PgBouncer needs the plain text to log in to PostgreSQL with
        # SCRAM), fresh per start, in a file that is 0600 before they are written: only we
        # and the server's user (given it below) can read them.
        if not self.postgres.password:
            raise ValueError("PostgresInfo has no password: start PostgresService first")
        userlist.unlink(missing_ok=True)
        userlist.touch(mode=0o600)
        userlist.write_text(f'"{USER}" "{self.postgres.password}"\n"{ADMIN_USER}" "{self._admin_password}"\n')
        ini = self.work_dir / "pgbouncer.ini"
        text = render_config(self.postgres, port, self.max_db_sessions, self.pool_mode, self.auth_type, userlist,
                             self.lanes)
        ini.unlink(missing_ok=True)
        ini.touch(mode=0o600)
        ini.write_text(text)
        give_to(self.user, userlist, ini)
        return text


_POOL_KEYS = ("cl_active", "cl_waiting", "sv_active", "sv_idle", "sv_used", "sv_tested", "sv_login")


def lane_database(lane: int | None) -> str:
    """The database name a live server's app connects to: its own lane, or `bench` alone."""
    return DATABASE if lane is None else f"{DATABASE}_lane{lane}"


def render_config(
    postgres: PostgresInfo, port: int, max_db_sessions: int, pool_mode: str, auth_type: str, userlist: Path,
    lanes: int = 1,
) -> str:
    entries = "".join(f"{lane_database(lane)} = host={postgres.host} port={postgres.port} dbname={DATABASE}\n"
                      for lane in range(1, lanes + 1)) if lanes > 1 else ""
    # Several lanes: an idle server's pooled sessions are closed after 2 s, so PostgreSQL never
    # holds more than the lanes under load (plus the one just left) at the cap each.
    idle_timeout = 2 if lanes > 1 else 600
    return f"""\
;; Written by pywebbench for a private PgBouncer; every run rewrites it.
[databases]
{DATABASE} = host={postgres.host} port={postgres.port} dbname={DATABASE}
{entries}
[pgbouncer]
listen_addr = {HOST}
listen_port = {port}
; TCP only: no socket file left in /tmp.
unix_socket_dir =
; Connection storms (one connection per request) must queue, not be refused.
listen_backlog = 4096
auth_type = {auth_type}
auth_file = {userlist}
admin_users = {ADMIN_USER}
stats_users = {ADMIN_USER}
pool_mode = {pool_mode}
max_client_conn = {MAX_CLIENT_CONN}
; One user and one database, so the pool size and the database cap both equal the
; session budget; no reserve pool and no minimum, so nothing exceeds it or lingers.
default_pool_size = {max_db_sessions}
max_db_connections = {max_db_sessions}
reserve_pool_size = 0
min_pool_size = 0
ignore_startup_parameters = extra_float_digits
; A line per connection would cost more than the per-request connections measured.
log_connections = 0
log_disconnections = 0
server_idle_timeout = {idle_timeout}
"""
