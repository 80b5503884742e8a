"""A window's load as its workload's shape has it (catalog/shapes): keep-alive off, a body of
its own, or its Go driver. The one place a LoadRequest learns its shape, for every method's
windows, warmups and settles alike."""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import urlsplit

from pywebbench.catalog.workloads import WORKLOADS, HttpRequest
from pywebbench.loadgen.base import LoadRequest

UPLOAD_BYTE = b"u"
"""An upload's body is this byte over and over (the probe sends the same)."""


def shaped(request: LoadRequest, workload: str, server_pids: tuple[int, ...] = ()) -> LoadRequest:
    """`request` for `workload`: unchanged unless the workload is a connection shape."""
    found = WORKLOADS.get(workload)
    shape = found.shape if found is not None else None
    if shape is None:
        return request
    drive = shape.drive
    if drive.command is not None:
        return replace(request, drive=drive, server_pids=server_pids)
    mix = request.mix
    if drive.body_bytes or drive.method != "GET":
        mix = (HttpRequest(drive.method, urlsplit(request.url).path, body=UPLOAD_BYTE * drive.body_bytes),)
    return replace(request, keepalive=request.keepalive and drive.keepalive, mix=mix)
