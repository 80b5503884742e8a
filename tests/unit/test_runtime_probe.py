"""The interpreter a server's workers run, read back (issue 47 items 1-2): /proc/PID/exe of a real
child process on another interpreter of this machine, and the GIL question asked of real workers:
apps/pwb_runtime.py answering SIGURG on a GIL build of 3.13 (the GIL on) and on the free-threaded
3.14t this machine built (the GIL off, then on again once a worker turns it back on); the tables'
words for each."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pywebbench.measure.runtime_probe import ask_gil, interpreter_of, read_runtime, workers
from pywebbench.report.interpreter_label import interpreter_label
from pywebbench.results.model import StackInfo
from pywebbench.stage.interpreters import installed
from pywebbench.stage.pybuild import installed as built

APPS = Path(__file__).resolve().parents[2] / "src" / "pywebbench" / "apps"
INFO = StackInfo("s", "f", "F", "srv", "Srv", "", "w", "WSGI", "Sync", "-", "-", 1, 1)


def _with_gil_question() -> list[tuple[str, bool]]:
    """(interpreter, free-threaded) of this machine that have sys._is_gil_enabled (3.13 and later)."""
    return [(i.path, i.free_threaded) for i in installed() if i.implementation == "cpython" and i.version >= (3, 13)]


@pytest.fixture
def worker(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """A process that imports pwb_runtime as every app does, then waits (as a worker between requests)."""
    python = request.param
    answers = tmp_path / "answers"
    answers.mkdir()
    code = f"import sys; sys.path.insert(0, {str(APPS)!r}); import pwb_runtime, time; print('up', flush=True); time.sleep(60)"
    proc = subprocess.Popen([python, "-c", code], env={"PWB_RUNTIME_DIR": str(answers)}, stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"up"
    yield proc, answers
    proc.kill()
    proc.wait()


def _params() -> list[object]:
    found = {ft: path for path, ft in _with_gil_question()}
    return [pytest.param(found[False], id="gil-build") if False in found else
            pytest.param("", id="gil-build", marks=pytest.mark.skip("no CPython 3.13+ with the GIL here")),
            pytest.param(found[True], id="free-threaded") if True in found else
            pytest.param("", id="free-threaded", marks=pytest.mark.skip("no free-threaded build here "
                                                                             "(pywebbench python install 3.14t)"))]


@pytest.mark.parametrize("worker", _params(), indirect=True)
def test_a_worker_answers_whether_its_gil_is_on(worker: tuple[subprocess.Popen[bytes], Path]) -> None:
    proc, answers = worker
    read = read_runtime([proc.pid], answers)
    assert read.interpreter is not None and read.interpreter.startswith("CPython 3.1")
    if read.free_threaded:
        assert read.gil == "off" and interpreter_label(StackInfo(**{**INFO.__dict__, "interpreter": read.interpreter,
                                                                     "gil": read.gil})).endswith("t GIL off")
    else:
        assert read.gil is None  # a GIL build is not asked
        assert ask_gil([proc.pid], answers, wait_s=5.0) == "on"


@pytest.mark.skipif(built("3.14t") is None, reason="no free-threaded build here (pywebbench python install 3.14t)")
def test_a_worker_that_turned_the_gil_back_on_says_so(tmp_path: Path) -> None:
    """The free-threaded build with the GIL turned on (as an extension without Py_mod_gil does):
    PYTHON_GIL=1 stands in for the import here, sys._is_gil_enabled() is True either way."""
    python = built("3.14t")
    assert python is not None
    answers = tmp_path / "answers"
    answers.mkdir()
    code = f"import sys; sys.path.insert(0, {str(APPS)!r}); import pwb_runtime, time; print('up', flush=True); time.sleep(60)"
    proc = subprocess.Popen([python.executable, "-c", code], env={"PWB_RUNTIME_DIR": str(answers), "PYTHON_GIL": "1"},
                            stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"up"
        read = read_runtime([proc.pid], answers)
        assert (read.free_threaded, read.gil) == (True, "on")
        label = interpreter_label(StackInfo(**{**INFO.__dict__, "interpreter": read.interpreter, "gil": read.gil}))
        assert label == "3.14.7 GIL re-enabled" or label.endswith(" GIL re-enabled") and "t " not in label
    finally:
        proc.kill()
        proc.wait()


def test_a_process_without_the_handler_is_unaffected_and_unanswered(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; print('up', flush=True); time.sleep(60)"],
                            stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"up"
        started = time.monotonic()
        assert ask_gil([proc.pid], tmp_path, wait_s=0.5) is None
        assert time.monotonic() - started < 3 and proc.poll() is None  # SIGURG's default: ignored
    finally:
        proc.kill()
        proc.wait()


def test_the_workers_are_the_leaves_and_each_is_read_from_proc() -> None:
    code = "import os, time, subprocess, sys; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); " \
           "print(p.pid, flush=True); time.sleep(60)"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        child = int(proc.stdout.readline())
        assert workers([proc.pid]) == [child]
        found = interpreter_of(child)
        assert found is not None and found[0].startswith(f"CPython {sys.version.split()[0]} (")
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize(("interpreter", "gil", "label"), [
    ("CPython 3.11.7 (/root/.pyenv/versions/3.11.7/bin/python3.11)", None, "3.11.7"),
    ("PyPy 3.9.16 (/usr/lib/pypy3.9/pypy3.9)", None, "pypy3.9.16"),
    ("CPython 3.14.7t (/c/pythons/3.14t/bin/python3.14t)", "off", "3.14.7t GIL off"),
    ("CPython 3.14.7t (/c/pythons/3.14t/bin/python3.14t)", "on", "3.14.7 GIL re-enabled"),
    ("CPython 3.14.7t (/c/pythons/3.14t/bin/python3.14t)", None, "3.14.7t GIL not asked"),
    ("uwsgi embedding /c/pythons/3.14t/lib/libpython3.14t.so.1.0", "off", "3.14t embedded GIL off"),
    ("uwsgi embedding /usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", None, "3.11 embedded"),
    (None, None, "-"),
])
def test_the_tables_words_for_an_interpreter(interpreter: str | None, gil: str | None, label: str) -> None:
    assert interpreter_label(StackInfo(**{**INFO.__dict__, "interpreter": interpreter, "gil": gil})) == label
