"""What a placing method can do, one frozen strategy per method, and the registry that maps each
method's name (its `Method` value in results files) to its strategy.

Callers ask a method's strategy (`Method.strategy`, or `strategy_of(name)`) instead of comparing
against a particular `Method` member, so a new method is its own module plus one `register` line
in `results/methods/__init__.py` (docs/layout.md's recipe). The strategy declares capabilities
only: the code they select lives in its own layer (measure/rounds.py's duet round, plan/'s duet
design) and reads the capability, since results/ is the lowest layer and imports none of them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MethodStrategy:
    """One method's answers to every question the checks, the planner, the rounds, the analysis
    and the reports ask of it."""

    name: str
    """The method's value in results files and on the command line (`--method NAME`)."""
    paired: bool
    """Servers live across windows, each ratio paired with the baseline's in the same launch;
    False: separate starts compared (rows rank by req/s, not by ratio)."""
    loaded_at_once: int
    """Stacks under load at the same moment."""
    on_several_hosts: bool
    """Placeable on --hosts or the netns rig."""
    allocates: bool
    """--allocation adaptive can choose which stacks a launch loads."""
    side_by_side: bool
    """Windows load stacks in pairs on the same CPUs with equal shares, each pair's figures read
    side by side (a round's ratios are the least-squares fit to its pairs, a window records both
    sides, the interval takes the duet term)."""
    pairs_with_baseline: bool
    """Every ratio is read off pairs that reach the baseline: the baseline must be in the plan
    with a partner (jobs/preflight.py)."""
    tunable: bool
    """--tune's candidates can be compared in it (they run in interleaved rounds)."""
    shardable: bool
    """--shards can chain the shards' ratios through the baseline in its rounds."""
    probes_in_phase: bool
    """calibrate reads its sizing probe (P) in the main phase's own rounds."""
    default_rounds: int | None = None
    """Rounds when --repeats is not given; None: the run's default (plan/options.DEFAULT_ROUNDS)."""
    sized_in: str | None = None
    """The method calibrate's sizing run measures in; None: this one."""
    chooser: bool = False
    """Chooses another method for the run before it plans; never a window's own method."""


_REGISTRY: dict[str, MethodStrategy] = {}


def register(strategy: MethodStrategy) -> MethodStrategy:
    """Make `strategy` the answer for its name (one line per method in results/methods/__init__.py)."""
    if strategy.name in _REGISTRY:
        raise ValueError(f"method {strategy.name!r} is registered already")
    _REGISTRY[strategy.name] = strategy
    return strategy


def unregister(name: str) -> None:
    """Drop a method (a test's throwaway one); the registered methods stay."""
    del _REGISTRY[name]


def strategy_of(name: str) -> MethodStrategy:
    """The strategy of the method named `name` (a `Method` member is its name)."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"no method {name!r} is registered (known: {', '.join(_REGISTRY)})") from None


def registered() -> tuple[MethodStrategy, ...]:
    """Every registered method's strategy, in registration order."""
    return tuple(_REGISTRY.values())
