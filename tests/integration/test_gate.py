"""The CI gate in one run: `app --baseline-ref` checks the base commit out beside the head,
both run under the same server in the same rounds, and the answer is head/base."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from pywebbench.results.store import load_results

from .conftest import pywebbench

SHORT = ("--duration", "1", "--warmup", "0.5", "--settle", "0.2", "--connections", "20",
         "--repeats", "4", "--rounds-per-launch", "1")

APP = textwrap.dedent('''
    import time
    from flask import Flask

    SPIN_S = {spin}
    app = Flask(__name__)

    @app.get("/")
    def index():
        end = time.perf_counter() + SPIN_S
        while time.perf_counter() < end:
            pass
        return "hello"
''')


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@example.com", "PATH": "/usr/bin:/bin", "HOME": "/tmp"}).stdout


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repo whose app lives in site/: commit 1 answers at once, commit 2 spins 1 ms a request."""
    root = tmp_path_factory.mktemp("gate")
    site = root / "site"
    site.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text("__pycache__/\n")  # the import writes bytecode, as in any checkout
    (site / "requirements.txt").write_text("flask==3.1.3\n")
    (site / "gateapp.py").write_text(APP.format(spin="0.0"))
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "fast")
    (site / "gateapp.py").write_text(APP.format(spin="0.001"))
    _git(root, "commit", "-q", "-am", "slow")
    return site


def _gate(repo: Path, out: Path, ref: str, threshold: str, *more: str) -> subprocess.CompletedProcess[str]:
    return pywebbench("app", "--app", "gateapp:app", "--app-dir", str(repo), "--requirements",
                      str(repo / "requirements.txt"), "--server", "gunicorn-sync", "--baseline-ref", ref,
                      "--fail-on-regression", threshold, *SHORT, "--seed", "3", "--out", str(out), *more, timeout=300)


def test_a_slowed_head_fails_the_gate_against_its_base_commit(repo: Path, tmp_path: Path) -> None:
    done = _gate(repo, tmp_path / "slow", "HEAD~1", "5%")
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    gate = json.loads((tmp_path / "slow" / "gate.json").read_text())
    rps = next(r for r in gate["rows"] if r["figure"] == "req/s")
    assert gate["failed"] and rps["verdict"] == "regression" and rps["ratio"] < 0.8, gate
    assert "gate: head over base, judged at +-5.0%: FAIL" in done.stdout
    labels = {t.spec.label for t in load_results(tmp_path / "slow").trials}
    assert labels == {"app:gunicorn-sync#base", "app:gunicorn-sync#head"}
    # the base's worktree is removed after the run, and the head's checkout is untouched
    worktrees = _git(repo.parent, "worktree", "list")
    assert len(worktrees.splitlines()) == 1 and _git(repo.parent, "status", "--porcelain") == ""


def test_an_unchanged_head_passes_in_a_duet(repo: Path, tmp_path: Path) -> None:
    # Base and head side by side in each window (a duet): the method the 2% gate needs here.
    done = _gate(repo, tmp_path / "same", "HEAD", "10%", "--method", "duet")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    gate = json.loads((tmp_path / "same" / "gate.json").read_text())
    assert not gate["failed"] and all(r["verdict"] != "regression" for r in gate["rows"])
    assert {t.spec.method for t in load_results(tmp_path / "same").trials} == {"duet"}


@pytest.mark.parametrize(("flags", "message"), [
    (("--baseline-ref", "no-such-ref"), "--baseline-ref no-such-ref: no such commit"),
    (("--baseline-dir", "/nonexistent-base"), "--baseline-dir /nonexistent-base is not a directory"),
    (("--fail-on-regression", "2%"), "--fail-on-regression needs --baseline-dir or --baseline-ref"),
    (("--baseline-ref", "HEAD", "--tune"), "--tune searches settings"),
])
def test_bad_gate_input_is_one_line_and_exit_2(repo: Path, tmp_path: Path, flags: tuple[str, ...],
                                                message: str) -> None:
    done = pywebbench("app", "--app", "gateapp:app", "--app-dir", str(repo), "--server", "gunicorn-sync", *flags,
                      "--out", str(tmp_path / "bad"), timeout=120)
    assert done.returncode == 2 and message in done.stderr, done.stderr[-1000:]
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "bad").exists()


def test_a_baseline_dir_without_the_module_is_refused(repo: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty-base"
    empty.mkdir()
    done = pywebbench("app", "--app", "gateapp:app", "--app-dir", str(repo), "--requirements",
                      str(repo / "requirements.txt"), "--server", "gunicorn-sync", "--baseline-dir", str(empty),
                      "--out", str(tmp_path / "bad"), timeout=180)
    assert done.returncode == 2 and "the baseline --app gateapp:app" in done.stderr, done.stderr[-1000:]
