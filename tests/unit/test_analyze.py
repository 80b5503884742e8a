from pywebbench.analyze.rows import summarize
from pywebbench.results.model import ResultSet
from support.builders import header, trial


def test_ratio_is_relative_to_flask_gunicorn_sync_in_the_same_cell() -> None:
    results = ResultSet(header(), (
        trial("flask:gunicorn-sync", 1000.0),
        trial("starlette:uvicorn", 2500.0),
        trial("flask:gunicorn-sync", 400.0, workload="other"),
        trial("starlette:uvicorn", 100.0, workload="other"),
    ))
    rows = {(r.stack.id, r.spec.workload): r for r in summarize(results).rows}
    assert rows[("starlette:uvicorn", "hello")].ratio == 2.5
    assert rows[("flask:gunicorn-sync", "hello")].ratio == 1.0
    assert rows[("starlette:uvicorn", "other")].ratio == 0.25


def test_missing_baseline_gives_no_ratio_and_says_so() -> None:
    summary = summarize(ResultSet(header(), (trial("starlette:uvicorn", 2500.0),)))
    assert summary.rows[0].ratio is None
    assert summary.baseline_missing == ("hello",)


def test_repeats_are_summarised_by_their_median() -> None:
    results = ResultSet(header(), tuple(
        trial("flask:gunicorn-sync", rps, round_no=i, p50_ms=p50)
        for i, (rps, p50) in enumerate([(900.0, 9.0), (1000.0, 10.0), (5000.0, 50.0)], start=1)
    ))
    (row,) = summarize(results).rows
    assert row.trials == 3
    assert row.rps == 1000.0
    assert row.p50_ms == 10.0


def test_rows_sort_fastest_first() -> None:
    results = ResultSet(header(), (
        trial("flask:gunicorn-sync", 1000.0), trial("a:fast", 3000.0), trial("b:slow", 10.0),
    ))
    assert [r.stack.id for r in summarize(results).rows] == ["a:fast", "flask:gunicorn-sync", "b:slow"]
