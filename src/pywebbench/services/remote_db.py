"""The db role on its own host: PostgreSQL behind pgbouncer, started there by the same services.

On the db host, `python -m pywebbench.services.remote_db WORK_DIR ROWS MAX_SESSIONS LANES
[LARGEST_CAP]` starts both (on that host's loopback, as locally; one pgbouncer database per
lane when several servers are live at once), says where pgbouncer listens and its DSN in its
ready line on the SSH channel (never in a file on the host: the DSN holds the run's password),
and holds them until SIGTERM. The other roles reach pgbouncer only through the link proxy on
the db host (services/links.py), which is also where the link's delay is added. On the harness
side, `RemoteDb` starts it over SSH in its own process group and reads that line.

Seed 000's #DB (the peak of pgbouncer's server sessions during a window) is sampled on the db
host, every 50 ms as locally: an SSH round trip per sample would be slower than the thing
measured and would ride the links under test. The role answers JSON lines on its SSH channel
(services/remote_role.py): "peaks_begin" before a window starts its peaks per database entry
(answered after the first sample), "peaks_end" after it stops them and answers them; "reset"
empties the pool between launches, and "cap", for a max_db_sessions sweep, starts pgbouncer
again with a point's cap (PostgreSQL's own limit was sized for LARGEST_CAP), answering with its
new port.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from pywebbench.services import ServiceError
from pywebbench.services.pgbouncer import PgBouncerService, lane_database
from pywebbench.services.postgres import PostgresConfig, PostgresInfo, PostgresService
from pywebbench.services.remote_role import Channel, RoleError, ask, serve, start_role, stop_on_sigterm
from pywebbench.stage.ssh import RemoteProcess, SshConnection


@dataclass(frozen=True)
class RemoteDbInfo:
    port: int
    """pgbouncer's port on the db host's loopback."""
    dsn: str = field(repr=False)
    postgres_version: str


def main(argv: Sequence[str]) -> int:
    work_dir, rows, sessions, lanes = Path(argv[0]), int(argv[1]), int(argv[2]), int(argv[3])
    largest = max(sessions, int(argv[4]) if len(argv) > 4 else sessions)  # the largest cap a sweep sets
    stop_on_sigterm()
    channel = Channel()
    work_dir.mkdir(parents=True, exist_ok=True)
    # Every lane may hold its cap at once (app-side pools keep sessions while idle), as locally.
    with PostgresService(work_dir / "postgres", PostgresConfig(rows=rows, max_db_sessions=largest * lanes)) as pg, \
            _Pool(work_dir, pg.info, sessions, lanes) as pool:
        peaks = _Peaks(pool)
        serve(channel, {**pool.answer(), "postgres_version": pg.info.version}, {
            "peaks_begin": peaks.begin, "peaks_end": peaks.end, "reset": peaks.reset, "cap": peaks.cap})
    return 0


class _Pool:
    """The running pgbouncer, started again with another cap when a max_db_sessions sweep asks
    (as the local backing restarts it; PostgreSQL and its table stay)."""

    def __init__(self, work_dir: Path, postgres: PostgresInfo, cap: int, lanes: int) -> None:
        self.work_dir, self.postgres, self.lanes = work_dir, postgres, lanes
        self._stack = ExitStack()
        self.bouncer = self.start(cap)

    def start(self, cap: int) -> PgBouncerService:
        self._stack.close()
        self.bouncer = self._stack.enter_context(
            PgBouncerService(self.work_dir / f"pgbouncer-{cap}", self.postgres, max_db_sessions=cap, lanes=self.lanes))
        return self.bouncer

    def answer(self) -> dict[str, Any]:
        return {"port": self.bouncer.info.port, "dsn": self.bouncer.dsn(),
                "max_db_sessions": self.bouncer.info.max_db_sessions}

    def __enter__(self) -> _Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()


class _Peaks:
    """pgbouncer's server sessions per database, sampled every 50 ms between a window's begin
    and end; one lock keeps a cap's restart out of a sample."""

    def __init__(self, pool: _Pool, interval_s: float = 0.05) -> None:
        self.pool, self.interval_s = pool, interval_s
        self.lock = threading.Lock()
        self.active = False
        self.peaks: dict[str, int] = {}
        self.error: str | None = None
        threading.Thread(target=self._run, name="peaks", daemon=True).start()

    def _sample(self) -> None:
        try:
            for database, count in self.pool.bouncer.sessions_by_database().items():
                self.peaks[database] = max(self.peaks.get(database, 0), count)
        except ServiceError as exc:
            self.error = self.error or str(exc).splitlines()[0]

    def _run(self) -> None:
        while True:
            time.sleep(self.interval_s)
            with self.lock:
                if self.active:
                    self._sample()

    def begin(self, request: dict[str, Any]) -> dict[str, Any]:
        with self.lock:  # a new window: its peak starts now, with a first sample before the answer
            self.peaks, self.error, self.active = {}, None, True
            self._sample()
        return {}

    def end(self, request: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.active = False
            return {"peaks": dict(self.peaks), "error": self.error}

    def reset(self, request: dict[str, Any]) -> dict[str, Any]:
        """Seed 000's habit: an empty pool between launches."""
        with self.lock:
            try:
                return {"note": f"dropped {self.pool.bouncer.reset_pool()} clients"}
            except ServiceError as exc:
                return {"note": f"failed: {str(exc).splitlines()[0]}"}

    def cap(self, request: dict[str, Any]) -> dict[str, Any]:
        """A sweep point's cap: pgbouncer started again with it."""
        with self.lock:
            try:
                self.pool.start(int(request["cap"]))
                return self.pool.answer()
            except (ServiceError, ValueError, KeyError, OSError) as exc:
                return {"failed": True, "error": str(exc).splitlines()[0]}


class RemoteDb:
    """`with RemoteDb(conn, python, work_dir, rows) as db:` -> db.info; stopped by its group on exit."""

    def __init__(self, conn: SshConnection, python: str, work_dir: Path, rows: int = 1000, sessions: int = 20,
                 ready_timeout_s: float = 120.0, lanes: int = 1, largest_cap: int | None = None) -> None:
        self.conn = conn
        self.python = python
        self.work_dir = work_dir
        self.rows = rows
        self.sessions = sessions
        self.lanes = lanes
        self.largest_cap = largest_cap or sessions
        """The largest cap a sweep will set: PostgreSQL's own limit is sized for it."""
        self.ready_timeout_s = ready_timeout_s
        self._proc: RemoteProcess | None = None
        self.info: RemoteDbInfo | None = None

    def __enter__(self) -> RemoteDb:
        self._proc, data = start_role(self.conn, self.python, "pywebbench.services.remote_db",
                                      [str(self.rows), str(self.sessions), str(self.lanes),
                                       str(self.largest_cap)], role="db",
                                      work_dir=self.work_dir, timeout_s=self.ready_timeout_s)
        self.info = RemoteDbInfo(int(data["port"]), str(data["dsn"]), str(data["postgres_version"]))
        return self

    def reset_pool(self, timeout_s: float = 30.0) -> str:
        """Close pgbouncer's server sessions on the db host, as the local backing does between launches."""
        return str(self._ask("reset", timeout_s).get("note", ""))

    def set_cap(self, cap: int, timeout_s: float = 60.0) -> RemoteDbInfo:
        """pgbouncer started again on the db host with `cap` (a max_db_sessions sweep point); its new address."""
        try:
            data = self._ask("cap", timeout_s, cap=cap)
        except ServiceError as exc:
            raise ServiceError(f"the db role on {self.conn.name} could not set max_db_sessions {cap}: {exc}") from None
        assert self.info is not None
        self.info = RemoteDbInfo(int(data["port"]), str(data["dsn"]), self.info.postgres_version)
        self.sessions = cap
        return self.info

    def _ask(self, what: str, timeout_s: float, **arguments: Any) -> dict[str, Any]:
        """The role's answer; ServiceError (one line) if it has ended, is silent or failed, as a
        local pgbouncer's trouble would be."""
        if self._proc is None:
            raise ServiceError(f"the db role on {self.conn.name} is not running")
        try:
            return ask(self._proc, what, timeout_s, **arguments)
        except RoleError as exc:
            raise ServiceError(str(exc)) from None

    @property
    def pid(self) -> int | None:
        """The role's process on its host (its group's leader), root of PostgreSQL's and pgbouncer's trees."""
        return self._proc.pgid if self._proc is not None else None

    def peak(self, lane: int | None) -> RemotePeak:
        """#DB of one window for a lane's database (all of them when no lane is given)."""
        database = None if lane is None else lane_database(lane if self.lanes > 1 else None)
        return RemotePeak(self, database)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._proc is not None:
            self._proc.grace_s = 20.0  # PostgreSQL's fast shutdown
            self._proc.stop()


class RemotePeak:
    """`with db.peak(lane) as sampled:` around a window; then `sampled.peak` (None: unread, with
    `sampled.error` saying why), as services/backing.py PeakSampler gives locally."""

    def __init__(self, db: RemoteDb, database: str | None, ack_timeout_s: float = 5.0) -> None:
        self.db = db
        self.database = database
        self.ack_timeout_s = ack_timeout_s
        self.peak: int | None = None
        self.error: str | None = None

    def __enter__(self) -> RemotePeak:
        try:  # answered once the sampler on the db host has begun this window's peak
            self.db._ask("peaks_begin", self.ack_timeout_s)
        except ServiceError:
            self.error = "the db host's session sampler did not answer"
        return self

    def __exit__(self, *exc: object) -> None:
        if self.error is not None:
            return
        try:
            data = self.db._ask("peaks_end", self.ack_timeout_s)
        except ServiceError:
            self.error = "the db host's session sampler lost this window's request"
            return
        peaks: dict[str, int] = data.get("peaks", {})
        self.peak = sum(peaks.values()) if self.database is None else peaks.get(self.database, 0)
        self.error = data.get("error")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
