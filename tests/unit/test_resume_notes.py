"""A resumed run says once where it resumes: a run split by --method auto says it per part, with
the part's workloads, and not again for the whole plan it did not run as one."""

from __future__ import annotations

from pathlib import Path

from pywebbench.catalog.registry import build_catalog
from pywebbench.jobs.execute import Job, _started_with_method
from pywebbench.plan.options import RunOptions
from pywebbench.results.model import ResultSet
from support.builders import header, trial

CATALOG = build_catalog()
TWO = ("flask:gunicorn-sync", "starlette:uvicorn")


def _notes(tmp_path: Path, workloads: tuple[str, ...], method: str) -> list[str]:
    options = RunOptions(stacks=TWO, workloads=workloads, method=method).validate()  # type: ignore[arg-type]
    done = ResultSet(header(), tuple(trial(s, 1000.0, workload=w) for s in TWO for w in workloads))
    notes: list[str] = []
    _started_with_method(Job("run", options), CATALOG, (0, 1), tmp_path, done, notes.append, tuning=False)
    return [n for n in notes if "resuming" in n]


def test_a_split_run_says_where_it_resumes_once_per_part(tmp_path: Path) -> None:
    notes = _notes(tmp_path, ("hello", "db"), "auto")
    assert len(notes) == 2, notes
    assert notes[0].startswith("hello: resuming") and notes[1].startswith("db: resuming")
    assert "2 windows already recorded" in notes[0]


def test_a_run_of_one_method_says_it_once(tmp_path: Path) -> None:
    notes = _notes(tmp_path, ("hello", "db"), "interleaved")
    assert len(notes) == 1 and notes[0].startswith("resuming") and "4 windows already recorded" in notes[0]
