"""The discarded load before an interleaved window: the server wakes and the previous tail drains.

wrk takes whole seconds only, so a settle shorter than a second is a wrk started for longer
and stopped by signal after `seconds`; its figures are never read. wrk is the harness's
default generator and always installed, whatever generator measures the window.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

from pywebbench.loadgen.base import LoadRequest, taskset_prefix
from pywebbench.loadgen.wrk import mix_lua
from pywebbench.procs import ManagedProcess


def wrk_settle(request: LoadRequest, seconds: float, work_dir: Path) -> None:
    """Load `request.url` for `seconds` with wrk and throw the result away."""
    if seconds <= 0:
        return
    argv = [*taskset_prefix(request.cpus), "wrk", "--threads", str(max(1, min(len(request.cpus) or 1,
                                                                               request.connections))),
            "--connections", str(request.connections), "--duration", f"{math.ceil(seconds) + 1}s",
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
