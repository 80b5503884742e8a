from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "integration" in str(item.fspath):
            item.add_marker(pytest.mark.integration)
            # These load real servers on a shared 2-core host, and a few bound a timing (a
            # round trip, a drain) that a neighbour's burst can push past once in a few hundred
            # runs. A failure is run once more and counted ("R" in the summary, "rerun" in the
            # totals); a fault in the code fails both times.
            item.add_marker(pytest.mark.flaky(reruns=1, reruns_delay=2))


def pywebbench(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pywebbench", *args],
        capture_output=True, text=True, timeout=timeout, cwd=ROOT, env={**os.environ},
    )
