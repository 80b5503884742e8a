"""Child processes: their own group, stopped TERM -> grace -> KILL; terminate() without waiting."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from pywebbench.core.procs import ManagedProcess


def test_terminate_asks_every_child_at_once_and_stop_then_only_reaps(tmp_path: Path) -> None:
    children = [ManagedProcess(["sleep", "30"], env={"PATH": "/usr/bin:/bin"}, log_dir=tmp_path, name=f"s{i}",
                               grace_s=5.0).start() for i in range(3)]
    started = time.monotonic()
    for child in children:
        child.terminate()
    codes = [child.stop() for child in children]
    assert codes == [-signal.SIGTERM] * 3
    assert time.monotonic() - started < 2.0  # no child waited out its 5 s grace
    children[0].terminate()  # after stop: nothing to signal, no error
    assert children[0].stop() == -signal.SIGTERM
