"""A stack's server on the app host, started over SSH: the fourth launcher behind the Protocol.

It builds the same catalog argv as the local launchers, bound to the app host's address
instead of loopback, and runs it under `setsid` there (its own process group, stopped by that
group on that host). What it runs was staged there first (stage/staging.py: the environment
built at the same hash, the apps copied): the argv and environment built here name local paths,
which `paths` rewrites to the staged ones.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pywebbench.catalog.model import LaunchSpec
from pywebbench.loadgen.base import taskset_prefix
from pywebbench.measure.accounting import GroupUsage
from pywebbench.measure.launchers import RunningServer, base_environment
from pywebbench.plan.sessions import Session
from pywebbench.stage.ssh import SshConnection, SshError

_USAGE = """
import os, sys
mode, target = sys.argv[1], int(sys.argv[2])
tck, page = os.sysconf("SC_CLK_TCK"), os.sysconf("SC_PAGE_SIZE")
stats, kids = {}, {}
for d in os.listdir("/proc"):
    if not d.isdigit():
        continue
    try:
        f = open("/proc/" + d + "/stat").read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        continue
    if f[0] != "Z":
        stats[int(d)] = f
        kids.setdefault(int(f[1]), []).append(int(d))
if mode == "group":
    chosen = [pid for pid, f in stats.items() if int(f[2]) == target]
else:
    chosen, todo = [], [target] if target in stats else []
    while todo:
        pid = todo.pop()
        chosen.append(pid)
        todo += [k for k in kids.get(pid, ()) if k in stats]
cpu = sum(int(stats[p][11]) + int(stats[p][12]) + int(stats[p][13]) + int(stats[p][14]) for p in chosen)
rss = sum(int(stats[p][21]) for p in chosen) * page
print(cpu / tck, rss / 2**20, len(chosen))
"""
"""CPU (live processes' own and their reaped children's), RSS and process count from
/proc/PID/stat (fields 5, 14-17, 24) of a process group ("group") or of a process and all its
descendants whatever their groups ("tree": PostgreSQL and pgbouncer under the db role)."""


def _usage(conn: SshConnection, mode: str, target: int) -> GroupUsage | None:
    try:
        done = conn.run(["python3", "-c", _USAGE, mode, str(target)], timeout=15)
        cpu, rss, count = done.stdout.split()
        return GroupUsage(float(cpu), float(rss), int(count))
    except (SshError, ValueError, subprocess.TimeoutExpired):
        return None


def group_usage(conn: SshConnection, pgid: int) -> GroupUsage | None:
    """A process group's CPU seconds so far, RSS and process count on `conn`'s host; None if unreadable.

    Any role started in its own group (the app's server, the upstream and proxy roles) is read so."""
    return _usage(conn, "group", pgid)


def tree_usage(conn: SshConnection, root: int) -> GroupUsage | None:
    """CPU seconds so far, RSS and process count of `root`'s tree on `conn`'s host; None if unreadable."""
    return _usage(conn, "tree", root)


_FREE_PORT = "import socket,sys; s=socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1])"


def machine_info(conn: SshConnection) -> dict[str, Any]:
    """The host's CPUs, kernel, arch and CPU model, for the placement record."""
    done = conn.run(["sh", "-c", "nproc; uname -r; uname -m; (grep -m1 'model name' /proc/cpuinfo || true)"],
                    check=False, timeout=20)
    lines = done.stdout.strip().splitlines()
    try:
        cpus: int | None = int(lines[0])
    except (IndexError, ValueError):
        cpus = None
    return {"cpus": cpus, "kernel": lines[1] if len(lines) > 1 else "",
            "arch": lines[2] if len(lines) > 2 else "",
            "cpu_model": lines[3].split(":", 1)[-1].strip() if len(lines) > 3 else ""}


def free_port(conn: SshConnection, address: str) -> int:
    return int(conn.run(["python3", "-c", _FREE_PORT, address], timeout=15).stdout.strip())



@dataclass(frozen=True)
class RemoteLauncher:
    """The stack's server on `conn`'s host, listening on `address` (the app host's own)."""

    conn: SshConnection
    address: str
    program: str
    """The environment's python (or a native binary), as a path on the app host."""
    remote_dir: str
    env_path: Path | None = None
    paths: tuple[tuple[str, str], ...] = ()
    """(local prefix, staged prefix on the app host): the environment's and the apps' directories."""

    def on_host(self, value: str) -> str:
        """A word of argv or an environment value, its local paths rewritten to the staged ones."""
        for local, staged in self.paths:
            value = value.replace(local, staged)
        return value

    def start(self, session: Session, label: str, app_env: dict[str, str], logs: Path,
              prefix: Sequence[str]) -> AbstractContextManager[RunningServer]:
        return self._start(session, label, app_env, logs)

    @contextmanager
    def _start(self, session: Session, label: str, app_env: dict[str, str], logs: Path) -> Iterator[RunningServer]:
        port = int(self.conn.run(["python3", "-c", _FREE_PORT, self.address], timeout=15).stdout.strip())
        launch = LaunchSpec(self.program, session.stack.framework.module, self.address, port, session.workers,
                            session.threads)
        cpus = session.trials[0].stack_cpus if session.trials else ()
        argv = [self.on_host(word) for word in (*taskset_prefix(cpus), *session.stack.server.build_argv(launch))]
        env = {k: self.on_host(v) for k, v in {**base_environment(str(Path(self.program).parent)), **app_env}.items()}
        if self.env_path is not None:
            env["VIRTUAL_ENV"] = str(self.env_path)
        proc = self.conn.spawn(argv, name=label.replace(":", "_").replace("/", "_"), remote_dir=self.remote_dir,
                               local_log_dir=logs, env=env)
        with proc:
            def tail() -> str:
                try:
                    _, err = proc.fetch_logs()
                    return "\n".join(err.read_text(errors="replace").splitlines()[-15:])
                except (OSError, SshError):
                    return ""

            def usage() -> GroupUsage | None:
                return None if proc.pgid is None else group_usage(self.conn, proc.pgid)

            yield RunningServer(port, tuple(argv), lambda: proc.poll() is None, tail, (), proc.poll,
                                proc.terminate, host=self.address, group_usage=usage)
