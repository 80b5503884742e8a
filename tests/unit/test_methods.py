"""The placing methods as strategies (results/methods/): each answers what it can do, a new one
reaches the registry in one line, and no code outside the methods' modules names a member to branch on."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pywebbench.plan.budgeting import windows_per_round
from pywebbench.plan.options import DEFAULT_ROUNDS, RunOptions
from pywebbench.results.methods import MethodStrategy, registered, strategy_of
from pywebbench.results.methods.strategy import register, unregister
from pywebbench.results.model import Method

ROOT = Path(__file__).resolve().parents[2]
MEMBER = re.compile(r"Method\.(DUET|INTERLEAVED|RESTART)\b")
# Auto's chooser returns the method it chose: it is auto's own module (results/methods/auto.py says so).
ALLOWED_FILES = ("src/pywebbench/results/methods/", "src/pywebbench/plan/method_choice.py")
# A field's default or a module constant names a member as a declaration, not a branch.
DECLARATION = re.compile(r"^\s*\w+: Method = Method\.[A-Z]+\s*$")


@pytest.mark.parametrize(("method", "answers"), [
    (Method.INTERLEAVED, dict(paired=True, loaded_at_once=1, on_several_hosts=True, allocates=True, side_by_side=False,
                              pairs_with_baseline=False, tunable=True, shardable=True, probes_in_phase=True,
                              default_rounds=None, sized_in=None, chooser=False)),
    (Method.DUET, dict(paired=True, loaded_at_once=2, on_several_hosts=False, allocates=False, side_by_side=True,
                       pairs_with_baseline=True, tunable=False, shardable=False, probes_in_phase=False,
                       default_rounds=None, sized_in=None, chooser=False)),
    (Method.RESTART, dict(paired=False, loaded_at_once=1, on_several_hosts=True, allocates=False, side_by_side=False,
                          pairs_with_baseline=False, tunable=False, shardable=False, probes_in_phase=False,
                          default_rounds=1, sized_in="interleaved", chooser=False)),
    (Method.AUTO, dict(paired=True, loaded_at_once=1, on_several_hosts=True, allocates=True, side_by_side=False,
                       pairs_with_baseline=True, tunable=True, shardable=False, probes_in_phase=False,
                       default_rounds=None, sized_in=None, chooser=True)),
])
def test_each_registered_method_answers_its_capabilities(method: Method, answers: dict[str, object]) -> None:
    strategy = method.strategy
    assert strategy is strategy_of(method.value) and strategy.name == method.value
    assert {name: getattr(strategy, name) for name in answers} == answers


def test_every_member_is_registered_and_every_registered_name_reads_back_as_a_member() -> None:
    assert [s.name for s in registered()] == [m.value for m in Method]


def test_callers_read_the_declared_capabilities() -> None:
    assert RunOptions(method=Method.RESTART).rounds == 1 and RunOptions(method=Method.DUET).rounds == DEFAULT_ROUNDS
    assert Method.RESTART.sizing_method is Method.INTERLEAVED and Method.DUET.sizing_method is Method.DUET
    assert windows_per_round(Method.INTERLEAVED, 6, 3) == 6
    assert windows_per_round(Method.DUET, 6, 3) == 3 * 2  # three pairs of three stacks, two workloads each


@pytest.fixture
def lockstep() -> Iterator[MethodStrategy]:
    strategy = MethodStrategy(name="lockstep", paired=True, loaded_at_once=3, on_several_hosts=False, allocates=False,
                              side_by_side=False, pairs_with_baseline=True, tunable=False, shardable=False,
                              probes_in_phase=False, default_rounds=4)
    register(strategy)  # the one line a new method adds
    yield strategy
    unregister("lockstep")


def test_a_throwaway_method_reaches_the_registry_in_one_line(lockstep: MethodStrategy) -> None:
    assert registered()[-1] is lockstep and strategy_of("lockstep").loaded_at_once == 3
    assert strategy_of("lockstep").default_rounds == 4 and strategy_of("lockstep").pairs_with_baseline
    with pytest.raises(ValueError, match="registered already"):
        register(lockstep)


def test_an_unregistered_name_is_refused_by_name() -> None:
    assert "lockstep" not in {s.name for s in registered()}
    with pytest.raises(KeyError, match="no method 'lockstep' is registered"):
        strategy_of("lockstep")


def branches_on_a_member(grep_lines: list[str]) -> list[str]:
    """`git grep -n` lines naming a method member outside the methods' modules and declarations."""
    found = []
    for line in grep_lines:
        path, _, text = line.split(":", 2)
        if MEMBER.search(text) and not path.startswith(ALLOWED_FILES) and not DECLARATION.match(text):
            found.append(line)
    return found


def test_the_filter_catches_a_branch_and_lets_a_declaration_pass() -> None:
    assert branches_on_a_member([
        "src/pywebbench/plan/x.py:3:    if method == Method.DUET:",
        "src/pywebbench/plan/x.py:4:    method: Method = Method.INTERLEAVED",
        "src/pywebbench/plan/method_choice.py:5:    return Method.DUET, why",
    ]) == ["src/pywebbench/plan/x.py:3:    if method == Method.DUET:"]


def test_no_code_outside_the_methods_modules_compares_against_a_member() -> None:
    out = subprocess.run(["git", "grep", "-n", "-E", r"Method\.(DUET|INTERLEAVED|RESTART)\b", "--", "src"],
                         cwd=ROOT, capture_output=True, text=True, check=False)
    assert out.returncode in (0, 1), out.stderr  # 1: no line at all
    assert branches_on_a_member(out.stdout.splitlines()) == []
