"""The db role on its own host: PostgreSQL behind pgbouncer, started there by the same services.

On the db host, `python -m pywebbench.services.remote_db WORK_DIR ROWS MAX_SESSIONS` starts
both (on that host's loopback, as locally), writes where pgbouncer listens and its DSN to
WORK_DIR/db.json (0600: the DSN holds the run's password), and holds them until SIGTERM. The
other roles reach pgbouncer only through the link proxy on the db host (services/links.py),
which is also where the link's delay is added. On the harness side, `RemoteDb` starts it over
SSH in its own process group and reads the file back.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType

from pywebbench.services.pgbouncer import PgBouncerService
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
    work_dir, rows, sessions = Path(argv[0]), int(argv[1]), int(argv[2])
    signal.signal(signal.SIGTERM, _stop)
    work_dir.mkdir(parents=True, exist_ok=True)
    with PostgresService(work_dir / "postgres", PostgresConfig(rows=rows, max_db_sessions=sessions)) as pg, \
            PgBouncerService(work_dir / "pgbouncer", pg.info, max_db_sessions=sessions) as bouncer:
        out = work_dir / "db.json.tmp"
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump({"port": bouncer.info.port, "dsn": bouncer.dsn(), "postgres_version": pg.info.version}, handle)
        out.replace(work_dir / "db.json")
        while True:
            time.sleep(3600)
    return 0


class RemoteDb:
    """`with RemoteDb(conn, python, work_dir, rows) as db:` -> db.info; stopped by its group on exit."""

    def __init__(self, conn: SshConnection, python: str, work_dir: Path, rows: int = 1000, sessions: int = 20,
                 ready_timeout_s: float = 120.0) -> None:
        self.conn = conn
        self.python = python
        self.work_dir = work_dir
        self.rows = rows
        self.sessions = sessions
        self.ready_timeout_s = ready_timeout_s
        self._proc: RemoteProcess | None = None
        self.info: RemoteDbInfo | None = None

    def __enter__(self) -> RemoteDb:
        self._proc, data = start_role(self.conn, self.python, "pywebbench.services.remote_db",
                                      [str(self.rows), str(self.sessions)], role="db", work_dir=self.work_dir,
                                      ready_file="db.json", timeout_s=self.ready_timeout_s)
        self.info = RemoteDbInfo(int(data["port"]), str(data["dsn"]), str(data["postgres_version"]))
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._proc is not None:
            self._proc.grace_s = 20.0  # PostgreSQL's fast shutdown
            self._proc.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
