"""The discarded load before an interleaved window: the server wakes and the previous tail drains.

A closed-loop window settles with wrk. wrk takes whole seconds only, so a settle shorter than
a second is a wrk started for longer and stopped by signal after `seconds`; its figures are
never read. wrk is the harness's default generator and always installed. A window in a protocol
other than h1 settles likewise with h2load in its own protocol: an h2c front (nginx 1.22) answers
no HTTP/1.1, and a warm-up should make the TLS handshakes and HTTP/2 sessions the window will.

An open-loop window (a capacity probe at a fixed rate) settles at its own rate with the
generator that sends it (oha, unless the run's generator is vegeta: loadgen/registry.py's
window_generator): a closed-loop settle saturates the server, and the queue it leaves (up to one request per
connection) drains into the probe's first requests, which a tail objective then counts. On
this machine that put p99 near 64 ms on probes far below capacity when they came
right after a wrk settle (the notes app's tuning run, docs/results/tuning-before-rate-settle).
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

from dataclasses import replace

from pywebbench.catalog.protocols import Protocol
from pywebbench.loadgen.base import LoadGenError, LoadRequest, taskset_prefix
from pywebbench.loadgen.h2load import H2load
from pywebbench.loadgen.registry import make_generator, window_generator
from pywebbench.loadgen.wrk import mix_lua
from pywebbench.plan.generators import Loop, default_generator
from pywebbench.core.procs import ManagedProcess


def settle_load(request: LoadRequest, seconds: float, work_dir: Path, *, generator: str | None = None) -> None:
    """The window's settle: at its own offered rate when it has one, else closed loop.
    `generator` is the run's (--generator; None: the default open-loop one), which with the window
    decides who sends the settle."""
    if request.rate is None and request.protocol is not Protocol.H1:
        h2load_settle(request, seconds, work_dir)
    elif request.rate is None:
        wrk_settle(request, seconds, work_dir)
    else:
        rate_settle(request, seconds, work_dir, generator=generator)


def rate_settle(request: LoadRequest, seconds: float, work_dir: Path, *, generator: str | None = None) -> None:
    """Send `request` open loop at its rate for `seconds` with the window's own generator (which
    stops on time) and discard it."""
    if seconds <= 0:
        return
    settle = replace(request, duration_s=seconds, requests=None, label="settle")
    try:
        configured = generator if generator is not None else default_generator(Loop.OPEN)
        make_generator(window_generator(configured, settle)).run(settle, work_dir)
    except LoadGenError:
        pass  # a settle's figures are never read; a failing server shows in the window itself


SETTLE_CONNECTIONS = 32
"""At most this many connections in a closed-loop settle. It wakes the server's workers and
threads (32 is more than any catalog server's 3 workers x 10 threads); every connection beyond
that only leaves one more request queued when the settle stops, which the server then serves
before the window can start (measure/window.drain_settled): at seed 003's 200 connections, about
9 s of a `cpu` duet side's time per window instead of about 1.5 s."""


def wrk_settle(request: LoadRequest, seconds: float, work_dir: Path) -> None:
    """Load `request.url` for `seconds` with wrk and throw the result away."""
    if seconds <= 0:
        return
    connections = min(request.connections, SETTLE_CONNECTIONS)
    argv = [*taskset_prefix(request.cpus), "wrk", "--threads", str(max(1, min(len(request.cpus) or 1, connections))),
            "--connections", str(connections), "--duration", f"{math.ceil(seconds) + 1}s",
            "--timeout", f"{max(1, math.ceil(request.timeout_s))}s"]
    if not request.keepalive:
        argv += ["--header", "Connection: close"]
    if request.mix:  # the settle sends the window's own mix
        script = work_dir / "settle.mix.lua"
        work_dir.mkdir(parents=True, exist_ok=True)
        script.write_text(mix_lua(request.mix), encoding="utf-8")
        argv += ["--script", str(script)]
    argv.append(request.url)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    with ManagedProcess(argv, env=env, log_dir=work_dir, name="settle.wrk", grace_s=1.0):
        time.sleep(seconds)


def h2load_settle(request: LoadRequest, seconds: float, work_dir: Path) -> None:
    """Load `request.url` in its protocol for `seconds` with h2load and throw the result away."""
    if seconds <= 0:
        return
    settle = replace(request, connections=min(request.connections, SETTLE_CONNECTIONS),
                     duration_s=math.ceil(seconds) + 1)
    argv = H2load().command(settle, Path(os.devnull))  # no per-request log: its figures are never read
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    with ManagedProcess(argv, env=env, log_dir=work_dir, name="settle.h2load", grace_s=1.0):
        time.sleep(seconds)
