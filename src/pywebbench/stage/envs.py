"""Stack environments: one uv-built virtualenv per distinct requirement set, cached by hash.

Never the user's site-packages: each environment lives under the cache directory, is
named by the hash of what it was asked to hold (requirements, overrides, interpreter) and
is reused until that changes. A failed build is remembered with its reason, so `list`
can say why a stack is unavailable without trying again.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pywebbench.stage.patched import PatchedBuildError, ensure_patched
from pywebbench.results.model import EnvironmentRecord

MARKER = "pywebbench-env.json"
FAILED = "pywebbench-env-failed.txt"


def cache_root() -> Path:
    configured = os.environ.get("PYWEBBENCH_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pywebbench"


def uv_binary() -> str:
    """The uv shipped as a dependency of pywebbench, else the one on PATH."""
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if found is None:
            raise FileNotFoundError("uv is not installed") from None
        return found


@dataclass(frozen=True)
class EnvSpec:
    requirements: tuple[str, ...]
    overrides: tuple[str, ...] = ()
    python: str = sys.executable
    fingerprint: str = ""
    """A local checkout's state (stage/pinning.py): the same requirements, new files, a new environment."""
    rebuilt: tuple[str, ...] = ()
    """Packages uv builds afresh instead of taking its cached wheel (a local checkout's)."""

    @property
    def hash(self) -> str:
        asked: dict[str, object] = {
            "requirements": sorted(self.requirements),
            "overrides": sorted(self.overrides),
            "python": _python_identity(self.python),
        }
        if self.fingerprint:  # only then: every other environment keeps the hash it had
            asked["fingerprint"] = self.fingerprint
        payload = json.dumps(asked, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


class EnvBuildError(Exception):
    pass


@dataclass(frozen=True)
class BuiltEnv:
    path: Path
    record: EnvironmentRecord
    reused: bool

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    @property
    def bin_dir(self) -> Path:
        return self.path / "bin"


class EnvProvider(Protocol):
    def ensure(self, spec: EnvSpec, *, retry_failed: bool = False) -> BuiltEnv: ...


class EnvironmentBuilder:
    def __init__(self, root: Path | None = None) -> None:
        self.root = (root or cache_root()) / "envs"

    def path_for(self, spec: EnvSpec) -> Path:
        return self.root / spec.hash

    def cached(self, spec: EnvSpec) -> EnvironmentRecord | None:
        marker = self.path_for(spec) / MARKER
        if not marker.exists():
            return None
        data = json.loads(marker.read_text())
        return EnvironmentRecord(
            hash=data["hash"],
            python=data["python"],
            requirements=tuple(data["requirements"]),
            overrides=tuple(data["overrides"]),
            freeze=tuple(data["freeze"]),
            build_seconds=float(data.get("build_seconds", 0.0)),
        )

    def failure(self, spec: EnvSpec) -> str | None:
        failed = self.root / f"{spec.hash}.{FAILED}"
        return failed.read_text() if failed.exists() else None

    def ensure(self, spec: EnvSpec, *, retry_failed: bool = False) -> BuiltEnv:
        """The environment for spec, built now if it is not in the cache yet."""
        path = self.path_for(spec)
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / f"{spec.hash}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # two runs building one env wait for each other
            record = self.cached(spec)
            if record is not None:
                return BuiltEnv(path, record, reused=True)
            failure = self.failure(spec)
            if failure is not None and not retry_failed:
                raise EnvBuildError(failure)
            return BuiltEnv(path, self._build(spec, path), reused=False)

    def _build(self, spec: EnvSpec, path: Path) -> EnvironmentRecord:
        failed = self.root / f"{spec.hash}.{FAILED}"
        if path.exists():
            shutil.rmtree(path)  # a build cut off half-way: start again
        start = time.monotonic()
        uv = uv_binary()
        env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "VIRTUAL_ENV": str(path)}
        env.pop("PYTHONPATH", None)
        try:
            _run([uv, "venv", "--quiet", "--python", spec.python, str(path)], env)
            reqs = path / "requirements.in"
            reqs.write_text("\n".join(spec.requirements) + "\n")
            install = [uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", str(path / "bin" / "python"), "-r", str(reqs)]
            if ensure_patched(spec.requirements, self.root.parent / "wheelhouse", spec.python, uv, env):
                install += ["--find-links", str(self.root.parent / "wheelhouse")]
            if spec.overrides:
                overrides = path / "overrides.txt"
                overrides.write_text("\n".join(spec.overrides) + "\n")
                install += ["--override", str(overrides)]
            for name in spec.rebuilt:
                install += ["--refresh-package", name, "--reinstall-package", name]
            _run(install, env)
            freeze = _run([uv, "pip", "freeze", "--python", str(path / "bin" / "python")], env)
        except (EnvBuildError, PatchedBuildError) as exc:
            failed.write_text(str(exc))
            shutil.rmtree(path, ignore_errors=True)
            raise EnvBuildError(str(exc)) from exc
        record = EnvironmentRecord(
            hash=spec.hash,
            python=_python_identity(spec.python),
            requirements=spec.requirements,
            overrides=spec.overrides,
            freeze=tuple(line for line in freeze.splitlines() if line.strip()),
            build_seconds=round(time.monotonic() - start, 2),
        )
        failed.unlink(missing_ok=True)
        (path / MARKER).write_text(
            json.dumps(
                {
                    "hash": record.hash,
                    "python": record.python,
                    "requirements": list(record.requirements),
                    "overrides": list(record.overrides),
                    "freeze": list(record.freeze),
                    "build_seconds": record.build_seconds,
                },
                indent=1,
            )
        )
        return record


def _run(argv: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        summary = " | ".join(lines[-6:]) if lines else f"exit {done.returncode}"
        raise EnvBuildError(f"{' '.join(argv[:3])} failed: {summary}")
    return done.stdout


_identity_cache: dict[str, str] = {}


def _python_identity(python: str) -> str:
    """'CPython 3.11.7 at /path': the interpreter a hash must change with."""
    if python not in _identity_cache:
        done = subprocess.run(
            [python, "-c", "import platform,sys;print(platform.python_implementation(), platform.python_version(), sys.base_prefix)"],
            capture_output=True, text=True, check=False,
        )
        parts = done.stdout.split()
        _identity_cache[python] = f"{parts[0]} {parts[1]} at {parts[2]}" if len(parts) == 3 else python
    return _identity_cache[python]
