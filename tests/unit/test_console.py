"""What the terminal says of a run: the baseline note names the run's own baseline, and a run in
which no server answered right ends in one line and exit 2."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pywebbench.analyze.calibrate import calibration_variants
from pywebbench.catalog.registry import BASELINE_STACK, build_catalog
from pywebbench.jobs.console import _print_plan, exit_code, refuse_if_wrong_everywhere
from pywebbench.core.errors import UserError
from pywebbench.jobs.execute import Outcome
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import make_plan
from pywebbench.results.model import TrialStatus
from pywebbench.results.store import ResultsWriter, results_path
from support.builders import header, trial

CATALOG = build_catalog()
OTHER = "falcon:gunicorn-sync"


def _note(capsys: pytest.CaptureFixture[str], options: RunOptions, baseline: str, **variants: object) -> list[str]:
    plan = make_plan(CATALOG, options, (0, 1), **variants)  # type: ignore[arg-type]
    _print_plan(plan, options, 10.0, baseline)
    return [line for line in capsys.readouterr().err.splitlines() if "no ratios" in line]


def test_the_baseline_note_names_the_baseline_the_run_uses(capsys: pytest.CaptureFixture[str]) -> None:
    options = RunOptions(stacks=(OTHER,))
    # run without the catalog's baseline: it is named
    assert _note(capsys, options, BASELINE_STACK) == [
        f"note: the baseline {BASELINE_STACK} is not in this run, so no ratios will be shown"]
    # calibrate: its baseline is A of its own stack, which is in the run: nothing to say
    calibrate = calibration_variants(CATALOG, OTHER, 100)
    assert _note(capsys, options, f"{OTHER}#A", variants=calibrate) == []
    # app: its first server is its baseline
    assert _note(capsys, replace(options, stacks=(OTHER, "falcon:waitress")), OTHER) == []
    assert _note(capsys, replace(options, stacks=(BASELINE_STACK,)), BASELINE_STACK) == []


def _invalid(stack_id: str, error: str) -> object:
    return replace(trial(stack_id, 0.0), status=TrialStatus.INVALID_RESPONSE, load=None, error=error)


def test_no_right_answer_anywhere_is_one_line_naming_the_check() -> None:
    wrong = [_invalid("b:one", "/hello: status 500, expected 200 (b'oops')\nmore"), _invalid("a:two", "/hello: body")]
    with pytest.raises(UserError) as raised:
        refuse_if_wrong_everywhere(wrong)  # type: ignore[arg-type]
    assert str(raised.value) == ("no server passed the answer check made before any load, so nothing was measured: "
                                 "a:two hello: /hello: body; and 1 other server, in the table above")
    refuse_if_wrong_everywhere([*wrong, trial("c:three", 100.0)])  # type: ignore[list-item]  # one measured: no refusal
    refuse_if_wrong_everywhere([])


def test_exit_code_refuses_a_finished_run_where_every_answer_was_wrong(tmp_path: Path) -> None:
    writer = ResultsWriter(results_path(tmp_path), header())
    writer.add_trial(_invalid("flask:gunicorn-sync", "/hello: status 500, expected 200 (b'oops')"))  # type: ignore[arg-type]
    writer.finish("complete")
    writer.close()
    with pytest.raises(UserError, match="flask:gunicorn-sync hello: /hello: status 500, expected 200"):
        exit_code(Outcome(tmp_path, "complete", 1.0, {}, 0))
    assert exit_code(Outcome(tmp_path, "interrupted", 1.0, {}, 0)) == 130
