from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Tests known to fail now and then for a reason outside the code under test, by node id, each
# with its reason. Nothing is re-run: a marked test still runs once, and its failure is
# reported as an expected failure (xfail, strict=False) and counted in the summary, so a flake
# stays visible. Empty today: a test that flakes is fixed first, and only marked here, with an
# issue-style note, when it cannot be.
KNOWN_FLAKY: dict[str, str] = {}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "integration" in str(item.fspath):
            item.add_marker(pytest.mark.integration)
        reason = KNOWN_FLAKY.get(item.nodeid)
        if reason is not None:
            item.add_marker(pytest.mark.xfail(reason=f"known flaky: {reason}", strict=False))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    terminalreporter.write_line(f"known flaky tests marked: {len(KNOWN_FLAKY)}"
                                + "".join(f"\n  {node}: {why}" for node, why in KNOWN_FLAKY.items()))


def pywebbench(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pywebbench", *args],
        capture_output=True, text=True, timeout=timeout, cwd=ROOT, env={**os.environ},
    )
