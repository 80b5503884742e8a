"""Comparing one request's answers across servers: JSON by structure, other bodies as text.

Each server listens on its own port, so an app that echoes its request (the Host header) or its
URL answers differently on every server without being wrong. A server's own address is masked
only where an address can stand: a host:port it was reached at reads `<host:port>`, and its port
after any other host (`localhost:40123`, `[::1]:40123`, `127.0.0.1%3A40123` in a quoted URL)
reads `host:<port>` -- in a URL or a host:port pair, in a text or binary body, in a JSON string
or key, and in every header value (Host, Location, Content-Location, Link, Origin, Referer,
Access-Control-Allow-Origin carry them). A JSON value that is the port and nothing else (an
echoed SERVER_PORT or ASGI `server`) reads `<port>`. A bare run of digits that merely equals
the port is not masked: a body holding it differs, byte for byte, from one holding other digits.
Header values are compared (and shown) as a client reads them (RFC 9110 5.5): without the
spaces and tabs around them, which some servers strip and others keep. Headers that servers set
themselves or that change by the second (Date, Server, framing) are not compared;
`--ignore-field PATH` leaves out more: a JSON path into the body (`query_ms`, `rows[*].elapsed`,
`meta.timing`), or a response header (`headers.Date`; in an echo app's JSON body it is also that
path). A difference is named by its JSON path, or by its first differing byte with an excerpt
of both sides around it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

Step = str | int | None
"""One step of a field path: a key, an index, or None for any key or index (`*`, `[*]`)."""
Concrete = tuple[str | int, ...]
"""Where a value sits in a parsed body: keys and indexes from the root."""

VOLATILE_HEADERS = frozenset({
    # set by the server or the moment, not by the app's logic
    "date", "server", "expires", "age", "last-modified", "via", "alt-svc", "set-cookie",
    # per response by definition: timings and request ids
    "server-timing", "x-response-time", "x-runtime", "x-request-id",
    # framing: differs with the server (chunked or not, keep-alive or not)
    "connection", "keep-alive", "transfer-encoding",
    # follow the body: compared through the body itself, after normalisation
    "content-length", "etag",
})
HEADERS = "headers"
"""The first step of a path naming a response header (`headers.Date`)."""
EXCERPT = 24
"""Bytes shown on each side of the first differing byte."""
VALUE_CHARS = 60
"""Longest rendering of one JSON value in a difference."""
_PLAIN_KEY = re.compile(r"^[^.\[\]\"]+$")


@dataclass(frozen=True)
class Reply:
    """One server's right answer to one request, with what comparing it needs."""

    body: bytes
    headers: tuple[tuple[str, str], ...] = ()
    origins: tuple[str, ...] = ()
    """Where this server was reached (`127.0.0.1:40123`) and its ports (`40123`): read as placeholders
    where an address stands (a URL, a host:port, a JSON value that is the port), never in bare digits."""
    ignore: tuple[str, ...] = ()
    """--ignore-field paths: left out of the comparison."""


@dataclass(frozen=True)
class Odd:
    """A server whose answer to a request differs from the others'."""

    label: str
    request: str
    line: str


def parse_path(text: str) -> tuple[Step, ...]:
    """`rows[*].elapsed` -> ("rows", None, "elapsed"); `*` is any key, `[*]` any index,
    `["a.b"]` a key with dots. Raises ValueError with what is wrong."""
    steps: list[Step] = []
    rest = text.strip()
    if not rest:
        raise ValueError("an empty field path")
    expect_name = True
    while rest:
        if rest.startswith("["):
            close = _bracket_end(rest, text)
            inner = rest[1:close]
            steps.append(None if inner == "*" else int(inner) if inner.isascii() and inner.isdigit() else _quoted(inner, text))
            rest = rest[close + 1:]
            expect_name = False
        elif rest.startswith("."):
            if expect_name:
                raise ValueError(f"{text!r}: an empty step before '.'")
            rest, expect_name = rest[1:], True
            if not rest:
                raise ValueError(f"{text!r} ends with '.'")
        else:
            if not expect_name:
                raise ValueError(f"{text!r}: '.' or '[' expected before {rest!r}")
            name = re.match(r"[^.\[\]]+", rest)
            if name is None:
                raise ValueError(f"{text!r}: ']' without '['")
            steps.append(None if name.group() == "*" else name.group())
            rest, expect_name = rest[name.end():], False
    return tuple(steps)


def _bracket_end(rest: str, text: str) -> int:
    close = rest.find("]", rest.find('"', 2) + 1 if rest.startswith('["') else 1)
    if close < 0:
        raise ValueError(f"{text!r}: '[' without ']'")
    return close


def _quoted(inner: str, text: str) -> str:
    try:
        key = json.loads(inner)
    except json.JSONDecodeError:
        key = None
    if not isinstance(key, str):
        raise ValueError(f"{text!r}: [{inner}] is neither an index, [*] nor a quoted key")
    return key


@lru_cache(maxsize=256)
def _patterns(ignore: tuple[str, ...]) -> tuple[tuple[Step, ...], ...]:
    return tuple(parse_path(text) for text in ignore)


def _ignored(path: Concrete, patterns: Sequence[tuple[Step, ...]]) -> bool:
    return any(len(p) == len(path) and all(s is None or s == c and type(s) is type(c) for s, c in zip(p, path))
               for p in patterns)


def path_text(path: Concrete) -> str:
    """("rows", 3, "name") -> `rows[3].name`: the --ignore-field syntax."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif _PLAIN_KEY.match(step) and step != "*":
            out += f".{step}" if out else step
        else:
            out += f"[{json.dumps(step)}]"
    return out or "the body"


_HOST_CHARS = "A-Za-z0-9_.-"
_HOST = (r"(?:\[[0-9A-Fa-f:.]+\]"  # an IPv6 literal, bracketed as in a URL
         rf"|(?![0-9]+(?::|%3[Aa]))[A-Za-z0-9_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*)")
"""A host before `:port`: a name, a dotted IPv4 or a bracketed IPv6, but not digits alone (`12:40123`
is a time or a ratio, not an address)."""
_OWN = "<host:port>"
_PORT = "<port>"


@lru_cache(maxsize=256)
def _origin_pattern(origins: tuple[str, ...]) -> re.Pattern[str] | None:
    """The server's own host:port forms (longest first), then its ports after `host:` (or the
    `%3A` of a URL quoted into a query): a port stands for an address only after a host."""
    if not origins:
        return None
    forms = sorted({o for o in origins if not o.isdigit()}, key=len, reverse=True)
    ports = sorted({o for o in origins if o.isdigit()}, key=len, reverse=True)
    alternatives = [rf"(?P<own>{'|'.join(map(re.escape, forms))})(?![0-9])"] if forms else []
    if ports:
        alternatives.append(rf"(?P<host>{_HOST})(?P<colon>:|%3[Aa])(?:{'|'.join(ports)})(?![0-9])")
    # not inside a longer name or number (`10.127.0.0.1:40123`, `127.0.0.1:401234`), but after
    # the `%2F` or `%40` of a quoted URL (`?next=http%3A%2F%2F127.0.0.1%3A40123%2F`)
    return re.compile(rf"(?:(?<![{_HOST_CHARS}])|(?<=%2[Ff])|(?<=%40))(?:{'|'.join(alternatives)})")


def _masked(match: re.Match[str]) -> str:
    """The server's own host:port as a whole, else only the port after whatever host came first."""
    if match.group("own") is not None:
        return _OWN
    return f"{match.group('host')}{match.group('colon')}{_PORT}"


def normalise_text(text: str, origins: tuple[str, ...]) -> str:
    """Each of the server's own host:port read as `<host:port>`, its port after another host as
    `host:<port>`; digits that are not an address (`port 40123`, a binary body) are left alone."""
    pattern = _origin_pattern(origins)
    if pattern is None:
        return text
    return pattern.sub(_masked, text)


def _normalise_json(value: Any, origins: tuple[str, ...], ports: frozenset[int]) -> Any:
    # A value that is the port and nothing else is an echoed address (WSGI's SERVER_PORT is a
    # string, ASGI's scope["server"] holds an int): the existing echo tests need both masked,
    # and a whole JSON value, unlike digits somewhere in a body, is rarely the port by chance.
    if isinstance(value, str):
        return _PORT if value.isascii() and value.isdigit() and int(value) in ports else normalise_text(value, origins)
    if isinstance(value, int) and not isinstance(value, bool) and value in ports:
        return _PORT
    if isinstance(value, list):
        return [_normalise_json(v, origins, ports) for v in value]
    if isinstance(value, dict):
        return {normalise_text(k, origins): _normalise_json(v, origins, ports) for k, v in value.items()}
    return value


def _parsed(reply: Reply) -> Any:
    """The body as normalised JSON, or None when it is not JSON (an object or an array)."""
    try:
        value = json.loads(reply.body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, (dict, list)):
        return None  # a bare number or string is compared as text
    ports = frozenset(int(o) for o in reply.origins if o.isdigit())
    return _normalise_json(value, reply.origins, ports)


def difference(mine: Reply, usual: Reply) -> str | None:
    """None when the two answers agree after normalisation and ignored fields, else where they
    first differ: a JSON path, or a byte with an excerpt of both sides; then a header."""
    patterns = _patterns(tuple(sorted({*mine.ignore, *usual.ignore})))
    left, right = _parsed(mine), _parsed(usual)
    if left is not None and right is not None:
        found = _json_difference(left, right, (), patterns)
    else:
        found = _text_difference(mine, usual)
    return found or _header_difference(mine, usual, patterns)


_ABSENT = object()


def _json_difference(left: Any, right: Any, path: Concrete, patterns: Sequence[tuple[Step, ...]]) -> str | None:
    """The first path where the two documents differ (object keys in either order), else None."""
    if _ignored(path, patterns):
        return None
    if isinstance(left, dict) and isinstance(right, dict):
        keys = list(left) + [k for k in right if k not in left]
        return next(filter(None, (_json_difference(left.get(k, _ABSENT), right.get(k, _ABSENT), (*path, k), patterns)
                                  for k in keys)), None)
    if isinstance(left, list) and isinstance(right, list):
        return next(filter(None, (_json_difference(left[i] if i < len(left) else _ABSENT,
                                                   right[i] if i < len(right) else _ABSENT, (*path, i), patterns)
                                  for i in range(max(len(left), len(right))))), None)
    if _same_scalar(left, right):
        return None
    return f"{path_text(path)}: {_shown(left)} != {_shown(right)}"


def _same_scalar(left: Any, right: Any) -> bool:
    """Equal JSON values, where true is not 1 (Python's bool is an int)."""
    if isinstance(left, bool) or isinstance(right, bool):
        return left is right
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return left == right
    return type(left) is type(right) and bool(left == right)


def _shown(value: Any) -> str:
    if value is _ABSENT:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= VALUE_CHARS else text[:VALUE_CHARS - 3] + "..."


def _text_difference(mine: Reply, usual: Reply) -> str | None:
    # latin-1 maps byte i to character i, so positions found here are byte positions
    left = normalise_text(mine.body.decode("latin-1"), mine.origins).encode("latin-1")
    right = normalise_text(usual.body.decode("latin-1"), usual.origins).encode("latin-1")
    if left == right:
        return None
    at = next((i for i, (a, b) in enumerate(zip(left, right)) if a != b), min(len(left), len(right)))
    return (f"byte {at}: {_excerpt(left, at)} != {_excerpt(right, at)} "
            f"({len(mine.body)} and {len(usual.body)} bytes)")


def _excerpt(body: bytes, at: int) -> str:
    """A few bytes either side of `at`, quoted and escaped, `...` where the body goes on."""
    start, end = max(0, at - EXCERPT), min(len(body), at + EXCERPT)
    shown = repr(body[start:end].decode("utf-8", errors="replace"))
    return ("..." if start > 0 else "") + shown + ("..." if end < len(body) else "")


def _headers(reply: Reply, patterns: Sequence[tuple[Step, ...]]) -> dict[str, str]:
    """The headers the app set, by lower-case name (repeated ones joined), normalised."""
    out: dict[str, str] = {}
    for name, value in reply.headers:
        key = name.lower()
        if key in VOLATILE_HEADERS or _ignored((HEADERS, key), [_lowered(p) for p in patterns]):
            continue
        # the spaces and tabs around a field value are not part of it (RFC 9110 5.5): Kinto's
        # Content-Security-Policy ends with a space that gunicorn strips and granian keeps
        value = normalise_text(value.strip(" \t"), reply.origins)
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def _lowered(pattern: tuple[Step, ...]) -> tuple[Step, ...]:
    """Header names match whatever their case (`headers.Date` is `date`)."""
    return tuple(s.lower() if isinstance(s, str) and i == 1 else s for i, s in enumerate(pattern))


def _header_difference(mine: Reply, usual: Reply, patterns: Sequence[tuple[Step, ...]]) -> str | None:
    left, right = _headers(mine, patterns), _headers(usual, patterns)
    for name in sorted(left.keys() | right.keys()):
        a, b = left.get(name), right.get(name)
        if a != b:
            return f"header {name}: {'(absent)' if a is None else repr(a)} != {'(absent)' if b is None else repr(b)}"
    return None


def odd_answers(answers: Mapping[str, Mapping[str, Reply]]) -> list[Odd]:
    """One per server whose answer to a request differs from the others' (the answer most
    servers agree with is the reference; with no majority, each differing server is named)."""
    odd = []
    for key in sorted({key for replies in answers.values() for key in replies}):
        groups: list[tuple[Reply, list[str]]] = []
        for label, replies in sorted(answers.items()):
            if key not in replies:
                continue
            reply = replies[key]
            group = next((g for g in groups if difference(reply, g[0]) is None), None)
            if group is None:
                groups.append((reply, [label]))
            else:
                group[1].append(label)
        if len(groups) < 2:
            continue
        ranked = sorted(groups, key=lambda g: -len(g[1]))
        usual, agreeing = ranked[0]
        for reply, labels in ranked[1:]:
            where = difference(reply, usual)
            for label in labels:
                odd.append(Odd(label, key, f"{label} answers {key} differently from {', '.join(agreeing)}: {where}"))
    return odd
