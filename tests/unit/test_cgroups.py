"""cgroup accounting against the real kernel: CPU burnt, memory touched, weights contended.

Mountinfo parsing is tested on embedded texts. Everything else creates real cgroups, so it
needs root and a writable hierarchy; each cgroup version this machine mounts is tested (a
hybrid machine has both: v1 controllers and a controller-less cgroup2), the others skip.
Children measure their own CPU and wait on stdin for the go, sent once they are adopted.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from pywebbench.measure import cgroup_layout, cgroups
from pywebbench.measure.cgroups import (
    CgroupError,
    CgroupLayout,
    CgroupTree,
    CgroupVersion,
    RoleCgroup,
    detect,
    parse_mountinfo,
    plan_layout,
    since,
    snapshot,
    v2_weight,
)

pytestmark = pytest.mark.serial  # reads CPU time or waits on the clock: never beside a test worker

MIB = 1024 * 1024
VERSIONS = [CgroupVersion.V1, CgroupVersion.V2]

# Real lines from a Debian 12 VM (kernel 6.18): v1 controllers, and cgroup2 without any.
HYBRID = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
23 27 0:22 / /sys rw,relatime - sysfs sysfs rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict,resuid=65534,resgid=65534
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""

# systemd on a current distribution: optional fields (shared:N) before the separator.
PURE_V2 = """\
23 29 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
26 23 0:24 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
29 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro
"""

# A container on an older v1 host: cpu and cpuacct co-mounted, sub-trees, an escaped space.
CONTAINER_V1 = """\
520 519 0:31 /docker/ab12 /sys/fs/cgroup/cpu,cpuacct ro,nosuid master:12 - cgroup cgroup rw,cpu,cpuacct
521 519 0:32 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid master:12 - cgroup cgroup rw,cpu,cpuacct
522 519 0:33 /docker/ab12 /mnt/my\\040memory ro,nosuid master:13 - cgroup cgroup rw,memory
"""

NO_CGROUPS = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
"""

BURN = """
import os, sys, time
print("ready", flush=True)
os.read(0, 1)
start = time.process_time()
while time.process_time() - start < float(sys.argv[1]):
    pass
print(time.process_time() - start, flush=True)
"""

ALLOCATE = """
import os, sys
print("ready", flush=True)
os.read(0, 1)
data = b"\\x01" * (int(sys.argv[1]) << 20)  # written, so every page is resident
print("allocated", flush=True)
os.read(0, 1)
del data
print("freed", flush=True)
os.read(0, 1)
"""

SPIN = """
import os, sys
os.sched_setaffinity(0, {int(sys.argv[1])})
print("ready", flush=True)
os.read(0, 1)
while True:
    pass
"""

SLEEP = """
import time
print("ready", flush=True)
time.sleep(60)
"""


def test_hybrid_layout_prefers_v1_and_can_be_forced_to_v2() -> None:
    mounts = parse_mountinfo(HYBRID)
    assert len(mounts.v1) == 9
    layout = plan_layout(mounts)
    assert layout == CgroupLayout(
        CgroupVersion.V1,
        cpu_root=Path("/sys/fs/cgroup/cpuacct"),
        memory_root=Path("/sys/fs/cgroup/memory"),
        weight_root=Path("/sys/fs/cgroup/cpu"),
    )
    assert layout.version == "cgroup-v1" and layout.cpu and layout.memory and layout.weights
    assert len(layout.roots()) == 3

    forced = plan_layout(mounts, prefer=CgroupVersion.V2, v2_controllers=frozenset({"hugetlb"}))
    assert forced is not None
    assert forced.version == "cgroup-v2" and forced.cpu_root == Path("/sys/fs/cgroup/unified")
    assert not forced.memory and not forced.weights
    assert len(forced.limits) == 2 and "memory controller" in forced.limits[0]
    assert forced.roots() == (Path("/sys/fs/cgroup/unified"),)


def test_pure_v2_layout() -> None:
    mounts = parse_mountinfo(PURE_V2)
    assert mounts.v1 == () and len(mounts.v2) == 1
    assert mounts.v2[0].options == frozenset({"rw", "nsdelegate", "memory_recursiveprot"})
    layout = plan_layout(mounts, v2_controllers=frozenset({"cpuset", "cpu", "io", "memory", "pids"}))
    root = Path("/sys/fs/cgroup")
    assert layout == CgroupLayout(CgroupVersion.V2, cpu_root=root, memory_root=root, weight_root=root)
    assert layout.roots() == (root,)
    assert plan_layout(mounts, prefer=CgroupVersion.V1) is None
    cpu_only = plan_layout(mounts, v2_controllers=frozenset({"cpu"}))
    assert cpu_only is not None and cpu_only.weights and not cpu_only.memory


def test_co_mounted_v1_and_escaped_mount_points() -> None:
    layout = plan_layout(parse_mountinfo(CONTAINER_V1))
    assert layout is not None and layout.version is CgroupVersion.V1
    # The whole hierarchy (root "/") wins over the container's sub-tree mounted first.
    assert layout.cpu_root == layout.weight_root == Path("/sys/fs/cgroup/cpu,cpuacct")
    assert layout.memory_root == Path("/mnt/my memory")
    assert parse_mountinfo(CONTAINER_V1).v1[2].root == "/docker/ab12"
    assert layout.roots() == (Path("/sys/fs/cgroup/cpu,cpuacct"), Path("/mnt/my memory"))


def test_no_cgroup_mounts() -> None:
    assert parse_mountinfo(NO_CGROUPS) == cgroup_layout.CgroupMounts()
    assert plan_layout(parse_mountinfo(NO_CGROUPS)) is None
    assert detect(NO_CGROUPS) is None


def test_v2_weight_scale() -> None:
    assert [v2_weight(s) for s in (2, 512, 1024, 2048, 262144)] == [1, 50, 100, 200, 10000]


def test_detect_here_prefers_v1_when_cpuacct_is_mounted() -> None:
    mounts = parse_mountinfo(Path("/proc/self/mountinfo").read_text())
    layout = detect()
    if layout is None:
        pytest.skip("no usable cgroup hierarchy here (needs root and a mounted, writable one)")
    expected = CgroupVersion.V1 if mounts.v1_for("cpuacct") else CgroupVersion.V2
    assert layout.version is expected


def layout_for(version: CgroupVersion) -> CgroupLayout:
    layout = detect(prefer=version)
    if layout is None:
        pytest.skip(f"no usable {version} hierarchy here (needs root and a mounted, writable one)")
    assert layout.version is version
    return layout


def run_id() -> str:
    return f"test-{os.getpid()}-{uuid.uuid4().hex[:8]}"


@contextmanager
def started(code: str, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()


def expect(proc: subprocess.Popen[bytes], timeout_s: float = 10.0) -> str:
    """The child's next line, waiting at most timeout_s."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout_s)
    assert ready, f"child {proc.pid} said nothing in {timeout_s} s"
    return proc.stdout.readline().decode().strip()


def go(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(b"g")
    proc.stdin.flush()


def cgroup_of(pid: int, version: CgroupVersion) -> str:
    """The process's cgroup path in the hierarchy that counts CPU."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        if version is CgroupVersion.V2 and number == "0" and not controllers:
            return path
        if version is CgroupVersion.V1 and "cpuacct" in controllers.split(","):
            return path
    raise AssertionError(f"no {version} line in /proc/{pid}/cgroup")


@pytest.mark.parametrize("version", VERSIONS)
def test_cpu_burn_is_counted_and_the_tree_removed(version: CgroupVersion) -> None:
    layout = layout_for(version)
    with CgroupTree(layout, run_id()) as tree:
        role = tree.role("burner")
        assert tree.role("burner") is role
        assert all(d.is_dir() for d in tree.directories())
        with started(BURN, "0.4") as proc:
            assert role.adopt([proc.pid]) == 1
            assert expect(proc) == "ready"
            assert role.pids() == (proc.pid,)
            assert cgroup_of(proc.pid, version) == f"/{tree.name}/burner"
            before = snapshot({"burner": role})
            go(proc)
            own_s = float(expect(proc))
            assert proc.wait(timeout=10) == 0
            reading = since({"burner": role}, before)["burner"]
        # The child's own clock plus its exit; the kernel's count is not sampled.
        assert reading.cpu_s == pytest.approx(0.4, abs=0.05), (reading, own_s)
        assert reading.cpu_s >= own_s - 0.001
        assert (reading.peak_memory_mb is not None) == layout.memory
    assert not any(d.exists() for d in tree.directories())


@pytest.mark.parametrize("version", VERSIONS)
def test_memory_peak_and_reset(version: CgroupVersion) -> None:
    layout = layout_for(version)
    if not layout.memory:
        pytest.skip(f"the {version} layout here has no memory: {'; '.join(layout.limits)}")
    with CgroupTree(layout, run_id()) as tree, started(ALLOCATE, "64") as proc:
        role = tree.role("allocator")
        assert role.adopt([proc.pid]) == 1
        assert expect(proc) == "ready"
        go(proc)
        assert expect(proc) == "allocated"
        peak, now = role.peak_memory_bytes(), role.memory_bytes()
        assert peak is not None and peak >= 60 * MIB
        assert now is not None and now >= 60 * MIB
        go(proc)
        assert expect(proc) == "freed"
        role.reset_peak()
        after_reset = role.peak_memory_bytes()
        assert after_reset is not None
        if not role.limits:  # a v2 kernel before 6.12 keeps the lifetime peak, and says so
            assert after_reset < 32 * MIB, role.limits
    assert not any(d.exists() for d in tree.directories())


@pytest.mark.parametrize("version", VERSIONS)
def test_weights_share_one_cpu(version: CgroupVersion) -> None:
    layout = layout_for(version)
    if not layout.weights:
        pytest.skip(f"the {version} layout here has no CPU weights: {'; '.join(layout.limits)}")
    allowed = os.sched_getaffinity(0)
    cpu = 1 if 1 in allowed else min(allowed)
    with CgroupTree(layout, run_id()) as tree, ExitStack() as children:
        roles = {name: tree.role(name) for name in ("first", "second")}
        for role in roles.values():
            proc = children.enter_context(started(SPIN, str(cpu)))
            assert role.adopt([proc.pid]) == 1
            assert expect(proc) == "ready"
            go(proc)

        equal = spin_shares(roles)
        assert 0.4 <= equal["first"] / (equal["first"] + equal["second"]) <= 0.6, equal

        roles["first"].set_weight(2048)
        roles["second"].set_weight(1024)
        weighted = spin_shares(roles)
        assert weighted["first"] / weighted["second"] > 1.4, weighted


def spin_shares(roles: Mapping[str, RoleCgroup], window_s: float = 1.0) -> dict[str, float]:
    time.sleep(0.05)  # let the scheduler settle after a change of weights
    before = snapshot(roles)
    time.sleep(window_s)
    readings = since(roles, before)
    total = sum(r.cpu_s for r in readings.values())
    # Both ran; how much depends on what else shares the CPU, the split between them does not.
    assert total > 0.1 * window_s, readings
    return {name: r.cpu_s for name, r in readings.items()}


@pytest.mark.parametrize("version", VERSIONS)
def test_exception_inside_leaves_nothing_and_moves_processes_out(version: CgroupVersion) -> None:
    layout = layout_for(version)
    with started(SLEEP) as proc:
        assert expect(proc) == "ready"
        with pytest.raises(RuntimeError, match="boom"):
            with CgroupTree(layout, run_id()) as tree:
                assert tree.role("sleeper").adopt([proc.pid, 2**22 + 1]) == 1  # the second is no PID
                assert cgroup_of(proc.pid, version) == f"/{tree.name}/sleeper"
                raise RuntimeError("boom")
        assert not any(d.exists() for d in tree.directories())
        assert proc.poll() is None  # moved out, not killed
        assert cgroup_of(proc.pid, version) == "/"


def test_failed_enter_removes_what_it_made() -> None:
    layout = layout_for(CgroupVersion.V1)
    roots = layout.roots()
    if len(roots) < 2:
        pytest.skip("needs a layout with several hierarchies")
    tree = CgroupTree(layout, run_id())
    squatter = roots[-1] / tree.name
    squatter.mkdir()
    try:
        with pytest.raises(CgroupError, match="exists already"):
            with tree:
                pass
        assert not any((root / tree.name).exists() for root in roots[:-1])
        assert squatter.is_dir()  # not ours: left alone
    finally:
        squatter.rmdir()


def test_busy_cgroup_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    layout = detect()
    if layout is None:
        pytest.skip("no usable cgroup hierarchy here")
    monkeypatch.setattr(cgroups, "RMDIR_RETRY_S", 0.05)
    for raising in (False, True):
        tree = CgroupTree(layout, run_id())
        intruder: Path | None = None
        try:
            with pytest.raises(Exception) as caught:
                with tree:
                    # A cgroup made inside ours by someone else keeps ours busy.
                    intruder = tree.role("server").cpu_dir / "own-child"
                    intruder.mkdir()
                    if raising:
                        raise RuntimeError("boom")
            if raising:
                assert caught.type is RuntimeError
                assert "could not remove cgroups" in "".join(caught.value.__notes__)
            else:
                assert caught.type is CgroupError and "Device or resource busy" in str(caught.value)
        finally:
            if intruder is not None:
                intruder.rmdir()
                intruder.parent.rmdir()
            for directory in tree.directories():
                if directory.exists():
                    for role_dir in directory.iterdir():
                        if role_dir.is_dir():
                            role_dir.rmdir()
                    directory.rmdir()
        assert not any(d.exists() for d in tree.directories())
