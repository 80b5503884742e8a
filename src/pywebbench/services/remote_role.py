"""Start a role's service module on its host over SSH and wait for its ready file.

The role module (services/remote_db.py, remote_upstream.py, remote_proxy.py) runs as
`python -m MODULE WORK_DIR ARGS...` on the host, in its own process group, and writes
WORK_DIR/READY (JSON) once serving; the process is stopped by its group. The host side of
that contract (`stop_on_sigterm`, `publish`, `serve_until_stopped`) is here too, so the roles
cannot drift apart on it.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

from pywebbench.stage.ssh import RemoteProcess, SshConnection, SshError

_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1"}


def start_role(conn: SshConnection, python: str, module: str, args: Sequence[str], *, role: str, work_dir: Path,
               ready_file: str, timeout_s: float) -> tuple[RemoteProcess, dict[str, Any]]:
    """The running process and what its ready file says; SshError (with its stderr's tail) if it never got ready."""
    remote = str(work_dir)
    conn.run(["rm", "-f", f"{remote}/{ready_file}"])
    proc = conn.spawn([python, "-m", module, remote, *args], name=role, remote_dir=remote,
                      local_log_dir=work_dir, env=_ENV)
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            done = conn.run(["cat", f"{remote}/{ready_file}"], check=False, timeout=15)
            if done.returncode == 0 and done.stdout.strip():
                data: dict[str, Any] = json.loads(done.stdout)
                return proc, data
            if proc.poll() is not None:
                break
            time.sleep(0.2)
        _, err = proc.fetch_logs()
        raise SshError(f"the {role} role on {conn.name} did not start: "
                       f"{' '.join(err.read_text(errors='replace').strip().splitlines()[-2:])}")
    except BaseException:
        proc.stop()
        raise


def _exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


def stop_on_sigterm() -> None:
    """On the host: the group's SIGTERM unwinds the role's `with` blocks, so its services stop cleanly."""
    signal.signal(signal.SIGTERM, _exit)


def publish(path: Path, data: dict[str, Any]) -> None:
    """On the host: a JSON answer written aside and renamed into place, so a reader never sees half
    of it; 0600, since some hold the run's password (the db role's DSN)."""
    scratch = path.with_name(path.name + ".tmp")
    fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(data, handle)
    scratch.replace(path)


def serve_until_stopped(ready: Path, data: dict[str, Any]) -> NoReturn:
    """On the host: say the role is ready, then hold its services until the group's SIGTERM."""
    publish(ready, data)
    while True:
        time.sleep(3600)
