"""The mix read from a log, as printed before a run: a table (kind, weight, share, count) no wider
than 100 columns, the kinds left out as one row, stored text made inert, then the summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from pywebbench.plan.traffic_import import derive_mix
from pywebbench.report.mix_table import mix_table_lines


def clf(target: str, method: str = "GET") -> str:
    return f'192.0.2.1 - - [10/Oct/2000:13:55:36 +0000] "{method} {target} HTTP/1.1" 200 5 "-" "ua"'


def test_the_table_lists_each_kind_then_the_rest_then_the_summary(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    log = Path("access.log")
    log.write_text("\n".join([clf("/notes/1")] * 3 + [clf("/notes?limit=20")] * 2 + [clf("/health"), clf("/other")])
                   + "\n")
    lines = mix_table_lines(derive_mix(log, max_kinds=2))
    assert lines == [
        "kind                       weight  share  count",
        "GET /notes/{id}               600  42.9%      3",
        "GET /notes?limit=20           400  28.6%      2",
        "(2 other kinds, left out)       -  28.6%      2",
        "read access.log (combined): 7 lines, 7 requests",
        "malformed: none",
        "failed requests (status 400 and up) left out: 0",
        "mix: 2 kinds; the other 2 (28.6% of the requests) left out by --max-kinds 2",
        "credentials left out: none found",
        "times: 1 s of requests, 5/s on average, 5 in the busiest second",
    ]


def test_long_kinds_end_in_an_ellipsis_and_control_characters_are_escaped(tmp_path: Path) -> None:
    long_path = "/" + "/".join(f"segment-{i}" for i in range(40))
    log = tmp_path / "access.jsonl"
    log.write_text(f'{{"method": "GET", "path": "{long_path}", "status": 200}}\n'
                   '{"method": "GET", "path": "/x\\u001b[31m", "status": 200}\n')
    lines = mix_table_lines(derive_mix(log))
    assert all(len(line) <= 100 for line in lines)
    row = next(line for line in lines if line.startswith("GET /segment-0"))
    assert "…" in row and row.endswith("500  50.0%      1")
    assert any(line.startswith("GET /x\\x1b[31m ") for line in lines)
    assert not any("\x1b" in line for line in lines)


def test_a_long_summary_line_wraps_instead_of_being_cut(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*(["a-long-directory-name"] * 6))
    deep.mkdir(parents=True)
    log = deep / "access.log"
    log.write_text(clf("/a") + "\n")
    lines = mix_table_lines(derive_mix(log), width=60)
    assert all(len(line) <= 60 for line in lines)
    start = next(i for i, line in enumerate(lines) if line.startswith("read "))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("  "))
    assert end - start > 2  # nothing lost, only wrapped
    assert "".join(lines[start:end]).replace(" ", "") == f"read {log} (combined): 1 line, 1 request".replace(" ", "")
