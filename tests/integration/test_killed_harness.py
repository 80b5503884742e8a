"""`kill -9` of the harness mid-window: no server, worker or generator of its run outlives it.

The direct children die with it (PR_SET_PDEATHSIG), the run's guard stops the rest at once (a
gunicorn master's workers); with the guard killed too, the next run's start sweeps the workers.
On other hosts (the netns rig), each remote child's line stops its group when the harness's end
closes its stdin."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest

from pywebbench.stage.envs import cache_root
from pywebbench.stage.netns import SSHD, namespace_pids, namespaces, run_id, sweep_leftovers
from pywebbench.stage.ssh import REMOTE_GRACE_S
from .conftest import ROOT

RECORDS = cache_root() / "children"

SHORT = ("--stack", "flask:gunicorn-sync", "--workload", "hello", "--workers", "2", "--connections", "8",
         "--warmup", "0.5", "--settle", "0.2")


@contextmanager
def _harness(out: Path, *extra: str) -> Iterator[subprocess.Popen[bytes]]:
    argv = [sys.executable, "-m", "pywebbench", "run", *SHORT, *extra, "--out", str(out)]
    log = out.with_suffix(".stderr")
    with open(log, "wb") as stderr:
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _run_processes(harness: subprocess.Popen[bytes], timeout_s: float = 300) -> list[psutil.Process]:
    """Once a window is being measured (wrk on the server): every descendant of the harness."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert harness.poll() is None, "the run ended before a window was measured"
        found = psutil.Process(harness.pid).children(recursive=True)
        names = [" ".join(_cmdline(p)) for p in found]
        loading = any("wrk" in n and "settle" not in n and "warmup" not in n for n in names)
        if loading and sum("gunicorn" in n for n in names) >= 3:  # the master and its two workers
            return found
        time.sleep(0.05)
    raise AssertionError("no window was measured in time")


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except psutil.Error:
        return None


def _cmdline(proc: psutil.Process) -> list[str]:
    try:
        return proc.cmdline()
    except psutil.Error:
        return []


def _alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    """Those still running (a zombie waiting for its reaper counts as gone)."""
    left = []
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                left.append(proc)
        except psutil.Error:
            continue
    return left


def _alive_after(procs: list[psutil.Process], seconds: float) -> list[psutil.Process]:
    deadline = time.monotonic() + seconds
    while _alive(procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _alive(procs)


def _describe(procs: list[psutil.Process]) -> list[str]:
    return [f"{p.pid}: {' '.join(_cmdline(p))}" for p in procs]


def _guard(procs: list[psutil.Process]) -> psutil.Process:
    return next(p for p in procs if "pywebbench.core.orphans" in " ".join(_cmdline(p)))


def test_kill_9_mid_window_leaves_no_process_of_the_run(tmp_path: Path) -> None:
    with _harness(tmp_path / "first", "--duration", "5", "--repeats", "3") as harness:
        run = _run_processes(harness)
        _guard(run)  # the guard is there to act
        harness.send_signal(signal.SIGKILL)
        harness.wait()
        left = _alive_after(run, 2.0)
    assert left == [], _describe(left)
    with _harness(tmp_path / "second", "--duration", "1", "--repeats", "1") as second:
        _run_processes(second)
        assert _alive(run) == []
        second.wait(timeout=120)
    # The guard left nothing of this run to sweep (a neighbour's killed run may have left some).
    assert f"left by a killed run (pid {harness.pid})" not in (tmp_path / "second.stderr").read_text()


def test_with_its_guard_killed_too_the_next_run_sweeps_what_is_left(tmp_path: Path) -> None:
    with _harness(tmp_path / "first", "--duration", "5", "--repeats", "3") as harness:
        run = _run_processes(harness)
        direct = [p for p in run if p.ppid() == harness.pid]
        _guard(run).kill()
        harness.send_signal(signal.SIGKILL)
        harness.wait()
        assert _alive_after(direct, 2.0) == [], _describe(_alive(direct))  # PR_SET_PDEATHSIG
    # Left to sweep: gunicorn's workers if they did not notice their master's death (they
    # do, within a second), and the run's cgroups where it made some.
    left = bool(_alive(run)) or any(RECORDS.glob(f"{harness.pid}-cgroups-*.json"))
    try:
        with _harness(tmp_path / "second", "--duration", "1", "--repeats", "1") as second:
            _run_processes(second)  # its start is over: so is its sweep
            assert _alive(run) == [], _describe(_alive(run))
            second.wait(timeout=120)
        said = (tmp_path / "second.stderr").read_text()
        if left:  # (unless another run started on this machine meanwhile swept them first)
            assert f"left by a killed run (pid {harness.pid})" in said, said[-2000:]
    finally:
        for proc in _alive(run):
            proc.kill()


@pytest.mark.skipif(os.geteuid() != 0 or not os.access(SSHD, os.X_OK), reason="the netns rig needs root and openssh-server")
def test_kill_9_mid_window_stops_the_servers_on_the_other_hosts(tmp_path: Path) -> None:
    """The netns rig's hosts share this machine's process table: the app host's server, its
    workers and the links' Toxiproxy are seen going. Each remote child's line there watches a
    stdin only the harness holds (stage/ssh.py): sshd alone would leave them running."""
    with _harness(tmp_path / "first", "--topology", "netns", "--duration", "5", "--repeats", "3") as harness:
        prefix = f"pwb-{run_id(harness.pid)}-"
        remote = _remote_processes(harness, prefix)
        harness.send_signal(signal.SIGKILL)
        harness.wait()
        left = _alive_after(remote, 2.0 + REMOTE_GRACE_S)  # TERM at once, KILL after the grace
    try:
        assert left == [], _describe(left)
    finally:
        sweep_leftovers()  # the namespaces themselves: the next rig's start removes them


def _remote_processes(harness: subprocess.Popen[bytes], prefix: str, timeout_s: float = 600) -> list[psutil.Process]:
    """Once a window is being measured on the app host: every process in the run's namespaces
    but the rig's own sshds (the harness's children: stopped here, like any other)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert harness.poll() is None, "the run ended before a window was measured"
        found = [proc for ns in namespaces() if ns.startswith(prefix) for pid in namespace_pids(ns)
                 if (proc := _process(pid)) is not None]
        names = [" ".join(_cmdline(p)) for p in found]
        if sum("gunicorn" in n for n in names) >= 3 and any("toxiproxy" in n for n in names):
            return [p for p, n in zip(found, names) if "sshd" not in n]
        time.sleep(0.1)
    raise AssertionError("no window was measured in time")
