"""A private PostgreSQL cluster: initdb, benchmark settings, the `bench` data, start, stop.

The cluster lives in the caller's work_dir and is reused across runs when it already holds
the same rows and seed (a marker file records them), so the load is paid once.
"""

from __future__ import annotations

import json
import os
import random
import secrets
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from psycopg import sql

from pywebbench.stage.tools import locate
from pywebbench.core.procs import ManagedProcess, free_port
from pywebbench.services import (
    Service,
    HOST,
    ServiceError,
    check_reachable,
    give_to,
    private_dir,
    run_to_end,
    tool_output,
    unprivileged_user,
    wait_until,
)

USER = DATABASE = "bench"
MARKER_FORMAT = 1
B_LENGTH = 20
# Headroom over the pooled sessions for our own and the probes' direct connections.
SPARE_CONNECTIONS = 20
STOP_TIMEOUT_S = 30.0


def new_password() -> str:
    """A fresh password per start: the cluster listens on 127.0.0.1, where every local user
    could otherwise log in as its superuser with a well-known constant."""
    return secrets.token_urlsafe(24)


@dataclass(frozen=True)
class PostgresConfig:
    rows: int = 1_000_000
    seed: int = 0
    max_db_sessions: int = 100
    shared_buffers: str = "128MB"
    ready_timeout_s: float = 60.0
    bin_dir: Path | None = None  # None: the newest /usr/lib/postgresql/*/bin, else PATH
    password: str = field(default_factory=new_password, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.rows < 1:
            raise ValueError(f"rows must be >= 1, got {self.rows}")
        if self.max_db_sessions < 1:
            raise ValueError(f"max_db_sessions must be >= 1, got {self.max_db_sessions}")

    @property
    def max_connections(self) -> int:
        return self.max_db_sessions + SPARE_CONNECTIONS


@dataclass(frozen=True)
class PostgresInfo:
    """What a started cluster exposes, and what a result records about it."""

    host: str
    port: int
    dsn: str = field(repr=False)  # direct, not through pgbouncer; holds the password
    version: str
    config_text: str  # the postgresql.conf we wrote
    max_connections: int
    rows: int
    seed: int
    load_seconds: float  # of the load that built this data (an earlier run's when reused)
    reused: bool
    password: str = field(repr=False, default="")
    """Never recorded: results keep the config texts, which do not contain it."""


class PostgresService(Service[PostgresInfo]):
    """`with PostgresService(work_dir, config) as pg:` -> pg.info.dsn, pg.backend_sessions()."""

    what = "PostgreSQL"

    def __init__(self, work_dir: Path, config: PostgresConfig = PostgresConfig()) -> None:
        super().__init__()
        self.work_dir = work_dir
        self.config = config
        self.data_dir = work_dir / "data"
        self.marker_path = work_dir / "loaded.json"
        self.bin_dir = config.bin_dir or find_bin_dir()
        self.user = unprivileged_user()

    def __enter__(self) -> PostgresService:
        with ExitStack() as stack:
            private_dir(self.work_dir, self.user)
            check_reachable(self.work_dir, self.user)
            version = tool_output([str(self.bin_dir / "postgres"), "--version"])
            marker = self._wanted_marker(version)
            found = self._read_marker()
            reused = all(found.get(k) == v for k, v in marker.items()) and (self.data_dir / "PG_VERSION").exists()
            # Reusing needs the socket (trust) to set this start's password on the kept role.
            reused = reused and _socket_dir_fits(self.work_dir / "socket")
            if not reused:
                self.marker_path.unlink(missing_ok=True)
                self._initdb()
            port = free_port(HOST)
            config_text = self._write_config(port)
            proc = self._start(port)
            self._proc = proc
            stack.callback(_stop, proc)
            password = self.config.password
            if reused:
                wait_until(lambda: _socket_accepts(self.work_dir / "socket", port), proc=proc,
                           timeout_s=self.config.ready_timeout_s, what="PostgreSQL")
                _set_password(self.work_dir / "socket", port, password)
            wait_until(lambda: _accepts(port, "postgres", password), proc=proc,
                       timeout_s=self.config.ready_timeout_s, what="PostgreSQL")
            dsn = f"postgresql://{USER}:{password}@{HOST}:{port}/{DATABASE}"
            try:
                if reused:
                    load_seconds = float(str(found.get("load_seconds", 0.0)))
                    _clear_writes(dsn)
                else:
                    load_seconds = _load(port, self.config.rows, self.config.seed, password)
                    self.marker_path.write_text(json.dumps({**marker, "load_seconds": round(load_seconds, 3)}))
            except psycopg.Error as exc:
                raise ServiceError(f"loading PostgreSQL failed: {exc}".splitlines()[0], proc.stderr_tail()) from exc
            self._info = PostgresInfo(HOST, port, dsn, version, config_text, self.config.max_connections,
                                      self.config.rows, self.config.seed, load_seconds, reused, password)
            self._stack = stack.pop_all()
        return self

    def restart(self) -> str:
        """After a crash: the same data directory, config and port (PgBouncer's config names it);
        PostgreSQL replays its WAL itself."""
        info = self.info
        name = f"postgres-restart{self._restarts + 1}"
        argv = [str(self.bin_dir / "postgres"), "-D", str(self.data_dir)]
        proc = self._replace(ManagedProcess(argv, env=_env(), log_dir=self.work_dir, name=name, user=self.user),
                             stop=_stop)
        wait_until(lambda: _accepts(info.port, "postgres", info.password), proc=proc, timeout_s=self.config.ready_timeout_s,
                   what="PostgreSQL")
        return f"on its data directory, port {info.port}"

    def backend_sessions(self) -> int:
        """Client sessions PostgreSQL itself counts on `bench`, ours excluded: the ground truth."""
        try:
            with psycopg.connect(self.info.dsn, autocommit=True, connect_timeout=5) as conn:
                row = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
                    " AND datname = %s AND pid <> pg_backend_pid()", (DATABASE,),
                ).fetchone()
        except psycopg.Error as exc:
            raise ServiceError(f"counting PostgreSQL sessions failed: {exc}".splitlines()[0]) from exc
        return int(row[0]) if row else 0

    def _wanted_marker(self, version: str) -> dict[str, object]:
        return {"format": MARKER_FORMAT, "rows": self.config.rows, "seed": self.config.seed, "version": version}

    def _read_marker(self) -> dict[str, object]:
        try:
            found = json.loads(self.marker_path.read_text())
        except (OSError, ValueError):
            return {}
        return found if isinstance(found, dict) else {}

    def _initdb(self) -> None:
        if self.data_dir.exists():
            shutil.rmtree(self.data_dir)  # ours, and not loaded as asked: start over
        self.data_dir.mkdir(mode=0o700)
        pwfile = self.work_dir / "initdb.pw"
        pwfile.touch(mode=0o600)  # 0600 before the password goes in
        pwfile.write_text(self.config.password + "\n")
        give_to(self.user, self.data_dir, pwfile)
        # The benchmark user owns this throwaway cluster (superuser): one role, one password.
        argv = [
            str(self.bin_dir / "initdb"), "-D", str(self.data_dir), "-U", USER, f"--pwfile={pwfile}",
            "--auth-host=scram-sha-256", "--auth-local=trust",  # the socket dir is 0700, the server's
            "--encoding=UTF8", "--locale=C", "--no-sync",
        ]
        try:
            run_to_end(ManagedProcess(argv, env=_env(), log_dir=self.work_dir, name="initdb", user=self.user),
                       timeout_s=120, what="initdb")
        finally:
            pwfile.unlink(missing_ok=True)

    def _write_config(self, port: int) -> str:
        socket_dir = self.work_dir / "socket"
        socket_dir.mkdir(mode=0o700, exist_ok=True)
        give_to(self.user, socket_dir)
        text = render_config(self.config, port, socket_dir)
        path = self.data_dir / "postgresql.conf"
        path.write_text(text)
        path.chmod(0o600)  # readable by the server's user (given below), no one else
        give_to(self.user, path)
        return text

    def _start(self, port: int) -> ManagedProcess:
        argv = [str(self.bin_dir / "postgres"), "-D", str(self.data_dir)]
        proc = ManagedProcess(argv, env=_env(), log_dir=self.work_dir, name="postgres", user=self.user)
        proc.start()
        self._pids.append(proc.pid)
        return proc


def render_config(config: PostgresConfig, port: int, socket_dir: Path) -> str:
    # A unix socket path longer than sun_path (107 bytes) stops the server: go TCP-only then.
    socket = str(socket_dir) if len(f"{socket_dir}/.s.PGSQL.{port}") <= 107 else ""
    return f"""\
# Written by pywebbench for a private benchmark cluster; every run rewrites it.
listen_addresses = '{HOST}'
port = {port}
unix_socket_directories = '{socket}'
max_connections = {config.max_connections}
shared_buffers = '{config.shared_buffers}'
maintenance_work_mem = '256MB'

# The data is rebuilt from its seed whenever needed, so durability buys nothing here and
# costs time: no fsync, no waiting for the WAL at commit, no full-page images.
# Not settings for a database anyone keeps.
fsync = off
synchronous_commit = off
full_page_writes = off
# minimal WAL lets COPY into a table created in the same transaction skip the WAL.
wal_level = minimal
max_wal_senders = 0
max_wal_size = '2GB'

password_encryption = 'scram-sha-256'
log_destination = 'stderr'
logging_collector = off
log_checkpoints = off
lc_messages = 'C'
timezone = 'UTC'
log_timezone = 'UTC'
"""


def bench_rows(rows: int, seed: int, chunk_rows: int = 10_000) -> Iterator[bytes]:
    """The `bench` table as COPY text, in chunks.

    The letters come from one random.Random(seed) stream, so row k is the same for a seed
    whatever `rows` or `chunk_rows` is. Bytes >= 234 are dropped so that byte % 26 picks
    every letter with the same chance.
    """
    rng = random.Random(seed)
    pending = bytearray()
    for start in range(1, rows + 1, chunk_rows):
        count = min(chunk_rows, rows + 1 - start)
        need = count * B_LENGTH
        while len(pending) < need:
            pending += rng.randbytes(1 << 16).translate(_TO_LETTER, _UNEVEN)
        letters = bytes(pending[:need])
        del pending[:need]
        yield b"".join([
            b"%d\t%s\n" % (a, letters[i:i + B_LENGTH])
            for a, i in zip(range(start, start + count), range(0, need, B_LENGTH))
        ])


_LETTERS = b"abcdefghijklmnopqrstuvwxyz"
_TO_LETTER = bytes(_LETTERS[i % 26] for i in range(256))
_UNEVEN = bytes(range(256 - 256 % 26, 256))


def _load(port: int, rows: int, seed: int, password: str) -> float:
    """Create and fill the tables per CONTRACT.md; return the seconds it took."""
    started = time.perf_counter()
    with psycopg.connect(_conninfo(port, "postgres", password), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {DATABASE}")
    with psycopg.connect(_conninfo(port, DATABASE, password)) as conn:
        with conn.transaction():
            conn.execute("CREATE TABLE bench (a integer NOT NULL, b text NOT NULL)")
            # FREEZE (the table is new in this transaction): rows land frozen and all-visible,
            # so the first trial does not pay for hint bits or a vacuum.
            with conn.cursor().copy("COPY bench (a, b) FROM STDIN (FREEZE)") as copy:
                for chunk in bench_rows(rows, seed):
                    copy.write(chunk)
        with conn.transaction():
            # The index built once over sorted input is much cheaper than maintained per row.
            conn.execute("ALTER TABLE bench ADD PRIMARY KEY (a)")
            conn.execute(
                "CREATE TABLE writes (id bigserial PRIMARY KEY, a integer NOT NULL,"
                " at timestamptz NOT NULL DEFAULT now())"
            )
        conn.autocommit = True
        conn.execute("ANALYZE bench")
        conn.execute("CHECKPOINT")
    return time.perf_counter() - started


def _clear_writes(dsn: str) -> None:
    """Each start begins with an empty `writes`, whatever the last run inserted."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("TRUNCATE writes RESTART IDENTITY")


def _accepts(port: int, dbname: str, password: str) -> bool:
    try:
        with psycopg.connect(_conninfo(port, dbname, password), connect_timeout=2):
            return True
    except psycopg.OperationalError:
        return False


def _conninfo(port: int, dbname: str, password: str) -> str:
    return psycopg.conninfo.make_conninfo(host=HOST, port=port, user=USER, password=password, dbname=dbname)


def _socket_dir_fits(socket_dir: Path) -> bool:
    # The same rule render_config applies: the longest socket file name must fit sun_path.
    return len(f"{socket_dir}/.s.PGSQL.65535") <= 107


def _socket_accepts(socket_dir: Path, port: int) -> bool:
    try:
        with psycopg.connect(host=str(socket_dir), port=port, user=USER, dbname="postgres", connect_timeout=2):
            return True
    except psycopg.OperationalError:
        return False


def _set_password(socket_dir: Path, port: int, password: str) -> None:
    """Give the kept role this start's password, over the socket (trust: only the server's
    user can enter its 0700 directory), so no earlier password keeps working."""
    with psycopg.connect(host=str(socket_dir), port=port, user=USER, dbname="postgres", autocommit=True) as conn:
        conn.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(USER), sql.Literal(password)))


def _stop(proc: ManagedProcess) -> None:
    """Fast shutdown (SIGINT to the postmaster), then make sure the whole group is gone.

    SIGTERM to the group, as ManagedProcess does, would be a "smart" shutdown that waits
    for clients, and would also hit every backend at once.
    """
    if proc.poll() is None:
        try:
            os.kill(proc.pid, signal.SIGINT)
            proc.wait(STOP_TIMEOUT_S)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    proc.stop()


def _env() -> dict[str, str]:
    # An explicit environment: no PG* variable of the caller's leaks into the server.
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}


def find_bin_dir() -> Path:
    """The newest Debian-style /usr/lib/postgresql/N/bin, else wherever `postgres` is on PATH."""
    found = locate("postgres")
    if found is None:
        raise ServiceError("PostgreSQL not found: install it (Debian: apt-get install postgresql)")
    return Path(found).parent
