"""Collapsed stacks in and out: py-spy's raw text, speedscope JSON, a record's compact form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pywebbench.profile.stacks import (
    SPEEDSCOPE_SCHEMA,
    Stacks,
    by_function,
    compact,
    expand,
    from_speedscope,
    function_name,
    parse_frame,
    read_collapsed,
    short_path,
    to_collapsed,
    to_speedscope,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "profiles"
RAW = (
    'process 10:"python -m gunicorn app:wsgi";process 11:"python -m gunicorn app:wsgi";'
    "main (/v/lib/python3.11/site-packages/gunicorn/app.py:3);handle (/apps/app.py:7) 4\n"
    'process 10:"python -m gunicorn app:wsgi";process 12:"python -m gunicorn app:wsgi";'
    "main (/v/lib/python3.11/site-packages/gunicorn/app.py:3);handle (/apps/app.py:9) 2\n"
    "main (/v/lib/python3.11/site-packages/gunicorn/app.py:3);0x7f00ab (/usr/lib/x86_64-linux-gnu/libc.so.6) 1\n"
    "not a line\n"
)


def test_raw_output_drops_process_frames_and_keeps_every_sample() -> None:
    stacks = read_collapsed(RAW)
    assert stacks.total == 7
    assert all(not frame.startswith("process ") for stack, _ in stacks.counts for frame in stack)
    assert read_collapsed(to_collapsed(stacks)) == stacks


def test_frames_parse_with_and_without_a_line() -> None:
    assert parse_frame("handle (/apps/app.py:7)").line == 7
    native = parse_frame("send (/usr/lib/x86_64-linux-gnu/libc.so.6)")
    assert (native.function, native.path, native.line) == ("send", "/usr/lib/x86_64-linux-gnu/libc.so.6", None)
    assert parse_frame("<module> (<frozen runpy>:88)").path == "<frozen runpy>"


def test_functions_meet_across_lines_and_checkouts() -> None:
    by_fn = by_function(read_collapsed(RAW), roots=("/apps",))
    assert dict(by_fn.counts)[("main (gunicorn/app.py)", "handle (app.py)")] == 6
    assert ("main (gunicorn/app.py)", "[unknown] (libc.so.6)") in dict(by_fn.counts)
    # the same function in two checkouts of an app, and in two environments, is one name
    assert function_name("f (/tmp/base/app.py:3)", ("/tmp/base",)) == function_name("f (/src/head/app.py:9)",
                                                                                     ("/src/head",))
    assert short_path("/a/lib/python3.12/site-packages/x/y.py") == short_path("/b/lib/python3.11/site-packages/x/y.py")
    assert short_path("/usr/lib/python3.11/json/__init__.py") == "json/__init__.py"


def test_the_compact_form_round_trips() -> None:
    stacks = by_function(read_collapsed((DATA / "flask-gunicorn-sync.template.txt").read_text()))
    frames, indexed = compact(stacks)
    assert len(frames) == len(set(frames))
    assert expand(frames, indexed) == stacks


def test_speedscope_holds_every_sample_and_reads_back() -> None:
    stacks = read_collapsed((DATA / "flask-gunicorn-sync.cpu.txt").read_text())
    document = json.loads(json.dumps(to_speedscope(stacks, "flask:gunicorn-sync cpu")))
    assert document["$schema"] == SPEEDSCOPE_SCHEMA
    profile = document["profiles"][0]
    assert profile["type"] == "sampled" and sum(profile["weights"]) == stacks.total == profile["endValue"]
    assert len(profile["samples"]) == len(profile["weights"])
    assert max(i for sample in profile["samples"] for i in sample) < len(document["shared"]["frames"])
    assert from_speedscope(document) == stacks


@pytest.mark.parametrize("counts", [{}, {(): 3}, {("a",): 0}])
def test_empty_stacks_and_zero_counts_are_no_samples(counts: dict[tuple[str, ...], int]) -> None:
    assert Stacks.of(counts).total == 0
