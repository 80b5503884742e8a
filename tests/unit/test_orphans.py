"""What a killed harness leaves: the sweep of stale records, and the guard plus PR_SET_PDEATHSIG
stopping a run's processes the moment its harness is SIGKILLed (real processes, no servers)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from pywebbench.core.orphans import GroupRecord, Harness, Registry, read_records, sweep

DEAD_HARNESS = Harness(os.getpid(), psutil.Process().create_time() - 1000.0)
"""This test's own pid with another create time: a harness whose pid was since recycled, so dead."""


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _gone_within(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def _group(started: list[subprocess.Popen[bytes]], script: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(["sh", "-c", script], process_group=0, stdout=subprocess.PIPE)
    started.append(proc)
    return proc


def test_the_sweep_stops_what_dead_harnesses_left_and_never_a_recycled_pid(
        tmp_path: Path, started: list[subprocess.Popen[bytes]]) -> None:
    dead = Registry(tmp_path, DEAD_HARNESS)
    leader = _group(started, "exec sleep 60")
    dead.add_group(leader.pid, "server")
    # A master that died (as PR_SET_PDEATHSIG kills it) and left its worker in the group.
    orphaned = _group(started, "sleep 60 & echo $!; sleep 0.3")
    assert orphaned.stdout is not None
    worker = int(orphaned.stdout.readline())
    dead.add_group(orphaned.pid, "gunicorn")
    orphaned.wait()
    # The record of a group long gone whose leader's pid now names someone else's process.
    stranger = _group(started, "exec sleep 60")
    recycled = tmp_path / f"{DEAD_HARNESS.pid}-{stranger.pid}.json"
    recycled.write_text(json.dumps({"kind": "group", "pgid": stranger.pid, "pid": stranger.pid,
                                    "create_time": psutil.Process(stranger.pid).create_time() - 500.0,
                                    "name": "old", "harness_pid": DEAD_HARNESS.pid,
                                    "harness_create_time": DEAD_HARNESS.create_time}))
    # A live harness's group (this test's own): not touched, its record kept.
    mine = _group(started, "exec sleep 60")
    Registry(tmp_path, Harness.me()).add_group(mine.pid, "live")

    swept = sweep(tmp_path, grace_s=0.5)
    assert swept.processes == 2 and swept.harnesses == (DEAD_HARNESS.pid,)
    assert swept.line() == f"swept 2 processes left by a killed run (pid {DEAD_HARNESS.pid})"
    assert _gone_within([leader.pid, worker], 2.0) == []
    assert _alive(stranger.pid) and _alive(mine.pid)
    assert [(r.pgid, r.harness) for r in read_records(tmp_path) if isinstance(r, GroupRecord)] == [
        (mine.pid, Harness.me())]
    assert sweep(tmp_path).line() is None  # said once: the records are gone


def test_a_record_unreadable_or_of_a_group_already_gone_is_dropped_silently(tmp_path: Path) -> None:
    (tmp_path / "1-2.json").write_text("{not json")
    (tmp_path / "3-4.json").write_text(json.dumps({  # pid_max is at most 2**22: no such process
        "kind": "group", "pgid": 2**22 + 7, "pid": 2**22 + 7, "create_time": 1.0, "name": "x",
        "harness_pid": DEAD_HARNESS.pid, "harness_create_time": DEAD_HARNESS.create_time}))
    assert sweep(tmp_path).line() is None
    assert list(tmp_path.iterdir()) == []


HARNESS = textwrap.dedent('''
    import sys, time
    from pathlib import Path
    from pywebbench.core import procs
    from pywebbench.core.orphans import guarded_run
    if sys.argv[2] == "python":
        procs._setpriv = lambda: None  # the fallback wrapper: prctl through ctypes, then exec
    with guarded_run(Path(sys.argv[1]), print):
        server = procs.ManagedProcess(["sh", "-c", "sleep 60 & echo $!; exec sleep 60"], env={"PATH": "/usr/bin:/bin"},
                                      log_dir=Path(sys.argv[1]) / "logs", name="server").start()
        while not server.stdout_path.read_text():
            time.sleep(0.01)
        print(server.pid, server.stdout_path.read_text().strip(), flush=True)
        time.sleep(60)
''')


@pytest.mark.parametrize("wrapper", ["setpriv", "python"])
def test_a_sigkilled_harness_leaves_no_process(tmp_path: Path, wrapper: str) -> None:
    harness = subprocess.Popen([sys.executable, "-c", HARNESS, str(tmp_path), wrapper], stdout=subprocess.PIPE,
                               text=True)
    assert harness.stdout is not None
    master, worker = map(int, harness.stdout.readline().split())
    guard = next(p for p in psutil.Process(harness.pid).children() if "pywebbench.core.orphans" in " ".join(p.cmdline()))
    argv = " ".join(psutil.Process(master).cmdline())
    assert argv == "sh -c sleep 60 & echo $!; exec sleep 60" or argv == "sleep 60"  # the wrapper exec'd it
    harness.kill()
    harness.wait()
    assert _gone_within([master, worker], 2.0) == []
    assert _gone_within([guard.pid], 2.0) == []
    assert read_records(tmp_path) == []


def test_pdeathsig_alone_stops_the_direct_child_and_the_next_sweep_its_workers(tmp_path: Path) -> None:
    """The guard killed too: the master dies with its harness, its worker waits for the next run's sweep."""
    harness = subprocess.Popen([sys.executable, "-c", HARNESS, str(tmp_path), "setpriv"], stdout=subprocess.PIPE,
                               text=True)
    assert harness.stdout is not None
    master, worker = map(int, harness.stdout.readline().split())
    guard = next(p for p in psutil.Process(harness.pid).children() if "pywebbench.core.orphans" in " ".join(p.cmdline()))
    guard.kill()
    assert _gone_within([guard.pid], 2.0) == []
    harness.kill()
    harness.wait()
    try:
        assert _gone_within([master], 2.0) == []
        assert _alive(worker)
        swept = sweep(tmp_path, grace_s=0.5)
        assert swept.line() == f"swept 1 process left by a killed run (pid {harness.pid})"
        assert _gone_within([worker], 2.0) == []
    finally:
        if _alive(worker):
            os.kill(worker, signal.SIGKILL)


def test_a_dead_runs_cgroups_are_emptied_and_removed(tmp_path: Path, started: list[subprocess.Popen[bytes]]) -> None:
    from pywebbench.measure.cgroups import detect
    layout = detect()
    if layout is None:
        pytest.skip("no cgroup can be made here (not root, or no cgroup filesystem)")
    run_dir = layout.cpu_root / f"pywebbench-test{os.getpid()}"
    (run_dir / "app").mkdir(parents=True)
    try:
        server = _group(started, "exec sleep 60")
        (run_dir / "app" / "cgroup.procs").write_text(str(server.pid))
        Registry(tmp_path, DEAD_HARNESS).add_cgroups([run_dir, tmp_path / "not-a-cgroup"])
        swept = sweep(tmp_path, grace_s=0.5)
        assert swept.line() == f"swept 1 process and the cgroups left by a killed run (pid {DEAD_HARNESS.pid})"
        assert _gone_within([server.pid], 2.0) == [] and not run_dir.exists()
        assert read_records(tmp_path) == []
    finally:
        for directory in (run_dir / "app", run_dir):
            if directory.exists():
                for pid in (directory / "cgroup.procs").read_text().split():
                    (layout.cpu_root / "cgroup.procs").write_text(pid)
                directory.rmdir()
