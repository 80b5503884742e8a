"""Private services are private: loopback only, a fresh password per run kept out of every
file a run leaves, configs and data readable by the services' own user and no one else."""

from __future__ import annotations

import json
import os
import pwd
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest

from pywebbench.catalog.registry import build_catalog
from pywebbench.plan.options import RunOptions
from pywebbench.stage.envs import cache_root
from pywebbench.results.store import load_results
from pywebbench.services import HOST, unprivileged_user
from pywebbench.services.backing import Backing, BackingConfig
from pywebbench.services.nginx import NginxService
from pywebbench.services.postgres import USER
from pywebbench.catalog.workloads import Needs

from .conftest import pywebbench

# A DSN that carries a password in clear: postgresql://user:secret@host
DSN_WITH_PASSWORD = re.compile(r"postgres(?:ql)?://[^:/@\s\"']+:(?!\*\*\*@)[^@\s\"']+@")


@pytest.fixture(scope="module")
def backing() -> Iterator[Backing]:
    config = BackingConfig(needs=frozenset({Needs.DATABASE, Needs.UPSTREAM}), settings=RunOptions(db_rows=2_000).services,
                           measure_upstream_ceiling=False)
    with Backing(config, cache_root()) as started:
        yield started


def _listening(pids: tuple[int, ...]) -> set[tuple[str, int]]:
    found: set[tuple[str, int]] = set()
    for pid in pids:
        root = psutil.Process(pid)
        for proc in (root, *root.children(recursive=True)):
            for conn in proc.net_connections(kind="inet"):
                if conn.status == psutil.CONN_LISTEN:
                    found.add((conn.laddr.ip, conn.laddr.port))
    return found


def test_every_private_service_listens_on_loopback_only(backing: Backing, tmp_path: Path) -> None:
    assert backing.postgres is not None and backing.pgbouncer is not None and backing.upstream is not None
    with NginxService(tmp_path / "nginx") as nginx:
        services = {"postgres": backing.postgres.root_pids(), "pgbouncer": backing.pgbouncer.root_pids(),
                    "upstream": backing.upstream.root_pids(), "nginx": nginx.root_pids()}
        for name, pids in services.items():
            addresses = _listening(pids)
            assert addresses, f"{name} listens nowhere"
            assert {ip for ip, _ in addresses} == {HOST}, f"{name} listens on {sorted(addresses)}"


def test_the_password_is_fresh_and_works_only_as_itself(backing: Backing) -> None:
    assert backing.postgres is not None and backing.pgbouncer is not None
    password = backing.postgres.info.password
    assert len(password) >= 32 and password != "bench"
    assert backing.pgbouncer.admin_password not in ("", "pwb_admin", password)
    port = backing.postgres.info.port
    with pytest.raises(psycopg.OperationalError):  # the old constant no longer opens the cluster
        psycopg.connect(host=HOST, port=port, user=USER, password="bench", dbname="bench", connect_timeout=5)
    # What an app gets (PWB_DSN through pgbouncer) works...
    stack = build_catalog().resolve("flask:gunicorn-sync")
    env = backing.app_environment(stack)
    with psycopg.connect(env["PWB_DSN"], connect_timeout=5) as conn:
        assert conn.execute("SELECT count(*) FROM bench").fetchone() == (2_000,)
    # ...and what results keep of the services never holds it.
    records = json.dumps([(r.name, r.version, r.config) for r in backing.records()])
    assert password not in records and backing.pgbouncer.admin_password not in records
    assert not DSN_WITH_PASSWORD.search(records)
    assert password not in repr(backing.postgres.info) and password not in repr(backing.pgbouncer.info)


def test_configs_and_data_are_not_world_readable(backing: Backing) -> None:
    assert backing.postgres is not None and backing.pgbouncer is not None
    pg_dir, bouncer_dir = backing.postgres.work_dir, backing.pgbouncer.work_dir
    private = [pg_dir, pg_dir / "data", pg_dir / "socket", bouncer_dir]
    files = [pg_dir / "data" / "postgresql.conf", bouncer_dir / "pgbouncer.ini", bouncer_dir / "userlist.txt",
             *pg_dir.glob("*.log"), *bouncer_dir.glob("*.log")]
    owner = unprivileged_user()
    for path in private + files:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}"
    if owner is not None:
        # Running as root: the server's user owns its configs (it reads them; they are 0600).
        uid = pwd.getpwnam(owner).pw_uid
        for path in [*private, pg_dir / "data" / "postgresql.conf", bouncer_dir / "pgbouncer.ini",
                     bouncer_dir / "userlist.txt"]:
            assert path.stat().st_uid == uid, path
    # No password in a file the services left readable, logs included.
    password = backing.postgres.info.password
    for path in pg_dir.glob("*.log"):
        assert password not in path.read_text(errors="replace")
    assert os.stat(backing.work_dir).st_mode & 0o044 == 0  # searchable, not listable


def test_a_db_run_leaves_no_password_anywhere(tmp_path: Path) -> None:
    """End to end: the app reaches PostgreSQL through pgbouncer with the run's password, and
    nothing the run leaves behind (results, logs, reports) holds a password in clear."""
    out = tmp_path / "run"
    done = pywebbench("run", "--stack", "starlette:uvicorn", "--workload", "db", "--duration", "1", "--warmup",
                      "0.5", "--settle", "0.2", "--db-rows", "20000", "--repeats", "1", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    texts = {"stdout": done.stdout, "stderr": done.stderr}
    for fmt in ("html", "markdown", "json", "csv"):
        texts[fmt] = pywebbench("report", str(out), "--format", fmt).stdout
    for path in out.rglob("*"):
        if path.is_file():
            texts[str(path)] = path.read_text(errors="replace")
    trials = load_results(out).trials
    assert trials and all(t.spec.workload == "db" and t.status.value == "ok" for t in trials)  # the password worked
    for name, text in texts.items():
        assert not DSN_WITH_PASSWORD.search(text), name
        assert "PWB_DSN" not in text or "PWB_DSN=postgres" not in text, name
