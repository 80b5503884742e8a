"""docs/interpreters.md from synthetic runs kept as scripts/interpreters-page keeps them: ratios to
3.11 with Welch's interval, the GIL's answer, what was left out, the free-threaded reference and the
pin comparison's gate intervals."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from pywebbench.analyze.gate import BASE, HEAD
from pywebbench.results.model import EnvironmentRecord, StackInfo, TrialResult, TrialStatus
from pywebbench.report.pages import PAGES, interpreters
from pywebbench.results.store import ResultsWriter, results_path
from support.builders import header
from support.shape_results import LOOP, SYNC, load, window, write_part

FT = "CPython 3.14.7t (/cache/pythons/3.14t/bin/python3.14t)"
MEINHELD = replace(SYNC, id="flask:meinheld", server="meinheld")
GTHREAD = replace(SYNC, id="flask:gunicorn-gthread", variant="gthread", worker_class="gthread")


def cell(stack: StackInfo, python: str, rates: tuple[float, ...], *, gil: str | None = None,
         interpreter: str | None = None, workers: int | None = None, threads: int | None = None,
         alias: str = "") -> list[TrialResult]:
    """One window per launch at each rate, on `python`, as the run records it."""
    info = replace(stack, gil=gil, interpreter=interpreter, workers=workers or stack.workers,
                   threads=threads or stack.threads)
    out = []
    for launch, rps in enumerate(rates, start=1):
        t = window(info, "hello", launch, load(rps, 5.0), app_cpu_s=rps * 2.0 / 1000)  # 1 ms of CPU a request
        out.append(replace(t, spec=replace(t.spec, python=python, alias=alias,
                                           trial_id=f"{t.spec.trial_id}-{python}-{alias}-{workers}")))
    return out


def unavailable(stack: StackInfo, python: str, why: str) -> TrialResult:
    t = window(stack, "hello", 0, load(1.0, 1.0))
    return replace(t, spec=replace(t.spec, python=python, trial_id=f"{t.spec.trial_id}-{python}-x"),
                   status=TrialStatus.UNAVAILABLE, load=None, resources=(), error=why + "\nuv's whole message")


def with_environments(folder: Path, trials: list[TrialResult], pins: dict[str, str]) -> None:
    """The part written again with an environment record per side (its hash the side's name)."""
    writer = ResultsWriter(results_path(folder), header())
    for name, pin in pins.items():
        writer.add_environment(EnvironmentRecord(name, "CPython 3.11.7", (), (), ("flask==3.1.3", pin)))
    for trial in trials:
        writer.add_trial(trial)
    writer.finish("complete")
    writer.close()


def test_a_failed_import_says_the_exception_it_ended_with_and_paths_are_short() -> None:
    error = ("does not import: ImportError: /root/.cache/pywebbench/envs/29/lib/python3.13/site-packages/meinheld/serv\n"
             "server exited before it was ready\n  File \"x.py\", line 1, in <module>\n"
             "ImportError: /root/.cache/pywebbench/envs/29/lib/python3.13/site-packages/meinheld/server.so: "
             "undefined symbol: Py_TRASHCAN_SAFE_BEGIN\n]")
    assert interpreters.reason(error) == ("does not import: ImportError: site-packages/meinheld/server.so: "
                                          "undefined symbol: Py_TRASHCAN_SAFE_BEGIN")
    assert interpreters.reason("gevent==26.9.0: needs Python>=3.10\nuv's whole message") == \
        "gevent==26.9.0: needs Python>=3.10"


def test_absent_results_say_not_measured_yet_with_the_command(tmp_path: Path) -> None:
    text = interpreters.render(tmp_path)
    assert "## Not measured yet" in text
    assert "scripts/interpreters-page" in text and "scripts/docs" in text
    assert PAGES["interpreters.md"] is interpreters.render


def test_hello_ratios_to_3_11_with_intervals_the_gil_and_what_was_left_out(tmp_path: Path) -> None:
    trials = [*cell(SYNC, "3.11", (1000.0, 1010.0, 990.0)), *cell(SYNC, "3.13", (1100.0, 1111.0, 1089.0)),
              *cell(SYNC, "3.14t", (800.0, 808.0, 792.0), gil="off", interpreter=FT),
              *cell(LOOP, "3.11", (5000.0, 5050.0, 4950.0)),
              *cell(LOOP, "3.14t", (4000.0, 4040.0, 3960.0), gil="on", interpreter=FT),
              unavailable(SYNC, "pypy3", "gunicorn==27.0.1: needs Python>=3.10, this is 3.9.16"),
              unavailable(LOOP, "3.13", "uvloop==0.22.1: no build for 3.13"),
              unavailable(MEINHELD, "3.11", "meinheld: no build for 3.11"),
              unavailable(MEINHELD, "3.13", "meinheld: no build for 3.13")]
    write_part(tmp_path / "interpreters" / "hello", trials, command="pywebbench run --knob python=3.11,3.13")
    text = interpreters.render(tmp_path)
    assert "| Stack | 3.10" not in text  # only the interpreters the run asked for
    row = next(line for line in text.splitlines() if line.startswith("| `flask:gunicorn-sync` | 1,000"))
    # 3.13 is 1.10x in every launch: the centre is exact and the interval holds it.
    assert "| 1.10 [" in row and row.endswith("| left out |")
    low, high = (float(x) for x in row.split("| 1.10 [")[1].split("]")[0].split(", "))
    assert low <= 1.10 <= high and high - low < 0.1
    assert "| 0.80 [" in row
    loop = next(line for line in text.splitlines() if line.startswith("| `starlette:uvicorn` | 5,000"))
    assert "| left out | 0.80 [" in loop
    assert "| `flask:gunicorn-sync` | 3.14t | CPython 3.14.7t | off |" in text
    assert "| `starlette:uvicorn` | 3.14t | CPython 3.14.7t | re-enabled by an extension module |" in text
    # CPU per request: 1 ms in every window, so an interval of zero width around it.
    assert "| 1.000 [1.000, 1.000] |" in text
    assert "- `flask:gunicorn-sync` on pypy3: gunicorn==27.0.1: needs Python&gt;=3.10, this is 3.9.16" in text
    assert "- `starlette:uvicorn` on 3.13: uvloop==0.22.1: no build for 3.13" in text
    assert "| `flask:meinheld` | left out | left out | left out |" in text  # a row though nothing ran
    assert "uv's whole message" not in text
    assert "Not measured yet: `scripts/interpreters-page db`." in text


def test_free_threaded_section_divides_by_sync_workers_on_3_11(tmp_path: Path) -> None:
    trials = [*cell(SYNC, "3.11", (900.0, 909.0, 891.0), workers=3),
              *cell(SYNC, "3.11", (400.0, 404.0, 396.0), workers=1),
              *cell(GTHREAD, "3.14t", (450.0, 454.5, 445.5), gil="off", interpreter=FT, workers=1, threads=8)]
    write_part(tmp_path / "interpreters" / "free-threaded", trials, command="pywebbench run --knob python=3.11,3.14t")
    text = interpreters.render(tmp_path)
    assert "| `flask:gunicorn-sync` | 3.11 | 3 | - | 900 [" in text and "| reference |" in text
    gthread = next(line for line in text.splitlines() if line.startswith("| `flask:gunicorn-gthread`"))
    assert "| 1 x 8 | off |" in gthread and "| 0.50 [" in gthread
    assert "| `flask:gunicorn-sync` | 3.11 | 1 | - |" in text and "| 0.44 [" in text
    assert "one CPU" in text


def test_pin_section_reads_head_over_base_with_the_gate_s_intervals(tmp_path: Path) -> None:
    rates = (1000.0, 1040.0, 980.0, 1020.0)
    trials = [*cell(SYNC, "3.11", rates, alias=BASE), *cell(SYNC, "3.11", tuple(r * 0.9 for r in rates), alias=HEAD),
              *cell(GTHREAD, "3.11", rates, alias=BASE), *cell(GTHREAD, "3.11", rates, alias=HEAD)]
    trials = [replace(t, stack=replace(t.stack, env_hash=t.spec.alias)) for t in trials]
    folder = tmp_path / "interpreters" / "pin"
    write_part(folder, trials, command="pywebbench run --base-pin gunicorn==26.0.0")
    results_path(folder).unlink()
    with_environments(folder, trials, {BASE: "gunicorn==26.0.0", HEAD: "gunicorn==27.0.1"})
    text = interpreters.render(tmp_path)
    sync = next(line for line in text.splitlines() if line.startswith("| `flask:gunicorn-sync` | req/s"))
    centre = float(sync.split("| ")[3].split(" [")[0])
    assert math.isclose(centre, 0.9, abs_tol=0.001) and sync.endswith("| regression |")
    same = next(line for line in text.splitlines() if line.startswith("| `flask:gunicorn-gthread` | req/s"))
    assert "| 1.000 [" in same and "regression" not in same
    assert "- `flask:gunicorn-sync`: base gunicorn==26.0.0; head gunicorn==27.0.1" in text
    assert "Not measured yet: `scripts/interpreters-page hello`." in text
