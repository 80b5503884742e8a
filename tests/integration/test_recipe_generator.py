"""docs/layout.md's load-generator recipe, run for real: a throwaway generator (wrk under another
name, tests/support/recipe_generator.py) registered from the test measures a short run."""

from __future__ import annotations

from pathlib import Path

from pywebbench.cli import main
from pywebbench.results.store import load_results, results_path

from support.recipe_generator import registered


def test_a_generator_registered_in_one_line_measures_a_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with registered() as name:
        code = main(["run", "--stack", "falcon:gunicorn-sync", "--workload", "hello", "--generator", name,
                     "--method", "restart", "--duration", "0.5", "--warmup", "0.2", "--repeats", "1",
                     "--connections", "4", "--out", str(out)])
    assert code == 0
    results = load_results(results_path(out))
    assert results.header.options["generator"] == name
    loads = [t.load for t in results.trials if t.load is not None]
    assert loads and all(load.generator == name and load.requests > 0 for load in loads)
