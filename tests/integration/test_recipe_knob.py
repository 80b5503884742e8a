"""docs/layout.md's knob recipe, run for real: a knob without a field of its own (`spin_loops`,
tests/support/recipe_knob.py), registered from the test in the process that plans, is swept over a
real server; its declared app environment reaches the app, so CPU per request grows with it."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from pywebbench.cli import main
from pywebbench.report.formats import renderer
from pywebbench.results.store import load_results, results_path

from support.recipe_knob import registered


def test_a_knob_declared_in_one_registration_is_swept_on_a_real_server(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    with registered() as knob:
        code = main(["sweep", "--stack", "flask:gunicorn-sync", "--workload", "hello", "--knob", f"{knob.name}=0,30000",
                     "--method", "restart", "--duration", "1", "--warmup", "0.3", "--repeats", "1",
                     "--connections", "4", "--seed", "3", "--out", str(out)])
        assert code == 0
        results = load_results(results_path(out))
        assert {dict(t.spec.knobs)[knob.name] for t in results.trials} == {0, 30000}
        assert {dict(t.spec.app_env).get("PWB_EXTRA_WORK_LOOPS") for t in results.trials} == {"0", "30000"}
        rows = {int(r[knob.column]): r for r in csv.DictReader(io.StringIO(renderer("csv")(results)))}
    assert set(rows) == {0, 30000}
    idle, spun = (float(rows[v]["cpu_ms_per_req"]) for v in (0, 30000))
    # 30000 loops of Python on every request: a fraction of a millisecond more CPU each, well beyond
    # a short window's noise.
    assert spun > 1.5 * idle, (idle, spun)
    # req/s is not asserted: on a shared machine a neighbour's load moves it more than CPU per request.
    print(f"cpu ms/request: spin_loops=0 {idle:.3f}, 30000 {spun:.3f}; req/s {rows[0]['rps']} -> {rows[30000]['rps']}")
