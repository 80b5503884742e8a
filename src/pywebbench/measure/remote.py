"""A stack's server on the app host, started over SSH: the fourth launcher behind the Protocol.

It builds the same catalog argv as the local launchers, bound to the app host's address
instead of loopback, and runs it under `setsid` there (its own process group, stopped by that
group on that host). Staging: the app host must hold the stack's environment at the same path
and hash as here. On the netns rig the hosts share this machine's filesystem, so staging is a
check that the environment's python is there; on a real host `stage_command` is what builds it
(uv, from the same locked requirements, into the same hash-named directory).
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

from pywebbench.catalog.model import LaunchSpec
from pywebbench.loadgen.base import taskset_prefix
from pywebbench.measure.launchers import GroupUsage, RunningServer, base_environment
from pywebbench.plan.sessions import Session
from pywebbench.stage.ssh import SshConnection, SshError

_GROUP_USAGE = """
import os, sys
pgid, tck, page = int(sys.argv[1]), os.sysconf("SC_CLK_TCK"), os.sysconf("SC_PAGE_SIZE")
cpu = rss = n = 0
for d in os.listdir("/proc"):
    if not d.isdigit():
        continue
    try:
        f = open("/proc/" + d + "/stat").read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        continue
    if int(f[2]) != pgid or f[0] == "Z":
        continue
    cpu += int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
    rss += int(f[21]) * page
    n += 1
print(cpu / tck, rss / 2**20, n)
"""
"""The server's process group on its host: CPU (its live processes' own and reaped children's),
RSS and process count, from /proc/PID/stat (fields 5, 14-17, 24)."""

def group_usage(conn: SshConnection, pgid: int) -> GroupUsage | None:
    """A process group's CPU seconds so far, RSS and process count on `conn`'s host; None if unreadable.

    Any role started in its own group (the app's server, the db and upstream roles) is read the same way."""
    try:
        done = conn.run(["python3", "-c", _GROUP_USAGE, str(pgid)], timeout=15)
        cpu, rss, count = done.stdout.split()
        return GroupUsage(float(cpu), float(rss), int(count))
    except (SshError, ValueError, subprocess.TimeoutExpired):
        return None


_TREE_USAGE = """
import os, sys
root, tck, page = int(sys.argv[1]), os.sysconf("SC_CLK_TCK"), os.sysconf("SC_PAGE_SIZE")
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
cpu = rss = n = 0
todo = [root] if root in stats else []
while todo:
    pid = todo.pop()
    f = stats[pid]
    cpu += int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
    rss += int(f[21]) * page
    n += 1
    todo += [k for k in kids.get(pid, ()) if k in stats]
print(cpu / tck, rss / 2**20, n)
"""
"""A process and all its descendants on its host, whatever their process groups: a role whose
services start their own groups (PostgreSQL and pgbouncer under the db role)."""


def tree_usage(conn: SshConnection, root: int) -> GroupUsage | None:
    """CPU seconds so far, RSS and process count of `root`'s tree on `conn`'s host; None if unreadable."""
    try:
        done = conn.run(["python3", "-c", _TREE_USAGE, str(root)], timeout=15)
        cpu, rss, count = done.stdout.split()
        return GroupUsage(float(cpu), float(rss), int(count))
    except (SshError, ValueError, subprocess.TimeoutExpired):
        return None


_FREE_PORT = "import socket,sys; s=socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1])"


class StagingError(RuntimeError):
    """The app host lacks the stack's environment and it could not be built there."""


def stage_command(uv: str, env_path: Path, requirements: Sequence[str], python: str = "python3") -> str:
    """The remote shell line that builds a stack environment where the hash says it lives."""
    reqs = " ".join(shlex.quote(r) for r in requirements)
    where = shlex.quote(str(env_path))
    return (f"[ -x {where}/bin/python ] || ({shlex.quote(uv)} venv --python {shlex.quote(python)} {where} && "
            f"{shlex.quote(uv)} pip install --python {where}/bin/python {reqs})")


def stage_environment(conn: SshConnection, env_path: Path, uv: str | None = None,
                      requirements: Sequence[str] = ()) -> str:
    """Make sure the app host has the environment; say how (checked on a shared filesystem, built otherwise)."""
    probe = conn.run(["test", "-x", str(env_path / "bin" / "python")], check=False, timeout=15)
    if probe.returncode == 0:
        return "present on the app host" + (" (shared filesystem)" if conn.target.shared_fs else "")
    if uv is None or not requirements:
        raise StagingError(f"{conn.name} has no environment at {env_path} and no uv to build it")
    try:
        conn.run_line(stage_command(uv, env_path, requirements), timeout=900)
    except SshError as exc:
        raise StagingError(f"building the environment on {conn.name} failed: {exc}") from None
    return "built on the app host with uv"


@dataclass(frozen=True)
class RemoteLauncher:
    """The stack's server on `conn`'s host, listening on `address` (the app host's own)."""

    conn: SshConnection
    address: str
    program: str
    """The environment's python (or a native binary), as a path on the app host."""
    remote_dir: str
    env_path: Path | None = None

    def start(self, session: Session, label: str, app_env: dict[str, str], logs: Path,
              prefix: Sequence[str]) -> AbstractContextManager[RunningServer]:
        return self._start(session, label, app_env, logs)

    @contextmanager
    def _start(self, session: Session, label: str, app_env: dict[str, str], logs: Path) -> Iterator[RunningServer]:
        port = int(self.conn.run(["python3", "-c", _FREE_PORT, self.address], timeout=15).stdout.strip())
        launch = LaunchSpec(self.program, session.stack.framework.module, self.address, port, session.workers,
                            session.threads)
        cpus = session.trials[0].stack_cpus if session.trials else ()
        argv = [*taskset_prefix(cpus), *session.stack.server.build_argv(launch)]
        env = {**base_environment(str(Path(self.program).parent)), **app_env}
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
