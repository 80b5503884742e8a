"""The interpreter and the package versions as axes (issue 47), on real stacks and this machine's
real interpreters: one stack on pyenv's 3.11 and 3.12 in one run, each window's server read back
on the interpreter asked for; the free-threaded 3.14t (`pywebbench python install 3.14t`) asked
whether each server's workers kept the GIL off, and PyPy 3.9 left out of its cells with uv's
reason in one line; a framework pinned at two git refs of a local repository in one run, its two
environments' freezes naming the two commits, a stack that does not use it running unchanged."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pywebbench.core.errors import UserError
from pywebbench.results.model import TrialStatus
from pywebbench.results.store import load_results
from pywebbench.stage.envs import EnvironmentBuilder, EnvSpec
from pywebbench.stage.interpreters import Interpreter, resolve

from .conftest import pywebbench

SHORT = ("--duration", "1", "--warmup", "0.2", "--settle", "0.1", "--connections", "20", "--workers", "2")


def _found(text: str) -> Interpreter:
    try:
        return resolve(text)
    except UserError as exc:
        pytest.skip(str(exc))


def test_one_stack_on_two_interpreters_each_window_on_the_one_asked_for(tmp_path: Path) -> None:
    wanted = {text: _found(text) for text in ("3.11", "3.12")}
    out = tmp_path / "run"
    # one window per interpreter: each is read back from its own server (a second round only repeated it)
    done = pywebbench("run", "--stack", "flask:gunicorn-sync", "--knob", "python=3.11,3.12", *SHORT,
                      "--repeats", "1", "--out", str(out))
    assert done.returncode in (0, 1), done.stderr[-3000:]
    results = load_results(out)
    assert {t.spec.python for t in results.trials} == {"3.11", "3.12"} and len(results.trials) == 2
    for trial in results.trials:
        assert trial.status is TrialStatus.OK, trial.error
        interpreter = wanted[trial.spec.python or ""]
        version = ".".join(map(str, interpreter.version))
        # Read back from the running server: /proc/PID/exe of a worker, asked its version.
        assert trial.stack.interpreter == f"CPython {version} ({interpreter.real})", trial.stack.interpreter
        env = results.environments[trial.stack.env_hash]
        assert env.python.startswith(f"CPython {version} at ")
        assert any(line.startswith("flask==") for line in env.freeze)
    assert len({t.stack.env_hash for t in results.trials}) == 2
    report = pywebbench("report", str(out))
    assert "Python 3.11" in report.stdout and "Python 3.12" in report.stdout
    assert ".".join(map(str, wanted["3.11"].version)) in report.stdout


def test_a_free_threaded_build_is_asked_about_its_gil_and_pypy_s_cells_say_why_not(tmp_path: Path) -> None:
    _found("3.14t")
    _found("pypy3")
    out = tmp_path / "run"
    done = pywebbench("run", "--stack", "flask:gunicorn-sync", "--stack", "starlette:uvicorn",
                      "--knob", "python=3.14t,pypy3", *SHORT, "--repeats", "1", "--out", str(out))
    assert done.returncode in (0, 1), done.stderr[-3000:]
    trials = {(t.spec.python, t.spec.stack_id): t for t in load_results(out).trials}
    sync, asgi = trials[("3.14t", "flask:gunicorn-sync")], trials[("3.14t", "starlette:uvicorn")]
    assert sync.status is TrialStatus.OK and asgi.status is TrialStatus.OK, (sync.error, asgi.error)
    assert sync.stack.interpreter is not None and sync.stack.interpreter.startswith("CPython 3.14.")
    assert sync.stack.gil == "off"  # Flask on Gunicorn's sync workers keeps the GIL off
    assert asgi.stack.gil == "on"  # uvloop and httptools (no Py_mod_gil) turn it back on
    assert "re-enabled the GIL" in done.stderr
    for stack in ("flask:gunicorn-sync", "starlette:uvicorn"):
        left_out = trials[("pypy3", stack)]
        assert left_out.status is TrialStatus.UNAVAILABLE and left_out.error is not None
        first = left_out.error.splitlines()[0]
        assert "needs Python>=3.10, this is 3.9" in first and first.endswith("(PyPy 7.3.11)"), first
    report = pywebbench("report", str(out)).stdout
    assert "GIL off" in report and "GIL re-enabled" in report
    assert "needs Python>=3.10, this is 3.9" in report


def bottle_repo(tmp_path: Path, slowed: bool = False) -> tuple[Path, str, str]:
    """A local git repository of Bottle (its one module, from the catalog's own release) with a
    pyproject, at two commits tagged v1 and v2 that differ in their version (and, `slowed`, v2 spins
    30,000 loops in every request, several times Bottle's own work on hello)."""
    built = EnvironmentBuilder().ensure(EnvSpec(("bottle==0.13.4",), (), sys.executable))
    module = next(built.path.glob("lib/python*/site-packages/bottle.py"))
    repo = tmp_path / "bottle"
    repo.mkdir()
    shutil.copy(module, repo / "bottle.py")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                              env=env).stdout.strip()

    git("init", "-q")
    for tag in ("v1", "v2"):
        if slowed and tag == "v2":
            text = (repo / "bottle.py").read_text()
            head = '        """ The bottle WSGI-interface. """\n'
            assert text.count(head) == 1
            (repo / "bottle.py").write_text(text.replace(head, head + "        for _ in range(30000):\n            pass\n"))
        (repo / "pyproject.toml").write_text(
            '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
            f'[project]\nname = "bottle"\nversion = "0.13.4.post{tag[1]}"\n[tool.setuptools]\npy-modules = ["bottle"]\n')
        git("add", ".")
        git("commit", "-qm", tag)
        git("tag", tag)
    return repo, git("rev-parse", "v1"), git("rev-parse", "v2")


def test_a_framework_at_two_git_refs_in_one_run_with_each_freeze_recorded(tmp_path: Path) -> None:
    repo, first, second = bottle_repo(tmp_path)
    url = f"git+{repo.as_uri()}"
    out = tmp_path / "run"
    done = pywebbench("run", "--stack", "bottle:gunicorn-sync", "--stack", "flask:gunicorn-sync",
                      "--knob", f"pin=bottle@{url}@v1,bottle@{url}@v2", *SHORT, "--repeats", "1", "--out", str(out))
    assert done.returncode in (0, 1), done.stderr[-3000:]
    results = load_results(out)
    assert all(t.status is TrialStatus.OK for t in results.trials), [t.error for t in results.trials]
    freezes = {}
    for trial in results.trials:
        env = results.environments[trial.stack.env_hash]
        bottle = [line for line in env.freeze if line.startswith("bottle")]
        if trial.spec.stack_id == "bottle:gunicorn-sync":
            freezes[trial.spec.pin] = bottle
        else:
            assert bottle == []  # Flask does not use Bottle: it ran unchanged, the catalog's environment
    assert freezes == {f"bottle@{url}@v1": [f"bottle @ {url}@{first}"], f"bottle@{url}@v2": [f"bottle @ {url}@{second}"]}
    flask_envs = {t.stack.env_hash for t in results.trials if t.spec.stack_id == "flask:gunicorn-sync"}
    assert len(flask_envs) == 1
    assert "flask:gunicorn-sync does not use bottle: it runs unchanged" in done.stderr
    report = pywebbench("report", str(out)).stdout
    assert report.count("Ratio [95% CI]") == 2  # the baseline is in both cells: each has its ratios
