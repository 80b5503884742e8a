"""The protocol knob against real servers: Granian over h1 (wrk, as before), h2c and h2-tls (h2load,
with the run's own certificate), one short window each; Uvicorn, which serves no HTTP/2, keeps
its h1 window and has its other cells skipped with the reason. Plumbing, not benchmark figures."""

from __future__ import annotations

from pathlib import Path

from pywebbench.results.store import load_results

from .conftest import pywebbench


def test_granian_answers_h1_h2c_and_h2_over_tls_and_uvicorn_s_h2_cells_are_skipped(tmp_path: Path) -> None:
    done = pywebbench("sweep", "--stack", "starlette:granian", "--stack", "starlette:uvicorn", "--workload", "hello",
                      "--knob", "protocol=h1,h2c,h2-tls", "--duration", "0.5", "--warmup", "0.2", "--repeats", "1",
                      "--method", "restart", "--connections", "8", "--out", str(tmp_path), timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "skipped starlette:uvicorn protocol=h2c: Uvicorn (uvicorn) serves h1, h1-tls here, not h2c" in done.stderr
    trials = {(t.spec.stack_id, t.spec.protocol): t for t in load_results(tmp_path).trials}
    assert set(trials) == {("starlette:granian", p) for p in ("h1", "h2c", "h2-tls")} | {("starlette:uvicorn", "h1")}
    for (stack, protocol), trial in sorted(trials.items()):
        load = trial.load
        assert trial.status.value == "ok" and load is not None, trial.error
        assert load.requests > 100 and load.errors == 0, (stack, protocol, load)
        assert load.generator == ("wrk" if protocol == "h1" else "h2load"), load.generator
        assert load.latency.at(99.0) is not None  # from h2load's per-request log where it is h2load
        print(f"{stack} {protocol}: {load.rps:,.0f} req/s, {load.errors} errors, p99 {load.latency.at(99.0):.2f} ms")
    h2_tls = trials[("starlette:granian", "h2-tls")]
    assert "--ssl-certificate" in h2_tls.stack.argv and "https://" in h2_tls.load.command[-1]  # type: ignore[union-attr]
    assert "--ssl-certificate" not in trials[("starlette:granian", "h2c")].stack.argv
    assert (tmp_path / "tls").stat().st_mode & 0o077 == 0


def test_the_nginx_topology_serves_h2_over_tls_for_a_server_that_speaks_only_h1(tmp_path: Path) -> None:
    # Gunicorn sync serves h1 only: left out under the direct topology, served by its nginx front here
    done = pywebbench("run", "--stack", "flask:gunicorn-sync", "--workload", "hello", "--topology", "nginx",
                      "--protocol", "h2-tls", "--duration", "0.5", "--warmup", "0.2", "--repeats", "1",
                      "--method", "restart", "--connections", "8", "--out", str(tmp_path), timeout=90)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "skipped" not in done.stderr
    results = load_results(tmp_path)
    [trial] = results.trials
    load = trial.load
    assert trial.status.value == "ok" and load is not None, trial.error
    assert load.generator == "h2load" and load.requests > 100 and load.errors == 0, load
    assert trial.spec.topology == "nginx" and trial.spec.protocol == "h2-tls"
    assert not any(c.startswith("near-ceiling") for c in trial.checks), trial.checks
    assert "https://" in load.command[-1] and "--certfile" not in trial.stack.argv  # nginx terminates TLS
    spoken = [p.read_text() for p in tmp_path.rglob("*.h2load.stdout.log")]  # the window, the ceiling
    assert spoken and all("Application protocol: h2\n" in text for text in spoken), spoken
    [ceiling] = [s.config for s in results.services if s.name == "generator-ceiling"]
    assert (ceiling["protocol"], ceiling["generator"], ceiling.get("errors")) == ("h2-tls", "h2load", 0), ceiling
    assert (tmp_path / "tls").stat().st_mode & 0o077 == 0
    print(f"flask:gunicorn-sync via nginx over h2-tls: {load.rps:,.0f} req/s; ceiling {ceiling['rps']:,.0f} req/s")
