"""docs/containers.md from synthetic runs kept as scripts/containers-page keeps them: the auto row
against the tuned one, the verdict, and the sentences written from the figures."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pywebbench.report.pages import PAGES
from pywebbench.report.pages.containers import Config, configs, pairs_of, render, tuned_of, verdict
from pywebbench.results.model import TrialResult, TrialSpec, TrialStatus
from pywebbench.results.server import AUTO_WORKERS, ServerCgroup, WorkerSizing
from support.shape_results import LOOP, SYNC, load, window, write_part

COMMAND = "pywebbench sweep --stack flask:gunicorn-sync --workload hello --knob cpu_quota=0.5"


def _window(stack_id: str, workers: int, launch: int, rps: float, p99_ms: float, *, throttled_s: float,
            peak_mb: float, sizing: WorkerSizing | None = None, status: TrialStatus = TrialStatus.OK) -> TrialResult:
    base = SYNC if stack_id == SYNC.id else LOOP
    trial = window(base, "hello", launch, load(rps, p99_ms), connections=16)
    spec: TrialSpec = replace(trial.spec, trial_id=f"{trial.spec.trial_id}-w{workers}", cpu_quota=0.5,
                              workers=None if workers == AUTO_WORKERS else workers, stack_cpus=(0, 1))
    stack = replace(base, workers=sizing.workers if sizing else workers, sizing=sizing)
    return replace(trial, spec=spec, stack=stack, status=status,
                   server_cgroup=ServerCgroup(20, 10, throttled_s, peak_mb))


def _run() -> list[TrialResult]:
    """Gunicorn sized itself from the host (5 workers for a 0.5-CPU quota) and lost to 1 worker,
    missing the SLO; Uvicorn's own 1 worker matches a fixed 1 within a percent."""
    host = WorkerSizing(5, 2, 2, 0.5)
    one = WorkerSizing(1, 2, 2, 0.5)
    trials = []
    for launch, wobble in ((1, -10.0), (2, 0.0), (3, 10.0)):
        trials += [
            _window(SYNC.id, AUTO_WORKERS, launch, 400.0 + wobble, 180.0, throttled_s=1.0, peak_mb=150.0, sizing=host),
            _window(SYNC.id, 1, launch, 800.0 + wobble, 40.0, throttled_s=0.4, peak_mb=40.0),
            _window(SYNC.id, 2, launch, 900.0 + wobble, 120.0, throttled_s=0.6, peak_mb=60.0),
            _window(LOOP.id, AUTO_WORKERS, launch, 2000.0 + wobble, 30.0, throttled_s=0.2, peak_mb=35.0, sizing=one),
            _window(LOOP.id, 1, launch, 2001.0 + wobble, 30.0, throttled_s=0.2, peak_mb=35.0),
            _window(LOOP.id, 2, launch, 1500.0 + wobble, 30.0, throttled_s=0.2, peak_mb=60.0),
        ]
    return trials


def test_without_results_the_page_says_not_measured_and_gives_the_command(tmp_path: Path) -> None:
    text = render(tmp_path)
    assert "## Not measured yet" in text
    assert "scripts/containers-page hello" in text and "scripts/containers-page db" in text
    assert PAGES["containers.md"] is render


def test_tuned_is_the_fastest_count_that_held_the_slo() -> None:
    found = configs(_run(), "hello")
    fixed = [c for c in found if c.label == SYNC.id and c.workers != AUTO_WORKERS]
    tuned = tuned_of(fixed)
    assert tuned is not None and tuned.workers == 1  # 2 workers had more req/s but a p99 of 120 ms
    assert tuned.launch_rps == (790.0, 800.0, 810.0)
    assert tuned.throttled_ms_per_s == pytest.approx(200.0)  # 0.4 s throttled over each 2 s window
    assert tuned.throttled_share == 0.5
    assert tuned.peak_mb == 40.0


def test_pairs_give_each_stack_a_verdict_from_the_interval() -> None:
    pairs = {p.auto.label: p for p in pairs_of(configs(_run(), "hello"))}
    sync, loop = pairs[SYNC.id], pairs[LOOP.id]
    assert sync.auto.count == "auto 5" and sync.verdict == "tuned higher"
    assert sync.ratio is not None and 1.9 < sync.ratio < 2.1
    assert loop.verdict == "equivalent" and loop.auto.count == "auto 1"
    assert [p.auto.label for p in pairs_of(configs(_run(), "hello"))] == [SYNC.id, LOOP.id]  # the page's order


def test_verdict_words() -> None:
    assert verdict(None).startswith("no interval")
    assert verdict((0.99, 1.02)) == "equivalent"
    assert verdict((1.2, 1.4)) == "tuned higher"
    assert verdict((0.5, 0.8)) == "auto higher"
    assert verdict((0.9, 1.3)) == "unresolved"


def test_a_config_without_launches_has_no_figure() -> None:
    empty = Config("x", "hello", 0.5, 1, (), None, None, None, None, None, 16, ("server-oom",))
    assert empty.rps is None and empty.rps_ci is None and not empty.meets_slo
    assert tuned_of([empty]) is None


def test_the_page_shows_the_gotcha_in_sentences_from_the_figures(tmp_path: Path) -> None:
    failed = _window(SYNC.id, 2, 3, 1.0, 1.0, throttled_s=0.0, peak_mb=1.0, status=TrialStatus.SERVER_OOM)
    write_part(tmp_path / "containers" / "hello", [*_run(), replace(failed, spec=replace(failed.spec,
               trial_id="oom"))], command=COMMAND)
    text = render(tmp_path)
    assert "Not measured yet" not in text
    assert f"`{COMMAND}` (exit 0, 2 min 05 s" in text
    assert "| flask:gunicorn-sync | 0.5 | auto | auto 5 | 2 / 2 from host | ~~400 [375, 425]~~ | 180.0 | 500 (50%) " \
           "| 150 | 2.00 [" in text
    assert "| flask:gunicorn-sync | 0.5 | tuned | 1 |  | 800 [775, 825] | 40.0 | 200 (50%) | 40 |  |" in text
    assert "1 window(s) server-oom" not in text  # the failed window was a count the page did not pick
    assert ("With no worker flag `flask:gunicorn-sync` started 5 worker(s), at the one quota measured; sized from "
            "the host: 5 workers for a 0.5-CPU quota (the host has 2 CPUs)." in text)
    assert ("`flask:gunicorn-sync` at a 0.5-CPU quota: its own auto 5 worker(s) served 400 req/s against 800 at 1"
            in text)
    assert "its p99 was 180.0 ms, over 100 ms, where 1 held 40.0 ms" in text
    assert "throttled 500 ms per second against 200; memory 150 MiB against 40." in text
    assert "Of 2 stack x quota pairs: 1 equivalent, 1 tuned higher." in text
    assert "At a 0.5-CPU quota the servers were throttled 100 to 500 ms per second of load." in text
    assert "starlette:uvicorn` at a 0.5-CPU quota" not in text  # no gotcha where there was none
    assert "No server's own count fitted" not in text


def test_where_no_server_sized_itself_from_the_host_the_page_says_so(tmp_path: Path) -> None:
    db = [replace(t, spec=replace(t.spec, workload="db")) for t in _run() if t.spec.stack_id == LOOP.id]
    write_part(tmp_path / "containers" / "db", db, command=COMMAND)
    text = render(tmp_path)
    assert "## db" in text and "## hello" not in text
    assert "No server's own count fitted the host's CPU count rather than the CPUs it was given" in text
    assert "Of 1 stack x quota pairs: 1 equivalent." in text
    assert "In no pair did the server's own count lose req/s to a fixed count" in text


def test_the_page_says_where_no_count_held_the_slo_and_where_the_best_was_the_largest_tried(tmp_path: Path) -> None:
    slow = [_window(SYNC.id, workers, launch, 30.0 * (workers or 1) + launch, 400.0 / (workers or 1), throttled_s=0.0, peak_mb=40.0,
                    sizing=WorkerSizing(1, 2, 2, 0.5) if workers == AUTO_WORKERS else None)
            for workers in (AUTO_WORKERS, 1, 2) for launch in (1, 2, 3)]
    edge = [_window(LOOP.id, workers, launch, 1000.0 * (workers or 1) + launch, 20.0, throttled_s=0.0, peak_mb=30.0,
                    sizing=WorkerSizing(1, 2, 2, 0.5) if workers == AUTO_WORKERS else None)
            for workers in (AUTO_WORKERS, 1, 2) for launch in (1, 2, 3)]
    write_part(tmp_path / "containers" / "hello", [*slow, *edge], command=COMMAND)
    text = render(tmp_path)
    assert "fixed counts tried: 1, 2 (the tuned row is the best of them in each pair)" in text
    assert ("`flask:gunicorn-sync` at a 0.5-CPU quota: no count tried held p99 < 100 ms (the most req/s, 62, at 2 "
            "with a p99 of 200.0 ms), so none of them has a capacity at this SLO.") in text
    assert ("`starlette:uvicorn` at a 0.5-CPU quota: the tuned count is the largest tried (2), so a larger one may "
            "serve more.") in text
    assert "At a 0.5-CPU quota no server was throttled." in text
