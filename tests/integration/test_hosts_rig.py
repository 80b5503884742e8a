"""Several hosts for real on one machine: the netns rig, its sshds, and the SSH path end to end.

Needs root, `ip` and openssh-server (scripts/install.sh installs it); skipped otherwise.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from pywebbench.catalog.registry import BASELINE_STACK, build_catalog
from pywebbench.loadgen.base import LoadRequest
from pywebbench.loadgen.merge import merge_histograms
from pywebbench.loadgen.remote import RemoteWrk, run_together
from pywebbench.catalog.servers import APPS_DIR
from pywebbench.measure.remote import RemoteLauncher
from pywebbench.plan.sessions import Session
from pywebbench.stage.envs import EnvironmentBuilder, EnvSpec, uv_binary
from pywebbench.stage.netns import SSHD, NetnsRig, namespace_pids, namespaces, sweep_leftovers
from pywebbench.services.links import HTTP_PROBE, PG_SSL_REQUEST, LinkProxies, measure_rtt
from pywebbench.services.remote_db import RemoteDb
from pywebbench.stage.ssh import SshConnection
from pywebbench.stage.staging import HostStage
from pywebbench.stage.toxiproxy import build_toxiproxy

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.access(SSHD, os.X_OK),
                                reason="the netns rig needs root and openssh-server")

REPO = Path(__file__).resolve().parents[2]
PYWEBBENCH = [sys.executable, "-m", "pywebbench"]


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsRig]:
    with NetnsRig(("gen1", "gen2", "app", "db"), tmp_path_factory.mktemp("rig")) as made:
        yield made


@pytest.fixture(scope="module")
def control() -> Iterator[Path]:
    import tempfile
    with tempfile.TemporaryDirectory(prefix="pwb-ssh-") as path:  # socket paths are short
        yield Path(path)


def _doctor(inventory: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PYWEBBENCH, "doctor", "--hosts", str(inventory)], capture_output=True, text=True,
                          timeout=120, cwd=REPO)


def test_doctor_over_ssh_sees_each_host_and_refuses_one_without_uv(rig: NetnsRig, tmp_path: Path) -> None:
    roles = {"gen1": ("generator",), "gen2": ("generator",), "app": ("app",), "db": ("db",)}
    inventory = rig.inventory_toml(roles)
    good = tmp_path / "good.toml"
    good.write_text(rig.inventory_toml(roles, uv=uv_binary()))  # uv on the app host only: the others need none
    done = _doctor(good)
    assert done.returncode == 0, done.stderr
    for name, host in rig.hosts.items():
        assert f"{host.address}:22" in done.stdout
    assert "pgbouncer" in done.stdout and "wrk" in done.stdout
    # the rig's login PATH has no uv (it lives in the project's .venv): the app host without uv
    # is refused; the others need none (their roles' tree is built here and staged)
    bare = tmp_path / "bare.toml"
    bare.write_text(inventory)
    done = _doctor(bare)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "host 'app' has no uv" in done.stderr, done.stderr


def test_unreachable_host_and_bad_inventory_fail_in_one_line(rig: NetnsRig, tmp_path: Path) -> None:
    inventory = tmp_path / "hosts.toml"
    # the bridge's own address: a rig address where no sshd listens
    inventory.write_text(f'[hosts.ghost]\naddress = "{rig.subnet}.1"\nuser = "root"\nkey = "{rig.client_key}"\n'
                         f'known_hosts = "{rig.known_hosts}"\nroles = ["generator", "app"]\n')
    started = time.monotonic()
    done = _doctor(inventory)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "cannot reach" in done.stderr, done.stderr
    assert time.monotonic() - started < 30
    # a key the host does not know: failed authentication, one line
    other = tmp_path / "other_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    host = rig.hosts["app"]
    inventory.write_text(f'[hosts.app]\naddress = "{host.address}"\nuser = "root"\nkey = "{other}"\n'
                         f'known_hosts = "{rig.known_hosts}"\nroles = ["generator", "app"]\n')
    done = _doctor(inventory)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "denied" in done.stderr, done.stderr
    inventory.write_text("[hosts.a\n")
    done = _doctor(inventory)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "does not parse" in done.stderr
    inventory.write_text(f'[hosts.a]\naddress = "{host.address}"\nroles = ["generator"]\n')
    done = _doctor(inventory)
    assert done.returncode == 2 and "no host takes the app role" in done.stderr


def _baseline_env() -> tuple[Session, Path]:
    stack = next(s for s in build_catalog().stacks if s.id == BASELINE_STACK)
    env = EnvironmentBuilder().ensure(EnvSpec(stack.requirements, stack.overrides, sys.executable))
    session = Session(stack=stack, round=0, workers=2, threads=1, trials=(), workloads=())
    return session, env.path


def _leftovers(rig: NetnsRig, host: str) -> list[str]:
    """Processes in the host's namespace other than its sshd listener."""
    sshd = {p.pid for p in rig._sshds}  # noqa: SLF001 - the rig's own listener processes
    found = []
    for pid in namespace_pids(rig.hosts[host].namespace):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if pid not in sshd and "sshd -D" not in cmd and "sshd:" not in cmd:
            found.append(f"{pid} {cmd}")
    return found


def test_app_server_over_ssh_loaded_by_wrk_on_two_generator_hosts(rig: NetnsRig, control: Path,
                                                                   tmp_path: Path) -> None:
    session, env_path = _baseline_env()
    app = rig.hosts["app"]
    with SshConnection(app.target, control, "app") as app_conn, \
            SshConnection(rig.hosts["gen1"].target, control, "gen1") as gen1, \
            SshConnection(rig.hosts["gen2"].target, control, "gen2") as gen2:
        # staged as on a separate machine: the environment built there by uv at the same hash, the apps copied
        stage = HostStage(app_conn, uv_binary(), root=str(tmp_path / "stage"), offline=True)
        remote_env, apps = stage.environment(env_path), stage.tree(APPS_DIR, "apps")
        assert remote_env == f"{tmp_path}/stage/envs/{env_path.name}" and stage.environment(env_path) == remote_env
        assert (Path(apps) / "app_flask.py").read_bytes() == (APPS_DIR / "app_flask.py").read_bytes()
        assert [(s["kind"], s["reused"]) for s in stage.staged] == [("environment", False), ("apps", False)]
        assert str(stage.staged[0]["python"]).startswith("CPython 3.")
        launcher = RemoteLauncher(app_conn, app.address, f"{remote_env}/bin/python", str(tmp_path / "app"),
                                  Path(remote_env), paths=((str(env_path), remote_env), (str(APPS_DIR), apps)))
        with launcher.start(session, "flask-remote", {}, tmp_path / "logs", ()) as server:
            assert server.argv[0].startswith(remote_env) and not any(str(APPS_DIR) in w for w in server.argv)
            url = f"http://{app.address}:{server.port}/hello"
            _wait_http(gen1, url)
            assert server.alive()
            gens = [RemoteWrk(conn, str(tmp_path / conn.name)) for conn in (gen1, gen2)]
            merged = run_together(gens, LoadRequest(url=url, connections=4, duration_s=1.0, label="load"),
                                  tmp_path / "gens")
            parts = merged.parts
            assert len(parts) == 2 and merged.start_spread_s < 0.1, [(p.started_at or 0) - merged.start_at for p in parts]
            for part in parts:
                assert part.result.requests > 50 and part.result.non_2xx == 0
                assert part.busy is not None and 0.0 < part.busy < 1.2  # wrk's own CPU, read on its host
                # wrk's record, after its own coordinated-omission correction: at least one value a request
                assert part.histogram is not None and part.histogram.total >= part.result.requests
                # the raw record reproduces wrk's own percentiles (the same rank rule)
                assert part.histogram.percentile(99.0) / 1000 == part.result.latency.at(99.0)
            assert merged.result.requests == sum(p.result.requests for p in parts)
            rates = sum(p.result.requests / p.result.duration_s for p in parts)
            assert abs(merged.result.requests / merged.result.duration_s - rates) < 1e-6 * rates
            both = merge_histograms([p.histogram for p in parts if p.histogram is not None])
            assert both.total == sum(p.histogram.total for p in parts if p.histogram is not None)
            p99 = merged.result.latency.at(99.0)
            assert p99 == both.percentile(99.0) / 1000
            p99s = sorted(p.result.latency.at(99.0) or 0.0 for p in parts)
            assert p99s[0] <= p99 <= p99s[1]
        assert not server.alive()
        assert _leftovers(rig, "app") == []
        assert _leftovers(rig, "gen1") == [] and _leftovers(rig, "gen2") == []


def _wait_http(conn: SshConnection, url: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        probe = conn.run(["python3", "-c", f"import urllib.request as u; print(u.urlopen({url!r}, timeout=2).read())"],
                         check=False, timeout=15)
        if probe.returncode == 0 and "Hello World!" in probe.stdout:
            return
        time.sleep(0.2)
    raise AssertionError(f"{url} never answered from the generator host")


CTRL_C_SCRIPT = """
import signal, sys, time
# As the harness does (jobs/execute.py): Ctrl-C is a KeyboardInterrupt even when this was started
# with SIGINT ignored, as every background job of a shell without job control is.
signal.signal(signal.SIGINT, signal.default_int_handler)
from pathlib import Path
from pywebbench.stage.netns import NetnsRig
from pywebbench.services.links import HTTP_PROBE, PG_SSL_REQUEST, LinkProxies, measure_rtt
from pywebbench.services.remote_db import RemoteDb
from pywebbench.stage.ssh import SshConnection
from pywebbench.stage.staging import HostStage
from pywebbench.stage.toxiproxy import build_toxiproxy
work = Path(sys.argv[1])
with NetnsRig(("gen", "app"), work) as rig:
    conns = [SshConnection(h.target, Path(sys.argv[2]), h.name).open() for h in rig.hosts.values()]
    procs = [c.spawn(["sleep", "300"], name="sleeper", remote_dir=str(work / c.name), local_log_dir=work / "logs")
             for c in conns]
    print(" ".join(h.namespace for h in rig.hosts.values()), flush=True)
    time.sleep(300)
"""


def test_ctrl_c_mid_run_leaves_no_process_and_no_namespace(tmp_path: Path, control: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", CTRL_C_SCRIPT, str(tmp_path), str(control)],
                            stdout=subprocess.PIPE, text=True, process_group=0, cwd=REPO)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().split()
        assert len(line) == 2, "the rig did not come up"
        inside = [pid for ns in line for pid in namespace_pids(ns)]
        assert len(inside) >= 4  # per host: its sshd, the session's sshd and the remote sleep
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert not set(line) & set(namespaces())
    rid = line[0].split("-")[1]
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout
    assert f"pw{rid}" not in links
    assert [pid for pid in inside if _running(pid)] == []


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting for init to reap it."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def test_three_roles_db_p50_moves_by_the_added_round_trips(rig: NetnsRig, control: Path, tmp_path: Path,
                                                            request: pytest.FixtureRequest) -> None:
    """generator -> app -> db, each link through a Toxiproxy; 0 then 2 ms per round trip, same servers.

    The app keeps a pool of one connection per worker, so a /db request is one round trip on
    each link: p50 should move by about twice the added (measured) round-trip time.
    """
    session, env_path = _baseline_env()
    toxiproxy = str(build_toxiproxy())
    db_dir = Path(tempfile.mkdtemp(prefix="pwb-rig-db-"))
    db_dir.chmod(0o755)  # PostgreSQL's own user must reach its directory
    request.addfinalizer(lambda: shutil.rmtree(db_dir, ignore_errors=True))
    app, db = rig.hosts["app"], rig.hosts["db"]
    with SshConnection(app.target, control, "app3") as app_conn, \
            SshConnection(rig.hosts["gen1"].target, control, "gen3") as gen_conn, \
            SshConnection(db.target, control, "db3") as db_conn, \
            RemoteDb(db_conn, sys.executable, db_dir, rows=1000) as remote_db, \
            LinkProxies(db_conn, toxiproxy, tmp_path / "db-links") as db_links, \
            LinkProxies(gen_conn, toxiproxy, tmp_path / "gen-links") as gen_links:
        assert remote_db.info is not None
        db_link = db_links.add("app-db", f"{db.address}:16432", f"127.0.0.1:{remote_db.info.port}")
        dsn = remote_db.info.dsn.replace(f"@127.0.0.1:{remote_db.info.port}/", f"@{db.address}:16432/")
        app_env = {"PWB_DSN": dsn, "PWB_DRIVER": session.stack.driver, "PWB_DB_DELAY": "0",
                   "PWB_DB_ROWS": "1000", "PWB_DB_POOL": "1"}
        launcher = RemoteLauncher(app_conn, app.address, str(env_path / "bin" / "python"), str(tmp_path / "app"),
                                  env_path)
        with launcher.start(session, "flask-3roles", app_env, tmp_path / "logs", ()) as server:
            _wait_http(app_conn, f"http://{app.address}:{server.port}/hello")
            gen_link = gen_links.add("gen-app", "127.0.0.1:18080", f"{app.address}:{server.port}")
            url = f"http://127.0.0.1:18080/db"
            p50: dict[int, float] = {}
            rtt: dict[int, float] = {}
            for ms in (0, 2):
                db_links.set_rtt(ms / 1000)
                gen_links.set_rtt(ms / 1000)
                rtt[ms] = measure_rtt(app_conn, db_link.listen, PG_SSL_REQUEST).median_s
                measure_rtt(gen_conn, gen_link.listen, HTTP_PROBE, count=5)  # the path answers
                wrk = RemoteWrk(gen_conn, str(tmp_path / f"gen-{ms}"))
                wrk.run(LoadRequest(url=url, connections=2, duration_s=1.0, label=f"warm-{ms}"), tmp_path / "gen")
                result = wrk.run(LoadRequest(url=url, connections=2, duration_s=2.0, label=f"db-{ms}"), tmp_path / "gen")
                assert result.requests > 20 and result.non_2xx == 0, result
                p50[ms] = dict(result.latency.percentiles)[50.0] / 1000
            added = rtt[2] - rtt[0]
            assert 0.0015 < added < 0.0035, rtt  # the delay is there, and measured
            moved = p50[2] - p50[0]
            assert 2 * added * 0.6 < moved < 2 * added * 1.6, (p50, rtt)
            assert db_links.cpu_seconds() > 0 and gen_links.cpu_seconds() > 0


def test_a_crashed_run_s_namespaces_and_sshds_are_swept_by_the_next(tmp_path: Path) -> None:
    """SIGKILL gives the rig no chance to tear down: the next rig's start sweeps what it left."""
    script = ("import sys, time\nfrom pathlib import Path\nfrom pywebbench.stage.netns import NetnsRig\n"
              "rig = NetnsRig(('a', 'b'), Path(sys.argv[1])).__enter__()\n"
              "print(' '.join(h.namespace for h in rig.hosts.values()), flush=True)\ntime.sleep(300)\n")
    proc = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                            process_group=0, cwd=REPO)
    assert proc.stdout is not None
    made = proc.stdout.readline().split()
    assert len(made) == 2
    inside = [pid for ns in made for pid in namespace_pids(ns)]
    assert inside  # the sshds, in process groups of their own: a SIGKILL of the harness misses them
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert set(made) <= set(namespaces())
    swept = sweep_leftovers()
    assert set(made) <= set(swept) and not set(made) & set(namespaces())
    assert [pid for pid in inside if _running(pid)] == []
    rid = made[0].split("-")[1]
    assert f"pw{rid}" not in subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
