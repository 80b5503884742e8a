"""The shards' children: one that stops on its own ends the others (the chain needs every shard)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from pywebbench.core.procs import ManagedProcess
from pywebbench.jobs.sharded import _wait


def _child(tmp_path: Path, name: str, script: str) -> ManagedProcess:
    return ManagedProcess(["sh", "-c", script], env=dict(os.environ), log_dir=tmp_path, name=name, grace_s=2.0)


def test_a_shard_that_fails_stops_the_others_at_once(tmp_path: Path) -> None:
    failing = _child(tmp_path, "shard-1", "echo 'error: host app1 is unreachable' >&2; exit 2").start()
    running = _child(tmp_path, "shard-2", "exec sleep 60").start()
    said: list[str] = []
    started = time.monotonic()
    try:
        codes = _wait([failing, running], said.append)
    finally:
        running.stop()
    assert time.monotonic() - started < 20
    assert codes[0] == 2 and codes[1] != 0
    assert said == ["shard-1 stopped (exit 2): stopping the other shards"]


def test_shards_that_end_well_give_their_codes(tmp_path: Path) -> None:
    first = _child(tmp_path, "shard-1", "exit 0").start()
    second = _child(tmp_path, "shard-2", "sleep 0.5; exit 1").start()  # 1: a window failed, the run is whole
    assert _wait([first, second], lambda _: None) == [0, 1]
