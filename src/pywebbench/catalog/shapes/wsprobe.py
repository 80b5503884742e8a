"""One WebSocket echo over a plain socket (RFC 6455, the few frames a probe needs): the check
the harness makes of ws-echo before any load, with the standard library only."""

from __future__ import annotations

import base64
import hashlib
import os
import socket
import struct

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
TEXT, CLOSE = 0x1, 0x8


def accept_key(key: str) -> str:
    return base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()


def frame(opcode: int, payload: bytes, mask: bytes) -> bytes:
    """A client's frame: final, masked (a client must mask)."""
    size = len(payload)
    head = bytes([0x80 | opcode])
    if size < 126:
        head += bytes([0x80 | size])
    elif size < 1 << 16:
        head += bytes([0x80 | 126]) + struct.pack("!H", size)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", size)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


class _Reader:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def take(self, n: int) -> bytes:
        while len(self.buffer) < n:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("the server closed the connection")
            self.buffer += data
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def until(self, mark: bytes, limit: int = 65536) -> bytes:
        while mark not in self.buffer:
            if len(self.buffer) > limit:
                raise ValueError("no end of headers")
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("the server closed the connection")
            self.buffer += data
        head, _, self.buffer = self.buffer.partition(mark)
        return head

    def frame(self) -> tuple[int, bytes]:
        first, second = self.take(2)
        size = second & 0x7F
        if size == 126:
            size = struct.unpack("!H", self.take(2))[0]
        elif size == 127:
            size = struct.unpack("!Q", self.take(8))[0]
        mask = self.take(4) if second & 0x80 else b""
        payload = self.take(size)
        if mask:
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        return first & 0x0F, payload


def echo(host: str, port: int, path: str, message: bytes, timeout_s: float = 5.0) -> str | None:
    """None when the server upgrades `path` and sends `message` back as one text frame."""
    key = base64.b64encode(os.urandom(16)).decode()
    request = (f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            sock.sendall(request.encode())
            reader = _Reader(sock)
            lines = reader.until(b"\r\n\r\n").decode("latin-1").split("\r\n")
            status = lines[0].split(" ", 2)
            if len(status) < 2 or status[1] != "101":
                return f"{path}: no WebSocket upgrade: {lines[0]!r}"
            headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
            if headers.get("sec-websocket-accept") != accept_key(key):
                return f"{path}: wrong Sec-WebSocket-Accept {headers.get('sec-websocket-accept')!r}"
            sock.sendall(frame(TEXT, message, os.urandom(4)))
            opcode, payload = reader.frame()
            sock.sendall(frame(CLOSE, struct.pack("!H", 1000), os.urandom(4)))
    except (OSError, ValueError) as exc:
        return f"{path}: {type(exc).__name__}: {exc}"
    if opcode != TEXT or payload != message:
        return f"{path}: echo of {message!r} came back as opcode {opcode} {payload[:60]!r}"
    return None
