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

from pywebbench.profile.sampler import NativeUnwindCrash, Recording, SamplerError, locate, unreadable
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


def _crashing_py_spy(tmp_path: Path) -> str:
    """A py-spy that attaches as the real one says it does, then dies of SIGSEGV mid-window, as
    py-spy 0.4.3 --native did on gunicorn sync serving examples/notes (exit -11, no output)."""
    script = tmp_path / "py-spy"
    script.write_text("#!/bin/sh\necho 'py-spy> Sampling process 100 times a second for 5 seconds.'\n"
                      "sleep 0.3\nkill -SEGV $$\n")
    script.chmod(0o755)
    return str(script)


def test_a_native_sampler_that_crashes_mid_window_is_told_apart(tmp_path: Path) -> None:
    with pytest.raises(NativeUnwindCrash, match="crashed \\(SIGSEGV\\)"):
        with Recording(_crashing_py_spy(tmp_path), os.getpid(), tmp_path / "stacks.txt", bound_s=5):
            time.sleep(1.0)


def test_a_python_frames_only_sampler_that_crashes_is_a_plain_failure(tmp_path: Path) -> None:
    with pytest.raises(SamplerError) as caught:
        with Recording(_crashing_py_spy(tmp_path), os.getpid(), tmp_path / "stacks.txt", bound_s=5, native=False):
            time.sleep(1.0)
    assert not isinstance(caught.value, NativeUnwindCrash) and "-11" in str(caught.value)
