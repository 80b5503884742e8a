"""Reaching an inventory host: the system OpenSSH client over one multiplexed connection.

One master connection per host (ControlMaster) carries every command of a run, so a command
costs a channel, not a handshake. A remote child runs under `setsid`, in its own session and
process group, and tells us its group id first; stopping it is TERM to that group, a grace
period, KILL, on the host where it runs. The same happens there when the harness dies, even
by SIGKILL: the child's command watches a stdin that only the harness holds open. A child
started with `channel=True` (a role, services/remote_role.py) keeps the channel's stdout for
its JSON lines and gets the harness's lines on its stdin through that same watcher. Keys are
only ever named by path, never read, copied or printed.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from pywebbench.core.jsonlines import ChannelClosed, LineReader, encode
from pywebbench.core.procs import DEFAULT_GRACE_S, ManagedProcess

CONNECT_TIMEOUT_S = 5


class SshError(RuntimeError):
    """The host could not be reached, refused us, or a remote command failed."""


@dataclass(frozen=True)
class SshTarget:
    """Where and as whom: what `ssh` needs, nothing else (a key by path, never its contents)."""

    address: str
    port: int = 22
    user: str | None = None
    key: Path | None = None
    known_hosts: Path | None = None
    """A known_hosts file of its own (the netns rig's host keys); None: the user's, as ssh reads it."""
    shared_fs: bool = False
    """The host sees this machine's files at the same paths (the netns rig): nothing to copy."""

    @property
    def destination(self) -> str:
        return f"{self.user}@{self.address}" if self.user else self.address


def remote_command(argv: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | None = None) -> str:
    """One shell line for the remote side: an explicit environment (`env -i`), quoted argv."""
    words = list(argv)
    if env is not None:
        words = ["env", "-i", *(f"{k}={v}" for k, v in env.items()), *words]
    line = shlex.join(words)
    return f"cd {shlex.quote(cwd)} && {line}" if cwd else line


REMOTE_GRACE_S = 2
"""TERM to KILL on the host, for a child whose harness has gone."""
_WATCHED = (
    # stdin moves to fd 3 (an asynchronous list's stdin would be /dev/null); the child, in a new
    # session, prints its group id and runs with its output in the logs; a watcher reads fd 3 until
    # it ends (the harness died, or the connection dropped: sshd leaves a session without a
    # terminal running) and then stops the child's group (`kill -SIG -PGID`: dash's kill takes no
    # `--`); the child's exit status is the line's.
    'exec 3<&0 </dev/null; '
    'setsid sh -c \'echo "$$"; o=$1 e=$2; shift 2; exec "$@" >"$o" 2>"$e" 3<&-\' sh "$@" & c=$!; '
    '{ cat <&3; kill -TERM "-$c"; sleep %d; kill -KILL "-$c"; } >/dev/null 2>&1 & w=$!; '
    'exec 3<&-; wait "$c"; s=$?; kill "$w" 2>/dev/null; exit "$s"'
) % REMOTE_GRACE_S
_CHANNELED = (
    # The same, with the child's stdout left on the line (the channel's lines come back over
    # SSH) and its stdin a FIFO the watcher fills from fd 3: the harness's requests reach the
    # child through the watcher, which still sees the harness's end first and stops the group.
    'exec 3<&0 </dev/null; f=$1; rm -f "$f"; mkfifo -m 600 "$f" || exit 125; '
    'setsid sh -c \'echo "$$"; f=$1 e=$2; shift 2; exec "$@" <"$f" 2>"$e" 3<&-\' sh "$@" & c=$!; '
    '{ cat <&3 >"$f"; kill -TERM "-$c"; sleep %d; kill -KILL "-$c"; } >/dev/null 2>&1 & w=$!; '
    'exec 3<&-; wait "$c"; s=$?; kill "$w" 2>/dev/null; rm -f "$f"; exit "$s"'
) % REMOTE_GRACE_S


def detached_command(argv: Sequence[str], stdout: str, stderr: str, env: Mapping[str, str] | None = None,
                     cwd: str | None = None, channel: str | None = None) -> str:
    """Run argv in a new session (`setsid`: its own process group, waited for), print that
    group's id on the first line, send the child's output to remote log files; stop that group
    when the line's stdin ends (run it with ManagedProcess(hold_stdin=True)). With `channel` (a
    FIFO's path on the host), the child's stdout is the line's and its stdin the line's too."""
    if channel is not None:
        return remote_command(["sh", "-c", _CHANNELED, "sh", channel, stderr, *argv], env=env, cwd=cwd)
    return remote_command(["sh", "-c", _WATCHED, "sh", stdout, stderr, *argv], env=env, cwd=cwd)


class SshConnection:
    """A ControlMaster connection to one host, opened on enter and closed on exit."""

    def __init__(self, target: SshTarget, control_dir: Path, name: str) -> None:
        self.target = target
        self.name = name
        control_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.control_path = control_dir / f"{name}.sock"
        self._log_dir = control_dir
        self._master: ManagedProcess | None = None

    def options(self) -> list[str]:
        opts = ["-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
                "-o", f"ControlPath={self.control_path}", "-o", "LogLevel=ERROR",
                "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3", "-p", str(self.target.port)]
        if self.target.key is not None:
            opts += ["-i", str(self.target.key), "-o", "IdentitiesOnly=yes"]
        if self.target.known_hosts is not None:
            opts += ["-o", f"UserKnownHostsFile={self.target.known_hosts}", "-o", "StrictHostKeyChecking=yes",
                     "-o", "GlobalKnownHostsFile=/dev/null"]
        return opts

    def ssh_argv(self, command: str, *, tty: bool = False) -> list[str]:
        return ["ssh", *self.options(), "-T" if not tty else "-t", self.target.destination, "--", command]

    def open(self) -> SshConnection:
        """The master, in its own process group; waits until it is usable or says why not."""
        argv = ["ssh", *self.options(), "-M", "-N", "-o", "ControlPersist=no", self.target.destination]
        master = ManagedProcess(argv, env=_ssh_env(), log_dir=self._log_dir, name=f"{self.name}.master",
                                grace_s=2.0)
        master.start()
        self._master = master
        deadline = time.monotonic() + CONNECT_TIMEOUT_S + 5
        while time.monotonic() < deadline:
            if master.poll() is not None:
                why = master.stderr_tail(3).strip().splitlines()
                master.stop()
                self._master = None
                raise SshError(f"cannot reach {self.target.destination} port {self.target.port}: "
                               f"{why[-1] if why else 'ssh exited'}")
            check = subprocess.run(["ssh", *self.options(), "-O", "check", self.target.destination],
                                   capture_output=True, env=_ssh_env(), check=False, timeout=10)
            if check.returncode == 0:
                return self
            time.sleep(0.05)
        self.close()
        raise SshError(f"cannot reach {self.target.destination} port {self.target.port}: timed out")

    def close(self) -> None:
        if self._master is not None:
            subprocess.run(["ssh", *self.options(), "-O", "exit", self.target.destination],
                           capture_output=True, env=_ssh_env(), check=False, timeout=10)
            self._master.stop()
            self._master = None

    def __enter__(self) -> SshConnection:
        return self.open()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def run(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, timeout: float = 60.0,
            check: bool = True, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
        """A short command to completion; its output comes back whole."""
        return self.run_line(remote_command(argv, env, cwd), timeout=timeout, check=check)

    def run_line(self, line: str, *, timeout: float = 60.0, check: bool = True) -> subprocess.CompletedProcess[str]:
        try:
            done = subprocess.run(self.ssh_argv(line), capture_output=True, text=True, env=_ssh_env(),
                                  stdin=subprocess.DEVNULL, timeout=timeout, check=False, process_group=0)
        except subprocess.TimeoutExpired:
            raise SshError(f"{self.name}: {line[:80]} did not finish in {timeout:.0f} s") from None
        if check and done.returncode != 0:
            why = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            raise SshError(f"{self.name}: {line[:80]}: {why}")
        return done

    def send(self, line: str, data: bytes, *, timeout: float = 300.0) -> None:
        """`line` on the host with `data` on its stdin (a tar stream, a file's bytes)."""
        try:
            done = subprocess.run(self.ssh_argv(line), input=data, capture_output=True, env=_ssh_env(),
                                  timeout=timeout, check=False, process_group=0)
        except subprocess.TimeoutExpired:
            raise SshError(f"{self.name}: {line[:80]} did not finish in {timeout:.0f} s") from None
        if done.returncode != 0:
            why = (done.stderr.decode(errors="replace").strip().splitlines() or [f"exit {done.returncode}"])[-1]
            raise SshError(f"{self.name}: {line[:80]}: {why}")

    def fetch(self, remote: str, local: Path) -> None:
        """Copy a remote file back (logs, reports) over the same connection."""
        local.parent.mkdir(parents=True, exist_ok=True)
        with open(local, "wb") as out:
            done = subprocess.run(self.ssh_argv(remote_command(["cat", remote])), stdout=out,
                                  stderr=subprocess.PIPE, env=_ssh_env(), stdin=subprocess.DEVNULL,
                                  timeout=120, check=False, process_group=0)
        if done.returncode != 0:
            raise SshError(f"{self.name}: cannot copy {remote}: {done.stderr.decode(errors='replace').strip()}")

    def spawn(self, argv: Sequence[str], *, name: str, remote_dir: str, local_log_dir: Path,
              env: Mapping[str, str] | None = None, cwd: str | None = None,
              grace_s: float = DEFAULT_GRACE_S, channel: bool = False) -> RemoteProcess:
        return RemoteProcess(self, argv, name=name, remote_dir=remote_dir, local_log_dir=local_log_dir,
                             env=env, cwd=cwd, grace_s=grace_s, channel=channel).start()


class RemoteProcess:
    """A child on a remote host in its own process group, stopped by that group there.

    The local `ssh` carrying it is itself a ManagedProcess (own group here); its exit is the
    child's exit, since the line waits for the child and sshd passes the status back. Its first
    line on the carrier's stdout is the group id; with `channel`, the child's own stdout follows
    (JSON lines, read with `receive`) and `send` writes lines to its stdin.
    """

    def __init__(self, conn: SshConnection, argv: Sequence[str], *, name: str, remote_dir: str,
                 local_log_dir: Path, env: Mapping[str, str] | None, cwd: str | None, grace_s: float,
                 channel: bool = False) -> None:
        self.conn = conn
        self.argv = tuple(argv)
        self.name = name
        self.remote_dir = remote_dir
        self.local_log_dir = local_log_dir
        self.env = env
        self.cwd = cwd
        self.grace_s = grace_s
        self.channel = channel
        self.pgid: int | None = None
        self._carrier: ManagedProcess | None = None
        self._reader: LineReader | None = None
        self._stopped: int | None = None

    @property
    def remote_stdout(self) -> str:
        return f"{self.remote_dir}/{self.name}.stdout.log"

    @property
    def remote_stderr(self) -> str:
        return f"{self.remote_dir}/{self.name}.stderr.log"

    def start(self) -> RemoteProcess:
        # The log directory is made by the same line: one round trip per start, not two.
        fifo = f"{self.remote_dir}/{self.name}.in" if self.channel else None
        line = (f"mkdir -p {shlex.quote(self.remote_dir)} && "
                + detached_command(self.argv, self.remote_stdout, self.remote_stderr, self.env, self.cwd, fifo))
        carrier = ManagedProcess(self.conn.ssh_argv(line), env=_ssh_env(), log_dir=self.local_log_dir,
                                 name=f"{self.name}.ssh", grace_s=2.0, hold_stdin=True, pipe_stdout=True)
        carrier.start()
        self._carrier = carrier
        self._reader = LineReader(carrier.stdout)
        try:
            first = self._reader.line(15.0)
        except ChannelClosed:
            first = None
        if first is not None and first.strip().isdigit():
            self.pgid = int(first)
            return self
        carrier.stop()
        raise SshError(f"{self.conn.name}: {self.name} did not start: {carrier.stderr_tail(3).strip() or 'no group id'}")

    def send(self, message: dict[str, Any]) -> None:
        """One JSON line to the child's stdin (a channel's request); SshError if the carrier has gone."""
        if self._carrier is None or not self.channel:
            raise RuntimeError(f"{self.name} has no channel")
        try:
            self._carrier.stdin.write(encode(message))
            self._carrier.stdin.flush()
        except (BrokenPipeError, ValueError):
            raise SshError(f"{self.conn.name}: {self.name} has ended") from None

    def receive(self, timeout_s: float) -> dict[str, Any] | None:
        """The child's next JSON line (None: none within timeout_s); ChannelClosed once it has ended."""
        if self._reader is None or not self.channel:
            raise RuntimeError(f"{self.name} has no channel")
        return self._reader.message(timeout_s)

    def poll(self) -> int | None:
        if self._stopped is not None:
            return self._stopped
        return None if self._carrier is None else self._carrier.poll()

    def wait(self, timeout: float | None = None) -> int:
        if self._carrier is None:
            raise RuntimeError(f"{self.name} was not started")
        return self._carrier.wait(timeout)

    def group_alive(self) -> bool:
        """True while any process of the group, zombies excepted, is left on the host (as core/procs.py
        reads a local group). A member outliving its parent (wrk after its wrapper, both TERMed)
        stays a zombie until the host's init reaps it: `kill -0` counted it, 1.5 s of a settle."""
        if self.pgid is None:
            return False
        live = f"ps -A -o pgid= -o stat= | awk '$1 == {self.pgid} && $2 !~ /^Z/ {{ f = 1 }} END {{ exit !f }}'"
        line = f"if command -v ps >/dev/null 2>&1; then {live}; else kill -0 -- -{self.pgid}; fi"  # no ps: as before
        done = self.conn.run_line(line, check=False, timeout=15)
        return done.returncode == 0

    def signal(self, sig: str) -> None:
        if self.pgid is not None:
            self.conn.run(["kill", f"-{sig}", "--", f"-{self.pgid}"], check=False, timeout=15)

    def terminate(self) -> None:
        if self._stopped is None:
            self.signal("TERM")

    def stop(self) -> int | None:
        """TERM to the remote group, grace, KILL, then the local carrier is reaped. Idempotent."""
        if self._carrier is None or self._stopped is not None:
            return self._stopped
        if self._carrier.poll() is None or self.group_alive():
            self.signal("TERM")
            deadline = time.monotonic() + self.grace_s
            while time.monotonic() < deadline and self.group_alive():
                time.sleep(0.1)
            if self.group_alive():
                self.signal("KILL")
        try:
            code: int | None = self._carrier.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        self._carrier.stop()
        self._stopped = code if code is not None else self._carrier.poll()
        return self._stopped

    def fetch_logs(self) -> tuple[Path, Path]:
        """The child's remote stdout and stderr, copied into the local log directory."""
        out = self.local_log_dir / f"{self.name}.stdout.log"
        err = self.local_log_dir / f"{self.name}.stderr.log"
        for remote, local in ((self.remote_stdout, out), (self.remote_stderr, err)):
            if not self.conn.target.shared_fs:
                self.conn.fetch(remote, local)
            elif Path(remote) != local:  # the same filesystem: a local copy will do
                local.parent.mkdir(parents=True, exist_ok=True)
                try:
                    shutil.copyfile(remote, local)
                except FileNotFoundError:
                    local.write_bytes(b"")
        return out, err

    def __enter__(self) -> RemoteProcess:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def _ssh_env() -> dict[str, str]:
    """ssh gets no agent and no harness environment: only the key the inventory names is offered."""
    import os
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8"}
