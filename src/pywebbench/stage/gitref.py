"""The commit and branch a history entry is filed under: given, or the git checkout's here."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from pywebbench.core.errors import UserError

GIT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class GitRef:
    commit: str
    branch: str


def resolve_ref(commit: str | None, branch: str | None, directory: Path) -> GitRef:
    """`commit` and `branch` as given; each one missing is read from the checkout at `directory`
    (HEAD's SHA, the branch checked out), or a one-line error saying which flag to give."""
    if commit is not None and branch is not None:
        return GitRef(_nonempty("--commit", commit), _nonempty("--branch", branch))
    head = _git(directory, "rev-parse", "--verify", "HEAD")
    if head is None and commit is None:
        raise UserError(f"{directory} is not a git checkout with a commit: give --commit SHA and --branch NAME")
    if branch is None:
        # symbolic-ref fails on a detached HEAD (CI checks out a pull request's merge commit so):
        # there is no branch to read, and a guessed one would file the entry wrongly.
        branch = _git(directory, "symbolic-ref", "--short", "-q", "HEAD")
        if branch is None:
            raise UserError(f"no branch checked out at {directory} (a detached HEAD or no git checkout): "
                            "give --branch NAME")
    return GitRef(_nonempty("--commit", commit if commit is not None else head or ""), _nonempty("--branch", branch))


def _nonempty(flag: str, value: str) -> str:
    if not value.strip():
        raise UserError(f"{flag} needs a value")
    return value.strip()


def _git(directory: Path, *args: str) -> str | None:
    """git's one line of output, or None when git is missing or says no."""
    try:
        done = subprocess.run(["git", "-C", str(directory), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    line = done.stdout.strip()
    return line if done.returncode == 0 and line else None
