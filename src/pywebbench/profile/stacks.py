"""Collapsed stacks: py-spy's raw output read into frame counts, and written back out as
collapsed text, speedscope JSON, or the compact form a results record holds.

py-spy's raw format is Brendan Gregg's collapsed (folded) stacks: one line per distinct stack,
its frames root first and separated by `;`, then a space and its sample count. A frame reads
`function (path:line)`, or `function (library)` for a native one (--native). With --subprocesses
each stack starts with `process PID:"command line"` frames, which are dropped here: a server's
workers are one profile (the per-process split is not what the report reads).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

_PROCESS = re.compile(r'process \d+:".*?"(?:;|$)')
_FRAME = re.compile(r"^(?P<function>.*) \((?P<path>[^()]*?)(?::(?P<line>\d+))?\)$")
_ADDRESS = re.compile(r"^0x[0-9a-f]+$")
_SITE = re.compile(r"^.*/(?:site|dist)-packages/")
_STDLIB = re.compile(r"^.*/lib/python3\.\d+t?/")
UNKNOWN = "[unknown]"
"""A native frame py-spy could not name (an address): every such frame of a library is one function."""

Stack = tuple[str, ...]
"""Frames, root first."""


@dataclass(frozen=True)
class Frame:
    function: str
    path: str
    """As py-spy printed it: a Python file, a native library, or '' when it gave none."""
    line: int | None = None

    @property
    def python(self) -> bool:
        """A frame of Python code (a .py file, or `<string>`-like code), not a native library's."""
        return self.path.endswith(".py") or self.path.startswith("<")


def parse_frame(text: str) -> Frame:
    found = _FRAME.match(text)
    if found is None:
        return Frame(text, "")
    line = found.group("line")
    return Frame(found.group("function"), found.group("path"), int(line) if line else None)


@dataclass(frozen=True)
class Stacks:
    """Sampled stacks and how many samples each had."""

    counts: tuple[tuple[Stack, int], ...]

    @property
    def total(self) -> int:
        return sum(count for _stack, count in self.counts)

    @staticmethod
    def of(counts: Mapping[Stack, int] | Iterable[tuple[Stack, int]]) -> Stacks:
        """Merged (one entry per distinct stack), in a stable order, empty stacks dropped."""
        merged: Counter[Stack] = Counter()
        for stack, count in counts.items() if isinstance(counts, Mapping) else counts:
            if stack and count > 0:
                merged[stack] += count
        return Stacks(tuple(sorted(merged.items())))


def read_collapsed(text: str) -> Stacks:
    """py-spy's raw output (or any collapsed stacks); lines that are not `stack count` are skipped."""
    counts: list[tuple[Stack, int]] = []
    for line in text.splitlines():
        stack, _, count = line.rstrip().rpartition(" ")
        if not stack or not count.isdigit():
            continue
        stack = _PROCESS.sub("", stack)
        counts.append((tuple(f for f in stack.split(";") if f), int(count)))
    return Stacks.of(counts)


def to_collapsed(stacks: Stacks) -> str:
    return "".join(f"{';'.join(stack)} {count}\n" for stack, count in stacks.counts)


def short_path(path: str, roots: Iterable[str] = ()) -> str:
    """A frame's file as a reader names it, the same in any environment or checkout: relative to
    the app's own directory (`roots`), to site-packages, or to the standard library; a native
    library by its file name."""
    for root in roots:
        if root and path.startswith(root.rstrip("/") + "/"):
            return path[len(root.rstrip("/")) + 1:]
    for pattern in (_SITE, _STDLIB):
        if pattern.match(path):
            return pattern.sub("", path, count=1)
    if path.startswith("/") and (".so" in path.rsplit("/", 1)[-1]):
        return path.rsplit("/", 1)[-1]
    return path


def function_name(text: str, roots: Iterable[str] = ()) -> str:
    """A frame as one function: `name (short path)`, its line dropped (so a function's samples
    meet, and the same function matches across two versions of an app)."""
    frame = parse_frame(text)
    function = UNKNOWN if _ADDRESS.match(frame.function) else frame.function
    return f"{function} ({short_path(frame.path, roots)})" if frame.path else function


def by_function(stacks: Stacks, roots: Iterable[str] = ()) -> Stacks:
    """The stacks with each frame as its function (see function_name)."""
    roots = tuple(roots)
    names: dict[str, str] = {}
    counts: list[tuple[Stack, int]] = []
    for stack, count in stacks.counts:
        counts.append((tuple(names.setdefault(f, function_name(f, roots)) for f in stack), count))
    return Stacks.of(counts)


def compact(stacks: Stacks) -> tuple[tuple[str, ...], tuple[tuple[tuple[int, ...], int], ...]]:
    """(frames, stacks as indices into them): what a results record holds, a fraction of the text."""
    index: dict[str, int] = {}
    indexed = tuple((tuple(index.setdefault(f, len(index)) for f in stack), count) for stack, count in stacks.counts)
    return tuple(index), indexed


def expand(frames: tuple[str, ...], indexed: Iterable[tuple[tuple[int, ...], int]]) -> Stacks:
    """A record's compact stacks back into Stacks; an index past the frames is a bad record."""
    return Stacks.of([(tuple(frames[i] for i in stack), count) for stack, count in indexed])


SPEEDSCOPE_SCHEMA = "https://www.speedscope.app/file-format-schema.json"


def to_speedscope(stacks: Stacks, name: str) -> dict[str, Any]:
    """speedscope's file format: one sampled profile, weights in samples."""
    frames, indexed = compact(stacks)
    shared = []
    for text in frames:
        frame = parse_frame(text)
        entry: dict[str, Any] = {"name": frame.function}
        if frame.path:
            entry["file"] = frame.path
        if frame.line is not None:
            entry["line"] = frame.line
        shared.append(entry)
    return {
        "$schema": SPEEDSCOPE_SCHEMA, "name": name, "exporter": "pywebbench", "activeProfileIndex": 0,
        "shared": {"frames": shared},
        "profiles": [{"type": "sampled", "name": name, "unit": "none", "startValue": 0, "endValue": stacks.total,
                      "samples": [list(stack) for stack, _ in indexed],
                      "weights": [count for _, count in indexed]}],
    }


def from_speedscope(document: Mapping[str, Any]) -> Stacks:
    """The first sampled profile of a speedscope file, as collapsed frames `name (file:line)`."""
    frames = []
    for entry in document["shared"]["frames"]:
        where = entry.get("file", "")
        if where and entry.get("line") is not None:
            where = f"{where}:{entry['line']}"
        frames.append(f"{entry['name']} ({where})" if where else str(entry["name"]))
    profile = next(p for p in document["profiles"] if p.get("type") == "sampled")
    return expand(tuple(frames), zip((tuple(s) for s in profile["samples"]), profile["weights"], strict=True))
