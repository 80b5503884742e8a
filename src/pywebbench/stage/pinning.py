"""A `pin` made exact before its environment is built: a git ref becomes the commit it names now
(so the environment's hash changes when the branch moves, and the freeze says which commit ran),
and a local checkout gets a fingerprint of its files (uv would reuse a wheel it built from an
older state of the tree, and the cache would reuse the environment)."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from pywebbench.core.errors import UserError
from pywebbench.plan.pins import Pin, parse_pin

GIT_TIMEOUT_S = 60.0
SKIPPED_DIRS = frozenset({".git", "__pycache__", "build", "dist", ".venv", ".tox", ".mypy_cache", ".pytest_cache",
                          "node_modules", "target"})
_SHA = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class ExactPin:
    pin: Pin
    requirement: str
    """What uv installs: a git ref's commit, a checkout's file URL."""
    fingerprint: str = ""
    """A local checkout's files, for the environment's hash; '' otherwise."""

    @property
    def rebuilt(self) -> tuple[str, ...]:
        """Packages uv must build afresh rather than take from its cache (a checkout's)."""
        return (self.pin.name,) if self.pin.local is not None else ()


def exact(text: str) -> ExactPin:
    pin = parse_pin(text)
    if pin.local is not None:
        return ExactPin(pin, pin.requirement, tree_fingerprint(pin.local))
    name, sep, source = pin.requirement.partition(" @ ")
    if not sep or not source.startswith("git+"):
        return ExactPin(pin, pin.requirement)
    url, ref, fragment = split_git_url(source)
    return ExactPin(pin, f"{name} @ git+{url}@{resolve_ref(url, ref)}{fragment}")


def split_git_url(source: str) -> tuple[str, str, str]:
    """'git+https://h/r@v2#subdirectory=x' -> ('https://h/r', 'v2', '#subdirectory=x'): the ref is
    after the last @ of the URL's path (an @ before it is a user's, ssh://git@host/r)."""
    url, hashmark, fragment = source.removeprefix("git+").partition("#")
    parts = urlsplit(url)
    path, at, ref = parts.path.rpartition("@")
    if not at:
        path, ref = parts.path, "HEAD"
    return urlunsplit(parts._replace(path=path)), ref, hashmark + fragment


def resolve_ref(url: str, ref: str) -> str:
    """The commit `ref` names in the repository at `url` (a full SHA is taken as it is)."""
    if _SHA.match(ref):
        return ref
    local = url.removeprefix("file://") if url.startswith("file://") else None
    if local is not None:  # a local repository also resolves short SHAs
        answer = _git(["git", "-C", local, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"])
        if answer:
            return answer.split()[0]
        raise UserError(f"pin: {url} has no ref {ref!r}")
    listed = _git(["git", "ls-remote", url, ref, f"{ref}^{{}}"])
    commits: dict[str, str] = {}  # ref name -> commit; an annotated tag's own commit is its ^{} line
    for line in listed.splitlines():
        sha, _, name = line.partition("\t")
        commits[name] = sha
    peeled = next((sha for name, sha in commits.items() if name.endswith("^{}")), None)
    found = peeled or next(iter(commits.values()), None)
    if found is None:
        raise UserError(f"pin: {url} has no ref {ref!r} (git ls-remote found none)")
    return found


def _git(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=False,
                              env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"pin: {' '.join(argv[:3])} failed: {exc}") from None
    if done.returncode not in (0, 1):
        raise UserError(f"pin: {' '.join(argv[:3])} failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return str(done.stdout).strip()


def tree_fingerprint(root: Path) -> str:
    """Every file's path, size and modification time under `root` (build outputs and VCS aside)."""
    digest = hashlib.sha256()
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.endswith(".egg-info"))
        for name in sorted(files):
            path = Path(directory) / name
            try:
                stat = path.stat()
            except OSError:
                continue
            digest.update(f"{path.relative_to(root)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]
