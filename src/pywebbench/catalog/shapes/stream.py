"""stream and upload: a 1 MiB answer streamed in 64 KiB chunks, and a 1 MiB request body read
and counted: throughput in bytes (MB/s) and the server's CPU per MB. Sent by the run's HTTP
generator (wrk and oha count the bytes they read; an upload's are its requests x 1 MiB)."""

from __future__ import annotations

import http.client

from pywebbench.catalog.shapes.answers import UPLOAD_BYTES, check_stream, check_upload
from pywebbench.catalog.shapes.base import Drive, Shape, python_apps
from pywebbench.catalog.workload_model import Expected, Workload

STREAM = Workload(
    "stream", "/stream", "application/octet-stream", "a 1 MiB answer streamed in 64 KiB chunks: MB/s, CPU per MB",
    check_stream,
    shape=Shape(measures="MB/s read and the server's CPU seconds per MB", left_out=python_apps),
)


def probe_upload(host: str, port: int) -> str | None:
    """POST the window's body once: the answer is its length."""
    conn = http.client.HTTPConnection(host, port, timeout=5.0)
    try:
        conn.request("POST", "/upload", body=b"u" * UPLOAD_BYTES)
        answer = conn.getresponse()
        body = answer.read()
    except (OSError, http.client.HTTPException) as exc:
        return f"/upload: {type(exc).__name__}: {exc}"
    finally:
        conn.close()
    if answer.status != 200:
        return f"/upload: status {answer.status}, expected 200 ({body[:100]!r})"
    problem = check_upload(body, Expected())
    return f"/upload: {problem}" if problem else None


UPLOAD = Workload(
    "upload", "/upload", "text/plain", "a 1 MiB request body read and counted: MB/s, CPU per MB",
    check_upload,
    shape=Shape(measures="MB/s sent and the server's CPU seconds per MB", left_out=python_apps, probe=probe_upload,
                drive=Drive(method="POST", body_bytes=UPLOAD_BYTES)),
)
