"""The Go reference server and the slow upstream: built once, bytes as Python would produce them."""

from __future__ import annotations

import http.client
import json
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest

from pywebbench.core.procs import ManagedProcess, free_port
from pywebbench.stage.reference.gobuild import (
    SOURCE_DIR,
    GoBinaries,
    GoBuildError,
    build_go_binaries,
    find_go,
    go_env,
)
from pywebbench.services.upstream import UpstreamService

HOST = "127.0.0.1"
DELAY_S = 0.1
SIZE = 333
CPU_SIZE = 10_007  # a prime: primes *below* n must not count it


def python_sieve(n: int) -> int:
    if n < 3:
        return 0
    sieve = bytearray([1]) * n
    sieve[0] = sieve[1] = 0
    for i in range(2, int(n**0.5) + 1):
        if sieve[i]:
            sieve[i * i::i] = bytes(len(range(i * i, n, i)))
    return sum(sieve)


def get(port: int, path: str, timeout: float = 10.0) -> tuple[int, str, bytes]:
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.getheader("Content-Type", ""), resp.read()
    finally:
        conn.close()


def alive(pids: set[int]) -> list[int]:
    left = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                left.append(pid)
        except psutil.NoSuchProcess:
            pass
    return left


@pytest.fixture(scope="module")
def binaries(tmp_path_factory: pytest.TempPathFactory) -> GoBinaries:
    return build_go_binaries(tmp_path_factory.mktemp("go-cache"))


@pytest.fixture(scope="module")
def seen_pids() -> Iterator[set[int]]:
    pids: set[int] = set()
    yield pids
    time.sleep(0.1)
    assert alive(pids) == []


@pytest.fixture(scope="module")
def upstream(binaries: GoBinaries, tmp_path_factory: pytest.TempPathFactory,
             seen_pids: set[int]) -> Iterator[UpstreamService]:
    with UpstreamService(tmp_path_factory.mktemp("upstream"), binaries.upstream, DELAY_S, SIZE) as up:
        seen_pids.update(p.pid for p in up.proc.tree())
        yield up


@pytest.fixture(scope="module")
def reference(binaries: GoBinaries, upstream: UpstreamService, tmp_path_factory: pytest.TempPathFactory,
              seen_pids: set[int]) -> Iterator[int]:
    work = tmp_path_factory.mktemp("reference")
    rendered = work / "page.rendered.html"
    rendered.write_bytes("<p>caf\u00e9</p>\n".encode())
    port = free_port()
    env = {"PWB_CPU_SIZE": str(CPU_SIZE), "PWB_UPSTREAM_URL": upstream.url, "PWB_TEMPLATE_RENDERED": str(rendered)}
    argv = [str(binaries.reference), "-host", HOST, "-port", str(port)]
    with ManagedProcess(argv, env=env, log_dir=work, name="reference", grace_s=2.0) as proc:
        deadline = time.monotonic() + 10
        while True:
            assert proc.poll() is None, proc.stderr_tail()
            try:
                get(port, "/hello", timeout=1)
                break
            except OSError:
                assert time.monotonic() < deadline, "reference server never answered"
                time.sleep(0.05)
        seen_pids.update(p.pid for p in proc.tree())
        yield port


def test_build_is_cached_and_recorded(binaries: GoBinaries, tmp_path_factory: pytest.TempPathFactory) -> None:
    assert binaries.go_version.startswith("go") and binaries.pgx_version.startswith("v5.")
    again = build_go_binaries(binaries.reference.parent.parent)
    assert again.cached and again.reference == binaries.reference and again.upstream == binaries.upstream
    version = subprocess.run([str(binaries.reference), "-version"], capture_output=True, text=True, check=True)
    assert version.stdout.split() == ["pwb-reference", binaries.go_version, f"pgx/{binaries.pgx_version}"]


def test_missing_go_is_a_clear_error() -> None:
    with pytest.raises(GoBuildError, match="Go toolchain not found"):
        find_go("/nonexistent/go")


def test_go_unit_tests_pass(binaries: GoBinaries, tmp_path: Path) -> None:
    """pyjson escapes like json.dumps; CountPrimes counts like the Python sieve."""
    done = subprocess.run([binaries.go, "test", "./..."], cwd=SOURCE_DIR, env=go_env(tmp_path),
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_reference_bytes_match_python(reference: int, upstream: UpstreamService) -> None:
    assert get(reference, "/hello") == (200, "text/plain; charset=utf-8", b"Hello World!")
    expected_cpu = json.dumps({"n": CPU_SIZE, "primes": python_sieve(CPU_SIZE)}).encode()
    assert get(reference, "/cpu") == (200, "application/json", expected_cpu)
    expected_upstream = json.dumps({"data": "x" * (SIZE - len('{"data": ""}'))}).encode()
    assert len(expected_upstream) == SIZE
    assert get(reference, "/upstream") == (200, "application/json", expected_upstream)
    assert get(reference, "/template") == (200, "text/html; charset=utf-8", "<p>caf\u00e9</p>\n".encode())
    assert get(reference, "/nope")[0] == 404
    assert get(reference, "/db")[0] == 500  # no PWB_DSN: an error, never a made-up body


def test_reference_upstream_calls_overlap(reference: int) -> None:
    start = time.monotonic()
    with ThreadPoolExecutor(50) as pool:
        results = list(pool.map(lambda _: get(reference, "/upstream")[0], range(50)))
    assert results == [200] * 50
    assert time.monotonic() - start < 10 * DELAY_S


def test_upstream_honours_delay_and_size(upstream: UpstreamService) -> None:
    assert upstream.version.startswith("pwb-upstream go")
    start = time.monotonic()
    status, ctype, body = get(upstream.port, "/any/path")
    assert time.monotonic() - start >= DELAY_S
    assert (status, ctype, len(body)) == (200, "application/json", SIZE)
    start = time.monotonic()
    assert upstream.get(delay_s=0.0) == (200, body)
    assert time.monotonic() - start < DELAY_S
    start = time.monotonic()
    assert upstream.get(delay_s=0.25)[0] == 200
    assert time.monotonic() - start >= 0.25


def test_upstream_serves_concurrent_requests_in_parallel(upstream: UpstreamService) -> None:
    start = time.monotonic()
    with ThreadPoolExecutor(100) as pool:
        results = list(pool.map(lambda _: upstream.get()[0], range(100)))
    elapsed = time.monotonic() - start
    assert results == [200] * 100
    assert DELAY_S <= elapsed < 10 * DELAY_S  # serially it would take 100 x DELAY_S


def test_std_engine_serves_the_same(binaries: GoBinaries, tmp_path: Path) -> None:
    with UpstreamService(tmp_path, binaries.upstream, DELAY_S, SIZE, server="std") as up:
        pids = {p.pid for p in up.proc.tree()}
        start = time.monotonic()
        status, ctype, body = get(up.port, "/")
        assert time.monotonic() - start >= DELAY_S
        assert (status, ctype, body) == (200, "application/json", json.dumps({"data": "x" * (SIZE - 12)}).encode())
        assert up.config()["server"] == "std"
    time.sleep(0.1)
    assert alive(pids) == []


def test_upstream_ceiling_under_wrk(upstream: UpstreamService, tmp_path: Path) -> None:
    rps = upstream.measure_ceiling(1.0, 50, work_dir=tmp_path)
    ideal = 50 / DELAY_S
    assert 0.5 * ideal < rps <= 1.05 * ideal
    assert upstream.config()["ceilings"] == [
        {"delay_s": DELAY_S, "connections": 50, "duration_s": upstream.ceilings[0].duration_s, "rps": rps,
         "ideal_rps": ideal, "errors": 0},
    ]
