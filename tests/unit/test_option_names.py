"""`connections`, the window's length and `rtt` are named only where declared or applied (issue 45).

What counts as naming one, in the code of src/pywebbench (read with `ast`, so docstrings,
comments and strings never count, and the expressions inside f-strings do):

- an attribute access `X.NAME` (read or written), and
- a keyword `NAME=` in a call (a constructor, `replace`, `options_of`),

for NAME in `NAMES`: `connections`, `duration_s`, `duration`, `rtt`, `rtt_s`, `rtt_ms`.

Not counted: `X.load.duration_s` and `load.duration_s`, the LoadResult's measured window length,
another quantity under the same name (the generator's own figure, not the option); a dict key
or `getattr` by string. Code that only shows or groups a recorded value reads it through the
declarations instead (plan/knob_values.py: `knob_value`, `knob_words` by the knob's name,
`option_value` by the option's flag), so a module outside `ALLOWED` that names one fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "pywebbench"

NAMES = frozenset({"connections", "duration_s", "duration", "rtt", "rtt_s", "rtt_ms"})

ALLOWED: dict[str, str] = {
    # declarations
    "plan/options.py": "declares: RunOptions.connections, duration_s, rtt_s and checks they are positive",
    "results/model.py": "declares: TrialSpec's fields, and Cell built from them",
    "results/load.py": "declares: LoadResult.duration_s, the measured window length, and its rate from it",
    "plan/hosts.py": "declares: what --rtt may be (only with hosts, never below zero)",
    "plan/presets/seed000.py": "declares: the seed's own connections, passed to options_of (a grid would rename its trials)",
    "plan/presets/seed002.py": "declares: the seed's own connections and window, passed to options_of",
    "plan/presets/seed003.py": "declares: the seed's own connections and window, passed to options_of",
    "plan/presets/seed004.py": "declares: the seed's own connections and window, passed to options_of",
    "plan/derived_mix.py": "declares: a derived mix's own duration_s (the span of its log), not the option",
    # applying
    "plan/sessions.py": "applies: copies the options' connections, duration and rtt into each trial",
    "plan/budgeting.py": "applies: windows x --duration is what a budget buys",
    "loadgen/ab.py": "applies: turns connections into ab's -c and duration into its time limit",
    "loadgen/h2load.py": "applies: turns connections into h2load's -c and duration into -D",
    "loadgen/oha.py": "applies: turns connections into oha's -c and duration into -z",
    "loadgen/vegeta.py": "applies: turns connections into vegeta's -connections and duration into -duration",
    "loadgen/wrk.py": "applies: turns connections into wrk's -c and duration into --duration",
    "loadgen/replay.py": "applies: the replay's connections and window length",
    "loadgen/shapes.py": "applies: the shape driver's -connections and -duration",
    "loadgen/remote.py": "applies: wrk's window on generator hosts, split across them",
    "loadgen/merge.py": "applies: merges the generator hosts' measured windows into one",
    "measure/window.py": "applies: builds each window's LoadRequest from the trial",
    "measure/settle.py": "applies: runs the settle load at the trial's connections",
    "measure/ceiling.py": "applies: measures (and keys) the generator ceiling at the trial's connections and window",
    "measure/shape_ceiling.py": "applies: measures a shape's ceiling at the trial's connections and window",
    "measure/checks.py": "applies: judges a window's requests in flight against the connections it held",
    "measure/duet_window.py": "applies: times a duet's window from its length",
    "measure/profiled.py": "applies: the profiled windows' length and the sampler's bound from it",
    "measure/placed_load.py": "applies: the settle on generator hosts, as long as asked",
    "measure/launchers.py": "applies: sizes the server's backlog for the connections",
    "measure/placement.py": "applies: sets --rtt on the links between hosts",
    "measure/placing.py": "applies: the inventory's links delayed by --rtt",
    "services/links.py": "applies: turns rtt into Toxiproxy's latency toxic",
    "services/upstream.py": "applies: loads the upstream at its own connections and window for its ceiling",
    "report/tables.py": "shows doctor --hosts' own SSH probe round trip (HostReport.rtt_s), not --rtt",
}
"""Module (under src/pywebbench) -> why it may name one of NAMES: a declaration, or code that
applies the value (turns it into a tool's flag, a load, a delay, a trial's field)."""


def _load_result(node: ast.expr) -> bool:
    """`load` or `X.load`: a LoadResult, whose duration_s is its measured length."""
    return (isinstance(node, ast.Name) and node.id == "load") or (isinstance(node, ast.Attribute) and node.attr == "load")


def named_at(source: str) -> list[tuple[int, str]]:
    """(line, name) for each attribute access or keyword in `source` naming one of NAMES."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in NAMES and not _load_result(node.value):
            found.append((node.lineno, node.attr))
        elif isinstance(node, ast.keyword) and node.arg in NAMES:
            found.append((node.value.lineno, node.arg))
    return sorted(found)


def uses() -> dict[str, list[tuple[int, str]]]:
    """Every module of the package that names one, with where."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if hits := named_at(path.read_text()):
            found[path.relative_to(PACKAGE).as_posix()] = hits
    return found


def test_only_declarations_and_applying_code_name_them() -> None:
    strays = {module: hits for module, hits in uses().items() if module not in ALLOWED}
    assert not strays, ("read these through plan/knob_values.py (knob_value, knob_words, option_value), "
                        f"or allowlist a declaration or applying code with its reason: {strays}")


def test_every_allowlisted_module_still_names_one() -> None:
    """An entry whose module no longer names any is stale: the list says only what is true."""
    named = uses()
    assert [module for module in ALLOWED if module not in named] == []
    assert all(reason.strip() for reason in ALLOWED.values())


def test_the_scanner_catches_a_planted_use() -> None:
    planted = '''
"""A docstring saying spec.connections and connections=100 is prose: not counted."""
def title(spec, trial, request):
    # a comment naming spec.rtt_s is not counted either
    text = f"{spec.connections} connections"
    late = replace(request, duration_s=2.0)
    measured = trial.load.duration_s
    return text, late, measured, spec.rtt_s
'''
    assert named_at(planted) == [(5, "connections"), (6, "duration_s"), (8, "rtt_s")]
