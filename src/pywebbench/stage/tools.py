"""Where each outside tool is: one locator for `doctor`, the generators and the services.

Debian puts daemons in /usr/sbin, which is not on every user's PATH, and PostgreSQL under
/usr/lib/postgresql/N/bin: those places are searched before PATH. Go under /usr/local/go and
the oha and vegeta scripts/install.sh builds into the cache are fallbacks after PATH.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from pywebbench.stage.envs import cache_root

REPO_ROOT = Path(__file__).resolve().parents[2]


def _postgres_candidates() -> list[Path]:
    # the newest Debian-style cluster binaries first
    return sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"),
                  key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0, reverse=True)


KNOWN_PLACES: dict[str, Callable[[], list[Path]]] = {
    "nginx": lambda: [Path("/usr/sbin/nginx")],
    "pgbouncer": lambda: [Path("/usr/sbin/pgbouncer")],
    "sshd": lambda: [Path("/usr/sbin/sshd")],
    "postgres": _postgres_candidates,
}
"""Searched before PATH: the daemons Debian installs off most users' PATH."""

FALLBACKS: dict[str, Callable[[], list[Path]]] = {
    "go": lambda: [Path("/usr/local/go/bin/go"), Path("/usr/lib/go/bin/go")],
    "oha": lambda: [cache_root() / "tools" / "cargo" / "bin" / "oha", REPO_ROOT / ".tools" / "cargo" / "bin" / "oha",
                    Path.home() / ".cargo" / "bin" / "oha"],
    "toxiproxy-server": lambda: [cache_root() / "tools" / "toxiproxy-v2.5.0" / "toxiproxy-server"],  # stage/toxiproxy.py
    "vegeta": lambda: [cache_root() / "tools" / "vegeta-v12.13.0" / "vegeta"],  # stage/vegeta.py, scripts/install.sh
    "py-spy": lambda: [Path(sys.executable).parent / "py-spy"],  # the py-spy wheel's binary in the harness's .venv
}
"""Searched after PATH: a user's own go, oha or vegeta wins over the usual install places."""


def locate(name: str) -> str | None:
    """The tool's executable: its known places, then PATH, then its fallbacks; None when missing."""
    for candidate in KNOWN_PLACES.get(name, list)():
        if os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(name)
    if found is not None:
        return found
    return next((str(c) for c in FALLBACKS.get(name, list)() if os.access(c, os.X_OK)), None)
