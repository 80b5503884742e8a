"""The sampler against real processes: py-spy (the project's dependency) on a busy Python child,
stopped when the block ends; and what it cannot read, said in one line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pywebbench.profile.sampler import Recording, SamplerError, locate, unreadable
from pywebbench.profile.stacks import read_collapsed

BUSY = "import time\ndef spin():\n    while True:\n        sum(range(1000))\nspin()\n"


@pytest.fixture
def busy() -> Iterator[subprocess.Popen[bytes]]:
    child = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        yield child
    finally:
        child.kill()
        child.wait()


def test_py_spy_is_installed_with_the_project() -> None:
    assert locate() is not None


def test_a_recording_samples_its_process_until_the_block_ends(busy: subprocess.Popen[bytes], tmp_path: Path) -> None:
    py_spy = locate()
    assert py_spy is not None
    started = time.monotonic()
    with Recording(py_spy, busy.pid, tmp_path / "stacks.txt", bound_s=30, rate_hz=50) as recording:
        time.sleep(1.0)
    assert time.monotonic() - started < 15  # stopped by SIGINT, not by its 30 s bound
    sampled = recording.result
    assert sampled is not None and sampled.samples > 10
    stacks = read_collapsed(sampled.path.read_text())
    assert stacks.total == sampled.samples
    assert any("spin" in frame for stack, _ in stacks.counts for frame in stack)


def test_a_process_that_is_gone_is_one_line(tmp_path: Path) -> None:
    py_spy = locate()
    assert py_spy is not None
    gone = subprocess.Popen(["true"])
    gone.wait()
    with pytest.raises(SamplerError) as caught:
        with Recording(py_spy, gone.pid, tmp_path / "stacks.txt", bound_s=5):
            pass
    assert "\n" not in str(caught.value) and str(caught.value)


def test_what_the_sampler_can_read() -> None:
    assert unreadable(os.getpid()) is None  # this CPython
    sleeper = subprocess.Popen(["sleep", "5"])
    try:
        assert unreadable(sleeper.pid) == "its server is not Python (sleep): nothing for a Python sampler to read"
    finally:
        sleeper.kill()
        sleeper.wait()
