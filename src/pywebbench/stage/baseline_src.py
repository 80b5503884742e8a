"""The base version of a person's app, for a gate that runs base and head in one run.

`--baseline-dir DIR` is a checkout of the base already on disk; `--baseline-ref REF` checks
the ref out of the app dir's git repository with `git worktree add --detach` into a private
directory (the head's working tree is never touched), at the same path inside the repository
as the head's app dir, and removes the worktree when the run ends.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pywebbench.core.errors import UserError

GIT_TIMEOUT_S = 120.0


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False,
                              timeout=GIT_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise UserError("--baseline-ref needs git, which is not installed; fix: apt-get install git") from None


@contextmanager
def baseline_source(app_dir: Path, *, directory: Path | None, ref: str | None) -> Iterator[Path | None]:
    """The base's app dir for the run's duration (None: no baseline asked for)."""
    if directory is not None and ref is not None:
        raise UserError("give --baseline-dir or --baseline-ref, not both")
    if directory is not None:
        if not directory.is_dir():
            raise UserError(f"--baseline-dir {directory} is not a directory")
        yield directory.resolve()
        return
    if ref is None:
        yield None
        return
    with _worktree(app_dir.resolve(), ref) as base:
        yield base


@contextmanager
def _worktree(app_dir: Path, ref: str) -> Iterator[Path]:
    top = _git(app_dir, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise UserError(f"--baseline-ref {ref}: the app dir {app_dir} is not in a git checkout")
    repo = Path(top.stdout.strip())
    prefix = _git(app_dir, "rev-parse", "--show-prefix").stdout.strip()
    commit = _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if commit.returncode != 0:
        raise UserError(f"--baseline-ref {ref}: no such commit in {repo}")
    work = Path(tempfile.mkdtemp(prefix="pywebbench-base-"))
    tree = work / "tree"
    added = _git(repo, "worktree", "add", "--detach", "--force", str(tree), commit.stdout.strip())
    if added.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        raise UserError(f"--baseline-ref {ref}: git worktree add failed: {added.stderr.strip().splitlines()[-1:]}")
    try:
        base = tree / prefix
        if not base.is_dir():
            raise UserError(f"--baseline-ref {ref}: {prefix or 'the app dir'} does not exist at that commit")
        yield base
    finally:
        _git(repo, "worktree", "remove", "--force", str(tree))
        shutil.rmtree(work, ignore_errors=True)
        _git(repo, "worktree", "prune")
