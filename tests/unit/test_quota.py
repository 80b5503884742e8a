"""The app server's limits (issue 48): --cpu-quota and --memory-limit read, refused in one line
each, written on a role's cgroup (v1 and v2 files in a fake tree under tmp_path, and once on this
machine's real cgroups), read back per window (throttling, OOM kills), and workers=auto."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from pywebbench.catalog.model import LaunchSpec
from pywebbench.catalog.registry import build_catalog
from pywebbench.core.errors import UserError
from pywebbench.measure.accounting import CgroupAccountant, ProcAccountant
from pywebbench.measure.cgroup_layout import CgroupLayout, CgroupVersion, detect
from pywebbench.measure.cgroup_limits import (
    LimitCounters,
    ServerLimits,
    apply_limits,
    oom_kills,
    read_counters,
    swap_note,
    window_reading,
)
from pywebbench.measure.cgroups import CgroupError, CgroupTree, RoleCgroup
from pywebbench.measure.confinement import Confinement, ServerWatch, named_oom
from pywebbench.measure.limits_preflight import limits_problems
from pywebbench.plan.declared import byte_size, cpu_amount, worker_count
from pywebbench.plan.knobs import knob_args, knob_labels, knob_short
from pywebbench.plan.limits import format_bytes, parse_bytes
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import make_plan, point_label
from pywebbench.plan.sweep import Knob, format_value, parse_knob
from pywebbench.results.model import TrialSpec, TrialStatus
from pywebbench.results.server import AUTO_WORKERS, ServerCgroup

MIB = 1024 * 1024
SPEC = TrialSpec("t", "flask:gunicorn-sync", "hello", 10, 1.0, 0.0, 1, "wrk")


# -- reading the values ---------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "size"), [
    ("256M", 256 * MIB), ("512Mi", 512 * MIB), ("1G", 1024 * MIB), ("1Gi", 1024 * MIB), ("1.5G", 1536 * MIB),
    ("64m", 64 * MIB), ("100MiB", 100 * MIB), ("33554432", 32 * MIB), ("65536K", 64 * MIB),
])
def test_sizes_read_in_powers_of_1024(text: str, size: int) -> None:
    assert parse_bytes(text) == size
    assert byte_size(text) == size


def test_sizes_are_written_back_in_the_largest_whole_unit() -> None:
    assert [format_bytes(v) for v in (256 * MIB, 1024 * MIB, 1536 * MIB, 1000)] == ["256M", "1G", "1536M", "1000"]
    assert parse_bytes(format_bytes(1536 * MIB)) == 1536 * MIB


def test_knobs_take_quotas_sizes_and_auto_workers() -> None:
    assert parse_knob("cpu_quota=0.5,1,1.5").values == (0.5, 1.0, 1.5)
    sizes = parse_knob("memory_limit=256M..1G*2")
    assert sizes.values == (256 * MIB, 512 * MIB, 1024 * MIB)
    assert [format_value(Knob.MEMORY_LIMIT, v) for v in sizes.values] == ["256M", "512M", "1G"]
    workers = parse_knob("workers=auto,1,4")
    assert workers.values == (AUTO_WORKERS, 1, 4)
    assert format_value(Knob.WORKERS, AUTO_WORKERS) == "auto"
    assert point_label((("workers", AUTO_WORKERS), ("cpu_quota", 0.5))) == "workers=auto,cpu_quota=0.5"
    assert knob_args((("workers", (AUTO_WORKERS, 2)),)) == ("workers=auto,2",)
    assert knob_short("memory_limit", 256 * MIB) == "memory_limit=256M"


def test_the_flags_read_as_the_knobs_do() -> None:
    assert cpu_amount("0.5") == 0.5
    assert worker_count("auto") == worker_count("AUTO") == AUTO_WORKERS
    assert worker_count("3") == 3


def test_labels_say_the_limits_and_auto_workers() -> None:
    from dataclasses import replace
    labels = knob_labels(replace(SPEC, cpu_quota=0.5, memory_limit=256 * MIB, workers=AUTO_WORKERS))
    assert "CPU quota 0.5" in labels and "memory limit 256M" in labels and "workers chosen by the server" in labels


# -- refusals, one line each ----------------------------------------------------------------------


@pytest.mark.parametrize(("read", "text", "message"), [
    (cpu_amount, "0", "cpu_quota must be positive, got 0"),
    (cpu_amount, "-1", "cpu_quota must be positive, got -1"),
    (cpu_amount, "0.005", "cpu_quota must be at least 0.01 CPU"),
    (cpu_amount, "half", "cpu_quota: 'half' is not a number"),
    (byte_size, "16M", "memory_limit must be at least 32M: no server starts below it"),
    (byte_size, "lots", "memory_limit: 'lots' is not a size"),
    (worker_count, "0", "must be positive, got 0"),
])
def test_bad_flag_values_are_refused_in_one_line(read: object, text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        read(text)  # type: ignore[operator]
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(("knob", "message"), [
    ("cpu_quota=0", "cpu_quota must be positive"),
    ("cpu_quota=0.001,1", "at least 0.01 CPU"),
    ("memory_limit=1M", "at least 32M"),
    ("memory_limit=8M..1G*2", "at least 32M"),
    ("workers=0", "workers must be positive"),
])
def test_bad_knob_values_are_refused_in_one_line(knob: str, message: str) -> None:
    with pytest.raises(UserError) as caught:
        parse_knob(knob)
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(("options", "message"), [
    (RunOptions(cpu_quota=0.0), "--cpu-quota must be positive, got 0"),
    (RunOptions(cpu_quota=0.001), "--cpu-quota must be at least 0.01 CPU"),
    (RunOptions(memory_limit=MIB), "--memory-limit must be at least 32M"),
])
def test_options_from_a_config_file_are_refused_alike(options: RunOptions, message: str) -> None:
    with pytest.raises(UserError, match=message):
        options.validate()


def test_auto_workers_pass_validation() -> None:
    assert RunOptions(workers=AUTO_WORKERS, cpu_quota=0.5, memory_limit=256 * MIB).validate().workers == AUTO_WORKERS


def test_a_quota_above_the_stack_cpus_is_refused_before_anything_starts() -> None:
    catalog = build_catalog()
    options = RunOptions(stacks=("flask:gunicorn-sync",), cpu_quota=1.5, stack_cpus=(1,), loadgen_cpus=(0,))
    with pytest.raises(UserError) as caught:
        make_plan(catalog, options, (0, 1))
    assert str(caught.value).startswith("cpu_quota 1.5 is more than the 1 CPU(s) the stack is given")
    assert "\n" not in str(caught.value)
    plan = make_plan(catalog, RunOptions(stacks=("flask:gunicorn-sync",), cpu_quota=1.5, stack_cpus=(0, 1),
                                         loadgen_cpus=(0,)), (0, 1))
    assert {t.cpu_quota for t in plan.trials} == {1.5}
    swept = make_plan(catalog, RunOptions(stacks=("flask:gunicorn-sync",), stack_cpus=(1,), loadgen_cpus=(0,)), (0, 1),
                      ((("stack_cpus", 2), ("cpu_quota", 1.5)),))
    assert {(len(t.stack_cpus), t.cpu_quota) for t in swept.trials} == {(2, 1.5)}


def test_auto_workers_reach_the_session_and_the_server_gets_no_worker_flag() -> None:
    catalog = build_catalog()
    plan = make_plan(catalog, RunOptions(stacks=("flask:gunicorn-sync", "flask:uwsgi", "starlette:uvicorn"),
                                         workers=AUTO_WORKERS, stack_cpus=(1,), loadgen_cpus=(0,)), (0, 1))
    for session in plan.sessions:
        assert session.workers == AUTO_WORKERS and session.trials[0].workers == AUTO_WORKERS
        argv = session.stack.server.build_argv(LaunchSpec("python", "app_flask", "127.0.0.1", 8000, session.workers, 1))
        assert "--workers" not in argv and "--processes" not in argv, argv
    fixed = make_plan(catalog, RunOptions(stacks=("flask:uwsgi",), workers=3, stack_cpus=(1,), loadgen_cpus=(0,)),
                      (0, 1)).sessions[0]
    argv = fixed.stack.server.build_argv(LaunchSpec("python", "app_flask", "127.0.0.1", 8000, fixed.workers, 1))
    assert argv[argv.index("--processes") + 1] == "3"


def _layout(tmp_path: Path, *, cpu: bool, memory: bool, limits: tuple[str, ...] = ()) -> CgroupLayout:
    return CgroupLayout(CgroupVersion.V1, cpu_root=tmp_path / "cpuacct", memory_root=tmp_path / "memory" if memory
                        else None, weight_root=tmp_path / "cpu" if cpu else None, limits=limits)


def test_missing_controllers_and_placed_servers_are_refused_in_one_line_each(tmp_path: Path) -> None:
    from dataclasses import replace
    quota, memory = replace(SPEC, cpu_quota=0.5), replace(SPEC, memory_limit=64 * MIB)
    assert limits_problems([SPEC], placed=True, layout_of=lambda: None) == []  # nothing asked: nothing checked
    bare = _layout(tmp_path, cpu=False, memory=False, limits=(
        "no cgroup v1 memory hierarchy is mounted: no per-role memory",
        "no cgroup v1 cpu hierarchy is mounted: no CPU weights"))
    problems = limits_problems([quota, memory], placed=False, layout_of=lambda: bare)
    assert problems == [
        "--cpu-quota needs the cpu controller (cgroup v1's cpu hierarchy, or cpu enabled in cgroup v2): "
        "no cgroup v1 cpu hierarchy is mounted: no CPU weights",
        "--memory-limit needs the memory controller (cgroup v1's memory hierarchy, or memory enabled in cgroup v2): "
        "no cgroup v1 memory hierarchy is mounted: no per-role memory",
    ]
    assert limits_problems([quota], placed=False, layout_of=lambda: _layout(tmp_path, cpu=True, memory=False)) == []
    (none,) = limits_problems([memory], placed=False, layout_of=lambda: None)
    assert none.startswith("--memory-limit need(s) a cgroup for the app server, and none can be made here")
    (placed,) = limits_problems([quota, memory], placed=True, layout_of=lambda: None)
    assert placed.startswith("--cpu-quota and --memory-limit limit(s) the app server's cgroup on this machine")


# -- written on the role's cgroup: v1 and v2 ------------------------------------------------------


def _role(tmp_path: Path, version: CgroupVersion, *, cpu: bool = True, memory: bool = True,
          swap: bool = True) -> RoleCgroup:
    """A role's directories as the kernel makes them, each interface file present and empty."""
    if version is CgroupVersion.V1:
        dirs = {"cpuacct": tmp_path / "cpuacct/run/app", "cpu": tmp_path / "cpu/run/app",
                "memory": tmp_path / "memory/run/app"}
        files = {"cpu": ("cpu.cfs_period_us", "cpu.cfs_quota_us", "cpu.stat"),
                 "memory": ("memory.limit_in_bytes", "memory.oom_control", "memory.failcnt",
                            "memory.max_usage_in_bytes"), "cpuacct": ("cpuacct.usage",)}
    else:
        one = tmp_path / "unified/run/app"
        dirs = {"cpuacct": one, "cpu": one, "memory": one}
        files = {"cpu": ("cpu.max", "cpu.stat"),
                 "memory": ("memory.max", "memory.events", "memory.peak") + (("memory.swap.max",) if swap else ())}
    for name, directory in dirs.items():
        directory.mkdir(parents=True, exist_ok=True)
        for file in files.get(name, ()):
            (directory / file).write_text("")
    return RoleCgroup("app", version, cpu_dir=dirs["cpuacct"], memory_dir=dirs["memory"] if memory else None,
                      weight_dir=dirs["cpu"] if cpu else None)


def _emptied(role: RoleCgroup) -> RoleCgroup:
    """Each file emptied, as the kernel shows a fresh value (a plain file keeps a longer old one's tail)."""
    for directory in role.directories:
        for file in directory.iterdir():
            file.write_text("")
    return role


def test_v1_writes_the_cfs_period_and_quota_and_the_memory_limit(tmp_path: Path) -> None:
    role = _role(tmp_path, CgroupVersion.V1)
    apply_limits(role, ServerLimits(cpu_quota=0.5, memory_limit=256 * MIB))
    assert role.weight_dir is not None and role.memory_dir is not None
    assert (role.weight_dir / "cpu.cfs_period_us").read_text() == "100000"
    assert (role.weight_dir / "cpu.cfs_quota_us").read_text() == "50000"
    assert (role.memory_dir / "memory.limit_in_bytes").read_text() == str(256 * MIB)
    assert not (role.memory_dir / "memory.memsw.limit_in_bytes").exists()  # swap: said, not limited (swap_note)
    apply_limits(_emptied(role), ServerLimits(cpu_quota=1.5))
    assert (role.weight_dir / "cpu.cfs_quota_us").read_text() == "150000"
    assert (role.memory_dir / "memory.limit_in_bytes").read_text() == "-1"  # unlimited again
    apply_limits(_emptied(role), ServerLimits())
    assert (role.weight_dir / "cpu.cfs_quota_us").read_text() == "-1"


def test_v2_writes_cpu_max_memory_max_and_no_swap(tmp_path: Path) -> None:
    role = _role(tmp_path, CgroupVersion.V2)
    apply_limits(role, ServerLimits(cpu_quota=0.2, memory_limit=512 * MIB))
    directory = role.cpu_dir
    assert (directory / "cpu.max").read_text() == "20000 100000"
    assert (directory / "memory.max").read_text() == str(512 * MIB)
    assert (directory / "memory.swap.max").read_text() == "0"
    apply_limits(_emptied(role), ServerLimits())
    assert (directory / "cpu.max").read_text() == "max 100000"
    assert (directory / "memory.max").read_text() == "max"
    assert (directory / "memory.swap.max").read_text() == "max"
    no_swap = _role(tmp_path / "b", CgroupVersion.V2, swap=False)  # no swap accounting: nothing to write
    apply_limits(no_swap, ServerLimits(memory_limit=64 * MIB))
    assert not (no_swap.cpu_dir / "memory.swap.max").exists()


def test_a_limit_without_its_controller_is_a_cgroup_error(tmp_path: Path) -> None:
    with pytest.raises(CgroupError, match="--cpu-quota needs the cpu controller"):
        apply_limits(_role(tmp_path / "a", CgroupVersion.V1, cpu=False), ServerLimits(cpu_quota=0.5))
    with pytest.raises(CgroupError, match="--memory-limit needs the memory controller"):
        apply_limits(_role(tmp_path / "b", CgroupVersion.V2, memory=False), ServerLimits(memory_limit=64 * MIB))
    apply_limits(_role(tmp_path / "c", CgroupVersion.V1, cpu=False, memory=False), ServerLimits())  # nothing asked


def test_swap_is_said_off_or_accounted(tmp_path: Path) -> None:
    header = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
    off, on = tmp_path / "off", tmp_path / "on"
    off.write_text(header)
    on.write_text(header + "/swapfile  file  1048572  0  -2\n")
    assert swap_note(CgroupVersion.V1, off).startswith("no swap is on here")
    assert "memory.memsw.usage_in_bytes" in swap_note(CgroupVersion.V1, on)
    assert "memory.swap.max is 0" in swap_note(CgroupVersion.V2, on)


# -- read back per window -------------------------------------------------------------------------


def test_v1_throttling_and_oom_kills_are_deltas_over_the_window(tmp_path: Path) -> None:
    role = _role(tmp_path, CgroupVersion.V1)
    assert role.weight_dir is not None and role.memory_dir is not None

    def state(periods: int, throttled: int, ns: int, kills: int, failcnt: int) -> LimitCounters:
        (role.weight_dir / "cpu.stat").write_text(  # type: ignore[operator]
            f"nr_periods {periods}\nnr_throttled {throttled}\nthrottled_time {ns}\nnr_bursts 0\nburst_time 0\n")
        (role.memory_dir / "memory.oom_control").write_text(  # type: ignore[operator]
            f"oom_kill_disable 0\nunder_oom 0\noom_kill {kills}\n")
        (role.memory_dir / "memory.failcnt").write_text(f"{failcnt}\n")  # type: ignore[operator]
        return read_counters(role)

    before = state(100, 40, 2_000_000_000, 1, 7)
    assert before == LimitCounters(100, 40, 2_000_000_000, 1, 7, "window")
    after = state(110, 49, 2_735_000_000, 3, 9)
    reading = window_reading(before, after, 63.5, oom_kills(before, after, killed=False))
    assert reading == ServerCgroup(periods=10, throttled_periods=9, throttled_s=0.735, peak_memory_mb=63.5,
                                   peak_over="window", oom_kills=2)


def test_v2_throttling_reads_usec_and_oom_kills_from_memory_events(tmp_path: Path) -> None:
    role = _role(tmp_path, CgroupVersion.V2)
    stat, events = role.cpu_dir / "cpu.stat", role.cpu_dir / "memory.events"
    stat.write_text("usage_usec 5000\nuser_usec 4000\nsystem_usec 1000\nnr_periods 20\nnr_throttled 0\n"
                    "throttled_usec 0\nnr_bursts 0\nburst_usec 0\n")
    events.write_text("low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n")
    before = read_counters(role)
    stat.write_text("usage_usec 9000\nnr_periods 30\nnr_throttled 8\nthrottled_usec 120000\n")
    events.write_text("low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n")
    after = read_counters(role)
    reading = window_reading(before, after, None, oom_kills(before, after, killed=False))
    assert (reading.periods, reading.throttled_periods, reading.throttled_s, reading.oom_kills) == (10, 8, 0.12, 1)


def test_no_quota_reads_zero_periods_and_a_cpu_stat_without_them_reads_none(tmp_path: Path) -> None:
    role = _role(tmp_path, CgroupVersion.V2)
    (role.cpu_dir / "cpu.stat").write_text("usage_usec 5000\nuser_usec 4000\nsystem_usec 1000\n")  # cpu not enabled
    counters = read_counters(role)
    assert (counters.periods, counters.throttled_periods, counters.throttled_ns) == (None, None, None)
    assert window_reading(counters, counters, None, 0).throttled_s is None


def test_an_old_v1_kernel_counts_a_sigkill_while_failcnt_rose_as_an_oom_kill() -> None:
    before, after = LimitCounters(failcnt=3), LimitCounters(failcnt=5)
    assert oom_kills(before, after, killed=True) == 1
    assert oom_kills(before, after, killed=False) == 0
    assert oom_kills(before, LimitCounters(failcnt=3), killed=True) == 0


class _Counters:
    """An accountant whose role counters are set by the test (the rest of Accountant unused)."""

    source = "cgroup-v1"

    def __init__(self) -> None:
        self.now = LimitCounters(0, 0, 0, 0, 0)
        self.confined: list[ServerLimits] = []

    def counters(self, role: str) -> LimitCounters:
        return self.now

    def confine(self, role: str, limits: ServerLimits) -> None:
        self.confined.append(limits)


def test_a_window_with_an_oom_kill_is_named_server_oom_in_one_line() -> None:
    from dataclasses import replace
    accountant = _Counters()
    watch = ServerWatch(accountant, "app-x")  # type: ignore[arg-type]
    accountant.now = LimitCounters(5, 1, 10, 0, 0)
    watch.open()
    accountant.now = LimitCounters(15, 9, 90, 0, 1)
    watch.close()
    accountant.now = LimitCounters(16, 9, 90, 1, 2)  # the kill came after the load, in the window's drain
    reading = watch.reading(64.0, killed=False)
    assert reading is not None and (reading.periods, reading.throttled_periods, reading.oom_kills) == (10, 8, 1)
    spec = replace(SPEC, memory_limit=64 * MIB)
    status, error = named_oom(TrialStatus.SERVER_FAILED, "the server of x exited (signal 9, SIGKILL) during the "
                              "window", reading, "x", spec)
    assert status is TrialStatus.SERVER_OOM
    assert error is not None and error.splitlines()[0] == (
        "the kernel killed 1 process(es) of x's server for going over its memory limit of 64M (peak 64 MiB)")
    assert named_oom(TrialStatus.OK, None, replace(reading, oom_kills=0), "x", spec) == (TrialStatus.OK, None)
    assert ServerWatch(accountant, "app-x", local=False).reading(1.0, killed=True) is None  # type: ignore[arg-type]


def test_a_server_killed_for_memory_while_it_started_fails_as_server_oom() -> None:
    from dataclasses import replace
    accountant = _Counters()
    notes: list[str] = []
    confinement = Confinement(accountant, notes.append)  # type: ignore[arg-type]
    confinement.apply("app-x", replace(SPEC, memory_limit=32 * MIB))
    assert accountant.confined == [ServerLimits(None, 32 * MIB)] and notes[0].startswith("memory limit: ")
    accountant.now = LimitCounters(0, 0, 0, 2, 3)
    status, error = confinement.failed_start("app-x", "not ready")
    assert status is TrialStatus.SERVER_OOM and error.startswith("the kernel killed 2 process(es) of the server")
    confinement.apply("app-y", SPEC)
    assert confinement.failed_start("app-y", "not ready") == (TrialStatus.SERVER_FAILED, "not ready")
    assert len(notes) == 1  # said once


def test_without_cgroups_a_limit_cannot_be_set() -> None:
    ProcAccountant().confine("app-x", ServerLimits())
    with pytest.raises(CgroupError, match="need a cgroup for the server"):
        ProcAccountant().confine("app-x", ServerLimits(cpu_quota=0.5))
    assert ProcAccountant().counters("app-x") is None


# -- on this machine's real cgroups ---------------------------------------------------------------


def test_the_kernel_takes_the_limits_and_reads_them_back() -> None:
    layout = detect()
    if layout is None or layout.weight_root is None or layout.memory_root is None:
        pytest.skip("needs root and the cpu and memory controllers")
    with CgroupTree(layout, f"test-{os.getpid()}-{uuid.uuid4().hex[:8]}") as tree:
        accountant = CgroupAccountant(tree)
        accountant.confine("app-q", ServerLimits(cpu_quota=0.25, memory_limit=64 * MIB))
        role = tree.roles["app-q"]
        assert role.weight_dir is not None and role.memory_dir is not None
        if layout.version is CgroupVersion.V1:
            assert (role.weight_dir / "cpu.cfs_quota_us").read_text().strip() == "25000"
            assert int((role.memory_dir / "memory.limit_in_bytes").read_text()) == 64 * MIB
        else:
            assert (role.weight_dir / "cpu.max").read_text().strip() == "25000 100000"
            assert int((role.memory_dir / "memory.max").read_text()) == 64 * MIB
        counters = accountant.counters("app-q")
        assert counters is not None and counters.periods == 0 and counters.oom_kills == 0
        accountant.confine("app-q", ServerLimits())  # a later launch without limits: unlimited again
        if layout.version is CgroupVersion.V1:
            assert (role.weight_dir / "cpu.cfs_quota_us").read_text().strip() == "-1"
        else:
            assert (role.weight_dir / "cpu.max").read_text().startswith("max")
        accountant.confine("app-never", ServerLimits())  # never limited: not even made
        assert "app-never" not in tree.roles


# -- workers=auto ---------------------------------------------------------------------------------


def test_the_worker_count_is_the_leaves_of_the_server_s_tree() -> None:
    from pywebbench.measure.sizing import settled_count, worker_processes
    code = "import os, time\nfor _ in range(3):\n    if os.fork() == 0:\n        time.sleep(30)\n        os._exit(0)\ntime.sleep(30)\n"
    master = subprocess.Popen([sys.executable, "-c", code])
    try:
        assert settled_count(lambda: worker_processes((master.pid,)), wait_s=5.0) == 3
    finally:
        for child in __import__("psutil").Process(master.pid).children(recursive=True):
            child.kill()
        master.kill()
        master.wait()
    single = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert worker_processes((single.pid,)) == 1
    finally:
        single.kill()
        single.wait()


def test_sized_from_host_when_the_count_fits_the_host_and_not_the_quota() -> None:
    from dataclasses import replace
    from pywebbench.measure.checks import trial_checks
    from pywebbench.measure.sizing import sized_from_host
    from pywebbench.results.model import Latency, LoadResult, SocketErrors, StackInfo, TrialResult
    from pywebbench.results.server import WorkerSizing
    assert sized_from_host(WorkerSizing(5, 2, 2, 1.0)) == "5 workers for a 1-CPU quota (the host has 2 CPUs)"
    assert sized_from_host(WorkerSizing(9, 4, 1, None)) == "9 workers for a 1 pinned CPU(s) (the host has 4 CPUs)"
    assert sized_from_host(WorkerSizing(3, 2, 2, 1.0)) is None  # 2 x 1 + 1: sized from the quota
    assert sized_from_host(WorkerSizing(1, 2, 2, 0.5)) is None  # Gunicorn's default
    assert sized_from_host(WorkerSizing(5, 2, 2, 2.0)) is None  # the quota is the host
    stack = StackInfo("flask:gunicorn-sync", "flask", "Flask", "gunicorn", "Gunicorn", "sync", "sync", "WSGI", "Sync",
                      "-", "-", 5, 1, sizing=WorkerSizing(5, 2, 2, 1.0))
    load = LoadResult("wrk", 1000, 1.0, SocketErrors(), 0, Latency(10.0, 1.0, 20.0, ((50.0, 10.0),)))
    trial = TrialResult(replace(SPEC, connections=10, workers=AUTO_WORKERS, cpu_quota=1.0), stack, TrialStatus.OK,
                        "", "", load=load)
    assert "sized-from-host: 5 workers for a 1-CPU quota (the host has 2 CPUs)" in trial_checks(trial, None)
    assert not any(c.startswith("sized-from-host") for c in trial_checks(replace(trial, stack=replace(
        stack, sizing=None)), None))
