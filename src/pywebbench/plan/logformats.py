"""Reading an access log or a HAR file into requests (`app --from-log FILE`, `--from-har FILE`).

Three formats, told apart by content unless one is named (`detect`):

- COMBINED: nginx's default `combined` and Apache's combined and common formats, a request a line,
  `1.2.3.4 - user [10/Oct/2000:13:55:36 -0700] "GET /a?b=1 HTTP/1.1" 200 2326 "referer" "agent"`;
  fields after these (nginx's `$request_time`, say) are allowed. Times have whole seconds.
- JSONL: a JSON object a line: `method`, the target with its query under `path` (or `uri`, `url`,
  `request_uri`; or a `request` line such as "GET /a HTTP/1.1"; `args` or `query_string` are appended
  when the target has no query), `status`; the time, if any, under `time`, `timestamp`, `ts`,
  `@timestamp`, `time_iso8601`, `msec` or `time_local`: epoch seconds (milliseconds above 1e11), ISO
  8601 (UTC if it names no zone) or the combined format's time. Other keys (body size, duration)
  are allowed and not needed.
- HAR: HAR 1.2 as browsers and proxies save it (`log.entries`), with bodies and headers.

The first non-blank line tells: one starting with `{` in a file that is one JSON document with
`log.entries` is a HAR, a `{` line otherwise starts JSONL, anything else is the combined format.
A gzip-compressed file is read as its content. A line (a HAR entry) that cannot be read is
counted with its number, never fatal; a file that cannot be read at all is a UserError.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import math
import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple, TextIO
from urllib.parse import urlencode, urlsplit

from pywebbench.core.errors import UserError
from pywebbench.plan.traffic import METHODS

MALFORMED_SHOWN = 5
"""How many malformed lines are named by number."""
_COMBINED = re.compile(r'\S+ \S+ \S+ \[([^\]]+)\] "((?:[^"\\]|\\.)*)" (\d{3}) (?:\d+|-)(?:\s|$)')
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                                       "Nov", "Dec"), start=1)}
_TARGET_KEYS = ("path", "uri", "url", "request_uri")
_QUERY_KEYS = ("args", "query_string")
_TIME_KEYS = ("time", "timestamp", "ts", "@timestamp", "time_iso8601", "msec", "time_local")


class LogFormat(StrEnum):
    COMBINED = "combined"
    JSONL = "jsonl"
    HAR = "har"


class Entry(NamedTuple):
    """One request as read."""

    line: int
    """Its line number (its entry's number in a HAR), from 1."""
    method: str
    """Empty when the request line could not be read (junk a server answered 400)."""
    target: str
    """The path and query as logged."""
    status: int
    time: float | None
    """Epoch seconds, if the log has them."""
    host: str = ""
    """A HAR entry's host (its requests may go to several)."""
    body: bytes = b""
    content_type: str = ""
    headers: tuple[tuple[str, str], ...] = ()


@dataclass
class Reading:
    log_format: LogFormat
    entries: list[Entry] = field(default_factory=list)
    lines: int = 0
    """Non-blank lines read (a HAR's entries)."""
    malformed: int = 0
    malformed_first: list[int] = field(default_factory=list)

    def bad(self, line: int) -> None:
        self.malformed += 1
        if len(self.malformed_first) < MALFORMED_SHOWN:
            self.malformed_first.append(line)


def read_log(path: Path, log_format: LogFormat | None = None) -> Reading:
    """Every request of the file, in the named format or the one its content shows."""
    try:
        with _open(path) as stream:
            head = _head(stream)
            first = head[-1].strip() if head else ""
            if log_format is LogFormat.HAR or log_format is None and first.startswith("{"):
                document, whole = _json(first), False
                if document is None or log_format is LogFormat.HAR:
                    text = "".join(head) + stream.read()
                    document, whole = _json(text), True
                    head, stream = text.splitlines(keepends=True), io.StringIO()
                if log_format is LogFormat.HAR or _is_har(document):
                    return _read_har(document, path)
                if whole and document is not None:
                    raise UserError(f"{path} is one JSON document over several lines, neither a HAR (no log.entries) "
                                    "nor JSON lines (an object a line)")
                return _read_lines(_chain(head, stream), LogFormat.JSONL)
            return _read_lines(_chain(head, stream), log_format or LogFormat.COMBINED)
    except (OSError, EOFError, zlib.error) as exc:  # gzip's BadGzipFile is an OSError
        raise UserError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None


def _open(path: Path) -> TextIO:
    with path.open("rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace")
    return path.open(encoding="utf-8", errors="replace")


def _head(stream: TextIO) -> list[str]:
    """The lines up to the first non-blank one."""
    head = []
    for line in stream:
        head.append(line)
        if line.strip():
            break
    return head


def _chain(head: list[str], stream: TextIO) -> Iterable[str]:
    yield from head
    yield from stream


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _is_har(document: Any) -> bool:
    return isinstance(document, dict) and isinstance(document.get("log"), dict) \
        and isinstance(document["log"].get("entries"), list)


def _read_lines(lines: Iterable[str], log_format: LogFormat) -> Reading:
    reading = Reading(log_format)
    parse = _combined_line if log_format is LogFormat.COMBINED else _jsonl_line
    times: dict[str, float | None] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        reading.lines += 1
        entry = parse(number, line, times)
        if entry is None:
            reading.bad(number)
        else:
            reading.entries.append(entry)
    return reading


def _combined_line(number: int, line: str, times: dict[str, float | None]) -> Entry | None:
    match = _COMBINED.match(line)
    if match is None:
        return None
    stamp, request, status = match.groups()
    time = times.get(stamp)
    if time is None:
        time = times[stamp] = clf_time(stamp)
        if time is None:
            return None
    code, parsed = int(status), request_line(request)
    if parsed is None:
        return Entry(number, "", "", code, time) if code >= 400 else None
    return Entry(number, parsed[0], parsed[1], code, time)


def request_line(text: str) -> tuple[str, str] | None:
    """(method, target) of a request line such as `GET /a?b=1 HTTP/1.1`."""
    words = text.split(" ")
    if not 2 <= len(words) <= 3 or words[0] not in METHODS:
        return None
    target = origin_form(words[1])
    return None if target is None else (words[0], target)


def origin_form(target: str) -> str | None:
    """The path and query of a request target (an absolute URL's too); None if it has none."""
    if target.startswith("/"):
        return target.partition("#")[0]
    if target.startswith(("http://", "https://")):
        parts = urlsplit(target)
        return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return None


def clf_time(text: str) -> float | None:
    """Epoch seconds of `10/Oct/2000:13:55:36 -0700`; None if it is not one."""
    try:
        day, month, rest = text.split("/", 2)
        year, hour, minute, second_zone = rest.split(":", 3)
        second, zone = second_zone.split(" ")
        if len(zone) != 5 or zone[0] not in "+-":
            return None
        offset = timedelta(hours=int(zone[1:3]), minutes=int(zone[3:5])) * (-1 if zone[0] == "-" else 1)
        return datetime(int(year), _MONTHS[month], int(day), int(hour), int(minute), int(second),
                        tzinfo=timezone(offset)).timestamp()
    except (ValueError, KeyError, IndexError):
        return None


def _jsonl_line(number: int, line: str, times: dict[str, float | None]) -> Entry | None:
    try:
        item = json.loads(line)
    except ValueError:
        return None
    if not isinstance(item, dict):
        return None
    status = item.get("status")
    if isinstance(status, str) and status.isdigit():
        status = int(status)
    if not isinstance(status, int) or isinstance(status, bool):
        return None
    try:
        time = json_time(next((item[k] for k in _TIME_KEYS if k in item), None))
    except ValueError:
        return None
    request = _jsonl_request(item)
    if request is None:
        return Entry(number, "", "", status, time) if status >= 400 else None
    return Entry(number, request[0], request[1], status, time)


def _jsonl_request(item: dict[str, Any]) -> tuple[str, str] | None:
    method, target = item.get("method"), next((item[k] for k in _TARGET_KEYS if k in item), None)
    if method is None and target is None and isinstance(item.get("request"), str):
        return request_line(item["request"])
    if not isinstance(method, str) or not isinstance(target, str) or method.upper() not in METHODS:
        return None
    path = origin_form(target)
    if path is None:
        return None
    query = next((item[k] for k in _QUERY_KEYS if isinstance(item.get(k), str) and item[k]), "")
    return method.upper(), path + (f"?{query}" if query and "?" not in path else "")


def json_time(value: object) -> float | None:
    """Epoch seconds of a logged time (see the module's docstring); ValueError if it is none."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, str):
        text = value
        try:
            value = float(text)
        except ValueError:
            time = clf_time(text)
            return time if time is not None else iso_time(text)
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(value)
    return float(value) / 1000 if value > 1e11 else float(value)


def iso_time(text: str) -> float:
    stamp = datetime.fromisoformat(text)
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)).timestamp()


def _read_har(document: Any, path: Path) -> Reading:
    if not _is_har(document):
        raise UserError(f"{path} is not a HAR file: no log.entries list in one JSON document")
    reading = Reading(LogFormat.HAR)
    for number, item in enumerate(document["log"]["entries"], start=1):
        reading.lines += 1
        try:
            entry = _har_entry(number, item)
        except (KeyError, TypeError, ValueError, AttributeError):
            entry = None
        if entry is None:
            reading.bad(number)
        else:
            reading.entries.append(entry)
    return reading


def _har_entry(number: int, item: dict[str, Any]) -> Entry | None:
    request = item["request"]
    method = request["method"].upper()
    parts = urlsplit(request["url"])
    if method not in METHODS:
        return None
    web = parts.scheme in ("http", "https")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "") if web else ""
    response = item.get("response")
    status = int(response.get("status", 0) or 0) if isinstance(response, dict) else 0
    started = item.get("startedDateTime")
    time = iso_time(started) if isinstance(started, str) else None
    headers = tuple((str(h["name"]), str(h["value"])) for h in request.get("headers") or ())
    body, content_type = _post_data(request.get("postData"))
    return Entry(number, method, target, status, time, parts.netloc.lower() if web else "", body, content_type,
                 headers)


def _post_data(data: Any) -> tuple[bytes, str]:
    """A HAR request's body and its content type."""
    if not isinstance(data, dict):
        return b"", ""
    content_type = str(data.get("mimeType") or "")
    text = data.get("text")
    if isinstance(text, str):
        if data.get("encoding") == "base64":
            return base64.b64decode(text), content_type
        return text.encode(), content_type
    params = data.get("params")
    if isinstance(params, list) and params:
        return urlencode([(str(p["name"]), str(p.get("value", ""))) for p in params]).encode(), content_type
    return b"", content_type
