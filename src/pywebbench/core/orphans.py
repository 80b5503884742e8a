"""What a run would leave behind if the harness were killed, and what removes it.

Every child goes through `procs.ManagedProcess`, in a process group of its own. While a run is
under way (`guarded_run`, entered by `execute`), each group it starts is written down under the
cache (`children/<harness pid>-<pgid>.json`: the group, its leader's pid and create time, the
harness's pid and create time), and so are the run's cgroups. A guard process started with the
run, in a session of its own, holds the read end of a pipe whose write end only the harness has:
when the harness dies, SIGKILL included, the pipe ends and the guard stops every recorded group
at once (TERM, grace, KILL), the workers a server forked included, which PR_SET_PDEATHSIG
(core/procs.py) does not reach. Should the guard die too, the next run's start sweeps what a dead
harness left. A group is touched only while its record still describes it: a live leader with
another create time means its pid was recycled and the group is someone else's.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

SWEEP_GRACE_S = 1.0
"""TERM to KILL: a worker whose master is gone has nothing left to finish."""
SAME_START_S = 0.05
"""Create times read twice from /proc agree far closer than this; a recycled pid's differs by more."""
RMDIR_WAIT_S = 1.0
"""A cgroup stays busy for a moment after its last process exited."""
GUARD_END_WAIT_S = 10.0


@dataclass(frozen=True)
class Harness:
    """One harness process: its pid and create time, so a recycled pid is not taken for it."""

    pid: int
    create_time: float

    @staticmethod
    def me() -> Harness:
        return Harness(os.getpid(), psutil.Process().create_time())

    def alive(self) -> bool:
        """Running (a zombie is not: its parent may never reap it) under the recorded create time."""
        try:
            proc = psutil.Process(self.pid)
            return abs(proc.create_time() - self.create_time) < SAME_START_S and proc.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False


@dataclass(frozen=True)
class GroupRecord:
    """A process group a run started: its leader (pid == pgid) and the harness that started it."""

    pgid: int
    pid: int
    create_time: float
    """The leader's: workers forked later are no older than this."""
    harness: Harness
    name: str
    path: Path


@dataclass(frozen=True)
class CgroupRecord:
    """The cgroup directories a run made (one per hierarchy), each with a directory per role."""

    paths: tuple[Path, ...]
    harness: Harness
    path: Path


Record = GroupRecord | CgroupRecord


@dataclass(frozen=True)
class Swept:
    processes: int
    cgroups: int
    """Run cgroup directories removed (a run makes one per hierarchy, its roles' inside)."""
    harnesses: tuple[int, ...]
    """The pids of the dead harnesses whose leftovers were stopped or removed."""

    def line(self) -> str | None:
        """One line for the terminal, or None when nothing was left."""
        if not self.processes and not self.cgroups:
            return None
        parts = [f"{self.processes} process{'' if self.processes == 1 else 'es'}"] if self.processes else []
        if self.cgroups:
            parts.append("the cgroups")
        pids = ", ".join(map(str, self.harnesses))
        runs = f"a killed run (pid {pids})" if len(self.harnesses) == 1 else f"killed runs (pids {pids})"
        return f"swept {' and '.join(parts)} left by {runs}"


class Registry:
    """The records of one harness's run: written as its children start, removed as they stop."""

    def __init__(self, directory: Path, harness: Harness) -> None:
        self.directory = directory
        self.harness = harness

    def add_group(self, pid: int, name: str) -> None:
        try:
            create_time = psutil.Process(pid).create_time()
        except psutil.Error:
            return  # gone already: nothing of it to leave behind
        self._write(f"{self.harness.pid}-{pid}.json", {"kind": "group", "pgid": pid, "pid": pid,
                                                        "create_time": create_time, "name": name})

    def remove_group(self, pgid: int) -> None:
        (self.directory / f"{self.harness.pid}-{pgid}.json").unlink(missing_ok=True)

    def add_cgroups(self, paths: Sequence[Path]) -> None:
        self._write(f"{self.harness.pid}-cgroups-{paths[0].name if paths else 'none'}.json",
                    {"kind": "cgroups", "paths": [str(p) for p in paths]})

    def _write(self, name: str, record: dict[str, object]) -> None:
        """Atomically (a reader never sees half a record), 0600; a failure leaves the run unguarded, not stopped."""
        record = {**record, "harness_pid": self.harness.pid, "harness_create_time": self.harness.create_time}
        try:
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".{name}.")
            with os.fdopen(fd, "w") as out:
                json.dump(record, out)
            os.replace(tmp, self.directory / name)
        except OSError:
            pass


_active: Registry | None = None
"""The registry of the run under way in this process (procs.ManagedProcess writes to it)."""


def record_group(pid: int, name: str) -> None:
    if _active is not None:
        _active.add_group(pid, name)


def forget_group(pgid: int) -> None:
    if _active is not None:
        _active.remove_group(pgid)


def record_cgroups(paths: Sequence[Path]) -> None:
    if _active is not None:
        _active.add_cgroups(paths)


def read_records(directory: Path) -> list[Record]:
    """Every record in `directory`; an unreadable one is removed (only a crash mid-rename leaves one)."""
    found: list[Record] = []
    try:
        paths = sorted(p for p in directory.glob("*.json") if not p.name.startswith("."))
    except OSError:
        return found
    for path in paths:
        try:
            data = json.loads(path.read_text())
            harness = Harness(int(data["harness_pid"]), float(data["harness_create_time"]))
            if data["kind"] == "cgroups":
                found.append(CgroupRecord(tuple(Path(p) for p in data["paths"]), harness, path))
            else:
                found.append(GroupRecord(int(data["pgid"]), int(data["pid"]), float(data["create_time"]), harness,
                                         str(data.get("name", "")), path))
        except FileNotFoundError:
            continue  # its run removed it meanwhile
        except (OSError, ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)
    return found


def sweep(directory: Path, *, only: Harness | None = None, grace_s: float = SWEEP_GRACE_S) -> Swept:
    """Stop what dead harnesses left (or, with `only`, what that harness left) and drop their records."""
    records = read_records(directory)
    stale = [r for r in records if (r.harness == only if only is not None else not r.harness.alive())]
    if not stale:
        return Swept(0, 0, ())
    groups = _by_group()
    victims: dict[int, psutil.Process] = {}
    left_by: set[int] = set()
    for record in stale:
        if isinstance(record, GroupRecord):
            for proc in _members(record, groups.get(record.pgid, [])):
                victims[proc.pid] = proc
                left_by.add(record.harness.pid)
    cgroups = [(r.harness.pid, path) for r in stale if isinstance(r, CgroupRecord) for path in r.paths
               if _is_cgroup(path)]
    for harness_pid, path in cgroups:
        for proc in _cgroup_members(path):
            victims.setdefault(proc.pid, proc)
            left_by.add(harness_pid)
    _stop_all(list(victims.values()), grace_s)
    removed = [harness_pid for harness_pid, path in cgroups if _remove_cgroup(path)]
    left_by.update(removed)
    for record in stale:
        if isinstance(record, CgroupRecord) and any(_is_cgroup(path) for path in record.paths):
            continue  # still busy: the next sweep tries again
        record.path.unlink(missing_ok=True)
    return Swept(len(victims), len(removed), tuple(sorted(left_by)))


def _by_group() -> dict[int, list[psutil.Process]]:
    """Every live process (zombies aside) by process group, from one look at the process table."""
    groups: dict[int, list[psutil.Process]] = {}
    for proc in psutil.process_iter(["status"]):
        if proc.pid == os.getpid() or proc.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        try:
            groups.setdefault(os.getpgid(proc.pid), []).append(proc)
        except OSError:
            continue
    return groups


def _members(record: GroupRecord, in_group: list[psutil.Process]) -> list[psutil.Process]:
    """The group's processes that are the run's own.

    A live process at the leader's pid must have the recorded create time, else the group is gone
    and its id recycled. With the leader dead (PR_SET_PDEATHSIG), the kernel gives the id to no
    new process while a member holds it, so the members left are its workers; each is also no
    older than the leader.
    """
    try:
        if abs(psutil.Process(record.pgid).create_time() - record.create_time) >= SAME_START_S:
            return []
    except psutil.NoSuchProcess:
        pass
    except psutil.Error:
        return []
    found = []
    for proc in in_group:
        try:
            if proc.create_time() > record.create_time - SAME_START_S:
                found.append(proc)
        except psutil.Error:
            continue
    return found


def _stop_all(procs: list[psutil.Process], grace_s: float) -> None:
    """TERM to each, a grace period, KILL to those left. psutil checks each pid still names the
    process it found (its create time) before any signal."""
    for proc in procs:
        _signal(proc, kill=False)
    deadline = time.monotonic() + grace_s
    while any(_running(p) for p in procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [p for p in procs if _running(p)]
    for proc in left:
        _signal(proc, kill=True)
    deadline = time.monotonic() + 2.0
    while any(_running(p) for p in left) and time.monotonic() < deadline:
        time.sleep(0.02)


def _signal(proc: psutil.Process, *, kill: bool) -> None:
    try:
        proc.kill() if kill else proc.terminate()
    except psutil.Error:
        pass


def _running(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _is_cgroup(path: Path) -> bool:
    """Only a directory of a cgroup filesystem is ever removed (it holds the kernel's cgroup.procs)."""
    return (path / "cgroup.procs").is_file()


def _cgroup_dirs(path: Path) -> list[Path]:
    """The roles' directories first, then the run's own: rmdir needs them empty of children."""
    try:
        return [*(d for d in path.iterdir() if d.is_dir()), path]
    except OSError:
        return []


def _cgroup_members(path: Path) -> list[psutil.Process]:
    """Processes still in the run's cgroups: the run's by construction (cgexec put them there)."""
    found = []
    for directory in _cgroup_dirs(path):
        try:
            pids = [int(word) for word in (directory / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            continue
        for pid in pids:
            if pid == os.getpid():
                continue
            try:
                found.append(psutil.Process(pid))
            except psutil.Error:
                continue
    return found


def _remove_cgroup(path: Path) -> bool:
    """rmdir the roles' directories, then the run's; True when the run's is gone."""
    for directory in _cgroup_dirs(path):
        deadline = time.monotonic() + RMDIR_WAIT_S
        while True:
            try:
                directory.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError as exc:
                if exc.errno != errno.EBUSY or time.monotonic() >= deadline:
                    break
                time.sleep(0.05)
    return not path.exists()


# -- the guard ---------------------------------------------------------------------------------


@contextmanager
def guarded_run(directory: Path, on_note: Callable[[str], None]) -> Iterator[None]:
    """A run's children recorded and guarded; what killed runs left is swept first, in one line."""
    global _active
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        on_note(f"no guard for this run's processes: cannot create {directory}: {exc.strerror}")
        yield
        return
    line = sweep(directory).line()
    if line is not None:
        on_note(line)
    harness = Harness.me()
    guard = _start_guard(directory, harness)
    previous, _active = _active, Registry(directory, harness)
    try:
        yield
    finally:
        _active = previous
        if guard is not None:
            _end_guard(guard)


def _start_guard(directory: Path, harness: Harness) -> subprocess.Popen[bytes] | None:
    """The guard, in a session of its own so that no terminal signal, nor a kill of the harness's
    group, reaches it; only the harness holds its stdin's other end."""
    package_root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (package_root, os.environ.get("PYTHONPATH"))))}
    try:
        return subprocess.Popen([sys.executable, "-m", "pywebbench.core.orphans", str(directory), str(harness.pid),
                                 repr(harness.create_time)], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=env, start_new_session=True, close_fds=True)
    except OSError:
        return None  # the run goes on unguarded; the next run's sweep still finds what it leaves


def _end_guard(guard: subprocess.Popen[bytes]) -> None:
    """The run is over: its pipe closes, the guard stops whatever is still recorded, and exits."""
    if guard.stdin is not None:
        guard.stdin.close()
    try:
        guard.wait(timeout=GUARD_END_WAIT_S)
    except subprocess.TimeoutExpired:
        guard.kill()
        guard.wait()


def guard(directory: Path, harness: Harness) -> None:
    """The guard's whole life: wait until the harness's end closes the pipe, then stop what it left."""
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except OSError:
        pass
    sweep(directory, only=harness)


if __name__ == "__main__":
    guard(Path(sys.argv[1]), Harness(int(sys.argv[2]), float(sys.argv[3])))
