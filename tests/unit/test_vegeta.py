"""vegeta: the targets file of a weighted mix, its report and results (real runs) as LoadResults;
which generator sends a window (at a rate: oha, any mix, unless vegeta was asked for; no rate:
wrk); and the same mix sent by vegeta and by oha's side-by-side processes to a real server."""

from __future__ import annotations

import json
import shutil
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from pywebbench.catalog.workloads import HttpRequest
from pywebbench.loadgen.base import LoadGenError, LoadRequest
from pywebbench.loadgen.oha import SPECTRUM, Oha
from pywebbench.loadgen.registry import ByWindow, make_generator, window_generator
from pywebbench.loadgen.vegeta import (
    Records, Vegeta, parse_vegeta, rate_flag, read_records, socket_errors, targets_text, unsendable, weighted_cycle,
)
from pywebbench.loadgen.wrk import Wrk
from pywebbench.measure import settle as settle_module
from pywebbench.plan.options import GENERATOR_NAMES, RunOptions
from pywebbench.stage import vegeta as vegeta_stage
from pywebbench.stage.tools import locate

FIXTURES = Path(__file__).with_name("fixtures") / "vegeta"
JSON_BODY = b'{"name": "x"}'
MIX = (
    HttpRequest("GET", "/a", weight=3),
    HttpRequest("POST", "/b", JSON_BODY, (("Content-Type", "application/json"), ("X-Trace", "1")), weight=1),
)


def fixture(name: str) -> tuple[dict[str, Any], Records]:
    """A real run's `vegeta report -type json` and `vegeta encode -to csv`."""
    return json.loads((FIXTURES / f"{name}.vegeta.json").read_text()), read_records(FIXTURES / f"{name}.vegeta.csv")


# -- the targets file ----------------------------------------------------------------------------

def test_a_weighted_cycle_holds_each_request_its_weight_spread_out() -> None:
    assert weighted_cycle([3, 1]) == [0, 0, 1, 0]
    assert weighted_cycle([1]) == [0]
    assert weighted_cycle([6, 2]) == [0, 0, 1, 0]  # reduced by the common divisor
    cycle = weighted_cycle([5, 3, 2])
    assert Counter(cycle) == {0: 5, 1: 3, 2: 2}
    assert all(a != b for a, b in zip(cycle, cycle[1:]) if a != 0)  # the light ones never run together
    with pytest.raises(ValueError):
        weighted_cycle([1, 0])


def test_the_targets_file_of_a_weighted_mix_has_methods_headers_and_body_files(tmp_path: Path) -> None:
    request = LoadRequest(url="http://127.0.0.1:8000/", connections=4, duration_s=1, rate=100.0, mix=MIX)
    text = Vegeta(binary="vegeta").targets(request, tmp_path / "t1.vegeta")
    body = tmp_path / "t1.vegeta.body1"
    assert body.read_bytes() == JSON_BODY and not (tmp_path / "t1.vegeta.body0").exists()
    post = f"POST http://127.0.0.1:8000/b\nContent-Type: application/json\nX-Trace: 1\n@{body}\n"
    get = "GET http://127.0.0.1:8000/a\n"
    # one cycle, each target ended by a blank line (vegeta reads the next line as a header otherwise)
    assert text == "\n".join([get, get, post, get])
    assert text.count("GET ") == 3 and text.count("POST ") == 1


def test_without_a_mix_the_target_is_the_window_s_url(tmp_path: Path) -> None:
    request = LoadRequest(url="http://127.0.0.1:8000/json?x=1", connections=1, duration_s=1, rate=10.0)
    assert Vegeta(binary="vegeta").targets(request, tmp_path / "w") == "GET http://127.0.0.1:8000/json?x=1\n"
    assert targets_text((HttpRequest("DELETE", "/i/1"),), "http://h:1", {}) == "DELETE http://h:1/i/1\n"


def test_a_header_vegeta_s_targets_cannot_carry_is_named() -> None:
    assert unsendable(MIX) is None
    assert "X-Empty" in (unsendable((HttpRequest("GET", "/", headers=(("X-Empty", ""),)),)) or "")


def test_the_attack_command_keeps_the_rate_and_caps_requests_in_flight_at_the_connections() -> None:
    request = LoadRequest(url="u", connections=8, duration_s=1.5, rate=250.0, cpus=(1,), timeout_s=2.0)
    argv = Vegeta(binary="vegeta").command(request, Path("w/t.targets"), Path("w/t.bin"))
    flag = {argv[i]: argv[i + 1] for i in range(len(argv) - 1) if argv[i].startswith("-")}
    assert argv[:4] == ["taskset", "--cpu-list", "1", "vegeta"] and argv[4] == "attack"
    assert flag["-rate"] == "250/1s" and flag["-duration"] == "1500ms" and flag["-timeout"] == "2000ms"
    assert flag["-format"] == "http" and flag["-targets"] == "w/t.targets" and flag["-output"] == "w/t.bin"
    assert flag["-workers"] == flag["-max-workers"] == flag["-max-connections"] == "8"
    assert flag["-max-body"] == "0" and "-keepalive=false" not in argv
    closed = Vegeta(binary="vegeta").command(LoadRequest(url="u", connections=3, duration_s=1, keepalive=False),
                                             Path("t"), Path("b"))
    assert closed[closed.index("-rate") + 1] == "0" and "-keepalive=false" in closed


def test_a_fractional_rate_is_a_whole_frequency_over_a_longer_period() -> None:
    assert rate_flag(200.0) == ("200/1s", 5_000_000)
    assert rate_flag(150.5) == ("150500/1000s", 6_644_518)
    with pytest.raises(Exception, match="positive"):
        rate_flag(0.0)  # vegeta reads -rate 0 as "no limit"


# -- its results ---------------------------------------------------------------------------------

def test_a_real_mix_run_becomes_a_load_result_with_both_latencies() -> None:
    report, records = fixture("mix")  # GET /a x3, POST /b, GET /missing (404) at 100/s for 0.3 s
    result = parse_vegeta(report, records, ("vegeta",), rate=100.0)
    assert result.generator == "vegeta" and result.rate == 100.0 and result.requests == 30
    assert result.non_2xx == 6 and result.socket_errors.total == 0 and result.errors == 6
    assert result.duration_s == pytest.approx((report["duration"] + report["wait"]) / 1e9)
    assert result.rps == pytest.approx(report["throughput"] * 30 / 24)  # vegeta counts 404s as failures
    assert [p for p, _ in result.latency.percentiles] == list(SPECTRUM)
    assert result.latency_uncorrected is not None
    assert result.latency_uncorrected.max_ms == pytest.approx(report["latencies"]["max"] / 1e6, abs=1e-3)
    assert result.latency_uncorrected.mean_ms == pytest.approx(report["latencies"]["mean"] / 1e6, abs=1e-3)
    # measured from the intended send time, never shorter than from the actual one
    for (_, corrected), (_, sent) in zip(result.latency.percentiles, result.latency_uncorrected.percentiles):
        assert corrected >= sent
    assert result.latency.at(50) is not None and result.latency.at(50) < 50  # the server kept up


def test_the_correction_counts_the_wait_of_requests_that_found_every_worker_busy() -> None:
    # 4 requests due at 10, 20, 30, 40 ms, 2 workers; the first two take 44 ms, so the last two
    # found both busy at their times and went out at 55 and 65 ms: 25 ms of waiting each
    ms = 1_000_000
    records = Records(sent_ns=_ints([1000 + 10 * ms, 1000 + 20 * ms, 1000 + 55 * ms, 1000 + 65 * ms]),
                      code=_ints([200] * 4), latency_ns=_ints([44 * ms, 44 * ms, 1 * ms, 1 * ms]),
                      seq=_ints([0, 1, 2, 3]), errors=())
    result = parse_vegeta({"requests": 4, "duration": 55 * ms, "wait": ms}, records, rate=100.0, workers=2)
    assert result.latency_uncorrected is not None and result.latency_uncorrected.at(0) == pytest.approx(1.0)
    assert result.latency.at(0) == pytest.approx(26.0) and result.latency.max_ms == pytest.approx(44.0)


def test_a_request_the_generator_sent_late_with_a_worker_free_is_timed_from_its_send() -> None:
    # due at 10, 20, 30, 40 ms; the last two went out 0.4 ms late while a worker was free: the
    # generator's pacing, not the server, and counting it would add 0.4 ms to every percentile
    ms = 1_000_000
    late = 400_000
    records = Records(sent_ns=_ints([10 * ms, 20 * ms, 30 * ms + late, 40 * ms + late]),
                      code=_ints([200] * 4), latency_ns=_ints([1 * ms] * 4), seq=_ints([0, 1, 2, 3]), errors=())
    timed = parse_vegeta({"requests": 4, "duration": 30 * ms, "wait": ms}, records, rate=100.0, workers=2)
    assert timed.latency.max_ms == pytest.approx(1.0)
    every = parse_vegeta({"requests": 4, "duration": 30 * ms, "wait": ms}, records, rate=100.0)
    assert every.latency.max_ms == pytest.approx(1.4)


def test_refused_connections_are_connect_errors_not_requests() -> None:
    report, records = fixture("refused")
    result = parse_vegeta(report, records, rate=100.0)
    assert result.requests == 0 and result.socket_errors.connect == 10 and result.errors == 10
    assert result.latency.percentiles == ()


def test_a_report_of_another_run_is_refused() -> None:
    report, records = fixture("mix")
    with pytest.raises(LoadGenError, match="not the same run"):
        parse_vegeta({**report, "requests": 31}, records, rate=100.0)


def test_go_s_errors_are_sorted_into_wrk_s_four_kinds() -> None:
    errors = [
        'Get "http://127.0.0.1:1/": dial tcp 0.0.0.0:0->127.0.0.1:1: connect: connection refused',
        'Get "http://h/": dial tcp 127.0.0.1:80: socket: too many open files',
        'Post "http://h/b": context deadline exceeded (Client.Timeout exceeded while awaiting headers)',
        'Get "http://h/": read tcp 127.0.0.1:5->127.0.0.1:80: read: connection reset by peer',
        'Get "http://h/": EOF',
        'Post "http://h/b": write tcp 127.0.0.1:5->127.0.0.1:80: write: broken pipe',
    ]
    kinds = socket_errors(errors)
    assert (kinds.connect, kinds.timeout, kinds.read, kinds.write) == (2, 1, 2, 1)


# -- which generator sends a window ---------------------------------------------------------------

def test_a_mix_at_a_rate_goes_to_oha_unless_vegeta_was_asked_for_and_no_rate_to_wrk() -> None:
    one = (MIX[1],)
    rated = LoadRequest(url="u", connections=1, duration_s=1, rate=100.0, mix=MIX)
    assert window_generator("oha", rated) == window_generator("wrk", rated) == "oha"
    assert window_generator("vegeta", rated) == "vegeta"
    assert window_generator("oha", LoadRequest(url="u", connections=1, duration_s=1, rate=100.0, mix=one)) == "oha"
    assert window_generator("oha", LoadRequest(url="u", connections=1, duration_s=1, rate=100.0)) == "oha"
    assert window_generator("vegeta", LoadRequest(url="u", connections=1, duration_s=1, rate=9.0, mix=one)) == "vegeta"
    assert window_generator("wrk", LoadRequest(url="u", connections=1, duration_s=1, mix=MIX)) == "wrk"
    assert window_generator("oha", LoadRequest(url="u", connections=1, duration_s=1, mix=MIX)) == "wrk"
    by_window = ByWindow("oha")
    assert isinstance(by_window.for_request(rated), Oha) and by_window.name == "oha"
    assert isinstance(ByWindow("vegeta").for_request(rated), Vegeta)
    assert isinstance(by_window.for_request(LoadRequest(url="u", connections=1, duration_s=1, rate=5.0)), Oha)
    assert isinstance(ByWindow("wrk").for_request(LoadRequest(url="u", connections=1, duration_s=1, mix=MIX)), Wrk)


def test_vegeta_is_a_generator_name_and_takes_a_rate() -> None:
    assert "vegeta" in GENERATOR_NAMES and isinstance(make_generator("vegeta"), Vegeta)
    RunOptions(generator="vegeta", rate=100.0).validate()
    with pytest.raises(Exception, match="needs --generator oha or vegeta"):
        RunOptions(generator="wrk", rate=100.0).validate()


def test_the_settle_before_a_rated_mix_runs_at_its_rate_with_the_window_s_generator(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[tuple[str, LoadRequest]] = []

    class Recorder:
        def __init__(self, name: str) -> None:
            self.name = name

        def run(self, request: LoadRequest, work_dir: Path) -> None:
            sent.append((self.name, request))

    monkeypatch.setattr(settle_module, "make_generator", Recorder)
    window = LoadRequest(url="u", connections=4, duration_s=5, rate=300.0, mix=MIX, label="t1")
    settle_module.settle_load(window, 0.25, tmp_path)
    settle_module.settle_load(LoadRequest(url="u", connections=4, duration_s=5, rate=300.0), 0.25, tmp_path)
    settle_module.settle_load(LoadRequest(url="u", connections=4, duration_s=5, rate=30.0), 0.25, tmp_path,
                              generator="vegeta")
    assert [name for name, _ in sent] == ["oha", "oha", "vegeta"]
    assert sent[0][1].rate == 300.0 and sent[0][1].mix == MIX and sent[0][1].duration_s == 0.25


def test_the_locator_finds_the_cache_s_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("PYWEBBENCH_CACHE", str(tmp_path / "cache"))
    assert locate("vegeta") is None
    built = vegeta_stage.install_dir() / "vegeta"
    built.parent.mkdir(parents=True)
    built.write_bytes(b"\x7fELF ... \nmod\tgithub.com/tsenart/vegeta/v12\tv12.13.0\th1:abc=\n")
    built.chmod(0o755)
    assert locate("vegeta") == str(built)
    assert vegeta_stage.module_version(built) == "v12.13.0"


# -- a real run (skipped without vegeta) ----------------------------------------------------------

@pytest.fixture()
def tiny_server() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def answer(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append(f"{self.command} {self.path} {self.headers.get('Content-Type')} {body.decode()}")
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        do_GET = do_POST = answer

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.skipif(locate("vegeta") is None, reason="vegeta is not installed (./scripts/install.sh)")
def test_a_real_run_sends_the_mix_in_proportion(tiny_server: tuple[str, list[str]], tmp_path: Path) -> None:
    url, seen = tiny_server
    request = LoadRequest(url=url, connections=4, duration_s=0.4, rate=100.0, mix=MIX, label="live#1")
    result = Vegeta().run(request, tmp_path)
    assert result.generator == "vegeta" and result.requests == len(seen) == 40 and result.errors == 0
    assert Counter(line.split()[1] for line in seen) == {"/a": 30, "/b": 10}
    assert all(line == f"POST /b application/json {JSON_BODY.decode()}" for line in seen if "/b" in line)
    assert Vegeta().version().startswith("vegeta v12.")
    assert shutil.which(result.command[0]) is not None and "-rate" in result.command


@pytest.mark.skipif(locate("oha") is None, reason="oha is not installed (./scripts/install.sh)")
def test_oha_sends_the_same_mix_as_one_process_per_kind_each_at_its_share(tiny_server: tuple[str, list[str]],
                                                                          tmp_path: Path) -> None:
    url, seen = tiny_server
    request = LoadRequest(url=url, connections=4, duration_s=1.0, rate=100.0, mix=MIX, label="live#1")
    result = Oha().run(request, tmp_path)
    kinds = Counter(line.split()[1] for line in seen)
    assert result.generator == "oha" and result.requests == len(seen) and result.errors == 0 and result.non_2xx == 0
    assert 70 <= kinds["/a"] <= 76 and 23 <= kinds["/b"] <= 26, kinds  # 75 and 25 a second, give or take the edges
    assert all(line == f"POST /b application/json {JSON_BODY.decode()}" for line in seen if "/b" in line)
    assert result.rate == 100.0 and result.latency_uncorrected is not None and result.command.count(";") == 1
    assert sorted(float(result.command[i + 1]) for i, w in enumerate(result.command) if w == "-q") == [25.0, 75.0]


def _ints(values: list[int]) -> Any:
    import numpy as np
    return np.array(values, dtype=np.int64)


def test_the_install_script_builds_the_version_the_harness_looks_for() -> None:
    script = (Path(__file__).resolve().parents[2] / "scripts" / "install.sh").read_text()
    assert f"VEGETA_VERSION={vegeta_stage.VERSION}\n" in script and vegeta_stage.MODULE in script
