"""docs/layout.md's load-generator recipe: one module with one class, registered in one line,
reaches every place that must know it; and the check notices a place that does not."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import pywebbench.loadgen.registry as registry
import pywebbench.plan.generators as generators
from pywebbench.plan.generators import CHOSEN_GENERATORS, GENERATOR_NAMES, Generator, Loop, default_generator
from pywebbench.stage import doctor

from support.recipe_generator import RECIPE, generator_recipe_problems, registered


@pytest.fixture()
def recipe() -> Iterator[str]:
    with registered() as name:
        yield name


def test_every_registered_generator_is_in_every_place() -> None:
    for name in GENERATOR_NAMES:
        assert generator_recipe_problems(name) == [], name


def test_a_generator_registered_from_a_test_reaches_every_place(recipe: str) -> None:
    assert generator_recipe_problems(recipe) == []
    assert recipe in CHOSEN_GENERATORS and recipe in GENERATOR_NAMES
    assert Generator(recipe).on_several_hosts and not Generator(recipe).open_loop  # wrk's, declared once
    assert default_generator(Loop.CLOSED) == "wrk"  # it declared itself nobody's default
    requirement = next(r for r in doctor.check() if r.name == recipe)
    assert requirement.purpose == "the recipe test's wrapper of wrk" and not requirement.required


def test_unregistered_it_is_nowhere(recipe: str) -> None:
    registry.unregister_generator(recipe)
    assert RECIPE not in GENERATOR_NAMES and RECIPE not in {r.name for r in doctor.check()}
    assert generator_recipe_problems(RECIPE) != []


def test_the_check_names_the_registry_when_the_class_is_not_made(recipe: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(registry.GENERATORS, recipe)
    assert any("GENERATORS" in p for p in generator_recipe_problems(recipe))


def test_the_check_names_the_plan_when_its_capabilities_are_not_declared(
        recipe: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(generators._DECLARED, recipe)
    assert any("Capabilities" in p for p in generator_recipe_problems(recipe))


def test_the_check_names_doctor_when_its_requirement_is_not_derived(
        recipe: str, monkeypatch: pytest.MonkeyPatch) -> None:
    builtin = doctor.generator_requirements()
    monkeypatch.setattr(doctor, "generator_requirements", lambda: [r for r in builtin if r.name != recipe])
    assert [p for p in generator_recipe_problems(recipe) if "doctor" in p] != []


def test_the_check_names_the_flag_when_the_choices_are_not_derived(
        recipe: str, monkeypatch: pytest.MonkeyPatch) -> None:
    names = generators._Names._names
    monkeypatch.setattr(generators._Names, "_names", lambda self: tuple(n for n in names(self) if n != recipe))
    found = generator_recipe_problems(recipe)
    assert any("CHOSEN_GENERATORS" in p for p in found) and any("--generator" in p for p in found), found


def test_the_check_names_the_questions_when_they_stop_asking_the_declaration(
        recipe: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Generator, "on_several_hosts", property(lambda self: False))
    assert any("questions" in p for p in generator_recipe_problems(recipe))


def test_the_check_names_the_window_choice_when_it_sends_elsewhere(
        recipe: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Generator, "can_send", lambda self, mix, at_a_rate=False: str(self) != recipe)
    assert any("window_generator" in p for p in generator_recipe_problems(recipe))
