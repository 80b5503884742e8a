"""Before any load: is the server up, does every endpoint answer exactly, is keep-alive on."""

from __future__ import annotations

import http.client
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass

from pywebbench.catalog.workloads import Expected, HttpRequest, Workload
from pywebbench.measure.answers import Reply


@dataclass(frozen=True)
class Answer:
    status: int
    media_type: str
    body: bytes
    will_close: bool
    headers: tuple[tuple[str, str], ...] = ()


def connection(host: str, port: int, timeout_s: float, tls: bool = False) -> http.client.HTTPConnection:
    """HTTP/1.1 to the server, over TLS where it terminates it (the run's own self-signed
    certificate: not verified, as h2load does not). Servers that speak h2c answer HTTP/1.1 on the
    same port, so the checks ask every protocol's server in HTTP/1.1."""
    if not tls:
        return http.client.HTTPConnection(host, port, timeout=timeout_s)
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return http.client.HTTPSConnection(host, port, timeout=timeout_s, context=context)


def fetch(host: str, port: int, path: str, timeout_s: float = 5.0, *, method: str = "GET", body: bytes = b"",
          headers: tuple[tuple[str, str], ...] = (), tls: bool = False) -> Answer:
    conn = connection(host, port, timeout_s, tls)
    try:
        conn.request(method, path, body=body or None, headers=dict(headers))
        resp = conn.getresponse()
        body = resp.read()
        media = (resp.getheader("Content-Type") or "").split(";")[0].strip().lower()
        return Answer(resp.status, media, body, resp.will_close, tuple(resp.getheaders()))
    finally:
        conn.close()


class NotReady(Exception):
    pass


def wait_ready(
    host: str,
    port: int,
    path: str,
    *,
    timeout_s: float,
    alive: Callable[[], bool],
    tls: bool = False,
) -> float:
    """Poll until the server answers HTTP; returns seconds waited. Fails fast if it exits."""
    start = time.monotonic()
    last_error = "no answer"
    while time.monotonic() - start < timeout_s:
        if not alive():
            raise NotReady("server exited before it was ready")
        try:
            fetch(host, port, path, timeout_s=2.0, tls=tls)
            return time.monotonic() - start
        except (OSError, http.client.HTTPException) as exc:
            last_error = f"{type(exc).__name__}: {exc}"
        time.sleep(0.05)
    raise NotReady(f"not ready after {timeout_s:.0f}s ({last_error})")


def check_answer(workload: Workload, answer: Answer, expected: Expected) -> str | None:
    """None when the answer is exactly what the workload expects, else what differs."""
    if answer.status != workload.expect_status:
        return f"{workload.path}: status {answer.status}, expected {workload.expect_status} ({answer.body[:100]!r})"
    if workload.media_type and answer.media_type != workload.media_type:
        return f"{workload.path}: content type {answer.media_type!r}, expected {workload.media_type!r}"
    problem = workload.check(answer.body, expected)
    return f"{workload.path}: {problem}" if problem else None


def verify_endpoint(host: str, port: int, workload: Workload, expected: Expected = Expected(),
                    answers: dict[str, Reply] | None = None, listens: tuple[str, int] | None = None,
                    tls: bool = False) -> str | None:
    """None when every answer is right, else the first wrong one; a traffic mix's right answers
    go into `answers` (by request), to be compared across servers (answers.odd_answers). The
    host:port asked and the one the server listens on (`listens`, behind a proxy) may be echoed
    in them: the comparison reads them as placeholders."""
    if workload.shape is not None and workload.shape.probe is not None:
        return workload.shape.probe(host, port)  # its own protocol: a POST, a WebSocket echo
    if workload.requests:
        found = answers if answers is not None else {}
        origins = tuple(dict.fromkeys(form for h, p in ((host, port), listens or (host, port))
                                      for form in (f"{h}:{p}", str(p))))
        return next(filter(None, (_verify_request(host, port, workload, r, expected, found, origins)
                                  for r in workload.requests)), None)
    try:
        return check_answer(workload, fetch(host, port, workload.path, tls=tls), expected)
    except (OSError, http.client.HTTPException) as exc:
        return f"{workload.path}: {type(exc).__name__}: {exc}"


def _verify_request(host: str, port: int, workload: Workload, request: HttpRequest, expected: Expected,
                    answers: dict[str, Reply], origins: tuple[str, ...]) -> str | None:
    """One request of a person's traffic mix: its status, then the workload's body check."""
    try:
        answer = fetch(host, port, request.path, method=request.method, body=request.body, headers=request.headers)
    except (OSError, http.client.HTTPException) as exc:
        return f"{request.label}: {type(exc).__name__}: {exc}"
    if answer.status != workload.expect_status:
        return f"{request.label}: status {answer.status}, expected {workload.expect_status} ({answer.body[:100]!r})"
    problem = workload.check(answer.body, expected)
    if problem:
        return f"{request.label}: {problem}"
    answers[f"{workload.name} {request.label}"] = Reply(answer.body, answer.headers, origins, workload.ignore_fields)
    return None


def keeps_alive(host: str, port: int, path: str, tls: bool = False) -> tuple[bool | None, str | None]:
    """Does the server keep an HTTP/1.1 connection open after a response? (answer, why unknown)

    A server that announces `Connection: close`, or drops the connection before the second
    answer, keeps no connection alive; any other failure leaves the answer unknown, with its
    cause, instead of reading as "off".
    """
    conn = connection(host, port, 5.0, tls)
    try:
        conn.request("GET", path)
        first = conn.getresponse()
        first.read()
    except (OSError, http.client.HTTPException) as exc:
        conn.close()
        return None, f"the first request failed: {type(exc).__name__}: {exc}"
    try:
        if first.will_close:
            return False, None
        conn.request("GET", path)
        second = conn.getresponse()
        second.read()
        return True, None
    except (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected):
        return False, None  # closed after one answer without saying so: no keep-alive
    except (OSError, http.client.HTTPException) as exc:
        return None, f"the second request failed: {type(exc).__name__}: {exc}"
    finally:
        conn.close()
