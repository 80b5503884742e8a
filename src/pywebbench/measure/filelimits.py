"""The open-file limit a server needs for its connections, raised before it starts.

A server holding N connections needs N descriptors per process that accepts them, beside its
own files; a limit below that refuses connections (EMFILE) and the window would measure the
limit, not the server. Where the harness's own limit (which a child inherits) is too low for a
session's connections, the server starts under `prlimit --nofile=SOFT:HARD`, the command
recorded with the stack's argv; the limit each server ran with is read back by the shapes
driver (ShapeFigures.server_nofile). The Go drivers raise their own (stage/reference/go/cmd/shapes).
"""

from __future__ import annotations

import os
import resource
from collections.abc import Sequence

BESIDE_CONNECTIONS = 1024
"""Descriptors a server keeps besides its connections: logs, pipes, sockets to its services."""


def nofile_needed(connections: Sequence[int]) -> int:
    return max(connections, default=0) + BESIDE_CONNECTIONS


def nofile_prefix(connections: Sequence[int], limits: tuple[int, int] | None = None,
                  root: bool | None = None) -> list[str]:
    """`prlimit --nofile=S:H --` when the session's connections need more than the inherited soft
    limit, else nothing (the command is unchanged where the limit suffices). Root may raise the
    hard limit too; anyone else gets at most the hard limit."""
    soft, hard = limits if limits is not None else resource.getrlimit(resource.RLIMIT_NOFILE)
    need = nofile_needed(connections)
    if soft == resource.RLIM_INFINITY or need <= soft:
        return []
    may_raise_hard = os.geteuid() == 0 if root is None else root
    new_soft = need if may_raise_hard or hard == resource.RLIM_INFINITY else min(need, hard)
    new_hard = hard if hard == resource.RLIM_INFINITY or hard >= new_soft else new_soft
    if new_soft <= soft:
        return []
    return ["prlimit", f"--nofile={new_soft}:{'unlimited' if new_hard == resource.RLIM_INFINITY else new_hard}", "--"]
