"""`pywebbench run` across hosts, through the CLI: the netns rig made by the run, real SSH, real delays.

Needs root, `ip` and openssh-server (scripts/install.sh installs it) for the rig; the refusals
run anywhere.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from pywebbench.results.store import load_results, results_path
from pywebbench.stage.netns import SSHD, namespace_pids, namespaces

REPO = Path(__file__).resolve().parents[2]
PYWEBBENCH = [sys.executable, "-m", "pywebbench"]
RIG = pytest.mark.skipif(os.geteuid() != 0 or not os.access(SSHD, os.X_OK),
                         reason="the netns rig needs root and openssh-server")
SHORT = ["--stack", "flask:gunicorn-sync", "--workload", "db", "--duration", "1", "--settle", "0.25",
         "--db-rows", "1000", "--db-delay", "0", "--db-pool", "1", "--connections", "2"]


def _ours(pid: int) -> list[str]:
    """The namespaces of the run whose harness had this pid (the rig names them by it, in hex)."""
    return [ns for ns in namespaces() if ns.startswith(f"pwb-{pid:x}-")]


@RIG
def test_rtt_sweep_on_the_netns_rig_moves_p50_by_the_measured_round_trips(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = subprocess.Popen([*PYWEBBENCH, "run", "--topology", "netns", *SHORT, "--knob", "rtt=0,2ms",
                             "--repeats", "2", "--rounds-per-launch", "2", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, process_group=0)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr[-2000:]
    assert _ours(proc.pid) == []  # the rig is gone
    results = load_results(out)
    placed = next(s for s in results.services if s.name == "placement")
    assert placed.version == "netns"
    assert placed.config["roles"] == {"generator": ["gen"], "app": ["app"], "db": ["db"]}
    for host in ("gen", "app", "db"):
        machine = placed.config["hosts"][host]
        assert machine["address"].startswith("10.231.") and machine["cpus"] >= 1 and machine["kernel"]
    assert "toxiproxy" in placed.config["delay_mechanism"]
    rtt: dict[tuple[str, float], float] = {}
    fastest: dict[tuple[str, float], float] = {}
    for record in results.services:
        if record.name.startswith("link "):
            point = (record.name[5:], record.config["rtt_set_ms"])
            rtt[point], fastest[point] = record.config["rtt_measured_ms"], record.config["rtt_min_ms"]
            assert record.config["proxy_cpu_s"] is not None
    links = ("app-db", "gen-app")
    # The delay is there, and measured: the median moves by at least most of it; the fastest
    # round trip, which a loaded 2-core host does not inflate, moves by about it (a loaded CI
    # host once read 1.5 ms then 5.0 ms as gen-app's medians).
    assert all(rtt[(link, 2.0)] - rtt[(link, 0.0)] > 1.5 for link in links), rtt
    added = {link: fastest[(link, 2.0)] - fastest[(link, 0.0)] for link in links}
    assert all(1.5 < a < 3.5 for a in added.values()), fastest
    p50 = {}
    for value in (0.0, 0.002):
        trials = [t for t in results.trials if t.spec.rtt_s == value]
        assert len(trials) == 2 and all(t.valid and t.load is not None for t in trials)
        for t in trials:  # read on its host, from /proc for the server's process group
            app = t.usage("app")
            assert t.cpu_source == "proc over ssh" and app is not None and app.cpu_s > 0 and app.processes >= 2
        p50[value] = statistics.median(dict(t.load.latency.percentiles)[50.0] for t in trials if t.load)
    moved = p50[0.002] - p50[0.0]
    # a /db request crosses each link once (one pooled connection per worker): about the sum
    assert 0.6 * sum(added.values()) < moved < 1.6 * sum(added.values()), (p50, rtt)
    assert "Hosts (netns):" in stdout and "measured RTT at rtt=2ms" in stdout


@RIG
def test_ctrl_c_through_the_cli_leaves_no_process_and_no_namespace(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = subprocess.Popen([*PYWEBBENCH, "run", "--topology", "netns", *SHORT, "--rtt", "1ms",
                             "--repeats", "50", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, process_group=0)
    inside: set[int] = set()
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            for ns in _ours(proc.pid):
                inside |= set(namespace_pids(ns))
            path = results_path(out)
            if path.exists() and '"record": "trial"' in path.read_text():
                break
            time.sleep(0.3)
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        for ns in _ours(proc.pid):  # mid-window: the server, wrk, PostgreSQL and the proxies are up
            inside |= set(namespace_pids(ns))
        assert len(inside) >= 6
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, stderr[-2000:]
    assert _ours(proc.pid) == []
    assert [pid for pid in inside if _running(pid)] == []
    assert results_path(out).exists()


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@pytest.mark.parametrize(("flags", "says"), [
    (["--rtt", "2ms"], "on a single host there are none"),
    (["--knob", "rtt=0,2ms"], "on a single host there are none"),
    (["--hosts", "hosts.toml", "--topology", "netns"], "takes --topology direct or nginx"),
    (["--topology", "netns", "--generator", "oha"], "--generator oha is not supported"),
    (["--topology", "netns", "--method", "duet"], "duet is not supported on several hosts"),
])
def test_bad_combinations_are_refused_in_one_line(flags: list[str], says: str, tmp_path: Path) -> None:
    done = subprocess.run([*PYWEBBENCH, "run", "--stack", "flask:gunicorn-sync", *flags, "--out", str(tmp_path / "r")],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
    assert not (tmp_path / "r").exists()


@RIG
def test_run_with_an_inventory_merges_two_generator_hosts(tmp_path: Path) -> None:
    """--hosts over the rig's sshds (made here, as another machine's would be): two generator hosts
    on every window, their requests summed and their percentiles from the merged raw records."""
    from pywebbench.stage.envs import uv_binary
    from pywebbench.stage.netns import NetnsRig

    with NetnsRig(("gen1", "gen2", "app", "db"), tmp_path / "made") as rig:
        inventory = tmp_path / "hosts.toml"
        roles = {"gen1": ("generator",), "gen2": ("generator",), "app": ("app",), "db": ("db",)}
        inventory.write_text(rig.inventory_toml(roles, uv=uv_binary()))
        out = tmp_path / "run"
        done = subprocess.run([*PYWEBBENCH, "run", "--hosts", str(inventory), *SHORT, "--repeats", "1",
                               "--out", str(out)], capture_output=True, text=True, cwd=REPO, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        results = load_results(out)
        placed = next(s for s in results.services if s.name == "placement")
        assert placed.version == "hosts" and placed.config["roles"]["generator"] == ["gen1", "gen2"]
        (trial,) = results.trials
        assert trial.valid and trial.load is not None and trial.load.requests > 20
        parts = sorted((out / "generators").glob(f"*/{trial.spec.trial_id}-*.wrk.json"))
        assert len(parts) == 2  # one report from each generator host
        import json
        counts = [json.loads(p.read_text().splitlines()[0])["requests"] for p in parts]
        assert trial.load.requests == sum(counts)


@RIG
def test_upstream_role_on_its_own_host_answers_through_a_measured_link(tmp_path: Path) -> None:
    """--hosts with the upstream role on its own namespace: the Go upstream starts there over SSH,
    the app reaches it through the app -> upstream link, whose delay is set and measured."""
    from pywebbench.stage.envs import uv_binary
    from pywebbench.stage.netns import NetnsRig

    with NetnsRig(("gen", "app", "up"), tmp_path / "made") as rig:
        inventory = tmp_path / "hosts.toml"
        inventory.write_text(rig.inventory_toml({"gen": ("generator",), "app": ("app",), "up": ("upstream",)}, uv=uv_binary()))
        out = tmp_path / "run"
        done = subprocess.run([*PYWEBBENCH, "run", "--hosts", str(inventory), "--stack", "flask:gunicorn-sync",
                               "--workload", "upstream", "--knob", "upstream_delay=0.005,0.02", "--duration", "1",
                               "--settle", "0.25", "--connections", "2", "--rtt", "2ms", "--repeats", "1",
                               "--out", str(out)], capture_output=True, text=True, cwd=REPO, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        inside = [pid for pid in namespace_pids(rig.namespace("up")) if _running(pid)]
    results = load_results(out)
    placed = next(s for s in results.services if s.name == "placement")
    assert placed.config["roles"]["upstream"] == ["up"] and placed.config["roles"]["app"] == ["app"]
    p50: dict[float | None, float] = {}
    for trial in results.trials:  # one per point of the upstream_delay sweep, the upstream restarted on its host
        assert trial.valid and trial.load is not None and trial.load.requests > 20 and trial.load.errors == 0
        p50[trial.spec.upstream_delay_s] = dict(trial.load.latency.percentiles)[50.0]
    assert set(p50) == {0.005, 0.02} and p50[0.02] - p50[0.005] > 10.0, p50  # ms: the 15 ms more is there
    links = {r.config["link"]: r.config for r in results.services if r.name == "link app-upstream"}
    (link,) = links.values()
    assert link["measured_from"] == "app" and link["rtt_set_ms"] == 2.0
    assert 1.5 < link["rtt_measured_ms"] < 4.0, link  # the delay is there, and measured
    remote = [s.config for s in results.services if s.name == "upstream (placed)"]
    assert {c["host"] for c in remote} == {"up"} and {0.005, 0.02} <= {c["delay_s"] for c in remote}, remote
    assert len({c["url"] for c in remote}) == 1  # the link kept its address: the app's URL did not change
    assert len(inside) <= 1  # after the run, at most the rig's own sshd is left in the upstream's namespace


def test_an_inventory_placing_the_proxy_role_without_the_nginx_topology_is_refused_in_one_line(
        tmp_path: Path) -> None:
    """nginx placed but the run loads the app directly: refused before anything starts, never ignored."""
    inventory = tmp_path / "hosts.toml"
    inventory.write_text('[hosts.app]\naddress = "10.0.0.3"\nroles = ["app", "generator"]\n'
                         '[hosts.edge]\naddress = "10.0.0.4"\nroles = ["proxy"]\n')
    done = subprocess.run([*PYWEBBENCH, "run", "--hosts", str(inventory), "--stack", "flask:gunicorn-sync",
                           "--out", str(tmp_path / "r")], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "places the proxy role (nginx) on 'edge'" in done.stderr and "--topology nginx" in done.stderr
    assert not (tmp_path / "r").exists()
