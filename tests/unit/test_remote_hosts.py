"""The pieces of several hosts that need no host: SSH command lines, the doctor probe, merging
generators' raw latency records, the rig's names."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from pywebbench.loadgen.merge import Histogram, latency_of, merge_histograms, merge_results, parse_histogram
from pywebbench.plan.hosts import Host, Role
from pywebbench.results.model import Latency, LoadResult, SocketErrors
from pywebbench.stage.hostcheck import probe_script
from pywebbench.stage.netns import NetnsRig, run_id
from pywebbench.stage.ssh import SshConnection, SshTarget, detached_command, remote_command


def test_remote_commands_are_quoted_and_get_an_explicit_environment() -> None:
    line = remote_command(["echo", "a b", "$HOME"], env={"X": "1 2"}, cwd="/tmp/x y")
    assert shlex.split(line) == ["cd", "/tmp/x y", "&&", "env", "-i", "X=1 2", "echo", "a b", "$HOME"]


def test_a_detached_command_reports_its_group_and_runs_in_a_new_session(tmp_path: Path) -> None:
    """Run the very line sshd would run, here: the first line is the child's own process group."""
    line = detached_command(["sh", "-c", "ps -o pgid= -o sid= -p $$"], str(tmp_path / "o"), str(tmp_path / "e"))
    held = subprocess.Popen(["sh", "-c", line], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert held.wait(timeout=10) == 0 and held.stdout is not None and held.stdin is not None
    pgid = int(held.stdout.read().strip())
    held.stdin.close()
    group, session = (int(v) for v in (tmp_path / "o").read_text().split())
    assert group == session == pgid


def test_a_detached_command_stops_its_group_when_its_stdin_ends(tmp_path: Path) -> None:
    """The harness holds the line's stdin: its death (or the connection's) ends it, and the
    child's whole group on the host is stopped, as sshd itself would not."""
    line = detached_command(["sh", "-c", "sleep 60 & exec sleep 60"], str(tmp_path / "o"), str(tmp_path / "e"))
    held = subprocess.Popen(["sh", "-c", line], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert held.stdout is not None and held.stdin is not None
    pgid = int(held.stdout.readline())
    time.sleep(0.3)
    assert held.poll() is None and len(_group(pgid)) == 2  # the child and its own child keep running
    held.stdin.close()
    assert held.wait(timeout=5) == 128 + signal.SIGTERM  # the child's status: stopped by TERM
    deadline = time.monotonic() + 3
    while _group(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _group(pgid) == []


def _group(pgid: int) -> list[int]:
    found = []
    for proc in psutil.process_iter(["status"]):
        try:
            if os.getpgid(proc.pid) == pgid and proc.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(proc.pid)
        except OSError:
            continue
    return found


def test_ssh_options_name_the_key_and_known_hosts_and_never_an_agent(tmp_path: Path) -> None:
    conn = SshConnection(SshTarget("10.0.0.2", 2222, "bench", Path("/k"), Path("/kh")), tmp_path, "h")
    argv = conn.ssh_argv("true")
    assert argv[:1] == ["ssh"] and "bench@10.0.0.2" in argv and "BatchMode=yes" in argv
    assert ["-i", "/k"] == argv[argv.index("-i"):argv.index("-i") + 2] and "IdentitiesOnly=yes" in argv
    assert "UserKnownHostsFile=/kh" in argv and "StrictHostKeyChecking=yes" in argv
    assert ["-p", "2222"] == argv[argv.index("-p"):argv.index("-p") + 2]


def test_the_probe_asks_for_each_role_s_tools_in_one_script() -> None:
    host = Host("db", "10.0.0.3", (Role.DB, Role.GENERATOR))
    script, tools = probe_script(host)
    names = [t.name for _, t in tools]
    assert names[:2] == ["python", "uv"] and {"postgres", "pgbouncer", "wrk", "oha"} <= set(names)
    assert "nginx" not in names
    uv = next(t for _, t in tools if t.name == "uv")
    assert not uv.required  # no app role: the roles' tree is built here and staged there
    _, app_tools = probe_script(Host("app", "10.0.0.4", (Role.APP,)))
    assert next(t for _, t in app_tools if t.name == "uv").required  # the app host builds environments
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=30, check=True)
    facts = dict(line.split("=", 1) for line in done.stdout.splitlines())
    assert int(facts["cpus"]) >= 1 and len([k for k in facts if k.startswith("tool")]) == len(tools)


def test_rig_names_fit_the_kernel_s_interface_limit(tmp_path: Path) -> None:
    rig = NetnsRig(("gen", "app"), tmp_path, rid=run_id(4194304))
    assert len(rig.bridge) <= 15 and len(f"pw{rig.rid}v15") <= 15
    assert rig.namespace("app").startswith("pwb-400000-")


def _result(requests: int, duration: float, p99: float) -> LoadResult:
    return LoadResult("wrk", requests, duration, SocketErrors(connect=1), 2, Latency(1.0, 0.1, 5.0, ((99.0, p99),)),
                      bytes_read=10)


def test_merged_percentiles_come_from_the_raw_records_not_from_averages() -> None:
    fast = parse_histogram([[1000, 98], [2000, 2]])  # p99 2 ms
    slow = parse_histogram([[9000, 100]])  # p99 9 ms
    merged = merge_results([_result(100, 1.0, 2.0), _result(100, 2.0, 9.0)], [fast, slow])
    assert merged.requests == 200 and merged.non_2xx == 4 and merged.socket_errors.connect == 2
    assert merged.requests / merged.duration_s == pytest.approx(100 / 1.0 + 100 / 2.0)
    # half the requests took 9 ms: the merged p99 is 9 ms, not the mean of 2 and 9
    assert merged.latency.at(99.0) == 9.0 and merged.latency.at(25.0) == 1.0 and merged.latency.at(50.0) == 9.0
    assert merged.latency.at(0.0) == 1.0 and merged.latency.max_ms == 9.0


def test_the_rank_rule_is_wrk_s() -> None:
    h = Histogram(((1, 1), (2, 1), (3, 1), (4, 1)))
    assert [h.percentile(p) for p in (10, 25, 50, 75, 99, 100)] == [1, 2, 3, 4, 4, 4]
    assert merge_histograms([h, h]).total == 8
    assert latency_of(Histogram(())).max_ms == 0.0
