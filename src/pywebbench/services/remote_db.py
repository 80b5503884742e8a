"""The db role on its own host: PostgreSQL behind pgbouncer, started there by the same services.

On the db host, `python -m pywebbench.services.remote_db WORK_DIR ROWS MAX_SESSIONS LANES`
starts both (on that host's loopback, as locally; one pgbouncer database per lane when several
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
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from pywebbench.services import ServiceError
from pywebbench.services.pgbouncer import PgBouncerService, lane_database
from pywebbench.services.postgres import PostgresConfig, PostgresService
from pywebbench.services.remote_role import start_role
from pywebbench.stage.ssh import RemoteProcess, SshConnection


@dataclass(frozen=True)
class RemoteDbInfo:
    port: int
    """pgbouncer's port on the db host's loopback."""
    dsn: str = field(repr=False)
    postgres_version: str


def _stop(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


def main(argv: Sequence[str]) -> int:
    work_dir, rows, sessions, lanes = Path(argv[0]), int(argv[1]), int(argv[2]), int(argv[3])
    signal.signal(signal.SIGTERM, _stop)
    work_dir.mkdir(parents=True, exist_ok=True)
    # Every lane may hold its cap at once (app-side pools keep sessions while idle), as locally.
    with PostgresService(work_dir / "postgres", PostgresConfig(rows=rows, max_db_sessions=sessions * lanes)) as pg, \
            PgBouncerService(work_dir / "pgbouncer", pg.info, max_db_sessions=sessions, lanes=lanes) as bouncer:
        out = work_dir / "db.json.tmp"
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump({"port": bouncer.info.port, "dsn": bouncer.dsn(), "postgres_version": pg.info.version}, handle)
        out.replace(work_dir / "db.json")
        _serve_peaks(bouncer, work_dir)
    return 0


def _serve_reset(bouncer: PgBouncerService, work_dir: Path, done: str) -> str:
    """Seed 000's habit, on the db host: an empty pool when the harness asks (between launches)."""
    try:
        asked = (work_dir / "reset.request").read_text().strip()
    except FileNotFoundError:
        return done
    if asked and asked != done:
        try:
            note = f"dropped {bouncer.reset_pool()} clients"
        except ServiceError as exc:
            note = f"failed: {str(exc).splitlines()[0]}"
        (work_dir / "reset.json.tmp").write_text(json.dumps({"token": asked, "note": note}))
        (work_dir / "reset.json.tmp").replace(work_dir / "reset.json")
    return asked


def _serve_peaks(bouncer: PgBouncerService, work_dir: Path, interval_s: float = 0.05) -> None:
    """Sample pgbouncer's server sessions per database while a request's token is current."""
    request, answer, scratch = work_dir / "peaks.request", work_dir / "peaks.json", work_dir / "peaks.json.tmp"
    token, error, reset = "", None, ""
    peaks: dict[str, int] = {}
    while True:
        reset = _serve_reset(bouncer, work_dir, reset)
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
            scratch.write_text(json.dumps({"token": token, "peaks": peaks, "error": error}))
            scratch.replace(answer)
        time.sleep(interval_s)


class RemoteDb:
    """`with RemoteDb(conn, python, work_dir, rows) as db:` -> db.info; stopped by its group on exit."""

    def __init__(self, conn: SshConnection, python: str, work_dir: Path, rows: int = 1000, sessions: int = 20,
                 ready_timeout_s: float = 120.0, lanes: int = 1) -> None:
        self.conn = conn
        self.python = python
        self.work_dir = work_dir
        self.rows = rows
        self.sessions = sessions
        self.lanes = lanes
        self.ready_timeout_s = ready_timeout_s
        self._proc: RemoteProcess | None = None
        self.info: RemoteDbInfo | None = None

    def __enter__(self) -> RemoteDb:
        self._proc, data = start_role(self.conn, self.python, "pywebbench.services.remote_db",
                                      [str(self.rows), str(self.sessions), str(self.lanes)], role="db",
                                      work_dir=self.work_dir,
                                      ready_file="db.json", timeout_s=self.ready_timeout_s)
        self.info = RemoteDbInfo(int(data["port"]), str(data["dsn"]), str(data["postgres_version"]))
        return self

    def reset_pool(self, timeout_s: float = 30.0) -> str:
        """Close pgbouncer's server sessions on the db host, as the local backing does between launches."""
        token = secrets.token_hex(8)
        self.conn.run_line(f"echo {token} > {self.work_dir}/reset.request", timeout=15)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            done = self.conn.run(["cat", f"{self.work_dir}/reset.json"], check=False, timeout=15)
            try:
                data = json.loads(done.stdout) if done.returncode == 0 else {}
            except json.JSONDecodeError:
                data = {}
            if data.get("token") == token:
                return str(data.get("note", ""))
            time.sleep(0.05)
        raise ServiceError(f"the db role on {self.conn.name} did not reset its pool in {timeout_s:.0f} s")

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
