"""The processes of the machine as the resource sampler reads them: one /proc/<pid>/stat read
per process (`read_stat`), a table of parents that lists /proc only when the kernel handed
out a new PID (`ProcessTable`), and the system-wide busy and steal times."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable
from dataclasses import dataclass

import psutil

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
# System-wide fields that are not busy time. guest and guest_nice are left out because Linux
# already counts them inside user and nice; steal stays in: the host ran a neighbour.
_NOT_BUSY = frozenset({"idle", "iowait", "guest", "guest_nice"})



@dataclass(frozen=True)
class ProcStat:
    """What a tick needs of one process, from one read of /proc/<pid>/stat."""

    parent: int
    started: int
    """Clock ticks from boot to the process's start: with the PID, which process this is."""
    own_s: float
    """user + system of the process itself (all its threads)."""
    reaped_s: float
    """CPU of the children it has waited for, and theirs (cutime + cstime)."""
    rss_bytes: int


def read_stat(pid: int) -> ProcStat | None:
    """None when the process is gone or not readable."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
        try:
            data = os.read(fd, 4096)
        finally:
            os.close(fd)
    except OSError:
        return None
    # Field 2, the command name, may hold spaces and parentheses: split after its last ')'.
    # What is left starts at field 3 (state), so field n (proc(5) numbering) is at n - 3.
    fields = data[data.rfind(b")") + 2:].split()
    try:
        return ProcStat(
            parent=int(fields[1]),
            started=int(fields[19]),
            own_s=(int(fields[11]) + int(fields[12])) / CLOCK_TICKS,
            reaped_s=(int(fields[13]) + int(fields[14])) / CLOCK_TICKS,
            rss_bytes=int(fields[21]) * _PAGE_BYTES,
        )
    except (IndexError, ValueError):
        return None


def _last_pid() -> int | None:
    """The PID the kernel handed out last (to a process or a thread), or None if unknown."""
    try:
        with open("/proc/sys/kernel/ns_last_pid", "rb") as file:
            return int(file.read())
    except (OSError, ValueError):
        return None


class ProcessTable:
    """Every process on the machine and its parent, refreshed cheaply.

    psutil's `children()` reads the stat file of every process on the machine at each call;
    this table lists /proc only when a PID was handed out since the last listing, and reads
    only processes it has not seen. Exits are found by the sampler's failed reads. A parent
    changes only when a process is reparented after its parent dies, which takes it out of
    the tree anyway (psutil's `children()` would not find it either).
    """

    def __init__(self) -> None:
        self._parent: dict[int, int] = {}
        self._children: dict[int, list[int]] | None = None
        self._last_pid: int | None = None

    def refresh(self) -> None:
        last_pid = _last_pid()  # read first: a process born during the listing shows next time
        if last_pid is not None and last_pid == self._last_pid:
            return  # no process (or thread) was created on the machine since the last listing
        self._last_pid = last_pid
        alive = set(psutil.pids())
        for pid in self._parent.keys() - alive:
            del self._parent[pid]
        for pid in alive - self._parent.keys():
            self._add(pid)
        self._children = None

    def alive(self, pid: int) -> bool:
        """Listed at the last refresh or found since, and not found gone since."""
        return pid in self._parent

    def discard(self, pid: int) -> None:
        """A process found gone between refreshes."""
        if self._parent.pop(pid, None) is not None:
            self._children = None

    def parent(self, pid: int) -> int | None:
        return self._parent.get(pid)

    def children(self, pid: int) -> list[int]:
        if self._children is None:
            children: dict[int, list[int]] = {}
            for child, parent in self._parent.items():
                children.setdefault(parent, []).append(child)
            self._children = children
        return self._children.get(pid, [])

    def tree(self, roots: Iterable[int]) -> list[int]:
        """The roots that exist and all their descendants, each once."""
        found: list[int] = []
        seen: set[int] = set()
        todo = list(roots)
        while todo:
            pid = todo.pop()
            if pid in seen or not (self.alive(pid) or self._add(pid)):
                continue
            seen.add(pid)
            found.append(pid)
            todo.extend(self.children(pid))
        return found

    def _add(self, pid: int) -> bool:
        stat = read_stat(pid) if pid > 0 else None
        if stat is None:
            return False
        self._parent[pid] = stat.parent
        self._children = None
        return True


def generator_roots(exclude: Collection[int], table: ProcessTable | None = None) -> list[int]:
    """Direct children of this process not in `exclude`: the load generator's root.

    The harness starts the app server and the services as its own children too, so their
    PIDs go in `exclude`. Pass the sampler's `table` to skip psutil's scan of every process.
    """
    me = os.getpid()
    if table is not None:
        children = table.children(me)
    else:
        try:
            children = [proc.pid for proc in psutil.Process(me).children()]
        except psutil.Error:
            children = []
    return [pid for pid in children if pid not in exclude]


def busy_seconds() -> float:
    """Busy CPU seconds since boot, all CPUs together."""
    return float(sum(value for name, value in psutil.cpu_times()._asdict().items() if name not in _NOT_BUSY))



def steal_seconds() -> float | None:
    """CPU seconds since boot the hypervisor ran other guests on our CPUs; None if not reported."""
    steal = getattr(psutil.cpu_times(), "steal", None)
    return None if steal is None else float(steal)
