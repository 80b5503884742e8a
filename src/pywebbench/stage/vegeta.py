"""vegeta, an open-loop generator a run may choose (`--generator vegeta`), from the Go module proxy.

scripts/install.sh builds it once into the harness's tool cache (`tools/vegeta-<version>/vegeta`),
where the tool locator finds it. `go install` stamps no version into
`vegeta -version`, so the version is read from the module line of the binary's Go build info.
"""

from __future__ import annotations

import re
from pathlib import Path

from pywebbench.stage.envs import cache_root

VERSION = "v12.13.0"
MODULE = "github.com/tsenart/vegeta/v12"
BINARY = "vegeta"

_MODULE_LINE = re.compile(rb"\nmod\t" + re.escape(MODULE.encode()) + rb"\t(v[0-9A-Za-z.+-]+)")


def install_dir(cache: Path | None = None) -> Path:
    return (cache or cache_root()) / "tools" / f"vegeta-{VERSION}"


def module_version(binary: str | Path) -> str | None:
    """The vegeta module version a Go binary was built from (its build info), or None."""
    try:
        data = Path(binary).read_bytes()
    except OSError:
        return None
    found = _MODULE_LINE.search(data)
    return found.group(1).decode() if found else None
