"""Where a run's PostgreSQL cluster lives: a prepared one kept between runs.

initdb and the `bench` rows (1,000,000 by default) took most of a db run's service start. The
cluster is still the harness's own private instance (its data directory, a port and a fresh
password per start, run as an unprivileged user), but its directory is kept per row count and
seed under /var/tmp (PostgreSQL's user must reach it, so not under a 0700 home), verified at
each start by PostgresService's marker (format, rows, seed, server version) and rebuilt when
that is stale. One run holds it at a time (a lock file); a second run at the same time, or a
kept cluster that will not start, gets a fresh one in its own work directory as before.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CACHE_ENV = "PWB_POSTGRES_CACHE"
"""The directory the kept clusters live under; `off` keeps none (a fresh cluster every run)."""


def cache_root() -> Path | None:
    chosen = os.environ.get(CACHE_ENV, f"/var/tmp/pywebbench-postgres-{os.getuid()}")
    return None if chosen == "off" else Path(chosen)


@contextmanager
def kept_cluster(rows: int, seed: int) -> Iterator[Path | None]:
    """The kept cluster's directory for these rows, held for the run; None when there is none
    to use (turned off, or another run holds it)."""
    root = cache_root()
    if root is None:
        yield None
        return
    key = root / f"rows{rows}-seed{seed}"
    key.mkdir(parents=True, exist_ok=True)
    for part in (root, key):
        part.chmod(0o711)  # searchable by PostgreSQL's user, listable by no one else
    with (key / "lock").open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield None
            return
        try:
            yield key / "cluster"
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def forget(cluster: Path) -> None:
    """A kept cluster that would not start: the next run builds it again."""
    shutil.rmtree(cluster, ignore_errors=True)
