"""One JSON object per line over a pipe: how a role on another host talks to the harness.

The role prints lines on its stdout, which is the SSH channel's stdout here; the harness
writes its requests as lines to the channel's stdin. Reading waits on the pipe itself
(`select`), never on a file polled for an answer, and a half line stays buffered until its
end arrives, so a line split across reads is still one message.
"""

from __future__ import annotations

import json
import os
import select
import time
from typing import IO, Any

_CHUNK = 65536


class ChannelClosed(EOFError):
    """The other end closed the pipe (the process behind it ended) before a whole line arrived."""


def encode(message: dict[str, Any]) -> bytes:
    """One message as its line: compact JSON, no newline inside (json escapes them), one at the end."""
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()


def decode(line: bytes) -> dict[str, Any]:
    """A line back to its message; ValueError if it is not one JSON object."""
    data = json.loads(line)
    if not isinstance(data, dict):
        raise ValueError(f"not a JSON object: {line[:80]!r}")
    return data


class LineBuffer:
    """Bytes in as they arrive, whole lines out; what follows the last newline waits for more."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, data: bytes) -> list[bytes]:
        *lines, self._pending = (self._pending + data).split(b"\n")
        return [line for line in lines if line.strip()]

    @property
    def pending(self) -> bytes:
        """The half line not yet ended."""
        return self._pending


class LineReader:
    """Whole lines from a pipe's read end, each waited for until a deadline."""

    def __init__(self, pipe: IO[bytes]) -> None:
        self._fd = pipe.fileno()
        self._buffer = LineBuffer()
        self._lines: list[bytes] = []
        self.closed = False

    def line(self, timeout_s: float) -> bytes | None:
        """The next whole line; None when none came within timeout_s; ChannelClosed at the end of the pipe."""
        deadline = time.monotonic() + timeout_s
        while not self._lines:
            if self.closed:
                raise ChannelClosed(f"closed{' mid-line' if self._buffer.pending else ''}")
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self._fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(self._fd, _CHUNK)
            if not chunk:
                self.closed = True
                continue
            self._lines += self._buffer.feed(chunk)
        return self._lines.pop(0)

    def message(self, timeout_s: float) -> dict[str, Any] | None:
        """The next line as a message (None: none in time)."""
        line = self.line(timeout_s)
        return None if line is None else decode(line)
