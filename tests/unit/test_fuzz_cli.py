"""Bad input through the real command line: exit 2, one line on stderr, never a traceback.

A handful of subprocess runs (each costs an interpreter start); the many-example fuzzing of
the same parsers is in test_fuzz_inputs.py and test_fuzz_results.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pywebbench.results.model import SCHEMA_VERSION

from support.results_fixture import write_results

PYWEBBENCH = Path(sys.executable).parent / "pywebbench"


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(PYWEBBENCH), *args], capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, **(env or {})}, cwd=cwd)


def assert_refused(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and "error" in done.stderr, done.stderr


@pytest.fixture(scope="module")
def good_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_results(tmp_path_factory.mktemp("good"))


def _corrupt(tmp: Path, good_run: Path, kind: str) -> Path:
    data = (good_run / "results.jsonl").read_bytes()
    lines = data.split(b"\n")
    if kind == "future-schema":
        header = json.loads(lines[0])
        header["schema_version"] = SCHEMA_VERSION + 1
        lines[0] = json.dumps(header).encode()
    elif kind == "garbage-line":
        lines[2] = b"\x00\xff not json"
    elif kind == "wrong-type":
        trial = json.loads(lines[-3])
        trial["spec"] = "not a spec"
        lines[-3] = json.dumps(trial).encode()
    (tmp / "results.jsonl").write_bytes(b"\n".join(lines))
    return tmp


@pytest.mark.parametrize("kind", ["future-schema", "garbage-line", "wrong-type"])
def test_report_of_a_corrupt_results_file(tmp_path: Path, good_run: Path, kind: str) -> None:
    done = run_cli("report", str(_corrupt(tmp_path, good_run, kind)))
    assert_refused(done)
    if kind == "future-schema":
        assert "upgrade pywebbench" in done.stderr


def test_report_to_an_unwritable_file(good_run: Path) -> None:
    assert_refused(run_cli("report", str(good_run), "--format", "csv", "-o", "/proc/nope/report.csv"))


@pytest.mark.parametrize("args", [
    ["sweep", "--knob", "workers=1e30", "--stack", "flask:gunicorn-sync"],
    ["sweep", "--knob", "\x01=..*", "--stack", "flask:gunicorn-sync"],
    ["run", "--stack", "flask:[", "--workload", "hello"],
    ["run", "--rate", "100,nan", "--stack", "flask:gunicorn-sync"],
    ["run", "--stack-cpus", "3-1", "--stack", "flask:gunicorn-sync"],
])
def test_bad_flags(tmp_path: Path, args: list[str]) -> None:
    # --out in tmp_path: should anything be accepted by mistake, no run lands in the checkout.
    assert_refused(run_cli(*args, "--out", str(tmp_path / "out"), cwd=tmp_path))


@pytest.mark.parametrize("config", [b"\xff\xfe\x00garbage", b"[run]\nduration = nan\n"])
def test_bad_config_files(tmp_path: Path, config: bytes) -> None:
    path = tmp_path / "pwb.toml"
    path.write_bytes(config)
    assert_refused(run_cli("run", "--config", str(path), "--out", str(tmp_path / "out"), cwd=tmp_path))


@pytest.mark.parametrize("name, value", [("PYWEBBENCH_STACK_CPUS", "a-b"), ("PYWEBBENCH_BUDGET", "inf")])
def test_bad_environment_variables(tmp_path: Path, name: str, value: str) -> None:
    done = run_cli("run", "--stack", "flask:gunicorn-sync", "--out", str(tmp_path / "out"), env={name: value},
                   cwd=tmp_path)
    assert_refused(done)


def test_every_bad_flag_and_option_is_named_at_once() -> None:
    done = run_cli("run", "--stack", "flask:gunicorn-sync", "--connections", "0", "--method", "foo",
                   "--duration", "-1", "--warmup", "-2", "--profile-window", "5s")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert lines == [
        "pywebbench: error: argument --connections: must be positive, got 0",
        "pywebbench: error: argument --method: invalid choice: 'foo' (choose from interleaved, duet, restart, auto)",
        "pywebbench: error: --duration must be positive, got -1.0",
        "pywebbench: error: --warmup must be zero or positive, got -2.0",
        "pywebbench: error: --profile-window is the length of --profile's window: add --profile, or drop it",
    ], lines


def test_an_unwritable_out_is_refused_before_the_plan_is_printed() -> None:
    done = run_cli("run", "--stack", "flask:gunicorn-sync", "--duration", "1", "--out", "/proc/nope")
    assert_refused(done)
    assert "cannot write results to /proc/nope" in done.stderr and "plan:" not in done.stdout + done.stderr
