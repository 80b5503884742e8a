from dataclasses import fields, replace

import pytest

from pywebbench.core.errors import UserError
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sweep import (
    MAX_VALUES_PER_AXIS,
    GridPoint,
    Knob,
    KnobAxis,
    estimate,
    grid,
    parse_knob,
    parse_knobs,
)


def values(text: str) -> tuple[int | float, ...]:
    return parse_knob(text).values


# --- value syntax ---------------------------------------------------------------------------

def test_list_keeps_order_and_drops_duplicates() -> None:
    assert values("connections=100,10,1000,10") == (100, 10, 1000)


def test_one_two_five_series_includes_both_ends() -> None:
    assert values("threads=10..1000") == (10, 20, 50, 100, 200, 500, 1000)
    # Ends off the series are kept; the series fills in between.
    assert values("workers=15..300") == (15, 20, 50, 100, 200, 300)
    assert values("workers=3..4") == (3, 4)
    assert values("workers=7..7") == (7,)


def test_geometric_and_arithmetic_ranges() -> None:
    assert values("connections=10..1000*3") == (10, 30, 90, 270, 810, 1000)
    assert values("workers=1..9+2") == (1, 3, 5, 7, 9)
    assert values("workers=1..10+4") == (1, 5, 9, 10)
    # Whole-number knobs round geometric values and drop the repeats that makes.
    assert values("connections=1..10*1.5") == (1, 2, 3, 5, 8, 10)


def test_parts_combine_and_dedupe_across_parts() -> None:
    assert values("connections=1,2,10..100") == (1, 2, 10, 20, 50, 100)
    assert values("connections=50,10..100") == (50, 10, 20, 100)


def test_durations_take_units_and_plain_seconds() -> None:
    assert values("db_delay=20ms,0.02,0.02s,20000us") == (0.02,)
    assert values("upstream_delay=0,1ms..100ms") == (0.0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1)
    # Decimal arithmetic: no 0.30000000000000004 from a float step.
    assert values("db_delay=0.1..0.3+0.1") == (0.1, 0.2, 0.3)
    assert values("db_delay=10ms..30ms+10ms") == (0.01, 0.02, 0.03)
    assert all(isinstance(v, float) for v in values("db_delay=0,1s"))


def test_counts_are_ints_and_rates_floats() -> None:
    assert values("cpu_size=1e3..1e4") == (1000, 2000, 5000, 10000)
    assert all(type(v) is int for v in values("cpu_size=1e3..1e4"))
    assert values("rate=100..500") == (100.0, 200.0, 500.0)
    assert all(type(v) is float for v in values("rate=100,250.5"))


def test_zero_is_allowed_only_where_it_means_something() -> None:
    assert values("db_pool=0,4") == (0, 4)
    assert values("db_delay=0") == (0.0,)
    for text in ("workers=0", "connections=0,10", "rate=0", "stack_cpus=0", "max_db_sessions=0..10+5"):
        with pytest.raises(UserError, match="must be positive"):
            parse_knob(text)
    with pytest.raises(UserError, match="must not be negative"):
        parse_knob("db_delay=-5ms")
    with pytest.raises(UserError, match="must not be negative"):
        parse_knob("db_pool=-1")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("speed=10", "unknown knob 'speed'; known knobs: connections, workers, threads"),
        ("workers", "must look like NAME=V1,V2"),
        ("=10", "must look like NAME=V1,V2"),
        ("workers=", "gives no values"),
        ("workers=1,,2", "empty value"),
        ("workers=2.5", "not a whole number"),
        ("workers=two", "not a number"),
        ("connections=nan", "not a number"),
        ("rate=inf", "not a number"),
        ("db_delay=20 minutes", "not a duration"),
        ("connections=20ms", "not a number"),
        ("workers=10..1", "must go upward"),
        ("workers=1..10*1", "factor after '\\*' must be a number above 1"),
        ("workers=1..10*x", "factor after '\\*' must be a number above 1"),
        ("workers=1..10+0", "step after '\\+' must be positive"),
        ("db_delay=0..10ms", "must start above zero"),
        ("db_pool=0..8*2", "must start above zero"),
        ("workers=1..", "bad range"),
        ("workers=1..5..9", "not a number"),
        ("connections=1..100000+1", f"over {MAX_VALUES_PER_AXIS} values"),
        ("connections=1..100000*1.0001", f"over {MAX_VALUES_PER_AXIS} values"),
    ],
)
def test_bad_input_is_one_line_user_error(text: str, message: str) -> None:
    with pytest.raises(UserError, match=message) as info:
        parse_knob(text)
    assert "\n" not in str(info.value)


def test_knob_names_take_dashes_and_any_case() -> None:
    assert parse_knob("max-db-sessions=10").knob is Knob.MAX_DB_SESSIONS
    assert parse_knob(" DB_Delay =20ms").knob is Knob.DB_DELAY


def test_every_knob_names_a_run_options_field() -> None:
    known = {f.name for f in fields(RunOptions)}
    # `rate` arrives with open-loop runs; every other knob must already be a RunOptions field.
    assert {k.field for k in Knob} - known <= {"rate"}


# --- grid -----------------------------------------------------------------------------------

def test_grid_is_the_product_first_axis_slowest() -> None:
    axes = parse_knobs(["connections=10,100", "db_delay=0,20ms,1.5s"])
    points = grid(axes)
    assert [p.label for p in points] == [
        "connections=10 db_delay=0",
        "connections=10 db_delay=20ms",
        "connections=10 db_delay=1.5s",
        "connections=100 db_delay=0",
        "connections=100 db_delay=20ms",
        "connections=100 db_delay=1.5s",
    ]
    assert points[4].overrides() == {"connections": 100, "db_delay_s": 0.02}
    assert points[4].get(Knob.DB_DELAY) == 0.02
    assert points[4].get(Knob.WORKERS) is None
    assert len(set(points)) == len(points)  # hashable and distinct: usable as ranking keys


def test_three_axes_multiply() -> None:
    points = grid(parse_knobs(["workers=1..4+1", "max_db_sessions=10,100", "stack_cpus=1,2,3"]))
    assert len(points) == 4 * 2 * 3
    assert points[0].settings == ((Knob.WORKERS, 1), (Knob.MAX_DB_SESSIONS, 10), (Knob.STACK_CPUS, 1))
    assert points[-1].overrides() == {"workers": 4, "max_db_sessions": 100, "stack_cpus": 3}


def test_overrides_apply_to_run_options() -> None:
    point = grid(parse_knobs(["connections=50", "threads=4", "db_delay=5ms", "cpu_size=1000", "db_pool=0"]))[0]
    options = replace(RunOptions(), **point.overrides()).validate()
    assert (options.connections, options.threads, options.db_delay_s, options.cpu_size, options.db_pool) == (
        50, 4, 0.005, 1000, 0)


def test_labels_parse_back_to_the_same_values() -> None:
    axes = parse_knobs(["db_delay=0,0.5ms,20ms,1s,2.5s", "rate=150.5", "workers=3"])
    for point in grid(axes):
        again = grid(parse_knobs(part for part in point.label.split(" ")))
        assert again == (point,)


def test_no_axes_is_one_point_with_the_defaults() -> None:
    (point,) = grid(())
    assert point.overrides() == {} and point.label == "defaults"


def test_duplicate_knob_is_refused() -> None:
    with pytest.raises(UserError, match="knob workers is given twice"):
        parse_knobs(["workers=1", "threads=2", "workers=3"])
    with pytest.raises(UserError, match="given twice"):
        grid([KnobAxis(Knob.DB_DELAY, (0.0,)), KnobAxis(Knob.DB_DELAY, (0.02,))])


def test_estimate_counts_trials_and_server_starts() -> None:
    points = grid(parse_knobs(["connections=10,100,1000"]))
    trials, seconds = estimate(points, stacks=4, workloads=2, repeats=3, per_trial_s=7.0, per_session_s=3.0)
    assert trials == 3 * 4 * 2 * 3
    assert seconds == trials * 7.0 + (3 * 4 * 3) * 3.0
    assert estimate((GridPoint(()),), 1, 1, 1, 5.0, 2.0) == (1, 7.0)
