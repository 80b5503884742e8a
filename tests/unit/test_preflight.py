"""The checks a run makes once it has a plan, before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from pywebbench.catalog.registry import build_catalog
from pywebbench.core.errors import UserError
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import make_plan
from pywebbench.jobs.preflight import preflight


def _check(tmp_path: Path, *stacks: str) -> None:
    options = RunOptions(stacks=stacks, method="duet").validate()  # type: ignore[arg-type]
    preflight(options, make_plan(build_catalog(), options, (0, 1)), [()], "flask:gunicorn-sync", tmp_path,
              resuming=False)


def test_a_duet_of_one_stack_is_refused_before_it_launches_anything(tmp_path: Path) -> None:
    # It used to launch again and again until its budget ended, with no pair to load (0 trials).
    with pytest.raises(UserError, match=r"--method duet loads two stacks at a time and this run has one "
                                        r"\(flask:gunicorn-sync\): add a stack, or use --method interleaved"):
        _check(tmp_path, "flask:gunicorn-sync")


def test_a_duet_without_the_baseline_is_refused(tmp_path: Path) -> None:
    for stacks in (("falcon:gunicorn-sync", "starlette:uvicorn"), ("falcon:gunicorn-sync",)):
        with pytest.raises(UserError, match="add --stack flask:gunicorn-sync"):
            _check(tmp_path, *stacks)
