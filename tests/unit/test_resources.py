"""The resource sampler against real processes: CPU burnt, memory touched, trees that change.

Children measure their own CPU (process_time, or RUSAGE_CHILDREN for what they waited for)
and the tests compare the sampler with that, so a loaded machine slows them down without
making them fail: CPU seconds stay CPU seconds.
"""

from __future__ import annotations

import os
import resource
import signal
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from pywebbench.core.errors import UserError
from pywebbench.core.procs import ManagedProcess
from pywebbench.measure.procsampler import OTHER, ResourceSampler
from pywebbench.measure.proctable import ProcessTable, generator_roots, read_stat
from pywebbench.results.model import ResourceUsage

pytestmark = pytest.mark.serial  # reads CPU time or waits on the clock: never beside a test worker

# Clock-tick rounding of /proc counters against the child's own precise clock.
TICK_SLACK_S = 0.03

# Each child waits (blocked in sigwait, using no CPU) for SIGUSR1 before the work to measure.
PRELUDE = """
import pathlib, resource, signal, subprocess, sys, time
ready, done = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])

def burn(seconds):
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass

def wait_for_go():
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    ready.touch()
    signal.sigwait({signal.SIGUSR1})

def finish(value):
    partial = done.with_name(done.name + ".partial")
    partial.write_text(repr(value))
    partial.rename(done)  # whole or absent: the test polls for it
    time.sleep(600)
"""

BURN = PRELUDE + """
wait_for_go()
start = time.process_time()
burn(float(sys.argv[3]))
finish(time.process_time() - start)
"""

ALLOCATE = PRELUDE + """
data = b"\\x01" * (int(sys.argv[3]) << 20)  # written, so every page is resident
ready.touch()
time.sleep(600)
"""

SPAWN_BURNER = PRELUDE + """
wait_for_go()
subprocess.run([sys.executable, "-c", "import time\\nt = time.process_time()\\n"
                "while time.process_time() - t < float(%r): pass" % sys.argv[3]], check=True)
reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
finish(reaped.ru_utime + reaped.ru_stime)
"""

SPAWN_WORKER = PRELUDE + """
wait_for_go()
# A worker that stays: found by a later look for new processes (the last tick's at the latest).
subprocess.Popen([sys.executable, "-c", "import os, sys, time\\nt = time.process_time()\\n"
                  "while time.process_time() - t < float(sys.argv[2]): pass\\n"
                  "open(sys.argv[1] + '.partial', 'w').write(repr(time.process_time()))\\n"
                  "os.rename(sys.argv[1] + '.partial', sys.argv[1])\\ntime.sleep(600)", str(done), sys.argv[3]])
time.sleep(600)
"""

SLEEP = PRELUDE + """
ready.touch()
time.sleep(600)
"""

BURN_FROM_BIRTH = PRELUDE + """
burn(float(sys.argv[3]))
finish(time.process_time())
"""

BURN_AND_EXIT = PRELUDE + """
burn(float(sys.argv[3]))
"""


class Child:
    def __init__(self, code: str, tmp_path: Path, name: str, arg: object = "") -> None:
        self.ready, self.done = tmp_path / f"{name}.ready", tmp_path / f"{name}.done"
        self.proc = ManagedProcess([sys.executable, "-c", code, str(self.ready), str(self.done), str(arg)],
                                   env={}, log_dir=tmp_path, name=name)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def go(self) -> None:
        os.kill(self.pid, signal.SIGUSR1)

    def wait_ready(self) -> None:
        _wait_for(self.ready, self.proc)

    def result(self) -> float:
        _wait_for(self.done, self.proc)
        return float(self.done.read_text())


@contextmanager
def running(code: str, tmp_path: Path, name: str, arg: object = "", *, ready: bool = True) -> Iterator[Child]:
    child = Child(code, tmp_path, name, arg)
    with child.proc:
        if ready:
            child.wait_ready()
        yield child


def _wait_for(path: Path, proc: ManagedProcess, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert proc.poll() is None, f"{proc.name} exited: {proc.stderr_tail()}"
        assert time.monotonic() < deadline, f"{proc.name} did not write {path.name}"
        time.sleep(0.01)


def _usage(sampler: ResourceSampler, role: str) -> ResourceUsage:
    return next(u for u in sampler.usages if u.role == role)


def _reaped_by_me() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def test_cpu_burnt_in_the_window_is_counted_and_earlier_cpu_is_not(tmp_path: Path) -> None:
    with running(BURN, tmp_path, "burner", 0.6) as child:
        # The interpreter's start-up CPU was spent before the window: the baseline excludes it.
        with ResourceSampler(lambda: {"app": [child.pid]}) as sampler:
            child.go()
            burnt = child.result()
    app = _usage(sampler, "app")
    assert burnt >= 0.6
    assert burnt - TICK_SLACK_S <= app.cpu_s <= burnt + 0.1
    assert app.processes == 1
    assert app.window_s > 0


def test_peak_rss_sees_touched_memory(tmp_path: Path) -> None:
    with running(ALLOCATE, tmp_path, "allocator", 200) as child:
        with ResourceSampler(lambda: {"app": [child.pid]}, interval_s=0.1) as sampler:
            time.sleep(0.3)
    assert _usage(sampler, "app").peak_rss_mb >= 190


@pytest.mark.parametrize("interval_s", [0.1, 5.0], ids=["seen-while-alive", "never-seen"])
def test_short_lived_grandchild_is_counted_once(tmp_path: Path, interval_s: float) -> None:
    """Seen at a few ticks, or at none (it lives between two): its parent's reaped time tells."""
    with running(SPAWN_BURNER, tmp_path, "spawner", 0.3) as child:
        with ResourceSampler(lambda: {"app": [child.pid]}, interval_s=interval_s) as sampler:
            child.go()
            grandchild = child.result()
    app = _usage(sampler, "app")
    assert grandchild >= 0.3
    # Never below what the grandchild used; above it only by the parent's own few ms, so its
    # CPU, once seen directly and once in the parent's reaped time, was not counted twice.
    assert grandchild - TICK_SLACK_S <= app.cpu_s <= grandchild + 0.15


def test_worker_forked_mid_window_is_counted_from_its_birth(tmp_path: Path) -> None:
    with running(SPAWN_WORKER, tmp_path, "master", 0.3) as child:
        with ResourceSampler(lambda: {"app": [child.pid]}, interval_s=0.1) as sampler:
            child.go()
            worker = child.result()
    app = _usage(sampler, "app")
    assert worker >= 0.3
    assert worker - TICK_SLACK_S <= app.cpu_s <= worker + 0.15
    assert app.processes == 2


@contextmanager
def generator_roles(tmp_path: Path) -> Iterator[tuple[ProcessTable, Callable[[], Mapping[str, list[int]]]]]:
    """A sleeping "app" service, and "loadgen": whichever child of ours starts later."""
    with running(SLEEP, tmp_path, "service") as service:
        services = {service.pid, *generator_roots(())}  # every child we had before the window
        table = ProcessTable()

        def roles() -> dict[str, list[int]]:
            return {"app": [service.pid], "loadgen": generator_roots(services, table)}

        yield table, roles


def test_root_that_appears_late_is_counted_from_its_birth(tmp_path: Path) -> None:
    """The load generator's case: it starts after the sampler, so its start-up CPU counts too."""
    with generator_roles(tmp_path) as (table, roles):
        with ResourceSampler(roles, table=table) as sampler:  # the default interval, as the runner
            time.sleep(0.5)
            with running(BURN_FROM_BIRTH, tmp_path, "generator", 0.3, ready=False) as generator:
                since_birth = generator.result()
    loadgen = _usage(sampler, "loadgen")
    assert since_birth >= 0.3
    assert since_birth - TICK_SLACK_S <= loadgen.cpu_s <= since_birth + 0.05
    assert loadgen.processes == 1
    assert _usage(sampler, "app").cpu_s < 0.05  # a sleeping service stays near zero


def test_root_that_exits_mid_window_is_counted_to_its_end(tmp_path: Path) -> None:
    """Reaped by us between two ticks: the CPU after its last tick comes from our reaped time."""
    with generator_roles(tmp_path) as (table, roles):
        with ResourceSampler(roles, interval_s=0.5, table=table) as sampler:
            before = _reaped_by_me()
            with running(BURN_AND_EXIT, tmp_path, "generator", 0.8, ready=False) as generator:
                generator.proc.wait(timeout=60)
            used = _reaped_by_me() - before
    assert used >= 0.8
    assert abs(_usage(sampler, "loadgen").cpu_s - used) <= TICK_SLACK_S


@pytest.mark.parametrize("generator_role", ["loadgen", None])
def test_root_never_seen_is_credited_to_the_generator_role(tmp_path: Path, generator_role: str | None) -> None:
    """Born and reaped between two ticks: no sighting, so only our own reaped time knows it."""
    with generator_roles(tmp_path) as (table, roles):
        with ResourceSampler(roles, interval_s=5.0, table=table, generator_role=generator_role) as sampler:
            time.sleep(1.3)  # past the eager first second: the next tick is 5 s away
            before = _reaped_by_me()
            with running(BURN_AND_EXIT, tmp_path, "generator", 0.3, ready=False) as generator:
                generator.proc.wait(timeout=60)
            used = _reaped_by_me() - before
    loadgen = _usage(sampler, "loadgen")
    assert loadgen.processes == 0
    if generator_role is None:
        assert loadgen.cpu_s == 0.0
    else:
        assert used >= 0.3
        assert abs(loadgen.cpu_s - used) <= TICK_SLACK_S


def test_generator_roots_without_a_table_finds_our_other_children(tmp_path: Path) -> None:
    with running(SLEEP, tmp_path, "a") as a, running(SLEEP, tmp_path, "b") as b:
        assert set(generator_roots({a.pid})) >= {b.pid}
        assert a.pid not in generator_roots({a.pid})


def test_other_is_the_rest_of_the_machine(tmp_path: Path) -> None:
    with running(SLEEP, tmp_path, "idle") as idle, running(BURN, tmp_path, "neighbour", 0.5) as neighbour:
        with ResourceSampler(lambda: {"app": [idle.pid]}) as sampler:
            neighbour.go()
            burnt = neighbour.result()
    assert [u.role for u in sampler.usages] == ["app", OTHER]
    assert _usage(sampler, OTHER).cpu_s >= burnt - TICK_SLACK_S
    assert _usage(sampler, "app").cpu_s < 0.05


def test_sampler_records_its_own_cost(tmp_path: Path) -> None:
    with running(SLEEP, tmp_path, "idle") as idle:
        with ResourceSampler(lambda: {"app": [idle.pid]}, interval_s=0.05) as sampler:
            time.sleep(0.3)
    assert sampler.ticks >= 3
    assert 0 < sampler.sampler_cpu_s < sampler.usages[0].window_s


def test_processes_that_vanish_or_never_existed_do_not_break_it(tmp_path: Path) -> None:
    child = Child(SLEEP, tmp_path, "victim")
    with child.proc:
        child.wait_ready()
        with ResourceSampler(lambda: {"app": [child.pid], "ghost": [2**22 + 1, -1, 0]}, interval_s=0.05) as sampler:
            time.sleep(0.15)
            child.proc.stop()
            time.sleep(0.15)
    assert _usage(sampler, "app").processes == 1
    assert _usage(sampler, "ghost") == ResourceUsage("ghost", 0.0, 0.0, 0, sampler.usages[0].window_s)


def test_a_process_in_two_trees_counts_for_the_first_role(tmp_path: Path) -> None:
    with running(BURN, tmp_path, "shared", 0.3) as child:
        with ResourceSampler(lambda: {"app": [child.pid], "nginx": [child.pid]}) as sampler:
            child.go()
            burnt = child.result()
    assert _usage(sampler, "app").cpu_s >= burnt - TICK_SLACK_S
    assert _usage(sampler, "nginx").cpu_s == 0.0
    assert _usage(sampler, "nginx").processes == 0


def test_an_error_in_the_body_still_stops_the_sampler(tmp_path: Path) -> None:
    with running(SLEEP, tmp_path, "idle") as idle:
        sampler = ResourceSampler(lambda: {"app": [idle.pid]}, interval_s=0.05)
        with pytest.raises(KeyError):
            with sampler:
                raise KeyError("boom")
    assert [u.role for u in sampler.usages] == ["app", OTHER]
    assert sampler.sampler_cpu_s > 0


def test_a_failing_roles_callable_is_raised_not_swallowed() -> None:
    def roles() -> dict[str, list[int]]:
        raise LookupError("no such service")

    with pytest.raises(LookupError, match="no such service"):
        with ResourceSampler(roles):
            pass


def test_interval_must_be_positive() -> None:
    with pytest.raises(UserError, match="interval"):
        ResourceSampler(lambda: {}, interval_s=0)


def test_read_stat_survives_odd_command_names(tmp_path: Path) -> None:
    """The command name may hold spaces and parentheses; fields are found after the last ')'."""
    odd = tmp_path / "x) (y z"
    odd.symlink_to(sys.executable)
    ready = tmp_path / "odd.ready"
    proc = ManagedProcess([str(odd), "-c", SLEEP, str(ready), "", ""], env={}, log_dir=tmp_path, name="odd")
    with proc:
        _wait_for(ready, proc)
        stat = read_stat(proc.pid)
        assert stat is not None
        assert stat.parent == os.getpid()
        assert stat.rss_bytes > 0
    assert read_stat(2**22 + 1) is None
