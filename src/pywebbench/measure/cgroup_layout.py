"""Which cgroup layout this machine has (v1, hybrid or v2) and whether we may write to it.

`parse_mountinfo` and `plan_layout` are pure; `probe` and `detect` touch the filesystem. The
small file helpers here are shared with the role cgroups (measure/cgroups.py).
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

MIB = 1024 * 1024
MOUNTINFO = Path("/proc/self/mountinfo")
RUN_PREFIX = "pywebbench-"
# rmdir can fail with EBUSY for a moment after the last task left or exited (the kernel
# unlinks an exiting task from its cgroup a little after it is reaped), so it is retried.
RMDIR_RETRY_S = 1.0
_RETRY_STEP_S = 0.01
# A name becomes one directory: no '/', not '.' or '..', and no ':' (the separator of
# /proc/<pid>/cgroup lines).
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}")
_ESCAPE = re.compile(r"\\([0-7]{3})")
# cgroup v1's cpu.shares default, which v2's cpu.weight default (100) corresponds to.
V1_DEFAULT_SHARES = 1024


class CgroupVersion(StrEnum):
    V1 = "cgroup-v1"
    V2 = "cgroup-v2"


class CgroupError(Exception):
    """A cgroup could not be created, used or removed; the message says which and why."""


@dataclass(frozen=True)
class CgroupMount:
    """One cgroup filesystem mount, as /proc/self/mountinfo lists it."""

    mount_point: Path
    root: str
    """The hierarchy's path mounted there: "/" unless a container was given a sub-tree."""
    version: CgroupVersion
    options: frozenset[str]
    """Super options; for v1 they name the controllers ("cpu", "cpuacct", "name=systemd")."""


@dataclass(frozen=True)
class CgroupMounts:
    v1: tuple[CgroupMount, ...] = ()
    v2: tuple[CgroupMount, ...] = ()

    def v1_for(self, controller: str) -> CgroupMount | None:
        """The v1 mount holding `controller`, the whole hierarchy before a bind of a sub-tree."""
        return _whole_first(mount for mount in self.v1 if controller in mount.options)

    @property
    def unified(self) -> CgroupMount | None:
        return _whole_first(self.v2)


def _whole_first(mounts: Iterable[CgroupMount]) -> CgroupMount | None:
    return min(mounts, key=lambda mount: mount.root != "/", default=None)


def _unescape(field: str) -> str:
    # mountinfo writes space, tab, newline and backslash as octal escapes (\040 ...).
    return _ESCAPE.sub(lambda match: chr(int(match.group(1), 8)), field)


def parse_mountinfo(text: str) -> CgroupMounts:
    """The cgroup mounts in the text of a /proc/<pid>/mountinfo; other lines are skipped."""
    v1: list[CgroupMount] = []
    v2: list[CgroupMount] = []
    for line in text.splitlines():
        # ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS
        fields = line.split(" ")
        try:
            separator = fields.index("-", 6)
        except ValueError:
            continue
        if len(fields) < separator + 4:
            continue
        fstype = fields[separator + 1]
        if fstype not in ("cgroup", "cgroup2"):
            continue
        mount = CgroupMount(
            mount_point=Path(_unescape(fields[4])),
            root=_unescape(fields[3]),
            version=CgroupVersion.V1 if fstype == "cgroup" else CgroupVersion.V2,
            options=frozenset(fields[separator + 3].split(",")),
        )
        (v1 if mount.version is CgroupVersion.V1 else v2).append(mount)
    return CgroupMounts(tuple(v1), tuple(v2))


@dataclass(frozen=True)
class CgroupLayout:
    """Where each measure lives. CPU is always there; memory and weights when a root is set."""

    version: CgroupVersion
    cpu_root: Path
    """v1: the cpuacct hierarchy's mount point; v2: the cgroup2 mount point."""
    memory_root: Path | None = None
    """v1: the memory hierarchy; v2: the cgroup2 mount, when its memory controller is usable."""
    weight_root: Path | None = None
    """v1: the cpu hierarchy (cpu.shares); v2: the cgroup2 mount, when its cpu controller is."""
    limits: tuple[str, ...] = ()
    """Why a capability is absent, one sentence each, for the results."""

    @property
    def cpu(self) -> bool:
        return True

    @property
    def memory(self) -> bool:
        return self.memory_root is not None

    @property
    def weights(self) -> bool:
        return self.weight_root is not None

    def roots(self) -> tuple[Path, ...]:
        """Each hierarchy used, once (cpu,cpuacct co-mounted is one; v2 is always one)."""
        found = (self.cpu_root, self.memory_root, self.weight_root)
        return tuple(dict.fromkeys(root for root in found if root is not None))

    def without_memory(self, why: str) -> CgroupLayout:
        return replace(self, memory_root=None, limits=(*self.limits, why))

    def without_weights(self, why: str) -> CgroupLayout:
        return replace(self, weight_root=None, limits=(*self.limits, why))


def plan_layout(
    mounts: CgroupMounts,
    *,
    prefer: CgroupVersion | None = None,
    v2_controllers: frozenset[str] = frozenset(),
) -> CgroupLayout | None:
    """The layout to use, from the mounts alone; None when no hierarchy counts CPU.

    `v2_controllers` is the cgroup2 root's cgroup.controllers. `prefer` forces a version
    (None when that version is not mounted); by default v1 when its cpuacct is mounted.
    """
    cpuacct = mounts.v1_for("cpuacct")
    if cpuacct is not None and prefer is not CgroupVersion.V2:
        memory, cpu = mounts.v1_for("memory"), mounts.v1_for("cpu")
        limits = []
        if memory is None:
            limits.append("no cgroup v1 memory hierarchy is mounted: no per-role memory")
        if cpu is None:
            limits.append("no cgroup v1 cpu hierarchy is mounted: no CPU weights")
        return CgroupLayout(
            CgroupVersion.V1,
            cpu_root=cpuacct.mount_point,
            memory_root=memory.mount_point if memory else None,
            weight_root=cpu.mount_point if cpu else None,
            limits=tuple(limits),
        )
    unified = mounts.unified
    if unified is None or prefer is CgroupVersion.V1:
        return None
    where = unified.mount_point
    layout = CgroupLayout(CgroupVersion.V2, cpu_root=where, memory_root=where, weight_root=where)
    if "memory" not in v2_controllers:
        layout = layout.without_memory(
            f"the memory controller is not available in {where} (bound to cgroup v1, or"
            " disabled): no per-role memory"
        )
    if "cpu" not in v2_controllers:
        layout = layout.without_weights(
            f"the cpu controller is not available in {where} (bound to cgroup v1, or"
            " disabled): no CPU weights"
        )
    return layout


def probe(layout: CgroupLayout) -> CgroupLayout:
    """The layout with what this process cannot use removed; CgroupError if not even CPU.

    Creates and removes a probe cgroup in each hierarchy. On v2 it enables the memory and cpu
    controllers in the mount point's cgroup.subtree_control when they are not enabled yet
    (the run's cgroup needs them there; systemd does the same at boot) and leaves them on.
    """
    _probe_dir(layout.cpu_root)
    if layout.memory_root is not None and layout.memory_root != layout.cpu_root:
        try:
            _probe_dir(layout.memory_root)
        except CgroupError as error:
            layout = layout.without_memory(f"{error}: no per-role memory")
    if layout.weight_root is not None and layout.weight_root != layout.cpu_root:
        try:
            _probe_dir(layout.weight_root)
        except CgroupError as error:
            layout = layout.without_weights(f"{error}: no CPU weights")
    if layout.version is CgroupVersion.V2:
        layout = _enable_v2(layout, layout.cpu_root)
    return layout


def detect(mountinfo: str | None = None, *, prefer: CgroupVersion | None = None) -> CgroupLayout | None:
    """The usable cgroup layout of this machine, or None: then fall back to the /proc sampler.

    `mountinfo` replaces /proc/self/mountinfo's text; `prefer` as in plan_layout. None when
    no hierarchy is mounted or this process cannot create cgroups (not root, read-only); call
    plan_layout and probe directly to learn why.
    """
    try:
        text = MOUNTINFO.read_text() if mountinfo is None else mountinfo
    except OSError:
        return None  # not Linux, or no /proc: nothing to account with
    mounts = parse_mountinfo(text)
    controllers: frozenset[str] = frozenset()
    unified = mounts.unified
    if unified is not None:
        try:
            controllers = frozenset(_read(unified.mount_point / "cgroup.controllers").decode().split())
        except OSError:
            controllers = frozenset()  # no v2 controllers: CPU only, and plan_layout says why
    layout = plan_layout(mounts, prefer=prefer, v2_controllers=controllers)
    if layout is None:
        return None
    try:
        return probe(layout)
    except CgroupError:
        return None


def _probe_dir(root: Path) -> None:
    path = root / f"{RUN_PREFIX}probe-{os.getpid()}"
    try:
        path.mkdir()
    except OSError as exc:
        raise CgroupError(f"cannot create a cgroup in {root}: {exc.strerror}") from exc
    try:
        # A tmpfs where the hierarchy is not mounted accepts the mkdir too.
        if not (path / "cgroup.procs").exists():
            raise CgroupError(f"{root} is not a cgroup hierarchy (no cgroup.procs in a new directory)")
    finally:
        path.rmdir()


def _enable_v2(layout: CgroupLayout, parent: Path) -> CgroupLayout:
    """Enable memory and cpu for the children of `parent` as the layout needs; drop failures."""
    if layout.memory:
        why = _enable_controller(parent, "memory")
        if why is not None:
            layout = layout.without_memory(f"{why}: no per-role memory")
    if layout.weights:
        why = _enable_controller(parent, "cpu")
        if why is not None:
            layout = layout.without_weights(f"{why}: no CPU weights")
    return layout


def _enable_controller(parent: Path, controller: str) -> str | None:
    """None once `controller` is enabled in parent's cgroup.subtree_control, else why not."""
    control = parent / "cgroup.subtree_control"
    try:
        if controller in _read(control).decode().split():
            return None
        _write(control, f"+{controller}")
        return None
    except OSError as exc:
        busy = exc.errno == errno.EBUSY
        hint = " (it holds processes: cgroup v2 allows controllers only above leaves)" if busy else ""
        return f"cannot enable the {controller} controller in {control}: {exc.strerror}{hint}"


def _read(path: Path) -> bytes:
    # One open/read/close: interface files are small and regenerated at each open.
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 8192)
    finally:
        os.close(fd)


def _write(path: Path, value: str) -> None:
    # One write per value: cgroup.procs takes one PID per write(2).
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _read_pids(directory: Path) -> tuple[int, ...]:
    try:
        return tuple(int(word) for word in _read_all(directory / "cgroup.procs").split())
    except FileNotFoundError:
        return ()


def _read_all(path: Path) -> bytes:
    # cgroup.procs can outgrow one read.
    with open(path, "rb") as file:
        return file.read()
