"""The interleaved and duet methods on real stacks: rounds, paired ratios, cgroups, Ctrl-C."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import psutil

from pywebbench.analyze.rows import summarize
from pywebbench.results.store import load_results, results_path

from .conftest import ROOT, pywebbench

SHORT = ("--duration", "1", "--warmup", "0.5", "--settle", "0.2", "--connections", "20")
# The shortest wrk window (wrk measures whole seconds) after the shortest warm-up and settle
# that still load the server: the tests show the plumbing, not a figure.
BRIEF = ("--duration", "1", "--warmup", "0.2", "--settle", "0.1", "--connections", "20")
THREE = ("--stack", "flask:gunicorn-sync", "--stack", "falcon:gunicorn-sync", "--stack", "starlette:uvicorn")


def _cgroup_dirs(run_id: str) -> list[Path]:
    return [p for p in Path("/sys/fs/cgroup").glob(f"*/pywebbench-{run_id}")] + \
        [p for p in Path("/sys/fs/cgroup").glob(f"pywebbench-{run_id}")]


def test_three_stacks_interleave_with_paired_intervals_and_cgroup_cpu(tmp_path: Path) -> None:
    # Three stacks hold two ratios, too few to lend each other a spread: an interval needs three
    # launches (two would give one degree of freedom). One round each: a window costs more than a
    # server start, and rounds sharing a launch are run by the duet, auto and Ctrl-C tests.
    done = pywebbench("run", *THREE, *BRIEF, "--repeats", "3", "--rounds-per-launch", "1", "--seed", "5",
                      "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    results = load_results(tmp_path)
    assert results.complete and all(t.valid for t in results.trials)
    # every stack once per round, three rounds, each on its own launch
    assert Counter(t.spec.round for t in results.trials) == {r: 3 for r in range(1, 4)}
    assert {(t.spec.launch, t.spec.round) for t in results.trials} == {(1, 1), (2, 2), (3, 3)}
    assert all(t.spec.method == "interleaved" and t.spec.settle_s == 0.1 for t in results.trials)
    # the order within rounds is not the same every time (random per round)
    orders = [tuple(t.spec.stack_id for t in results.trials if t.spec.round == r) for r in range(1, 4)]
    assert len(set(orders)) > 1
    assert {t.cpu_source for t in results.trials} == {"cgroup-v1"} or \
        {t.cpu_source for t in results.trials} == {"cgroup-v2"}
    for t in results.trials:
        app = t.usage("app")
        assert app is not None and app.cpu_s > 0.05 and app.peak_rss_mb > 5
        idle = t.usage("idle-apps")
        assert idle is not None and idle.cpu_s < 0.5 * app.cpu_s  # the other two servers sat idle
    rows = summarize(results).rows
    for row in rows:
        assert row.ratio is not None and row.ratio_ci is not None and row.tie_group is not None
        assert row.rounds == 3 and row.launches == 3
        if row.label != "flask:gunicorn-sync":
            assert row.ratio_interval is not None and row.ratio_ci[0] <= row.ratio <= row.ratio_ci[1]
            assert row.cpu_ratio is not None and row.cpu_ratio_ci is not None
    assert "Tie" in done.stdout and "Method: interleaved" in done.stdout
    assert _cgroup_dirs(results.header.run_id) == []


def test_duet_loads_each_stack_beside_the_baseline(tmp_path: Path) -> None:
    done = pywebbench("run", "--stack", "flask:gunicorn-sync", "--stack", "falcon:gunicorn-sync", *SHORT,
                      "--method", "duet", "--repeats", "3", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    results = load_results(tmp_path)
    assert all(t.valid and t.spec.method == "duet" for t in results.trials)
    falcon = [t for t in results.trials if t.spec.stack_id == "falcon:gunicorn-sync"]
    base = [t for t in results.trials if t.spec.stack_id == "flask:gunicorn-sync"]
    assert len(falcon) == len(base) == 3
    assert all(t.spec.partner == "flask:gunicorn-sync" for t in falcon)
    assert all(t.spec.partner == "falcon:gunicorn-sync" for t in base)
    for round_no in (1, 2, 3):  # one generator started first, the other second, in each window
        slots = sorted(t.spec.slot for t in results.trials if t.spec.round == round_no)
        assert slots == [1, 2]
    assert all(t.usage("partner") is not None for t in results.trials)
    assert "Duet:" in done.stdout


def test_duet_without_the_baseline_is_refused_before_anything_starts(tmp_path: Path) -> None:
    done = pywebbench("run", "--stack", "falcon:gunicorn-sync", "--method", "duet", "--out", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "baseline" in done.stderr
    assert not results_path(tmp_path).exists()


def test_a_duet_of_six_stacks_loads_two_cycles_a_round_and_rates_every_stack(tmp_path: Path) -> None:
    stacks = ["flask:gunicorn-sync", "falcon:gunicorn-sync", "bottle:gunicorn-sync", "django:gunicorn-sync",
              "hug:gunicorn-sync", "starlette:uvicorn"]
    # one round: the design is the same every round, and the ratios below need no interval
    done = pywebbench("run", *[a for s in stacks for a in ("--stack", s)], *BRIEF, "--method", "duet",
                      "--repeats", "1", "--rounds-per-launch", "1", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    results = load_results(tmp_path)
    sides = results.trials  # 12 windows a round, not all 15 pairs; each stack in four of them
    assert {t.spec.round for t in sides} == {1}
    assert len({frozenset((t.spec.stack_id, t.spec.partner)) for t in sides}) == 12
    assert set(Counter(t.spec.stack_id for t in sides).values()) == {4}
    assert all(t.valid for t in results.trials), [t.error for t in results.trials if not t.valid]
    rows = {r.label: r for r in summarize(results).rows}
    # every stack's ratio to the baseline comes out of each round's least-squares fit
    assert all(rows[s].ratio is not None and rows[s].ratio > 0 for s in stacks[1:]), rows


def test_method_auto_runs_a_cpu_bound_workload_as_a_duet_and_says_why(tmp_path: Path) -> None:
    done = pywebbench("run", "--stack", "flask:gunicorn-sync", "--stack", "falcon:gunicorn-sync", *SHORT,
                      "--method", "auto", "--repeats", "2", "--rounds-per-launch", "1", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "--method auto: duet (hello keeps the stacks on the CPU" in done.stderr
    results = load_results(tmp_path)
    assert results.header.options["method"] == "duet"  # the header says what ran, not "auto"
    assert results.trials and all(t.spec.method == "duet" and t.spec.partner for t in results.trials)


def test_method_auto_measures_each_workload_by_its_own_method_in_one_run(tmp_path: Path) -> None:
    # each part's two rounds on one launch: what is checked is the method each workload ran by
    done = pywebbench("run", "--stack", "flask:gunicorn-sync", "--stack", "falcon:gunicorn-sync", *BRIEF,
                      "--workload", "hello", "--workload", "upstream", "--method", "auto", "--repeats", "2",
                      "--rounds-per-launch", "2", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "--method auto: duet for hello (on the CPU), then interleaved for upstream" in done.stderr
    results = load_results(tmp_path)
    assert results.header.options["method"] == "auto"  # each window records its own method
    methods = {w: {t.spec.method for t in results.trials if t.spec.workload == w} for w in ("hello", "upstream")}
    assert methods == {"hello": {"duet"}, "upstream": {"interleaved"}}
    assert all(t.spec.partner for t in results.trials if t.spec.workload == "hello")
    assert not any(t.spec.partner for t in results.trials if t.spec.workload == "upstream")
    report = pywebbench("report", str(tmp_path))
    assert report.returncode == 0, report.stderr[-2000:]
    flat = " ".join(report.stdout.split())
    assert "Method for hello: duet" in flat and "Method for upstream: interleaved" in flat


def test_launch_blocks_start_one_stack_beside_the_baseline_per_launch(tmp_path: Path) -> None:
    done = pywebbench("run", *THREE, *BRIEF, "--launch-block", "1", "--repeats", "2", "--rounds-per-launch", "1",
                      "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    results = load_results(tmp_path)
    base = "flask:gunicorn-sync"
    by_launch: dict[int, set[str]] = {}
    for t in results.trials:
        by_launch.setdefault(t.spec.launch or 0, set()).add(t.spec.stack_id)
    # two cycles of two launches, each starting one stack and the baseline
    assert len(by_launch) == 4 and all(len(seen) == 2 and base in seen for seen in by_launch.values())
    counts = Counter(t.spec.stack_id for t in results.trials)
    assert counts[base] == 4 and counts["falcon:gunicorn-sync"] == counts["starlette:uvicorn"] == 2
    rows = {r.label: r for r in summarize(results).rows}
    assert rows["starlette:uvicorn"].ratio is not None and rows["falcon:gunicorn-sync"].ratio is not None


def test_calibrate_refuses_a_budget_that_buys_no_interval_before_anything_starts(tmp_path: Path) -> None:
    done = pywebbench("calibrate", "--budget", "40s", "--duration", "1", "--out", str(tmp_path))
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0, done.stderr[-2000:]
    assert "buys no interval" in done.stderr and not results_path(tmp_path).exists()


def test_calibrate_prints_one_json_object_with_the_method_s_figures(tmp_path: Path) -> None:
    # Three launches of A, A2, B and P (B against P's prediction is one ratio: it lends nothing)
    # after the sizing, bounded by rounds: one per launch (the sizing's eight then take a launch
    # each; a server start costs less than a window). A --budget is spent to its end, and one
    # that surely leaves the main phase three launches beside two neighbours' load was 150 s:
    # the plan's floor (115 s) does not, its main phase planned as if three ratios lent
    # each other a spread (at 100 s it ran two). The plumbing, not a figure.
    done = pywebbench("calibrate", "--json", "--repeats", "3", "--rounds-per-launch", "1", "--duration", "0.3",
                      "--warmup", "0.2", "--settle", "0.1", "--connections", "20", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout)
    for key in ("aa_ratio", "aa_ci", "ab_ratio", "ab_ci", "injected_slowdown", "detected", "mde", "rounds",
                "wall_s"):
        assert key in figures, key
    assert figures["injected_slowdown"] == 0.05 and figures["extra_us"] > 0
    assert figures["rounds"] == 3 and figures["launches"] == 3  # as asked
    assert len(figures["aa_ci"]) == 2 and len(figures["ab_ci"]) == 2
    assert figures["ab_expected"] is not None and figures["ab_holds_expected"] is not None
    # B spins the loops that make 5% on every request (a share of long ones cost event loops more)
    assert figures["extra_share"] == 1 and figures["ab_expected_score"] is not None
    # the probe ran in the main phase too (P): B's expected ratio is read in its own rounds
    assert figures["ab_expected_from"] == "same windows" and figures["ab_sized"] is not None
    # the sizing's expectation as B's CPU ratio, checked against the one B showed in these rounds
    assert figures["cpu_ab_sized"] is not None and figures["cpu_ab_holds_sized"] is not None
    sized = load_results(tmp_path).header.options["sized_expected"]
    assert sized["low"] < sized["center"] < sized["high"] and sized["se_log"] > 0
    assert figures["cpu_source"].startswith("cgroup")
    # B was given work sized from A's own CPU per request, and the kernel saw it spend more
    # B's extra CPU per request as the kernel saw it: present and finite; its size is judged by
    # the 10-minute runs (a 40 s run can read a 13 us difference either way)
    assert math.isfinite(figures["injected_measured_us"])
    assert (tmp_path / "calibration.json").exists()


def test_ctrl_c_mid_round_keeps_finished_windows_and_leaves_nothing(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "pywebbench", "run", *THREE, "--duration", "1", "--warmup", "0.2",
            "--settle", "0.1", "--connections", "10", "--repeats", "3", "--out", str(tmp_path)]
    harness = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    seen: set[int] = set()
    path = results_path(tmp_path)
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline and harness.poll() is None:
            try:
                seen.update(p.pid for p in psutil.Process(harness.pid).children(recursive=True))
            except psutil.NoSuchProcess:
                break
            if path.exists() and path.read_text().count('"record": "trial"') >= 4:
                time.sleep(0.5)  # inside the second round's second window (1 s windows)
                seen.update(p.pid for p in psutil.Process(harness.pid).children(recursive=True))
                break
            time.sleep(0.1)
        os.kill(harness.pid, signal.SIGINT)
        code = harness.wait(timeout=60)
    finally:
        if harness.poll() is None:
            os.killpg(harness.pid, signal.SIGKILL)
            harness.wait()
    assert code == 130, harness.stderr.read().decode()[-2000:] if harness.stderr else ""
    results = load_results(tmp_path)
    assert not results.complete
    assert 4 <= len(results.trials) < 9
    assert all(t.valid for t in results.trials)
    first_round = [t for t in results.trials if t.spec.round == 1]
    assert len(first_round) == 3
    time.sleep(0.2)
    left = [pid for pid in seen if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert left == [], [psutil.Process(p).cmdline() for p in left]
    assert _cgroup_dirs(results.header.run_id) == []
    # --resume adds rounds after the last recorded one; the partial round's windows still count
    resumed = pywebbench("run", "--resume", str(tmp_path))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    again = load_results(tmp_path)
    assert again.complete and len(again.trials) > len(results.trials)
    assert max(t.spec.round for t in again.trials) > max(t.spec.round for t in results.trials)


def test_idle_servers_with_pools_never_starve_the_loaded_one_of_db_sessions(tmp_path: Path) -> None:
    # Two live servers, each with an app-side pool that keeps its sessions while idle (3 workers
    # x 1), and a cap of 3: each server has its own pgbouncer lane, so the loaded one always gets
    # its 3. (A pool of 2 per worker would hold 6 and is refused before the run: test_plan.)
    done = pywebbench("run", "--stack", "flask:gunicorn-sync", "--stack", "flask:gunicorn-gthread",
                      "--workload", "db", *SHORT, "--db-rows", "20000", "--db-pool", "1", "--max-db-sessions", "3",
                      "--repeats", "2", "--out", str(tmp_path))
    results = load_results(tmp_path)
    assert done.returncode == 0, [(t.spec.trial_id, t.error, t.load and t.load.socket_errors, t.checks)
                                  for t in results.trials if not t.valid]
    assert all(t.valid for t in results.trials)
    assert all(t.db_sessions is not None and 0 < t.db_sessions <= 3 for t in results.trials)
    bouncer = next(s for s in results.services if s.name == "pgbouncer")
    assert bouncer.config["lanes"] == 2 and "bench_lane2" in bouncer.config["config"]


def test_an_open_loop_window_settles_at_its_own_rate_not_closed_loop(tmp_path: Path) -> None:
    # A closed-loop settle saturates the server and its queue drains into the probe's first
    # requests, which a p99 objective counts; an open-loop window settles at its own rate.
    done = pywebbench("run", "--stack", "flask:gunicorn-sync", "--generator", "oha", "--rate", "200",
                      *SHORT, "--repeats", "2", "--rounds-per-launch", "2", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    results = load_results(tmp_path)
    assert [t.load.rate for t in results.trials if t.load is not None] == [200.0, 200.0]
    settles = list(tmp_path.rglob("settle.oha.json"))
    assert settles, sorted(p.name for p in tmp_path.rglob("*"))[:40]
    report = json.loads(settles[0].read_text())
    assert report["summary"]["successRate"] == 1.0
    assert not list(tmp_path.rglob("settle.wrk*"))


def test_the_ranking_rule_stops_loading_a_stack_placed_against_both_neighbours(tmp_path: Path) -> None:
    # bjoern is about ten times the baseline on hello: after the three-launch pilot (two ratios
    # lend nothing, so an interval needs three launches) it is told apart from its only
    # neighbour and takes no more windows. The baseline and gthread, close, go on to the budget,
    # unless the pilot already told them apart or showed them equal (then the run stops placed).
    base, close, fast = "flask:gunicorn-sync", "flask:gunicorn-gthread", "bottle:bjoern"
    # The budget buys the pilot (about 35 s when it ran beside two neighbours' load) and launches after it.
    done = pywebbench("run", "--stack", base, "--stack", close, "--stack", fast, *BRIEF, "--allocation", "adaptive",
                      "--repeats", "3", "--rounds-per-launch", "1", "--budget", "70s", "--seed", "3",
                      "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    said = done.stderr + done.stdout
    # valid windows: a window the checks set aside (a busy machine) is measured again, and the
    # rule places bjoern after its third valid launch all the same
    trials = load_results(tmp_path).trials
    counts = Counter(t.spec.stack_id for t in trials)
    valid = Counter(t.spec.stack_id for t in trials if t.valid)
    assert valid[fast] == 3, (counts, valid, said[-2000:])
    if "stopped: placed" not in said:
        assert counts[base] == counts[close] > 3, (counts, said[-2000:])
        assert "placed against both neighbours take no more windows" in said
