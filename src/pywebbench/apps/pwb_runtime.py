"""Answers the harness's question to each worker of a free-threaded build: is the GIL still off?

An extension module without Py_mod_gil turns the GIL back on when imported, in that process
only, so only a worker can say. With PWB_RUNTIME_DIR set, a SIGURG (ignored by default: a
process without this handler is unaffected) makes the worker write <dir>/<pid>.json with
sys._is_gil_enabled(); the harness sends it after the launch's checks (measure/runtime_probe.py).
Nothing runs per request. Standard library only."""

from __future__ import annotations

import json
import os
import signal
import sys
from types import FrameType

RUNTIME_DIR = os.environ.get("PWB_RUNTIME_DIR", "")


def _report(signum: int, frame: FrameType | None) -> None:
    enabled = getattr(sys, "_is_gil_enabled", None)
    answer = {"pid": os.getpid(), "gil_enabled": enabled() if enabled is not None else True,
              "executable": sys.executable, "version": sys.version.split()[0]}
    path = os.path.join(RUNTIME_DIR, f"{os.getpid()}.json")
    try:
        with open(path + ".tmp", "w") as out:
            json.dump(answer, out)
        os.replace(path + ".tmp", path)  # never a half-written answer
    except OSError:
        pass  # the harness records no answer; a worker never fails for the question


def install() -> None:
    if not RUNTIME_DIR or not hasattr(sys, "_is_gil_enabled"):
        return
    try:
        signal.signal(signal.SIGURG, _report)
    except (ValueError, OSError):
        pass  # imported off the main thread: the harness records the GIL as not asked


install()
