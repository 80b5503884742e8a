"""Noticing a backing service or proxy that died, naming it at once, and restarting it.

A thread polls every watched process a few times a second; a death is named in one line
("postgres exited (signal 9) during flask:gunicorn-sync db") the moment it is seen, and
remembered so the runner can mark the window it spoiled. Restarts happen only where the
runner calls `heal()` (before a launch or a window, after a window): never behind its back
in the middle of one, where a restarted service would change what is being measured.
A service that cannot be restarted, or dies too often, raises ServiceLost: the run stops,
every finished trial kept.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol

from pywebbench.core.procs import describe_exit

POLL_INTERVAL_S = 0.2
MAX_RESTARTS = 3
"""Restarts per service in one run: a service that keeps dying is broken, not unlucky."""


class ServiceLost(RuntimeError):
    """A watched service died and could not be brought back: the run cannot go on."""


class Restartable(Protocol):
    """What the watchdog needs of a service: its process's return code, and a way back."""

    def poll(self) -> int | None:
        """None while running (or deliberately stopped); the return code once it died."""

    def restart(self) -> str:
        """Start it again (raising on failure); say how, e.g. 'on its data directory'."""


@dataclass(frozen=True)
class Death:
    name: str
    how: str
    during: str

    @property
    def line(self) -> str:
        return f"{self.name} {self.how} during {self.during}"


class Watchdog:
    """`with Watchdog(on_note) as dog:` then `dog.watch(name, lambda: service)`."""

    def __init__(self, on_note: Callable[[str], None] = lambda text: None,
                 interval_s: float = POLL_INTERVAL_S) -> None:
        self.on_note = on_note
        self.interval_s = interval_s
        self.during = "start-up"
        """What the run is doing, for the line naming a death (the runner keeps it current)."""
        self.deaths: list[Death] = []
        self._targets: dict[str, Callable[[], Restartable | None]] = {}
        self._dead: dict[str, Death] = {}
        self._restarts: dict[str, int] = {}
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._look_failed = False

    def watch(self, name: str, target: Callable[[], Restartable | None]) -> None:
        """Watch whatever `target` returns now and later (a retune may replace the service)."""
        with self._lock:
            self._targets[name] = target

    def unwatch(self, name: str) -> None:
        """Stop watching before a service is stopped on purpose."""
        with self._lock:
            self._targets.pop(name, None)
            self._dead.pop(name, None)

    def mark(self) -> int:
        """A point to ask `deaths_since` about: before a window."""
        with self._lock:
            return len(self.deaths)

    def deaths_since(self, mark: int) -> list[Death]:
        self.sweep()  # a death in the window's last moments, before the thread's next look
        with self._lock:
            return self.deaths[mark:]

    def sweep(self) -> list[Death]:
        """Poll every watched process once; name each new death in one line."""
        found: list[Death] = []
        with self._lock:
            for name, target in list(self._targets.items()):
                if name in self._dead:
                    continue
                service = target()
                code = service.poll() if service is not None else None
                if code is None:
                    continue
                death = Death(name, describe_exit(code), self.during)
                self._dead[name] = death
                self.deaths.append(death)
                found.append(death)
        for death in found:
            self.on_note(death.line)
        return found

    def heal(self) -> list[str]:
        """Restart every dead service; one line each. Raises ServiceLost where that fails."""
        self.sweep()
        done: list[str] = []
        with self._lock:
            for name, death in list(self._dead.items()):
                service = self._targets[name]()
                if service is None:
                    self._dead.pop(name)
                    continue
                count = self._restarts.get(name, 0) + 1
                if count > MAX_RESTARTS:
                    raise ServiceLost(f"{death.line}, and it had already been restarted {MAX_RESTARTS} times: "
                                      f"stopping the run")
                self._restarts[name] = count
                try:
                    how = service.restart()
                except Exception as exc:  # any failure to start again ends the run, named
                    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                    raise ServiceLost(f"{death.line}, and restarting it failed: {first}") from exc
                self._dead.pop(name)
                done.append(f"{name} restarted {how}")
        for line in done:
            self.on_note(line)
        return done

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.sweep()
            except ServiceLost:
                continue  # the run's own sweep between windows raises it, in the main thread
            except Exception as exc:  # a failed look must not kill the thread; the next look tries again
                if not self._look_failed:  # but it is said, once: a watchdog that cannot look is blind
                    self._look_failed = True
                    self.on_note(f"watchdog: a look at the services failed ({type(exc).__name__}: {exc}); "
                                 "it keeps looking")

    def __enter__(self) -> Watchdog:
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="pywebbench-watchdog", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._lock:
            self._targets.clear()

