"""The base version of an app for a one-run gate: a directory, or a git ref checked out aside."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pywebbench.core.errors import UserError
from pywebbench.stage.baseline_src import baseline_source


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                          capture_output=True, text=True, check=True).stdout


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "site").mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    (root / "site" / "app.py").write_text("VERSION = 1\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "one")
    (root / "site" / "app.py").write_text("VERSION = 2\n")
    _git(root, "commit", "-q", "-am", "two")
    return root


def test_a_ref_is_checked_out_aside_at_the_app_dirs_place_and_removed_after(repo: Path) -> None:
    (repo / "site" / "app.py").write_text("VERSION = 3  # uncommitted: the head as it is\n")
    with baseline_source(repo / "site", directory=None, ref="HEAD~1") as base:
        assert base is not None and base.name == "site" and not base.is_relative_to(repo)
        assert (base / "app.py").read_text() == "VERSION = 1\n"
        assert len(_git(repo, "worktree", "list").splitlines()) == 2
    assert not base.exists() and len(_git(repo, "worktree", "list").splitlines()) == 1
    assert (repo / "site" / "app.py").read_text().startswith("VERSION = 3")


def test_a_directory_is_used_as_it_is_and_none_means_no_gate(tmp_path: Path) -> None:
    with baseline_source(tmp_path, directory=tmp_path, ref=None) as base:
        assert base == tmp_path.resolve()
    with baseline_source(tmp_path, directory=None, ref=None) as none:
        assert none is None


@pytest.mark.parametrize(("where", "ref", "message"), [
    ("repo", "no-such-ref", "no such commit"),
    ("outside", "HEAD", "is not in a git checkout"),
])
def test_a_ref_that_cannot_be_checked_out_is_one_line(repo: Path, tmp_path: Path, where: str, ref: str,
                                                       message: str) -> None:
    app_dir = repo / "site" if where == "repo" else tmp_path / "plain"
    app_dir.mkdir(exist_ok=True)
    with pytest.raises(UserError, match=message):
        with baseline_source(app_dir, directory=None, ref=ref):
            pass
    assert len(_git(repo, "worktree", "list").splitlines()) == 1


def test_both_or_a_missing_directory_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not both"):
        with baseline_source(tmp_path, directory=tmp_path, ref="HEAD"):
            pass
    with pytest.raises(UserError, match="is not a directory"):
        with baseline_source(tmp_path, directory=tmp_path / "absent", ref=None):
            pass
