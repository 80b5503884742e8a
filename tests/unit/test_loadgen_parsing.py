from pywebbench.loadgen.ab import parse_ab
from pywebbench.loadgen.base import LoadRequest
from pywebbench.loadgen.wrk import Wrk, parse_wrk_report

WRK_JSON = {
    "duration_us": 2_000_000,
    "requests": 10_000,
    "bytes": 1_500_000,
    "errors": {"connect": 1, "read": 2, "write": 3, "status": 4, "timeout": 5},
    "latency_us": {"min": 100, "max": 90_000, "mean": 2500.5, "stdev": 800.25,
                   "percentiles": [[50, 2000], [90, 4000], [99, 9000], [99.9, 20000]]},
}

AB_CONSOLE = """
Server Software:        gunicorn
Concurrency Level:      50
Time taken for tests:   1.041 seconds
Complete requests:      1000
Failed requests:        7
   (Connect: 1, Receive: 2, Length: 3, Exceptions: 1)
Non-2xx responses:      4
Total transferred:      170000 bytes
"""
AB_CSV = "Percentage served,Time in ms\n0,1.5\n50,50.25\n90,56.0\n99,62.5\n100,64.0\n"
AB_TSV = "starttime\tseconds\tctime\tdtime\tttime\twait\n" + "".join(
    f"Sat Nov 21 15:40:28 2026\t1795275628\t0\t1\t{ms}\t1\n" for ms in range(1, 1001)
)


def test_wrk_report_becomes_a_load_result() -> None:
    result = parse_wrk_report(WRK_JSON)
    assert result.rps == 5000.0
    assert result.socket_errors.total == 11
    assert result.non_2xx == 4
    assert result.errors == 15
    assert result.latency.at(50) == 2.0
    assert result.latency.at(99.9) == 20.0
    assert result.latency.mean_ms == 2.5005


def test_wrk_command_pins_cpus_and_sizes_threads() -> None:
    request = LoadRequest(url="http://127.0.0.1:1/hello", connections=100, duration_s=2.5, cpus=(0, 1))
    argv = Wrk().command(request, script=__import__("pathlib").Path("/x.lua"))
    assert argv[:3] == ["taskset", "--cpu-list", "0,1"]
    assert argv[argv.index("--threads") + 1] == "2"
    assert argv[argv.index("--duration") + 1] == "3s"
    closing = Wrk().command(LoadRequest(url="u", connections=1, duration_s=1, keepalive=False), script=__import__("pathlib").Path("/x"))
    assert "Connection: close" in closing and closing[closing.index("--threads") + 1] == "1"


def test_ab_output_becomes_the_same_result_type() -> None:
    result = parse_ab(AB_CONSOLE, AB_CSV, AB_TSV)
    assert result.generator == "ab"
    assert result.requests == 1000
    assert round(result.rps, 1) == 960.6
    assert result.socket_errors.connect == 1 and result.socket_errors.read == 3
    assert result.non_2xx == 4
    assert result.latency.at(50) == 50.25
    assert result.latency.at(99.9) == 999.0
    assert result.latency.max_ms == 1000.0
    assert result.bytes_read == 170000
