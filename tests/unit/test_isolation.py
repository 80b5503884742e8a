"""Each window isolated from the previous one's backlog: the socket-table count, the drain wait,
the busy-neighbours check and its exclusion from the ratios."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from types import SimpleNamespace
from dataclasses import replace

import pytest

from pywebbench.analyze.pairing import counted
from pywebbench.measure.backlog import pending
from pywebbench.measure.checks import IDLE_APPS, neighbours_busy, trial_checks
from pywebbench.measure.quiesce import wait_until_drained
from pywebbench.results.model import ResourceUsage
from support.builders import trial


def test_queued_connections_count_until_the_server_takes_and_closes_them() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    port = server.getsockname()[1]
    # Another process's socket may hold the same port number as its own ephemeral end (a parallel
    # worker's client); counted from before ours, those stay out of the figures below.
    others = pending([port])
    clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
    try:
        assert pending([port]) - others == 3  # three in the accept queue, none taken yet
        taken, _ = server.accept()
        assert pending([port]) - others == 3  # two queued, one in the server's hands
        clients[1].sendall(b"GET / HTTP/1.1\r\n\r\n")
        clients[1].close()
        clients[0].close()
        # Both clients left (CLOSE_WAIT): the one whose request is still unread counts; the one
        # the server holds with nothing left to read does not (bjoern never closes those).
        assert _eventually(lambda: pending([port]) - others == 2)
        taken.close()
        for _ in range(2):
            conn, _ = server.accept()
            conn.close()
        assert pending([port]) - others == 0
        assert pending([]) == 0
    finally:
        for c in clients:
            c.close()
        server.close()


def _eventually(check: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + 2.0
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_the_drain_wait_polls_until_nothing_is_left_or_the_timeout() -> None:
    clock = [0.0]
    left = iter([5, 3, 0])
    done = wait_until_drained(lambda: next(left), timeout_s=10, poll_s=0.5, clock=lambda: clock[0],
                              sleep=lambda s: clock.__setitem__(0, clock[0] + s))
    assert done.drained and done.waited_s == 1.0 and done.left == 0
    stuck = wait_until_drained(lambda: 2, timeout_s=1, poll_s=0.5, clock=lambda: clock[0],
                               sleep=lambda s: clock.__setitem__(0, clock[0] + s))
    assert not stuck.drained and stuck.left == 2 and stuck.waited_s >= 1


def test_the_drain_wait_stops_when_the_queue_stops_shrinking() -> None:
    # A queue served one request at a time shrinks at every poll; connections a server holds
    # (answered, never closed) do not: the wait ends a stall after the last drop, not at the timeout.
    clock = [0.0]
    left = iter([9, 6, 4, 4, 4, 4, 4, 4, 4, 4])
    done = wait_until_drained(lambda: next(left), timeout_s=30, poll_s=0.5, stall_s=1.0, clock=lambda: clock[0],
                              sleep=lambda s: clock.__setitem__(0, clock[0] + s))
    assert not done.drained and done.left == 4 and done.waited_s == 2.0


def test_a_window_whose_neighbours_drained_a_backlog_is_flagged_and_left_out_of_the_ratios() -> None:
    quiet = trial("flask:gunicorn-sync", 1000.0)
    busy = replace(quiet, resources=quiet.resources + (ResourceUsage(IDLE_APPS, 2.9, 300.0, 12, 10.0),))
    calm = replace(quiet, resources=quiet.resources + (ResourceUsage(IDLE_APPS, 0.15, 300.0, 12, 10.0),))
    assert neighbours_busy(busy) and not neighbours_busy(calm) and not neighbours_busy(quiet)
    found = [c for c in trial_checks(busy, None) if c.startswith("busy-neighbours")]
    assert found and "29%" in found[0]
    assert not [c for c in trial_checks(calm, None) if c.startswith("busy-neighbours")]
    assert counted(calm) and not counted(busy)


def test_a_stack_seen_holding_connections_is_not_waited_for_in_later_launches(monkeypatch: pytest.MonkeyPatch) -> None:
    # bjoern leaves a closed client's last request unread for good: the first launch waits out
    # the stall once; later launches (new ports) no longer wait for that stack's queue at all.
    from pywebbench.measure import isolation as module
    from pywebbench.measure.quiesce import Drained, Quiet
    from pywebbench.measure.window import TimeLedger
    port_label: dict[int, str] = {}
    monkeypatch.setattr(module, "ServersCpu", lambda servers: object())
    monkeypatch.setattr(module, "local_ports", lambda lives: tuple(live.port for live in lives))
    monkeypatch.setattr(module, "wait_until_idle", lambda *a, **k: Quiet(0.0, True, 0.0))
    waited: list[tuple[int, ...]] = []

    def drain(count: Callable[[], int], **kwargs: float) -> Drained:
        left = count()
        return Drained(3.0 if left else 0.0, left == 0, left)
    monkeypatch.setattr(module, "wait_until_drained", drain)
    def pending(ports: tuple[int, ...]) -> int:
        waited.append(tuple(ports))
        return sum(3 for p in ports if port_label[p] == "bjoern")
    monkeypatch.setattr(module, "pending", pending)
    monkeypatch.setattr(module, "pending_by_port", lambda ports: {p: 3 for p in ports if port_label[p] == "bjoern"})
    notes: list[str] = []
    holding: set[str] = set()  # the runner's, which its settle drain reads too
    isolation = module.Isolation(TimeLedger(), notes.append, holding)

    def launch(first_port: int) -> None:
        lives = {}
        for offset, label in enumerate(("bjoern", "flask")):
            port_label[first_port + offset] = label
            lives[label] = SimpleNamespace(port=first_port + offset, server=None,
                                           session=SimpleNamespace(label=label))
        isolation.launched(lives, wait=False)  # type: ignore[arg-type]
        isolation.before_window()

    launch(1000)
    launch(2000)
    assert waited == [(1000, 1001), (2001,)]
    assert len(notes) == 1 and "bjoern" in notes[0] and "in this run" in notes[0]
    assert holding == {"bjoern"}


def test_the_settle_drain_and_the_window_drain_share_which_stacks_hold_connections(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from pywebbench.measure import window as module
    from pywebbench.measure.quiesce import Drained
    runner = SimpleNamespace(holding={"bjoern"}, ledger=module.TimeLedger())  # found by a window drain
    lives = [SimpleNamespace(port=port, session=SimpleNamespace(label=label))
             for port, label in ((1000, "bjoern"), (1001, "flask"))]
    waited: list[tuple[int, ...]] = []
    monkeypatch.setattr(module, "local_ports", lambda lives: tuple(live.port for live in lives))
    monkeypatch.setattr(module, "pending", lambda ports: waited.append(tuple(ports)) or 0)
    monkeypatch.setattr(module, "wait_until_drained", lambda count, **k: Drained(0.0, count() == 0, 0))
    module.WindowMeasurer(runner).drain_settled(lives)  # type: ignore[arg-type]
    assert waited == [(1001,)]  # bjoern's queue is not waited for
    monkeypatch.setattr(module, "wait_until_drained", lambda count, **k: Drained(2.0, False, 3))
    monkeypatch.setattr(module, "pending_by_port", lambda ports: {1001: 3})
    module.WindowMeasurer(runner).drain_settled(lives)  # type: ignore[arg-type]
    assert runner.holding == {"bjoern", "flask"}  # a stall here: no drain waits for flask's queue again
