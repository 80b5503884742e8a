"""Fuzzing results files: truncated, corrupted, a future schema, wrong types, hostile strings.

`report` reads files from anyone. Whatever is in one, every format renders it or refuses it
in one line (UserError, exit 2); and no stored string becomes live markup or a template.
"""

from __future__ import annotations

import copy
import json
import random
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pywebbench.core.errors import UserError
from pywebbench.report.formats import FORMATS
from pywebbench.results.model import SCHEMA_VERSION
from pywebbench.results.store import ResultsWriter, load_results, results_path
from support.results_fixture import environment, header, hello_trials, hostile_trial, services

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def good_file(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A small valid results file (a few trials of every kind of record), as bytes."""
    run_dir = tmp_path_factory.mktemp("good")
    trials = hello_trials(random.Random(3))[:4] + [hostile_trial()]
    writer = ResultsWriter(results_path(run_dir), header(planned_trials=len(trials)))
    writer.add_environment(environment())
    for service in services():
        writer.add_service(service)
    for trial in trials:
        writer.add_trial(trial)
    writer.finish("complete")
    writer.close()
    return results_path(run_dir).read_bytes()


def render_all_or_refuse(path: Path) -> dict[str, str] | None:
    """Every format's text, or None after a one-line UserError; anything else fails the test.

    A format may refuse on its own (`published` needs a preset run): also in one line.
    """
    try:
        results = load_results(path)
    except UserError as exc:
        assert_one_line(exc)
        return None
    texts = {}
    for name, render in FORMATS.items():
        try:
            texts[name] = render(results)
        except UserError as exc:
            assert_one_line(exc)
    return texts


def assert_one_line(exc: BaseException) -> None:
    message = str(exc)
    assert message and "\n" not in message, repr(message)


def write(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> Path:
    path = results_path(tmp_path_factory.mktemp("fuzz"))
    path.write_bytes(data)
    return path


def test_the_unmutated_file_renders(tmp_path_factory: pytest.TempPathFactory, good_file: bytes) -> None:
    texts = render_all_or_refuse(write(tmp_path_factory, good_file))
    assert texts is not None and set(FORMATS) - set(texts) == {"published"}  # not a preset run


@FUZZ
@given(st.data())
def test_truncated(tmp_path_factory: pytest.TempPathFactory, good_file: bytes, data: st.DataObject) -> None:
    cut = data.draw(st.integers(min_value=0, max_value=len(good_file)))
    render_all_or_refuse(write(tmp_path_factory, good_file[:cut]))


@FUZZ
@given(st.data())
def test_corrupted_bytes(tmp_path_factory: pytest.TempPathFactory, good_file: bytes, data: st.DataObject) -> None:
    blob = bytearray(good_file)
    for _ in range(data.draw(st.integers(min_value=1, max_value=8))):
        at = data.draw(st.integers(min_value=0, max_value=len(blob) - 1))
        blob[at] = data.draw(st.integers(min_value=0, max_value=255))
    render_all_or_refuse(write(tmp_path_factory, bytes(blob)))


def _records(good_file: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in good_file.decode().splitlines()]


def _dump(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in records).encode()


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path into the JSON tree, the containers' own too."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))


def _set(tree: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        tree = tree[key]
    tree[path[-1]] = value


WRONG = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(), st.text(max_size=8),
    st.sampled_from([[], {}, [1, "x"], {"a": 1}, "NaN", "ok", "1e999", -1, 0, 10**30]),
)


@FUZZ
@given(st.data())
def test_wrong_types(tmp_path_factory: pytest.TempPathFactory, good_file: bytes, data: st.DataObject) -> None:
    records = _records(good_file)
    for _ in range(data.draw(st.integers(min_value=1, max_value=3))):
        index = data.draw(st.integers(min_value=0, max_value=len(records) - 1))
        paths = [p for p in _leaves(records[index]) if p]
        path = data.draw(st.sampled_from(paths))
        # a copy: sampled_from hands out the same list or dict each time, and a shared one set
        # into itself would make a cycle (and leak into later examples)
        _set(records[index], path, copy.deepcopy(data.draw(WRONG)))
    render_all_or_refuse(write(tmp_path_factory, _dump(records)))


@FUZZ
@given(st.data())
def test_dropped_fields(tmp_path_factory: pytest.TempPathFactory, good_file: bytes, data: st.DataObject) -> None:
    records = _records(good_file)
    index = data.draw(st.integers(min_value=0, max_value=len(records) - 1))
    paths = [p for p in _leaves(records[index]) if p and isinstance(p[-1], str)]
    path = data.draw(st.sampled_from(paths))
    parent: Any = records[index]
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    render_all_or_refuse(write(tmp_path_factory, _dump(records)))


@pytest.mark.parametrize("version", [SCHEMA_VERSION + 1, 10**6, -1, 0, "4", None, 4.5, [4]])
def test_schema_versions(tmp_path_factory: pytest.TempPathFactory, good_file: bytes, version: Any) -> None:
    records = _records(good_file)
    records[0]["schema_version"] = version
    with pytest.raises(UserError) as caught:
        load_results(write(tmp_path_factory, _dump(records)))
    assert "\n" not in str(caught.value)
    if version == SCHEMA_VERSION + 1:
        assert "upgrade pywebbench" in str(caught.value)


@pytest.mark.parametrize("data", [b"", b"\n\n", b"[]\n", b"42\n{}\n", b'"run"\n', b"\xff\xfe\x00\n{}\n",
                                  b"[" * 100_000 + b"\n{}\n", b'{"record": "run"}\n'])
def test_not_results_at_all(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    assert render_all_or_refuse(write(tmp_path_factory, data)) is None


PAYLOADS = ("<script>alert(1)</script>", "{{7*7}}", "{% if 1 %}x{% endif %}", "${7*7}", "| a | b |",
            "</textarea><img src=x onerror=alert(2)>", "javascript:alert(3)", "\x1b[2J\x1b]0;title\x07",
            "[/nope]", "[link=file:///etc/passwd]x[/link]", ":warning:", "\u202egnp.exe")


def _hostile(good_file: bytes) -> list[dict[str, Any]]:
    """Every string field that still loads when it holds markup gets the payloads.

    Greedy, one field at a time: a field with a closed set of values (a status, an enum)
    refuses them in one line, as test_wrong_types checks, and keeps its value here.
    """
    records = _records(good_file)
    payload = "".join(PAYLOADS)
    for index, record in enumerate(records):
        for path in [p for p in _leaves(record) if p and p != ("record",)]:
            value: Any = records[index]
            for key in path[:-1]:
                value = value[key]
            if not isinstance(value[path[-1]], str):
                continue
            before = value[path[-1]]
            trial = copy.deepcopy(records)
            _set(trial[index], path, before + payload)
            if _loads(trial):
                records = trial
    return records


def _loads(records: list[dict[str, Any]]) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        path = results_path(Path(tmp))
        path.write_bytes(_dump(records))
        try:
            load_results(path)
        except UserError:
            return False
    return True


@pytest.fixture(scope="module")
def hostile_reports(tmp_path_factory: pytest.TempPathFactory, good_file: bytes) -> dict[str, str]:
    records = _hostile(good_file)
    stored = sum(json.dumps(r).count("alert(1)") for r in records)
    assert stored >= 20, "too few fields took the payload for the test to mean anything"
    reports = render_all_or_refuse(write(tmp_path_factory, _dump(records)))
    assert reports is not None
    return reports


def test_html_escapes_every_stored_string(tmp_path_factory: pytest.TempPathFactory, good_file: bytes,
                                          hostile_reports: dict[str, str]) -> None:
    html = hostile_reports["html"]
    clean = render_all_or_refuse(write(tmp_path_factory, good_file))
    assert clean is not None
    assert "alert(1)" in html  # the data is shown...
    assert "<script>alert(1)" not in html and "<img src=x" not in html  # ...as text, never as markup
    assert "</textarea><img" not in html
    # No template ran over the data: the expressions are shown as typed, never evaluated.
    assert "{{7*7}}" in html and "${7*7}" in html and "{% if 1 %}" in html
    # Every <script> element in the page is the report's own (no stored string opened or
    # closed one): no more than in the report of the same run without the payloads (fewer
    # when a payload in a grouping field leaves a chart out).
    for tag in ("<script", "</script", "<img", "<iframe", "<textarea"):
        assert html.lower().count(tag) <= clean["html"].lower().count(tag), tag
    assert html.lower().count("<script") == html.lower().count("</script")


def test_text_formats_show_the_strings_inert(hostile_reports: dict[str, str]) -> None:
    for name in ("terminal", "markdown", "csv", "ranking"):
        text = hostile_reports[name]
        # No terminal control sequence from the data reaches the screen (clear screen, set title).
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text, name
        # rich markup in the data is printed, not interpreted (and "[/nope]" raises nothing).
        assert "[link=file:///etc/passwd]" in text or "link=file" not in text, name
        # Shown as typed wherever shown at all: no template evaluated it.
        assert "7*7" not in text or "{{7*7}}" in text or "{{7*7" in text, name
    # Outside code spans (whose contents Markdown shows literally) no stored markup is left raw.
    markdown = re.sub(r"`[^`]*`", "", hostile_reports["markdown"])
    assert "alert(1)" in markdown
    assert "<script>alert(1)" not in markdown and "<img src=x" not in markdown
    json.loads(hostile_reports["json"])  # still valid JSON, whatever the strings
