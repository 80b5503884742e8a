"""Option choices and their registries name the same things (plan sits below the registries)."""

from __future__ import annotations

from pywebbench.analyze.stats import Aggregation
from pywebbench.loadgen.registry import GENERATORS
from pywebbench.plan.options import AGGREGATIONS, GENERATOR_NAMES


def test_generator_names_are_the_registry_s() -> None:
    assert set(GENERATOR_NAMES) == set(GENERATORS)


def test_aggregations_are_the_statistics_ones() -> None:
    assert set(AGGREGATIONS) == {a.value for a in Aggregation}
