"""The connection-shape workloads, one registration line each; catalog/workloads.py lists them
beside the built-in ones."""

from __future__ import annotations

from pywebbench.catalog.shapes import close, idle, sse, stream, ws_echo
from pywebbench.catalog.workload_model import Workload

SHAPE_WORKLOADS: tuple[Workload, ...] = (
    idle.WORKLOAD,
    close.WORKLOAD,
    stream.STREAM,
    stream.UPLOAD,
    sse.WORKLOAD,
    ws_echo.WORKLOAD,
)
