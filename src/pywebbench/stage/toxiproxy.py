"""Toxiproxy, the latency proxy that delays links where the kernel has no netem.

Built once from the Go module proxy into the harness's tool cache (`tools/toxiproxy-<version>`),
with the same Go environment as the reference build; the tool locator finds it there.
"""

from __future__ import annotations

import os
from pathlib import Path

from pywebbench.stage.envs import cache_root
from pywebbench.stage.reference.gobuild import GoBuildError, go_install

VERSION = "v2.5.0"
MODULE = "github.com/Shopify/toxiproxy/v2/cmd/server"
BINARY = "toxiproxy-server"


def install_dir(cache: Path | None = None) -> Path:
    return (cache or cache_root()) / "tools" / f"toxiproxy-{VERSION}"


def build_toxiproxy(cache: Path | None = None, go: str | None = None) -> Path:
    """The toxiproxy server binary, built on first use (a minute of compiling, once)."""
    target = install_dir(cache) / BINARY
    if os.access(target, os.X_OK):
        return target
    built = go_install(MODULE, VERSION, target.parent, go) / "server"
    if not built.exists():
        raise GoBuildError(f"go install toxiproxy {VERSION} left no binary in {target.parent}")
    built.replace(target)
    return target
