"""A role's service module on its host over SSH, and the JSON lines it answers on.

The role module (services/remote_db.py, remote_upstream.py, remote_proxy.py) runs as
`python -m MODULE WORK_DIR ARGS...` on the host, in its own process group, with its stdin and
stdout the SSH channel's (stage/ssh.py, `channel=True`). It prints one JSON object per line:
`{"ready": {...}}` once serving, then `{"id": N, ...}` answering each request
`{"id": N, "ask": WHAT, ...}` the harness writes to its stdin. Nothing is polled: the harness
waits on the channel's pipe. The process is stopped by its group, as before, and ends by itself
when its stdin ends (the harness has gone; the channel's watcher stops its group too). Both
sides of that contract are here, so the roles cannot drift apart on it.
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

from pywebbench.core.jsonlines import ChannelClosed, decode, encode
from pywebbench.stage.ssh import RemoteProcess, SshConnection, SshError

_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1"}
_IDS = itertools.count(1)
_ASKING = threading.Lock()

Handler = Callable[[dict[str, Any]], dict[str, Any]]


class RoleError(SshError):
    """A role did not start, did not answer, or answered with an error: one line saying which."""


# -- the harness's side ----------------------------------------------------------------------


def start_role(conn: SshConnection, python: str, module: str, args: Sequence[str], *, role: str, work_dir: Path,
               timeout_s: float) -> tuple[RemoteProcess, dict[str, Any]]:
    """The running process and what its ready line says; RoleError (its stderr's last lines as one
    line) if it ended or said nothing within timeout_s."""
    remote = str(work_dir)
    proc = conn.spawn([python, "-m", module, remote, *args], name=role, remote_dir=remote,
                      local_log_dir=work_dir, env=_ENV, channel=True)
    try:
        return proc, wait_ready(proc.receive, timeout_s, f"the {role} role on {conn.name}", lambda: _stderr_tail(proc))
    except BaseException:
        proc.stop()
        raise


def wait_ready(receive: Callable[[float], dict[str, Any] | None], timeout_s: float, who: str,
               why: Callable[[], str]) -> dict[str, Any]:
    """The data of the role's ready line; RoleError, one line with `why()` (its stderr's tail), if
    the channel ended first or stayed silent for timeout_s."""
    deadline = time.monotonic() + timeout_s
    try:
        while (left := deadline - time.monotonic()) > 0:
            message = receive(left)
            if message is None:
                break
            if "ready" in message:
                data: dict[str, Any] = message["ready"]
                return data
    except (ChannelClosed, ValueError):
        pass  # it ended (or spoke garbage): its stderr says why
    raise RoleError(f"{who} did not start: {' '.join(why().split()) or 'no ready line'}")


def ask(proc: RemoteProcess, what: str, timeout_s: float, **arguments: Any) -> dict[str, Any]:
    """Send one request and wait for the answer carrying its id (an earlier, abandoned request's
    late answer is skipped); RoleError if the role has ended, is silent, or answers an error."""
    with _ASKING:
        request = next(_IDS)
        try:
            proc.send({"id": request, "ask": what, **arguments})
        except SshError:
            raise RoleError(f"the {proc.name} role on {proc.conn.name} has ended: cannot ask {what}") from None
        deadline = time.monotonic() + timeout_s
        try:
            while (left := deadline - time.monotonic()) > 0:
                answer = proc.receive(left)
                if answer is not None and answer.get("id") == request:
                    if answer.get("failed"):
                        raise RoleError(str(answer["error"]))
                    return answer
        except ChannelClosed:
            raise RoleError(f"the {proc.name} role on {proc.conn.name} ended before answering {what}") from None
    raise RoleError(f"the {proc.name} role on {proc.conn.name} did not answer {what} in {timeout_s:.0f} s")


def _stderr_tail(proc: RemoteProcess) -> str:
    try:
        _, err = proc.fetch_logs()
        return " ".join(err.read_text(errors="replace").strip().splitlines()[-2:])
    except (SshError, OSError):
        return ""


# -- the host's side -------------------------------------------------------------------------


def _exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


def stop_on_sigterm() -> None:
    """On the host: the group's SIGTERM unwinds the role's `with` blocks, so its services stop cleanly."""
    signal.signal(signal.SIGTERM, _exit)


class Channel:
    """On the host: the role's end of the channel, taken from fd 1 before any service starts.

    fd 1 then points at the role's stderr log, so the services it starts (PostgreSQL, nginx)
    never inherit the channel: a line of theirs would corrupt it, and a child holding it would
    keep the SSH session open after the role ended.
    """

    def __init__(self) -> None:
        sys.stdout.flush()
        self._out = os.fdopen(os.dup(1), "wb", buffering=0)  # os.dup: not inherited by children
        os.dup2(2, 1)
        self._lock = threading.Lock()

    def say(self, message: dict[str, Any]) -> None:
        with self._lock:
            self._out.write(encode(message))


def serve(channel: Channel, ready: dict[str, Any], handlers: Mapping[str, Handler]) -> NoReturn:
    """On the host: say the role is ready, answer requests until stdin ends, then exit (unwinding
    the role's services); the group's SIGTERM ends it sooner."""
    channel.say({"ready": ready})
    for line in sys.stdin.buffer:
        if line.strip():
            channel.say(answer(line, handlers))
    raise SystemExit(0)


def answer(line: bytes, handlers: Mapping[str, Handler]) -> dict[str, Any]:
    """One request line's answer: the handler's, or a one-line error (unknown request, bad line)."""
    try:
        request = decode(line)
    except ValueError as exc:
        return {"id": None, "failed": True, "error": f"unreadable request: {exc}"}
    handler = handlers.get(str(request.get("ask")))
    if handler is None:
        return {"id": request.get("id"), "failed": True, "error": f"unknown request {request.get('ask')!r}"}
    return {"id": request.get("id"), **handler(request)}


def serve_until_stopped(channel: Channel, data: dict[str, Any]) -> NoReturn:
    """On the host: a role with nothing to answer says it is ready and holds its services."""
    serve(channel, data, {})
