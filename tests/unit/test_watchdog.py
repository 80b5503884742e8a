"""The watchdog on real child processes: a death named once in one line, a restart, the limits."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from pywebbench.core.procs import ManagedProcess, describe_exit
from pywebbench.services.watchdog import MAX_RESTARTS, ServiceLost, Watchdog


class Sleeper:
    """A stand-in service: a real `sleep` child, restarted by starting another."""

    def __init__(self, log_dir: Path, fail_restart: bool = False) -> None:
        self.log_dir = log_dir
        self.fail_restart = fail_restart
        self.proc = self._start()
        self.stopped = False

    def _start(self) -> ManagedProcess:
        return ManagedProcess([sys.executable, "-c", "import time; time.sleep(60)"], env={},
                              log_dir=self.log_dir, name="sleeper", grace_s=1.0).start()

    def poll(self) -> int | None:
        return None if self.stopped else self.proc.poll()

    def restart(self) -> str:
        if self.fail_restart:
            raise RuntimeError("no way back\nsecond line")
        self.proc.stop()
        self.proc = self._start()
        return "anew"

    def stop(self) -> None:
        self.stopped = True
        self.proc.stop()


def test_describe_exit() -> None:
    assert describe_exit(-9) == "exited (signal 9, SIGKILL)"
    assert describe_exit(3) == "exited with code 3"


def test_a_death_is_named_once_in_one_line_and_healed(tmp_path: Path) -> None:
    notes: list[str] = []
    dog = Watchdog(notes.append)
    service = Sleeper(tmp_path)
    dog.watch("sleeper", lambda: service)
    try:
        mark = dog.mark()
        dog.during = "flask:gunicorn-sync db"
        service.proc.tree()[0].send_signal(signal.SIGKILL)
        service.proc.wait(5)
        deaths = dog.deaths_since(mark)
        assert [d.line for d in deaths] == ["sleeper exited (signal 9, SIGKILL) during flask:gunicorn-sync db"]
        assert dog.sweep() == []  # named once
        assert dog.heal() == ["sleeper restarted anew"]
        assert service.poll() is None
        assert notes == [deaths[0].line, "sleeper restarted anew"]
        assert dog.deaths_since(dog.mark()) == []
    finally:
        service.stop()


def test_a_service_stopped_on_purpose_is_no_death(tmp_path: Path) -> None:
    with Watchdog(interval_s=0.01) as dog:
        service = Sleeper(tmp_path)
        dog.watch("sleeper", lambda: service)
        dog.unwatch("sleeper")
        service.stop()
        assert dog.sweep() == [] and dog.deaths == []


def test_a_failed_restart_or_too_many_stop_the_run(tmp_path: Path) -> None:
    dog = Watchdog()
    broken = Sleeper(tmp_path / "a", fail_restart=True)
    dog.watch("broken", lambda: broken)
    broken.proc.stop()
    with pytest.raises(ServiceLost, match=r"^broken exited .* and restarting it failed: no way back$"):
        dog.heal()

    dog = Watchdog()
    flaky = Sleeper(tmp_path / "b")
    dog.watch("flaky", lambda: flaky)
    try:
        for _ in range(MAX_RESTARTS):
            flaky.proc.stop()
            dog.heal()
        flaky.proc.stop()
        with pytest.raises(ServiceLost, match="already been restarted"):
            dog.heal()
    finally:
        flaky.stop()
