"""run --tune --slo on a real stack: the capacity search's probes as trials, the table, the deploy line."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from pywebbench.results.store import load_results

from .conftest import pywebbench

SHORT = ("--duration", "0.4", "--warmup", "0.2", "--settle", "0.1", "--connections", "20")
"""oha's windows may be shorter than a second: a 0.4 s probe shows the search's plumbing as well as
a 1 s one, and a 30 s budget buys each candidate about three probes (75 s bought seven)."""


def test_tune_with_an_slo_searches_each_worker_count_and_says_how_to_deploy_the_best(tmp_path: Path) -> None:
    done = pywebbench("run", "--stack", "flask:gunicorn-sync", "--tune", "--slo", "p99<200ms", "--budget", "30s",
                      # from 400 req/s, not 200: a failing probe (a bracket) comes within the few probes
                      "--rate", "400", *SHORT, "--seed", "11", "--out", str(tmp_path), timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    # one CPU for the stack here: workers 1..3, a ladder with nothing between to refine
    assert "workers 1..3 (2 x 1 stack CPU(s) + 1 = 3" in done.stdout
    assert "tuning: capacity under p99<200ms - hello, budget 30s" in done.stdout
    rows = [line for line in done.stdout.splitlines() if re.match(r"^│ [123] │ Gunicorn │ sync", line)]
    assert len(rows) == 3 and "=1" in rows[0]
    deploy = re.search(r"flask:gunicorn-sync#w(\d)t1: (gunicorn --bind 0\.0\.0\.0:8000 --workers (\d) "
                       r"--worker-class sync .* app_flask:wsgi)", done.stdout)
    assert deploy is not None and deploy.group(1) == deploy.group(3)
    best_workers = int(re.split(r"\s*│\s*", rows[0])[4])
    assert int(deploy.group(1)) == best_workers

    # every probe of every search is a trial in the results file, in the order it was made
    results = load_results(tmp_path)
    assert results.complete and results.header.options["job"] == "tune"
    trials = results.trials
    assert all(t.spec.rate is not None and t.spec.generator == "oha" and t.spec.method == "interleaved"
               for t in trials)
    assert all(t.load is None or t.load.latency_uncorrected is not None for t in trials)  # corrected and not
    tuning = json.loads((tmp_path / "tuning.json").read_text())
    for row in tuning["ranked"]:
        config, capacity = row["measured"]["config"], row["measured"]["capacity"]
        alias = f"w{config['workers']}t{config['threads']}"
        mine = sorted((t for t in trials if t.spec.alias == alias), key=lambda t: t.spec.round)
        assert [round(p["rate"], 6) for p in capacity["probes"]] == [round(t.spec.rate or 0, 6) for t in mine]
        assert len({t.spec.round for t in mine}) == len(mine)  # one probe per round
        assert row["measured"]["rss_mb"] > 5
    assert Counter(t.spec.alias for t in trials).keys() == {"w1t1", "w2t1", "w3t1"}
    # a round holds a probe of every candidate still searching, in a fresh order
    assert Counter(t.spec.round for t in trials)[1] == 3
    markdown = (tmp_path / "tuning.md").read_text()
    assert "| # | Server | Class | Workers |" in markdown and f"`{deploy.group(2)}`" in markdown
