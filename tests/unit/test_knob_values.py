"""plan/knob_values.py: a recorded value read by its knob's (or option's) declared name."""

from __future__ import annotations

from dataclasses import replace

from pywebbench.plan.knob_values import knob_value, knob_values, knob_words, option_value
from pywebbench.plan.options import RunOptions
from pywebbench.results.model import Method, TrialSpec

SPEC = replace(TrialSpec("t", "flask:gunicorn-sync", "hello", 100, 5.0, 1.0, 1, "wrk", method=Method.RESTART),
               stack_cpus=(2, 3), rtt_s=0.002)


def test_a_knob_is_read_through_its_declared_field() -> None:
    assert knob_value(SPEC, "connections") == 100
    assert knob_value(SPEC, "rtt") == 0.002  # the knob `rtt` is recorded as rtt_s
    assert knob_value(SPEC, "stack_cpus") == (2, 3)
    assert knob_value(SPEC.cell, "stack_cpus") == 2  # a cell counts them, as a grid point names them
    assert knob_value(SPEC, "no-such-knob") is None
    assert knob_values(SPEC)["connections"] == 100


def test_words_are_the_declared_ones() -> None:
    assert knob_words(SPEC, "connections") == "100 connections"
    assert knob_words(SPEC.cell, "connections") == "100 connections"
    assert knob_words(SPEC, "threads") is None  # unset: nothing to say


def test_an_option_is_read_by_its_flag() -> None:
    assert option_value(SPEC, "--duration") == 5.0
    assert option_value(RunOptions(), "--duration") == RunOptions().duration_s
