"""vegeta, the open-loop generator of a request mix, built from the Go module proxy.

Built once into the harness's tool cache (`tools/vegeta-<version>/vegeta`) with the same Go
environment as Toxiproxy and the reference build; scripts/install.sh builds the same binary
in the same place, and the tool locator finds it there. `go install` stamps no version into
`vegeta -version`, so the version is read from the module line of the binary's Go build info.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pywebbench.stage.envs import cache_root
from pywebbench.stage.reference.gobuild import go_install

VERSION = "v12.13.0"
MODULE = "github.com/tsenart/vegeta/v12"
BINARY = "vegeta"

_MODULE_LINE = re.compile(rb"\nmod\t" + re.escape(MODULE.encode()) + rb"\t(v[0-9A-Za-z.+-]+)")


def install_dir(cache: Path | None = None) -> Path:
    return (cache or cache_root()) / "tools" / f"vegeta-{VERSION}"


def build_vegeta(cache: Path | None = None, go: str | None = None) -> Path:
    """The vegeta binary, built on first use (half a minute of compiling, once)."""
    target = install_dir(cache) / BINARY
    if os.access(target, os.X_OK):
        return target
    go_install(MODULE, VERSION, target.parent, go)
    return target


def module_version(binary: str | Path) -> str | None:
    """The vegeta module version a Go binary was built from (its build info), or None."""
    try:
        data = Path(binary).read_bytes()
    except OSError:
        return None
    found = _MODULE_LINE.search(data)
    return found.group(1).decode() if found else None
