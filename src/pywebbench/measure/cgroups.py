"""Per-role CPU time and memory from the kernel's cgroups, on v1, hybrid and v2 machines.

Each role (an app server, PostgreSQL, the load generator) gets a cgroup of its own, and the
kernel counts every nanosecond its processes run, short-lived workers and helpers included,
which the /proc sampler (pywebbench.measure.procsampler) only sees when something reaps them; memory
is charged to the role too, and the kernel keeps its peak instead of a sampler guessing it.

Three layouts exist: cgroup v1 (one hierarchy per controller, `cpu` and `cpuacct` sometimes
co-mounted as `cpu,cpuacct`), pure v2 (one hierarchy, usually at /sys/fs/cgroup), and hybrid
(v1 controllers plus a cgroup2 mount at /sys/fs/cgroup/unified that holds no controller). v1
wins when its cpuacct is mounted: on a hybrid machine memory and cpu are bound to v1, so the
unified hierarchy can count CPU (cpu.stat exists in every v2 cgroup) but nothing else.

Detection of the layout is in measure/cgroup_layout.py; this module makes and reads the roles.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from pywebbench.measure.cgroup_layout import (
    CgroupError,
    CgroupLayout,
    CgroupVersion,
    MIB,
    RMDIR_RETRY_S,
    RUN_PREFIX,
    V1_DEFAULT_SHARES,
    _NAME,
    _RETRY_STEP_S,
    _enable_v2,
    _read,
    _read_pids,
    _write,
    detect,
    parse_mountinfo,
    plan_layout,
)


__all__ = ["CgroupError", "CgroupLayout", "CgroupVersion", "detect", "parse_mountinfo", "plan_layout", "RoleCgroup", "CgroupTree", "CgroupReading", "snapshot", "since", "v2_weight"]


def _usage_usec(cpu_stat: bytes) -> int:
    for line in cpu_stat.splitlines():
        key, _, value = line.partition(b" ")
        if key == b"usage_usec":
            return int(value)
    raise CgroupError(f"cpu.stat has no usage_usec line: {cpu_stat[:200]!r}")


def v2_weight(shares: int) -> int:
    """v1 cpu.shares (default 1024) as v2 cpu.weight (default 100, range 1-10000)."""
    return max(1, min(10000, shares * 100 // V1_DEFAULT_SHARES))


def _check_name(name: str, what: str) -> None:
    if not _NAME.fullmatch(name) or name.startswith(("cgroup.", "cpu.", "memory.")):
        raise CgroupError(f"{what} {name!r} cannot name a cgroup: use letters, digits and _.- only")


class RoleCgroup:
    """The cgroup(s) of one role: one directory per hierarchy used (one on v2)."""

    def __init__(
        self,
        name: str,
        version: CgroupVersion,
        cpu_dir: Path,
        memory_dir: Path | None = None,
        weight_dir: Path | None = None,
    ) -> None:
        self.name = name
        self.version = version
        self.cpu_dir = cpu_dir
        self.memory_dir = memory_dir
        self.weight_dir = weight_dir
        self.limits: tuple[str, ...] = ()
        """Why a reading means less than asked (a peak since creation, not since a reset)."""
        self._dirs = tuple(dict.fromkeys(d for d in (cpu_dir, memory_dir, weight_dir) if d is not None))
        v1 = version is CgroupVersion.V1
        self._cpu_file = cpu_dir / ("cpuacct.usage" if v1 else "cpu.stat")
        self._peak_fd: int | None = None
        self._peak_resettable = True

    def __repr__(self) -> str:
        return f"RoleCgroup({self.name!r}, {self.version.value}, {self.cpu_dir})"

    @property
    def directories(self) -> tuple[Path, ...]:
        """The role's directory in each hierarchy used (one on v2)."""
        return self._dirs

    def adopt(self, pids: Iterable[int]) -> int:
        """Move processes into this role in every hierarchy; how many moved (gone ones skip).

        A PID moves its whole thread group. Its children forked later are born here; those
        forked before stay where they are, so adopt a server's master before it forks.
        """
        moved = 0
        for pid in pids:
            try:
                for directory in self._dirs:
                    _write(directory / "cgroup.procs", str(pid))
            except ProcessLookupError:  # ESRCH: it exited meanwhile
                continue
            moved += 1
        return moved

    def pids(self) -> tuple[int, ...]:
        """The processes (thread group leaders) now in the role."""
        return _read_pids(self.cpu_dir)

    def cpu_ns(self) -> int:
        """CPU the role's processes used since the cgroup was created, alive or exited."""
        data = _read(self._cpu_file)
        if self.version is CgroupVersion.V1:
            return int(data)
        return _usage_usec(data) * 1000

    def memory_bytes(self) -> int | None:
        """Memory charged to the role now (page cache included), None without memory."""
        if self.memory_dir is None:
            return None
        name = "memory.usage_in_bytes" if self.version is CgroupVersion.V1 else "memory.current"
        return int(_read(self.memory_dir / name))

    def peak_memory_bytes(self) -> int | None:
        """Peak of memory_bytes since the last reset_peak (or the cgroup's creation)."""
        if self.memory_dir is None:
            return None
        if self.version is CgroupVersion.V1:
            return int(_read(self.memory_dir / "memory.max_usage_in_bytes"))
        if self._peak_fd is not None:
            return int(os.pread(self._peak_fd, 64, 0))
        return int(_read(self.memory_dir / "memory.peak"))

    @property
    def peak_over(self) -> str:
        """What peak_memory_bytes spans once reset_peak ran: "window", or "cgroup" where the kernel
        cannot reset it (v2 before Linux 6.12: since this cgroup was made)."""
        return "window" if self._peak_resettable else "cgroup"

    def reset_peak(self) -> None:
        """Restart the peak at the current usage; a no-op without memory.

        v1 resets the cgroup's one watermark. v2 (Linux 6.12+) resets it only for reads
        through the file descriptor that wrote, so that descriptor is kept open; an older
        kernel refuses the write, and the peak then stays the lifetime one (see limits).
        """
        if self.memory_dir is None or not self._peak_resettable:
            return
        if self.version is CgroupVersion.V1:
            _write(self.memory_dir / "memory.max_usage_in_bytes", "0")
            return
        fd = self._peak_fd
        try:
            if fd is None:
                fd = os.open(self.memory_dir / "memory.peak", os.O_RDWR)
            os.write(fd, b"reset")
        except OSError as exc:
            if fd is not None:
                os.close(fd)
            self._peak_fd = None
            self._peak_resettable = False
            self.limits = (
                *self.limits,
                f"memory.peak of {self.name} cannot be reset ({exc.strerror}; needs Linux 6.12):"
                " its peak is since the role's cgroup was created",
            )
            return
        self._peak_fd = fd

    def set_weight(self, shares: int) -> None:
        """The role's CPU share under contention, in v1 cpu.shares units (1024 = default)."""
        if self.weight_dir is None:
            raise CgroupError(f"role {self.name} has no CPU weight: the layout has no cpu controller")
        if self.version is CgroupVersion.V1:
            _write(self.weight_dir / "cpu.shares", str(shares))
        else:
            _write(self.weight_dir / "cpu.weight", str(v2_weight(shares)))

    def close(self) -> None:
        """Close the kept memory.peak descriptor; readings after this are lifetime peaks."""
        if self._peak_fd is not None:
            fd, self._peak_fd = self._peak_fd, None
            os.close(fd)


class CgroupTree:
    """`with CgroupTree(layout, run_id) as tree: tree.role("postgres").adopt([pid])`.

    Creates pywebbench-<run_id> under each hierarchy root and a child per role. On exit the
    processes still inside go back to the hierarchy root (not killed) and every directory is
    removed; a directory that stays busy raises CgroupError, or is noted on the exception
    already propagating.
    """

    def __init__(self, layout: CgroupLayout, run_id: str) -> None:
        _check_name(run_id, "run id")
        self.layout = layout
        self.run_id = run_id
        self.name = RUN_PREFIX + run_id
        self._run_dirs: dict[Path, Path] = {}
        self._created: list[tuple[Path, Path]] = []  # (hierarchy root, directory), in order
        self._roles: dict[str, RoleCgroup] = {}
        self._entered = False

    @property
    def limits(self) -> tuple[str, ...]:
        """Why a capability is absent: the layout's reasons and those found on enter."""
        return self.layout.limits

    @property
    def memory(self) -> bool:
        return self.layout.memory

    @property
    def weights(self) -> bool:
        return self.layout.weights

    @property
    def roles(self) -> Mapping[str, RoleCgroup]:
        return dict(self._roles)

    def directories(self) -> tuple[Path, ...]:
        """The run's directory under each hierarchy root, whether it exists or not."""
        return tuple(root / self.name for root in self.layout.roots())

    def __enter__(self) -> CgroupTree:
        try:
            self._make_run_dirs()
            if self.layout.version is CgroupVersion.V2:
                # The root's subtree_control feeds the run's dir, the run's dir feeds the roles.
                self.layout = _enable_v2(self.layout, self.layout.cpu_root)
                self.layout = _enable_v2(self.layout, self._run_dirs[self.layout.cpu_root])
        except BaseException as exc:
            self._cleanup_noting(exc)
            raise
        self._entered = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._entered = False
        if exc is None:
            self._cleanup()
        else:
            self._cleanup_noting(exc)

    def role(self, name: str) -> RoleCgroup:
        """The role's cgroup, created at the first call."""
        found = self._roles.get(name)
        if found is not None:
            return found
        if not self._entered:
            raise CgroupError(f"role {name}: the cgroup tree {self.name} is not entered")
        _check_name(name, "role name")
        dirs: dict[Path, Path] = {}
        for root, run_dir in self._run_dirs.items():
            path = run_dir / name
            try:
                path.mkdir()
            except OSError as exc:
                raise CgroupError(f"cannot create the cgroup {path}: {exc.strerror}") from exc
            self._created.append((root, path))
            dirs[root] = path
        layout = self.layout
        role = RoleCgroup(
            name,
            layout.version,
            cpu_dir=dirs[layout.cpu_root],
            memory_dir=dirs[layout.memory_root] if layout.memory_root is not None else None,
            weight_dir=dirs[layout.weight_root] if layout.weight_root is not None else None,
        )
        self._roles[name] = role
        return role

    def _make_run_dirs(self) -> None:
        for root in self.layout.roots():
            path = root / self.name
            try:
                path.mkdir()
            except FileExistsError:
                raise CgroupError(
                    f"{path} exists already: run {self.run_id} is under way, or crashed without"
                    " cleaning up (move its processes to the root's cgroup.procs, then rmdir it)"
                ) from None
            except OSError as exc:
                why = f"cannot create the cgroup {path}: {exc.strerror}"
                if root == self.layout.cpu_root:
                    raise CgroupError(why) from exc
                # An optional hierarchy: measure without it rather than not at all.
                if root == self.layout.memory_root:
                    self.layout = self.layout.without_memory(f"{why}: no per-role memory")
                if root == self.layout.weight_root:
                    self.layout = self.layout.without_weights(f"{why}: no CPU weights")
                continue
            self._created.append((root, path))
            self._run_dirs[root] = path

    def _cleanup_noting(self, exc: BaseException) -> None:
        try:
            self._cleanup()
        except CgroupError as error:
            exc.add_note(f"while cleaning up after it: {error}")

    def _cleanup(self) -> None:
        for role in self._roles.values():
            role.close()
        failures = [why for root, path in reversed(self._created) if (why := _remove(root, path))]
        self._created.clear()
        self._run_dirs.clear()
        self._roles.clear()
        if failures:
            raise CgroupError("could not remove cgroups: " + "; ".join(failures))


def _remove(root: Path, path: Path) -> str | None:
    """Move what is left in `path` to the hierarchy root, then rmdir it; None, or why not."""
    deadline = time.monotonic() + RMDIR_RETRY_S
    while True:
        problems = _evacuate(root, path)
        try:
            path.rmdir()
            return None
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno != errno.EBUSY or time.monotonic() >= deadline:
                left = _read_pids(path)
                held = f", still holding pids {', '.join(map(str, left))}" if left else ""
                return f"{path}: {exc.strerror}{held}{''.join(f'; {p}' for p in problems)}"
        time.sleep(_RETRY_STEP_S)


def _evacuate(root: Path, path: Path) -> list[str]:
    """Move every process in `path` to the root's cgroup; the moves that failed, and why."""
    problems = []
    for pid in _read_pids(path):
        try:
            _write(root / "cgroup.procs", str(pid))
        except ProcessLookupError:
            continue  # exited meanwhile
        except OSError as exc:
            problems.append(f"cannot move pid {pid} to {root}: {exc.strerror}")
    return problems


@dataclass(frozen=True)
class CgroupReading:
    """One role over a window: its CPU, and its memory peak when the layout has memory."""

    cpu_s: float
    peak_memory_mb: float | None


def snapshot(roles: Mapping[str, RoleCgroup], *, reset_peaks: bool = True) -> dict[str, int]:
    """CPU nanoseconds per role now, to pass to `since` at the window's end.

    With `reset_peaks`, each role's memory peak restarts here too, so `since` reports the
    window's peak (one more small write per role).
    """
    taken = {name: role.cpu_ns() for name, role in roles.items()}
    if reset_peaks:
        for role in roles.values():
            role.reset_peak()
    return taken


def since(roles: Mapping[str, RoleCgroup], before: Mapping[str, int]) -> dict[str, CgroupReading]:
    """Each role's CPU since `before` (a role it lacks counts from its cgroup's creation)."""
    cpu = {name: role.cpu_ns() for name, role in roles.items()}
    return {
        name: CgroupReading(
            cpu_s=(cpu[name] - before.get(name, 0)) / 1e9,
            peak_memory_mb=None if (peak := role.peak_memory_bytes()) is None else peak / MIB,
        )
        for name, role in roles.items()
    }
