"""The db role on its own host: PostgreSQL behind pgbouncer, started there by the same services.

On the db host, `python -m pywebbench.services.remote_db WORK_DIR ROWS MAX_SESSIONS LANES
[LARGEST_CAP]` starts both (on that host's loopback, as locally; one pgbouncer database per lane when several
servers are live at once), writes where pgbouncer listens and its DSN to WORK_DIR/db.json
(0600: the DSN holds the run's password), and holds them until SIGTERM. The other roles reach
pgbouncer only through the link proxy on the db host (services/links.py), which is also where
the link's delay is added. On the harness side, `RemoteDb` starts it over SSH in its own
process group and reads the file back.

Seed 000's #DB (the peak of pgbouncer's server sessions during a window) is sampled on the db
host, every 50 ms as locally: an SSH round trip per sample would be slower than the thing
measured and would ride the links under test. The role's process keeps the peaks per database
entry since the last request: the harness writes a fresh token to WORK_DIR/peaks.request
before the window, waits until WORK_DIR/peaks.json carries it, and reads the peaks after.
The same token handshake empties the pool between launches (reset.request) and, for a
max_db_sessions sweep, starts pgbouncer again with a point's cap (cap.request: "TOKEN CAP";
PostgreSQL's own limit was sized for LARGEST_CAP), answering with its new port.
"""

from __future__ import annotations

import json
import secrets
import sys
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
from pywebbench.services.remote_role import publish, start_role, stop_on_sigterm
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
    work_dir.mkdir(parents=True, exist_ok=True)
    # Every lane may hold its cap at once (app-side pools keep sessions while idle), as locally.
    with PostgresService(work_dir / "postgres", PostgresConfig(rows=rows, max_db_sessions=largest * lanes)) as pg, \
            _Pool(work_dir, pg.info, sessions, lanes) as pool:
        publish(work_dir / "db.json", {**pool.answer(), "postgres_version": pg.info.version})
        _serve_peaks(pool, work_dir)
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


def _asked(path: Path, done: str) -> str | None:
    """A request file's new content (a fresh token, maybe with an argument), or None."""
    try:
        asked = path.read_text().strip()
    except FileNotFoundError:
        return None
    return asked if asked and asked != done else None


def _serve_requests(pool: _Pool, work_dir: Path, done: dict[str, str]) -> None:
    """Seed 000's habit (an empty pool between launches) and a sweep point's cap, when the harness asks."""
    asked = _asked(work_dir / "reset.request", done.get("reset", ""))
    if asked is not None:
        try:
            note = f"dropped {pool.bouncer.reset_pool()} clients"
        except ServiceError as exc:
            note = f"failed: {str(exc).splitlines()[0]}"
        publish(work_dir / "reset.json", {"token": asked, "note": note})
        done["reset"] = asked
    asked = _asked(work_dir / "cap.request", done.get("cap", ""))
    if asked is not None:
        token, cap = asked.split()
        try:
            pool.start(int(cap))
            publish(work_dir / "cap.json", {"token": token, **pool.answer()})
        except (ServiceError, ValueError, OSError) as exc:
            publish(work_dir / "cap.json", {"token": token, "error": str(exc).splitlines()[0]})
        done["cap"] = asked


def _serve_peaks(pool: _Pool, work_dir: Path, interval_s: float = 0.05) -> None:
    """Sample pgbouncer's server sessions per database while a request's token is current."""
    request, answer = work_dir / "peaks.request", work_dir / "peaks.json"
    token, error = "", None
    done: dict[str, str] = {}
    peaks: dict[str, int] = {}
    while True:
        _serve_requests(pool, work_dir, done)
        bouncer = pool.bouncer
        try:
            asked = request.read_text().strip()
        except FileNotFoundError:
            asked = ""
        if asked != token:
            token, peaks, error = asked, {}, None  # a new window: its peak starts now
        if token:
            try:
                for database, count in bouncer.sessions_by_database().items():
                    peaks[database] = max(peaks.get(database, 0), count)
            except ServiceError as exc:
                error = error or str(exc).splitlines()[0]
            publish(answer, {"token": token, "peaks": peaks, "error": error})
        time.sleep(interval_s)


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
                                      work_dir=self.work_dir,
                                      ready_file="db.json", timeout_s=self.ready_timeout_s)
        self.info = RemoteDbInfo(int(data["port"]), str(data["dsn"]), str(data["postgres_version"]))
        return self

    def reset_pool(self, timeout_s: float = 30.0) -> str:
        """Close pgbouncer's server sessions on the db host, as the local backing does between launches."""
        return str(self._ask("reset", "", timeout_s).get("note", ""))

    def set_cap(self, cap: int, timeout_s: float = 60.0) -> RemoteDbInfo:
        """pgbouncer started again on the db host with `cap` (a max_db_sessions sweep point); its new address."""
        data = self._ask("cap", f" {cap}", timeout_s)
        if "error" in data:
            raise ServiceError(f"the db role on {self.conn.name} could not set max_db_sessions {cap}: {data['error']}")
        assert self.info is not None
        self.info = RemoteDbInfo(int(data["port"]), str(data["dsn"]), self.info.postgres_version)
        self.sessions = cap
        return self.info

    def _ask(self, what: str, argument: str, timeout_s: float) -> dict[str, Any]:
        """A request file written with a fresh token; the role's answer that carries it."""
        token = secrets.token_hex(8)
        self.conn.run_line(f"echo {token}{argument} > {self.work_dir}/{what}.request", timeout=15)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            done = self.conn.run(["cat", f"{self.work_dir}/{what}.json"], check=False, timeout=15)
            try:
                data: dict[str, Any] = json.loads(done.stdout) if done.returncode == 0 else {}
            except json.JSONDecodeError:
                data = {}
            if data.get("token") == token:
                return data
            time.sleep(0.05)
        raise ServiceError(f"the db role on {self.conn.name} did not answer its {what} request in {timeout_s:.0f} s")

    @property
    def pid(self) -> int | None:
        """The role's process on its host (its group's leader), root of PostgreSQL's and pgbouncer's trees."""
        return self._proc.pgid if self._proc is not None else None

    def peak(self, lane: int | None) -> RemotePeak:
        """#DB of one window for a lane's database (all of them when no lane is given)."""
        database = None if lane is None else lane_database(lane if self.lanes > 1 else None)
        return RemotePeak(self.conn, str(self.work_dir), database)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._proc is not None:
            self._proc.grace_s = 20.0  # PostgreSQL's fast shutdown
            self._proc.stop()


class RemotePeak:
    """`with db.peak(lane) as sampled:` around a window; then `sampled.peak` (None: unread, with
    `sampled.error` saying why), as services/backing.py PeakSampler gives locally."""

    def __init__(self, conn: SshConnection, remote_dir: str, database: str | None, ack_timeout_s: float = 5.0) -> None:
        self.conn = conn
        self.remote_dir = remote_dir
        self.database = database
        self.ack_timeout_s = ack_timeout_s
        self.token = secrets.token_hex(8)
        self.peak: int | None = None
        self.error: str | None = None

    def _read(self) -> dict[str, Any] | None:
        done = self.conn.run(["cat", f"{self.remote_dir}/peaks.json"], check=False, timeout=15)
        try:
            data: dict[str, Any] = json.loads(done.stdout) if done.returncode == 0 else {}
        except json.JSONDecodeError:
            return None
        return data if data.get("token") == self.token else None

    def __enter__(self) -> RemotePeak:
        self.conn.run_line(f"echo {self.token} > {self.remote_dir}/peaks.request", timeout=15)
        deadline = time.monotonic() + self.ack_timeout_s
        while self._read() is None:  # the sampler on the db host has begun this window's peak
            if time.monotonic() > deadline:
                self.error = "the db host's session sampler did not answer"
                break
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.error is not None:
            return
        data = self._read()
        if data is None:
            self.error = "the db host's session sampler lost this window's request"
            return
        peaks: dict[str, int] = data.get("peaks", {})
        self.peak = sum(peaks.values()) if self.database is None else peaks.get(self.database, 0)
        self.error = data.get("error")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
