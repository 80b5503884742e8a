"""oha's JSON summary and SQLite request log, captured from real runs, become LoadResults."""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pywebbench.core.errors import UserError
from pywebbench.loadgen import oha as oha_module
from pywebbench.stage import tools
from pywebbench.loadgen.base import LoadGenError, LoadRequest
from pywebbench.loadgen.oha import SPECTRUM, Oha, RequestLog, oha_binary, parse_oha, read_oha_db, socket_errors
from pywebbench.loadgen.registry import make_generator
from pywebbench.results.model import LoadResult

FIXTURES = Path(__file__).with_name("fixtures") / "oha"
LUA = Path(oha_module.__file__).with_name("wrk_report.lua")


def fixture(name: str, tmp_path: Path) -> tuple[dict[str, Any], RequestLog]:
    """The run's JSON, and its request log restored to a real SQLite file and read back."""
    db = tmp_path / f"{name}.db"
    db.unlink(missing_ok=True)
    with sqlite3.connect(db) as conn:
        conn.executescript((FIXTURES / f"{name}.sql").read_text())
    conn.close()
    return json.loads((FIXTURES / f"{name}.json").read_text()), read_oha_db(db)


def parsed(name: str, tmp_path: Path, rate: float | None = None) -> LoadResult:
    report, log = fixture(name, tmp_path)
    return parse_oha(report, log, ("oha",), rate)


def test_open_loop_run_keeps_corrected_and_uncorrected_latency(tmp_path: Path) -> None:
    result = parsed("open_loop", tmp_path, rate=300.0)
    assert result.generator == "oha" and result.rate == 300.0
    assert result.requests == 300
    assert result.duration_s == 1.003497271
    assert round(result.rps, 3) == 298.954
    assert result.errors == 0 and result.bytes_read == 3600
    # Timed from the schedule: the 0.3 s freeze shows from the 90th percentile up.
    assert result.latency.at(0) == 0.215
    assert result.latency.at(50) == 1.328
    assert result.latency.at(90) == 233.354
    assert result.latency.at(99) == 305.903
    assert result.latency.max_ms == result.latency.at(100) == 313.887
    # Timed from the actual send, the same requests hide it up to p99.
    uncorrected = result.latency_uncorrected
    assert uncorrected is not None
    assert uncorrected.at(50) == 0.828
    assert uncorrected.at(90) == 1.561
    assert uncorrected.at(99) == 8.037
    assert uncorrected.max_ms == 311.199
    assert uncorrected.mean_ms == pytest.approx(3.05836624)


def test_corrected_latency_agrees_with_ohas_own_summary(tmp_path: Path) -> None:
    report, log = fixture("open_loop", tmp_path)
    result = parse_oha(report, log, (), 300.0)
    assert result.latency.mean_ms == pytest.approx(report["summary"]["average"] * 1000)
    assert result.latency.max_ms == pytest.approx(report["summary"]["slowest"] * 1000, abs=1e-3)
    assert result.latency.at(0) == pytest.approx(report["summary"]["fastest"] * 1000, abs=1e-3)
    assert result.latency.stdev_ms == pytest.approx(95.28681629)


def test_spectrum_is_the_one_wrk_reports(tmp_path: Path) -> None:
    lua_points = re.search(r"local spectrum = \{([^}]*)\}", LUA.read_text())
    assert lua_points is not None
    assert SPECTRUM == tuple(float(p) for p in lua_points.group(1).replace("\n", " ").split(","))
    result = parsed("closed_loop", tmp_path)
    assert tuple(p for p, _ in result.latency.percentiles) == SPECTRUM


def test_closed_loop_run_has_one_latency(tmp_path: Path) -> None:
    result = parsed("closed_loop", tmp_path)
    assert result.rate is None and result.latency_uncorrected is None
    assert result.requests == 200 and result.duration_s == 0.075910658
    assert result.latency.at(50) == 0.517
    assert result.latency.at(99) == 2.256
    assert result.latency.at(99.9) == result.latency.max_ms == 9.489
    assert result.latency.mean_ms == pytest.approx(0.67962382)


def test_timeouts_count_and_deadline_aborts_do_not(tmp_path: Path) -> None:
    result = parsed("timeouts", tmp_path, rate=100.0)
    report, _ = fixture("timeouts", tmp_path)
    assert report["errorDistribution"] == {"aborted due to deadline": 1, "timeout": 9}
    assert result.requests == 91
    assert result.socket_errors.timeout == 9 and result.socket_errors.total == 9
    assert result.errors == 9
    assert result.latency.at(99) == 226.037
    assert result.latency_uncorrected is not None and result.latency_uncorrected.at(99) == 83.322


def test_status_codes_other_than_2xx_are_non_2xx(tmp_path: Path) -> None:
    result = parsed("not_found", tmp_path)
    assert result.requests == 50 and result.non_2xx == 50 and result.socket_errors.total == 0
    assert result.bytes_read == 16750


def test_refused_connections_are_connect_errors_and_leave_no_latency(tmp_path: Path) -> None:
    result = parsed("refused", tmp_path)
    assert result.requests == 0 and result.rps == 0.0
    assert result.socket_errors.connect == 20 and result.errors == 20
    assert result.latency.percentiles == () and result.latency.at(50) is None


@pytest.mark.parametrize(("message", "kind"), [
    ("Connection refused (os error 111)", "connect"),
    ("Too many open files (os error 24)", "connect"),
    ("No record returned from DNS", "connect"),
    ("timeout", "timeout"),
    ("connection closed before message completed", "read"),
    ("connection error", "read"),
    ("invalid HTTP status-code parsed", "read"),
    ("error writing a body to connection", "write"),
])
def test_error_messages_sort_into_socket_error_kinds(message: str, kind: str) -> None:
    errors = socket_errors({message: 3, "aborted due to deadline": 5})
    assert getattr(errors, kind) == 3 and errors.total == 3


def test_a_log_from_another_run_is_refused(tmp_path: Path) -> None:
    report, log = fixture("closed_loop", tmp_path)
    shorter = RequestLog(log.sent_s[:-1], log.intended_s[:-1], log.end_s[:-1])
    with pytest.raises(LoadGenError, match="not the same run"):
        parse_oha(report, shorter)
    with pytest.raises(LoadGenError, match="latency-correction"):
        parse_oha(report, log, rate=100.0)


def test_open_loop_command_asks_for_latency_correction() -> None:
    request = LoadRequest(url="http://127.0.0.1:1/hello", connections=50, duration_s=2.5, cpus=(1,), rate=2000.0)
    argv = Oha(binary="/x/oha").command(request, Path("r.json"), Path("r.db"))
    assert argv[:4] == ["taskset", "--cpu-list", "1", "/x/oha"]
    assert argv[argv.index("-q") + 1] == "2000.0" and "--latency-correction" in argv
    assert argv[argv.index("-z") + 1] == "2500ms" and "-n" not in argv
    assert argv[argv.index("-c") + 1] == "50"
    assert argv[argv.index("-t") + 1] == "5000ms"
    assert argv[argv.index("--worker-threads") + 1] == "1"
    assert argv[argv.index("--db-url") + 1] == "r.db" and argv[argv.index("--output") + 1] == "r.json"
    assert argv[-1] == "http://127.0.0.1:1/hello" and "--disable-keepalive" not in argv


def test_closed_loop_command_runs_to_a_count_without_keepalive() -> None:
    request = LoadRequest(url="u", connections=4, duration_s=1, requests=500, keepalive=False)
    argv = Oha(binary="oha").command(request, Path("r.json"), Path("r.db"))
    assert argv[0] == "oha"
    assert argv[argv.index("-n") + 1] == "500" and "-z" not in argv
    assert "-q" not in argv and "--latency-correction" not in argv
    assert "--disable-keepalive" in argv


def test_a_rate_of_zero_is_refused_not_run_unlimited() -> None:
    with pytest.raises(UserError, match="positive"):
        Oha(binary="oha").command(LoadRequest(url="u", connections=1, duration_s=1, rate=0.0), Path("r"), Path("d"))


def test_binary_is_found_in_cargos_home_and_the_repo_tools_before_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PYWEBBENCH_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(tools, "REPO_ROOT", tmp_path / "repo")
    assert oha_binary() is None
    for where in (tmp_path / "home" / ".cargo" / "bin", tmp_path / "repo" / ".tools" / "cargo" / "bin"):
        where.mkdir(parents=True)
        (where / "oha").write_text("#!/bin/sh\n")
        (where / "oha").chmod(0o755)
        assert oha_binary() == str(where / "oha")


def test_registry_names_oha() -> None:
    assert isinstance(make_generator("oha"), Oha)


def test_one_request_of_a_persons_app_is_sent_with_its_method_headers_and_body() -> None:
    from pywebbench.catalog.workloads import HttpRequest
    one = HttpRequest("POST", "/items", b'{"a": 1}', (("Content-Type", "application/json"),))
    request = LoadRequest(url="http://127.0.0.1:1/items", connections=4, duration_s=1, rate=100.0, mix=(one,))
    argv = Oha(binary="oha").command(request, Path("w/t1.oha.json"), Path("w/t1.oha.db"))
    assert argv[argv.index("-m") + 1] == "POST" and argv[argv.index("-H") + 1] == "Content-Type: application/json"
    assert argv[argv.index("-D") + 1] == "w/t1.oha.body" and argv[-1] == "http://127.0.0.1:1/items"
    get = LoadRequest(url="u", connections=1, duration_s=1, mix=(HttpRequest("GET", "/"),))
    assert "-D" not in Oha(binary="oha").command(get, Path("r.json"), Path("r.db"))


def test_one_oha_process_refuses_a_mix_that_differs_in_more_than_path_not_sent_as_its_first_request() -> None:
    from pywebbench.catalog.workloads import HttpRequest
    mix = (HttpRequest("GET", "/a", weight=3), HttpRequest("POST", "/b", b"{}"))
    with pytest.raises(ValueError, match="cannot send 2 requests that differ in more than their path"):
        Oha(binary="oha").command(LoadRequest(url="u", connections=1, duration_s=1, mix=mix), Path("r"), Path("d"))


def test_a_mix_at_a_rate_is_split_into_one_request_per_kind_at_its_weights_share() -> None:
    from pywebbench.catalog.workloads import HttpRequest
    from pywebbench.loadgen.oha import request_shapes
    json_header = (("Content-Type", "application/json"),)
    mix = (HttpRequest("GET", "/a", weight=3), HttpRequest("POST", "/b", b"{}", json_header, weight=1),
           HttpRequest("GET", "/c?q=1", weight=3), HttpRequest("GET", "/d", headers=(("X-K", "1"),), weight=1))
    request = LoadRequest(url="http://127.0.0.1:9/a", connections=10, duration_s=2, rate=800.0, mix=mix, label="t#1")
    gets, post, keyed = request_shapes(request)
    assert [r.path for r in gets.mix] == ["/a", "/c?q=1"] and gets.rate == 600.0 and gets.connections == 8
    assert post.mix == (mix[1],) and post.rate == 100.0 and post.connections == 1 and post.url == "http://127.0.0.1:9/b"
    assert keyed.url == "http://127.0.0.1:9/d" and keyed.rate == 100.0 and keyed.connections == 1
    assert [r.label for r in (gets, post, keyed)] == ["t#1.shape0", "t#1.shape1", "t#1.shape2"]
    assert sum(r.rate or 0 for r in (gets, post, keyed)) == 800.0  # the offered rate, whole
    argv = Oha(binary="oha").command(post, Path("w/p.oha.json"), Path("w/p.oha.db"))
    assert argv[argv.index("-q") + 1] == "100.0" and argv[argv.index("-m") + 1] == "POST"
    assert argv[-1] == "http://127.0.0.1:9/b" and "--urls-from-file" not in argv
    one_kind = replace(request, mix=(mix[0], mix[2]))
    assert request_shapes(one_kind) == (one_kind,)
    with pytest.raises(UserError, match="only at an offered rate"):
        request_shapes(replace(request, rate=None))  # closed loop the shares would follow each kind's speed


def test_the_side_by_side_processes_make_one_result(tmp_path: Path) -> None:
    from pywebbench.loadgen.oha import merge_summaries
    report, log = fixture("open_loop", tmp_path)
    merged = parse_oha(merge_summaries([report, report]), RequestLog.joined([log, log]), ("oha",), 600.0)
    alone = parsed("open_loop", tmp_path, rate=300.0)
    assert merged.requests == 2 * alone.requests and merged.duration_s == alone.duration_s
    assert merged.rps == pytest.approx(2 * alone.rps) and merged.bytes_read == 2 * alone.bytes_read
    assert merged.latency.percentiles == alone.latency.percentiles  # the same requests twice
    assert merge_summaries([report]) == report and RequestLog.joined([log]) is log


def test_a_mix_of_paths_goes_to_oha_as_a_url_file_each_path_its_weights_times() -> None:
    from pywebbench.catalog.workloads import HttpRequest
    from pywebbench.loadgen.oha import urls_text
    mix = (HttpRequest("GET", "/a?x=1", weight=6), HttpRequest("GET", "/b", weight=2),
           HttpRequest("GET", "/c", weight=2))
    request = LoadRequest(url="http://127.0.0.1:9/a?x=1", connections=4, duration_s=1, rate=50.0, mix=mix)
    argv = Oha(binary="oha").command(request, Path("w/t1.oha.json"), Path("w/t1.oha.db"))
    assert argv[-2:] == ["--urls-from-file", "w/t1.oha.urls"] and "http://127.0.0.1:9/a?x=1" not in argv
    assert argv[argv.index("-m") + 1] == "GET"
    lines = urls_text(request).splitlines()
    assert sorted(lines) == ["http://127.0.0.1:9/a?x=1"] * 3 + ["http://127.0.0.1:9/b", "http://127.0.0.1:9/c"]
