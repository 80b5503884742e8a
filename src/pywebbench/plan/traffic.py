"""A person's traffic mix: `--request 'METHOD PATH [@BODYFILE] [header:value] [weight=N]'`.

Each request is checked before any load (its status, optionally a body substring) and sent by
the native generators in proportion to its weight. Parsing is strict: a malformed request is
one line and exit 2 before anything starts.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pywebbench.core.errors import UserError

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
_HEADER = re.compile(r"^([A-Za-z0-9!#$%&'*+.^_`|~-]+):(.*)$")
MAX_WEIGHT = 1000


@dataclass(frozen=True)
class RequestSpec:
    method: str
    path: str
    body: bytes = b""
    body_file: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    weight: int = 1

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"


def parse_request(text: str, base_dir: Path = Path(".")) -> RequestSpec:
    """One `--request` text; a body file is read (relative to base_dir) now, so a missing one
    is refused before any load."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise UserError(f"--request {text!r}: {exc}") from None
    if len(words) < 2:
        raise UserError(f"--request {text!r} must look like 'METHOD PATH [@BODYFILE] [header:value] [weight=N]'")
    method, path, *rest = words
    method = method.upper()
    if method not in METHODS:
        raise UserError(f"--request {text!r}: unknown method {method!r}; use one of {', '.join(METHODS)}")
    if not path.startswith("/") or any(c.isspace() for c in path):
        raise UserError(f"--request {text!r}: the path must start with '/' (got {path!r})")
    body, body_file, headers, weight = b"", None, [], 1
    for word in rest:
        if word.startswith("@"):
            if body_file is not None:
                raise UserError(f"--request {text!r}: one body file per request")
            body_file = word[1:]
            body = _read_body(base_dir / body_file, text)
        elif word.startswith("weight="):
            weight = _weight(word.removeprefix("weight="), text)
        elif match := _HEADER.match(word):
            headers.append((match.group(1), match.group(2).strip()))
        else:
            raise UserError(f"--request {text!r}: {word!r} is neither @BODYFILE, header:value nor weight=N")
    if body and method in ("GET", "HEAD"):
        raise UserError(f"--request {text!r}: a {method} request carries no body")
    return RequestSpec(method, path, body, body_file, tuple(headers), weight)


def parse_requests(texts: Sequence[str], base_dir: Path = Path(".")) -> tuple[RequestSpec, ...]:
    specs = tuple(parse_request(t, base_dir) for t in texts)
    labels = [s.label for s in specs]
    duplicated = sorted({label for label in labels if labels.count(label) > 1})
    if duplicated:
        raise UserError(f"--request {duplicated[0]!r} is given twice: give it one weight instead")
    return specs


def parse_requests_file(path: Path) -> tuple[RequestSpec, ...]:
    """A requests file: one request per line, `#` comments and blank lines ignored; body files
    are relative to the file."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read requests file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    texts = [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]
    if not texts:
        raise UserError(f"requests file {path} holds no request")
    return parse_requests(texts, path.parent)


def _read_body(path: Path, text: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UserError(f"--request {text!r}: cannot read body file {path}: {exc.strerror or exc}") from None


def _weight(value: str, text: str) -> int:
    if not value.isdigit() or not 1 <= int(value) <= MAX_WEIGHT:
        raise UserError(f"--request {text!r}: weight must be a whole number from 1 to {MAX_WEIGHT}, got {value!r}")
    return int(value)
