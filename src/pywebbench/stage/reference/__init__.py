"""The Go reference implementation of the app contract, and the slow upstream API (Go).

`build_go_binaries(cache_dir)` builds both from `reference/go/` and caches them; see gobuild.
"""

from pywebbench.stage.reference.gobuild import GoBinaries, GoBuildError, build_go_binaries

__all__ = ["GoBinaries", "GoBuildError", "build_go_binaries"]
