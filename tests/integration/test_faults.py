"""Fault injection: a process of a real run killed mid-window, and signals to the harness.

Each test drives `pywebbench run` as a subprocess, finds its victim in the run's own process
tree (children of the harness's pid), kills it while a measured window runs (a wrk with the
report script is loading the workload's path), then checks the one-line cause on stderr and
in the trial, the trial's status, every earlier trial still in the results file, no process
of the run left (by process group and by the ports it listened on), and the exit code.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from pywebbench.results.model import TrialResult, TrialStatus
from pywebbench.results.store import load_results, results_path
from pywebbench.services.pg_cache import CACHE_ENV

from .conftest import ROOT

STACK = "flask:gunicorn-sync"
OTHER = "bottle:gunicorn-sync"
SHORT = ("--duration", "1", "--warmup", "0", "--settle", "0.2", "--connections", "10", "--db-rows", "2000",
         "--method", "interleaved")

Pick = Callable[[int, list[psutil.Process]], psutil.Process | None]
"""(harness pid, its live descendants) -> the process to kill, or None: not there yet."""


@dataclass
class Ran:
    code: int
    stderr: str
    trials: tuple[TrialResult, ...]
    complete: bool
    before_kill: int
    """Trials in the results file when the victim was killed."""
    victim: str


def _cmd(p: psutil.Process) -> list[str]:
    try:
        return p.cmdline()
    except psutil.Error:
        return []


def _measuring(harness: int, path: str) -> bool:
    """A measured window is under way: wrk (a direct child) with the report script on the path.
    Cheap, so it can be asked often: a 1 s window on a busy 2-CPU machine is easily missed."""
    try:
        procs = psutil.Process(harness).children()
    except psutil.Error:
        return False
    return any("--script" in c and c[-1].endswith(path) for c in map(_cmd, procs) if c and "wrk" in c[0])


def _snapshot(harness: int, pgids: set[int], ports: set[int]) -> None:
    """Remember the process groups of the run and the ports they listen on. Slow under load
    (the kernel's socket tables are full of the generator's connections): never mid-kill."""
    try:
        procs = psutil.Process(harness).children(recursive=True)
    except psutil.NoSuchProcess:
        return
    pids = {p.pid for p in procs}
    for pid in pids:
        if (pgid := _pgid(pid)) is not None:
            pgids.add(pgid)
    ports.update(c.laddr.port for c in psutil.net_connections("inet")
                 if c.status == psutil.CONN_LISTEN and c.pid in pids)


def _run(tmp_path: Path, args: tuple[str, ...], path: str, *, after: int, pick: Pick | None = None,
         sig: signal.Signals = signal.SIGKILL, prepare: Callable[[psutil.Process], None] = lambda p: None,
         env: dict[str, str] | None = None) -> Ran:
    """Run, and once `after` trials are recorded and a window is loading `path`, send `sig` to
    the process `pick` chooses (the harness itself when pick is None)."""
    argv = [sys.executable, "-m", "pywebbench", "run", *SHORT, *args, "--out", str(tmp_path)]
    with open(tmp_path.parent / f"{tmp_path.name}.stderr", "w+") as err:
        harness = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
                                   env=None if env is None else {**os.environ, **env})
        pgids: set[int] = set()
        ports: set[int] = set()
        before, victim = -1, ""
        deadline = time.monotonic() + 120
        looked = 0.0
        try:
            while time.monotonic() < deadline and harness.poll() is None:
                recorded = results_path(tmp_path)
                count = recorded.read_text().count('"record": "trial"') if recorded.exists() else 0
                # Once hunting, no snapshot: one can take over a second under load and miss the
                # 1 s window (then the kill lands in the last trial and nothing comes after it).
                if count < after and time.monotonic() - looked > 1.0:
                    _snapshot(harness.pid, pgids, ports)
                    looked = time.monotonic()
                if count >= after and _measuring(harness.pid, path):
                    time.sleep(0.2)  # inside the window
                    try:
                        procs = psutil.Process(harness.pid).children(recursive=True)
                    except psutil.Error:
                        break
                    target = psutil.Process(harness.pid) if pick is None else pick(harness.pid, procs)
                    if target is not None:
                        victim = " ".join(_cmd(target))
                        prepare(target)
                        before = count
                        target.send_signal(sig)
                        _snapshot(harness.pid, pgids, ports)
                        break
                time.sleep(0.02)
            while harness.poll() is None and time.monotonic() < deadline:
                _snapshot(harness.pid, pgids, ports)
                time.sleep(0.2)
            code = harness.wait(timeout=max(1.0, deadline - time.monotonic()))
        finally:
            if harness.poll() is None:
                os.killpg(harness.pid, signal.SIGKILL)
                harness.wait()
        err.seek(0)
        stderr = err.read()
    assert before >= 0, f"never found the victim; stderr:\n{stderr[-3000:]}"
    _assert_nothing_left(pgids, ports)
    results = load_results(tmp_path)
    return Ran(code, stderr, results.trials, results.complete, before, victim)


def _assert_nothing_left(pgids: set[int], ports: set[int]) -> None:
    deadline = time.monotonic() + 5
    while True:
        left = [p for p in psutil.process_iter() if _pgid(p.pid) in pgids and _live(p)]
        listening = {c.laddr.port for c in psutil.net_connections("inet")
                     if c.status == psutil.CONN_LISTEN and c.laddr.port in ports}
        if (not left and not listening) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert left == [], [_cmd(p) for p in left]
    assert listening == set(), f"ports of the run still listened on: {listening}"


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def _live(p: psutil.Process) -> bool:
    try:
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _child_named(name: str) -> Pick:
    """A direct child of the harness (a service's or server's leader) whose command names `name`."""
    def pick(harness: int, procs: list[psutil.Process]) -> psutil.Process | None:
        return next((p for p in procs if _parent(p) == harness and _names(p, name)), None)
    return pick


def _names(p: psutil.Process, name: str) -> bool:
    """`python -m gunicorn`, `/usr/sbin/pgbouncer`, `nginx: master process ...`."""
    cmd = _cmd(p)
    return bool(cmd) and (cmd[0].startswith(f"{name}:") or any(Path(part).name == name for part in cmd[:3]))


def _loaded_server(name: str) -> Pick:
    """The master of the server the measured window is loading (bound to wrk's port)."""
    def pick(harness: int, procs: list[psutil.Process]) -> psutil.Process | None:
        urls = [c[-1] for c in map(_cmd, procs) if c and "wrk" in c[0] and "--script" in c]
        if not urls:
            return None
        bind = urls[0].split("//", 1)[1].split("/", 1)[0]  # 127.0.0.1:PORT, as gunicorn's --bind says
        return next((p for p in procs if _parent(p) == harness and _names(p, name) and bind in _cmd(p)), None)
    return pick


def _worker_of(name: str) -> Pick:
    def pick(harness: int, procs: list[psutil.Process]) -> psutil.Process | None:
        master = _child_named(name)(harness, procs)
        if master is None:
            return None
        return next((p for p in procs if _parent(p) == master.pid), None)
    return pick


def _measuring_wrk(path: str) -> Pick:
    def pick(harness: int, procs: list[psutil.Process]) -> psutil.Process | None:
        return next((p for p in procs if (c := _cmd(p)) and "wrk" in c[0] and "--script" in c
                     and c[-1].endswith(path)), None)
    return pick


def _parent(p: psutil.Process) -> int | None:
    try:
        return p.ppid()
    except psutil.Error:
        return None


def _one_line(ran: Ran, status: TrialStatus, *needles: str) -> TrialResult:
    """The faulty trial: the first recorded after the kill, its status, its cause on one line,
    the same line on stderr; every trial recorded before the kill is still there and valid."""
    assert len(ran.trials) > ran.before_kill, ran.stderr[-3000:]
    assert all(t.valid for t in ran.trials[:ran.before_kill]), ran.stderr[-3000:]
    hit = ran.trials[ran.before_kill]
    assert hit.status is status, (hit.status, hit.error, ran.stderr[-3000:])
    assert hit.error is not None
    cause = hit.error.splitlines()[0]
    for needle in needles:
        assert needle in cause, (needle, cause)
    assert any(all(n in line for n in needles) for line in ran.stderr.splitlines()), ran.stderr[-3000:]
    assert "Traceback" not in ran.stderr
    return hit


def _carries_on(ran: Ran, label: str = STACK) -> None:
    """The run went on after the fault: a later window of `label` valid, exit 1, complete."""
    later = ran.trials[ran.before_kill + 1:]
    assert any(t.valid and t.spec.label == label for t in later), [(t.spec.label, t.status) for t in later]
    assert ran.complete
    assert ran.code == 1, ran.stderr[-3000:]


def test_app_server_master_killed(tmp_path: Path) -> None:
    ran = _run(tmp_path, ("--stack", STACK, "--stack", OTHER, "--repeats", "3", "--rounds-per-launch", "3"), "/hello",
               after=2,
               pick=_loaded_server("gunicorn"))
    hit = _one_line(ran, TrialStatus.SERVER_FAILED, "exited (signal 9, SIGKILL) during the window")
    # Its later windows in this launch fail at once, named; the other stack goes on.
    later = [t for t in ran.trials[ran.before_kill + 1:] if t.spec.label == hit.spec.label]
    assert later and all(t.status is TrialStatus.SERVER_FAILED and "before this window" in (t.error or "")
                         for t in later)
    _carries_on(ran, label=OTHER if hit.spec.label == STACK else STACK)


def test_app_server_worker_killed(tmp_path: Path) -> None:
    ran = _run(tmp_path, ("--stack", STACK, "--repeats", "4"), "/hello", after=1, pick=_worker_of("gunicorn"))
    _one_line(ran, TrialStatus.SERVER_FAILED, "exited during the window; the server itself is still up")
    _carries_on(ran)


@pytest.mark.parametrize(("service", "workload", "path", "extra"), [
    ("postgres", "db", "/db", ()),
    ("postgres", "db", "/db", ("--method", "restart")),  # the next launch no longer waits 60 s for a dead DB
    ("pgbouncer", "db", "/db", ()),
    ("upstream", "upstream", "/upstream", ()),
    ("nginx", "hello", "/hello", ("--topology", "nginx")),
])
def test_backing_service_killed_is_named_restarted_and_the_run_goes_on(
        tmp_path: Path, service: str, workload: str, path: str, extra: tuple[str, ...]) -> None:
    ran = _run(tmp_path, ("--stack", STACK, "--workload", workload, "--repeats", "4", *extra), path, after=1,
               pick=_child_named(service))
    name = "the nginx proxy of" if service == "nginx" else service
    _one_line(ran, TrialStatus.SERVICE_FAILED, name, "exited (signal 9, SIGKILL) during", f"{STACK} {workload}")
    assert any(line.startswith(name) and " restarted " in line for line in ran.stderr.splitlines()), ran.stderr
    _carries_on(ran)


def test_postgres_that_cannot_restart_stops_the_run_with_exit_1(tmp_path: Path) -> None:
    def move_data_away(postmaster: psutil.Process) -> None:
        data = Path(_cmd(postmaster)[_cmd(postmaster).index("-D") + 1])
        data.rename(data.with_name("data-gone"))  # a restart on it is impossible now

    # The data is moved away for good: a kept cluster of this test's own, not the machine's.
    kept = {CACHE_ENV: str(tmp_path.parent / f"{tmp_path.name}-kept-postgres")}
    ran = _run(tmp_path, ("--stack", STACK, "--workload", "db", "--repeats", "3"), "/db", after=1,
               pick=_child_named("postgres"), prepare=move_data_away, env=kept)
    assert ran.code == 1, ran.stderr[-3000:]
    assert not ran.complete  # resumable
    assert ran.trials[:ran.before_kill] and all(t.valid for t in ran.trials[:ran.before_kill])
    lines = [line for line in ran.stderr.splitlines() if "restarting it failed" in line]
    assert lines and lines[0].startswith("postgres exited (signal 9, SIGKILL) during"), ran.stderr[-3000:]
    assert "Traceback" not in ran.stderr


def test_load_generator_killed(tmp_path: Path) -> None:
    ran = _run(tmp_path, ("--stack", STACK, "--repeats", "4"), "/hello", after=1, pick=_measuring_wrk("/hello"))
    _one_line(ran, TrialStatus.LOADGEN_FAILED, "wrk exited (signal 9, SIGKILL)")
    _carries_on(ran)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_signal_to_the_harness_stops_it_with_130(tmp_path: Path, sig: signal.Signals) -> None:
    ran = _run(tmp_path, ("--stack", STACK, "--repeats", "5"), "/hello", after=1, sig=sig)
    assert ran.code == 130, ran.stderr[-3000:]
    assert not ran.complete
    assert ran.trials[:ran.before_kill] and all(t.valid for t in ran.trials[:ran.before_kill])
    assert len(ran.trials) < 5
    assert any(line.startswith("interrupted: stopping") for line in ran.stderr.splitlines()), ran.stderr[-3000:]
    assert "Traceback" not in ran.stderr
