"""docs/interpreters.md: the default stacks under every interpreter found here, a free-threaded
section and one package-version comparison (issue 47), rendered from what scripts/interpreters-page
kept under docs/results/interpreters/NAME/: results.jsonl and run.json (the command, its exit and
wall time).

Knob points are cells measured one after another, so a stack on 3.13 and the same stack on 3.11
share no round: their ratio is unpaired, Welch's t on the logs of each side's launch means
(stats.ratio_ci), and the time between the cells is inside it. The package versions are a gate
run (`--base-pin/--head-pin`), base and head paired in the same rounds, read with the gate's own
intervals (analyze/gate.py)."""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pywebbench.analyze.gate import BASE, HEAD, GateFigure, head_over_base
from pywebbench.analyze.shape_figures import Figure, figure
from pywebbench.analyze.stats import Aggregation, ratio_centre, ratio_ci
from pywebbench.plan.options import DEFAULT_SUITE
from pywebbench.report.markdown import escape
from pywebbench.report.pages.page_runs import PagePart, load_part, machine_and_commands
from pywebbench.results.model import EnvironmentRecord, TrialResult, TrialStatus

FOLDER = "interpreters"
SCRIPT = "scripts/interpreters-page"
REFERENCE = "3.11"
"""The interpreter every ratio is to: the machine's own Python's version."""
INTERPRETERS = ("3.10", "3.11", "3.12", "3.13", "3.14t", "pypy3")
"""The page's column order; any other value a run asked for follows them."""
FREE_REFERENCE = ("flask:gunicorn-sync", REFERENCE)
"""The free-threaded section's reference: sync workers on 3.11 (the most workers it ran with)."""
GATE_THRESHOLD = 0.02
"""The band the pin comparison's verdicts are read against (the gate's default)."""


@dataclass(frozen=True)
class Part:
    name: str
    """Its folder under docs/results/interpreters/ and its argument to scripts/interpreters-page."""
    title: str
    about: str


PARTS = (
    Part("hello", "The default stacks on hello, by interpreter",
         "The 14 default stacks (`pywebbench run` with no `--stack`) on `hello` under every interpreter found here, "
         "one cell per interpreter (`--knob python=...`)."),
    Part("db", "The default stacks on db, by interpreter",
         "The same on `db` (one row read from PostgreSQL), where the time allowed it."),
    Part("free-threaded", "Free-threaded: one gthread worker with threads against sync workers",
         "Flask on Gunicorn's gthread worker with one process and 8 threads on the free-threaded 3.14t, against "
         "sync workers on 3.11 (`--knob python=3.11,3.14t --knob workers=1,3 --threads 8`: every combination is "
         "shown, the ratio is to `flask:gunicorn-sync` with 3 workers on 3.11)."),
    Part("pin", "Two releases of Gunicorn", "Gunicorn 26.0.0 (base) against 27.0.1 (head, the catalog's) on the "
         "Gunicorn stacks, both in one run, paired in the same rounds (`--base-pin/--head-pin`)."),
)


@dataclass(frozen=True)
class Group:
    """One stack's windows in one cell: its interpreter, workers and threads."""

    label: str
    python: str
    workers: int
    threads: int
    windows: tuple[TrialResult, ...]

    def launch_means(self, value: Callable[[TrialResult], float | None]) -> list[float]:
        by_launch: dict[int, list[float]] = defaultdict(list)
        for t in self.windows:
            if (v := value(t)) is not None and v > 0:
                by_launch[t.spec.launch or t.spec.round].append(v)
        return [statistics.fmean(v) for _, v in sorted(by_launch.items())]


def render(results: Path) -> str:
    folder = results / FOLDER
    measured = {part.name: load_part(folder / part.name) for part in PARTS}
    parts = [_intro()]
    if not any(measured.values()):
        parts.append(_not_yet())
    else:
        parts.append(machine_and_commands(measured))
        for part in PARTS:
            parts.append(_section(part, measured[part.name]))
        parts.append(_limits())
    return "\n\n".join(parts).rstrip() + "\n"


def _intro() -> str:
    return (
        "# Interpreters, free-threading and package versions\n\n"
        "<!-- Built by scripts/docs from docs/results/interpreters/; edit "
        "src/pywebbench/report/pages/interpreters.py, not this file. -->\n\n"
        "The same stacks on CPython 3.10 to 3.13 (pyenv's builds), the free-threaded 3.14t built here "
        "(`pywebbench python install 3.14t`) and PyPy, each figure with its 95% interval; how the `python` and "
        "`pin` knobs work is in [reference/interpreters.md](reference/interpreters.md). "
        f"`{SCRIPT}` makes every run below, one after the other, on a quiet machine. A ratio is the stack's req/s "
        f"on that interpreter over the same stack's on {REFERENCE}: each interpreter is a cell of its own, measured "
        "after the other, so the two sides share no round and the interval is Welch's t on the logs of each side's "
        "launch means (a launch is the unit of replication); drift between the cells is inside it, not taken out. "
        "CPU per request and peak memory are the mean of the launch means with Student's t over them.")


def _not_yet() -> str:
    commands = "\n".join(f"{SCRIPT} {name}" for name in ("hello", "free-threaded", "pin", "db"))
    return ("## Not measured yet\n\nNo results are committed under `docs/results/interpreters/`. On a quiet "
            f"machine, alone, run `{SCRIPT}` (hello, free-threaded and pin, about 40 minutes on the 2-core VM; "
            "db only when named) or one part at a time:\n\n"
            f"```sh\n{commands}\n```\n\nthen `scripts/docs` to rebuild this page.")


def _section(part: Part, found: PagePart | None) -> str:
    head = f"## {part.title}\n\n{part.about}"
    if found is None:
        return f"{head}\n\nNot measured yet: `{SCRIPT} {part.name}`."
    if part.name == "pin":
        return f"{head}\n\n{pin_table(found.results.trials, found.results.environments)}"
    groups = groups_of(found.results.trials)
    if part.name == "free-threaded":
        body = free_threaded_table(groups)
    else:
        trials = found.results.trials
        body = (ratio_table(groups, tuple(dict.fromkeys(_python(t) for t in trials)),
                            tuple(dict.fromkeys(t.spec.label for t in trials)))
                + "\n\n" + detail_table(groups))
    return f"{head}\n\n{body}\n\n{left_out(found.results.trials)}"


def _python(trial: TrialResult) -> str:
    return trial.spec.python or REFERENCE


def groups_of(trials: Sequence[TrialResult]) -> list[Group]:
    """Each (stack, interpreter, workers, threads) with its clean windows, or every loaded one if none is."""
    found: dict[tuple[str, str, int, int], list[TrialResult]] = defaultdict(list)
    for t in trials:
        if t.load is not None:
            found[(t.spec.label, _python(t), t.stack.workers, t.stack.threads)].append(t)
    return [Group(*key, tuple(w for w in ws if w.valid) or tuple(ws)) for key, ws in found.items()]


def _rps(t: TrialResult) -> float | None:
    return t.load.rps if t.load is not None else None


def _cpu_ms(t: TrialResult) -> float | None:
    app = t.usage("app")
    return 1000 * app.cpu_s / t.load.requests if app is not None and t.load is not None and t.load.requests else None


def _rss(t: TrialResult) -> float | None:
    app = t.usage("app")
    return app.peak_rss_mb if app is not None else None


def fmt(value: Figure | None, spec: str) -> str:
    """A figure and its interval, or why it has none."""
    if value is None:
        return "-"
    text = format(value.value, spec)
    if value.interval is None:
        return f"{text} (1 launch, no interval)"
    return f"{text} [{format(value.interval[0], spec)}, {format(value.interval[1], spec)}]"


def ratio(group: Group, reference: Group | None) -> str:
    """The group's req/s over the reference's, Welch's interval on the logs of their launch means."""
    if reference is None:
        return f"no {REFERENCE} to divide by"
    top, bottom = group.launch_means(_rps), reference.launch_means(_rps)
    centre = ratio_centre(top, bottom, Aggregation.MEAN) if top and bottom else None
    if centre is None:
        return "-"
    ci = ratio_ci(top, bottom, Aggregation.MEAN)
    return f"{centre:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else " (one launch a side, no interval)")


def _pythons(groups: Sequence[Group], also: Sequence[str] = ()) -> list[str]:
    """The interpreters of the groups and `also` (those asked for, measured or not), in the page's order."""
    asked = dict.fromkeys([*(g.python for g in groups), *also])
    return [p for p in INTERPRETERS if p in asked] + [p for p in asked if p not in INTERPRETERS]


def _stack_order(label: str) -> tuple[int, str]:
    """The default suite's order (`pywebbench run`'s), then any other stack by name."""
    return (DEFAULT_SUITE.index(label) if label in DEFAULT_SUITE else len(DEFAULT_SUITE), label)


def ratio_table(groups: Sequence[Group], asked: Sequence[str] = (), stacks: Sequence[str] = ()) -> str:
    """A row per stack (those asked for, measured or not), a column per interpreter."""
    pythons = _pythons(groups, asked)
    labels = sorted(dict.fromkeys([*stacks, *(g.label for g in groups)]), key=_stack_order)
    by = {(g.label, g.python): g for g in groups}
    lines = [f"Req/s on {REFERENCE}, and each other interpreter's ratio to it [95% interval]:", "",
             "| Stack | " + " | ".join(f"{p} req/s" if p == REFERENCE else p for p in pythons) + " |",
             "|---|" + "---:|" * len(pythons)]
    for label in labels:
        cells = []
        for p in pythons:
            g = by.get((label, p))
            if g is None:
                cells.append("left out")
            elif p == REFERENCE:
                cells.append(fmt(figure(g.windows, _rps), ",.0f"))
            else:
                cells.append(ratio(g, by.get((label, REFERENCE))))
        lines.append(f"| `{label}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def gil_of(group: Group) -> str:
    """What the launches' workers said of the GIL: off, re-enabled, not asked; '-' for a build with one."""
    answers = {t.stack.gil for t in group.windows}
    if not any(t.stack.interpreter and "t (" in t.stack.interpreter for t in group.windows) and answers <= {None}:
        return "-"
    if "on" in answers:
        return "re-enabled by an extension module"
    if answers == {"off"}:
        return "off"
    return "not asked (no worker answered)"


def _interpreter(group: Group) -> str:
    read = sorted({t.stack.interpreter for t in group.windows if t.stack.interpreter})
    return escape(read[0].split(" (")[0]) if len(read) == 1 else escape(", ".join(r.split(" (")[0] for r in read)) or "-"


def _launches(group: Group) -> int:
    return len(group.launch_means(_rps))


def detail_table(groups: Sequence[Group]) -> str:
    lines = ["Every cell's figures, the interpreter each launch read back from its workers, and the GIL's answer "
             "on a free-threaded build:", "",
             "| Stack | Python | Ran on | GIL | Req/s | CPU ms/req | RSS MB | Launches | Valid |",
             "|---|---|---|---|---:|---:|---:|---:|---|"]
    order = _pythons(groups)
    for g in sorted(groups, key=lambda g: (_stack_order(g.label), order.index(g.python))):
        lines.append(f"| `{g.label}` | {escape(g.python)} | {_interpreter(g)} | {gil_of(g)} | "
                     f"{fmt(figure(g.windows, _rps), ',.0f')} | {fmt(figure(g.windows, _cpu_ms), '.3f')} | "
                     f"{fmt(figure(g.windows, _rss), ',.1f')} | {_launches(g)} | "
                     f"{'yes' if all(t.valid for t in g.windows) else 'no'} |")
    return "\n".join(lines)


def free_threaded_table(groups: Sequence[Group]) -> str:
    refs = [g for g in groups if (g.label, g.python) == FREE_REFERENCE]
    reference = max(refs, key=lambda g: g.workers) if refs else None
    lines = ["| Stack | Python | Workers x threads | GIL | Req/s | Ratio to sync on 3.11 | CPU ms/req | RSS MB | "
             "Launches |", "|---|---|---|---|---:|---:|---:|---:|---:|"]
    order = _pythons(groups)
    for g in sorted(groups, key=lambda g: (g.label, order.index(g.python), g.workers)):
        threads = f"{g.workers} x {g.threads}" if "gthread" in g.label else f"{g.workers}"
        rel = "reference" if g is reference else ratio(g, reference)
        lines.append(f"| `{g.label}` | {escape(g.python)} | {threads} | {gil_of(g)} | "
                     f"{fmt(figure(g.windows, _rps), ',.0f')} | {rel} | {fmt(figure(g.windows, _cpu_ms), '.3f')} | "
                     f"{fmt(figure(g.windows, _rss), ',.1f')} | {_launches(g)} |")
    note = ("\n\nWhat two cores can and cannot show: the run gives the stack one CPU and the generator the other, so "
            "no build can run Python on two cores at once here; the question these figures answer is whether one "
            "process of threads without a GIL serves as much as sync processes, at what CPU per request and "
            "memory, not how far free-threading scales.")
    if reference is None:
        note += f" No `{FREE_REFERENCE[0]}` on {REFERENCE} was measured: no ratio."
    return "\n".join(lines) + note


def left_out(trials: Sequence[TrialResult]) -> str:
    """Every stack x interpreter that did not install or start, with the first line of its reason."""
    measured = {(t.spec.label, _python(t)) for t in trials if t.load is not None}
    reasons: dict[tuple[str, str], str] = {}
    for t in trials:
        key = (t.spec.label, _python(t))
        if t.status is not TrialStatus.OK and key not in measured and key not in reasons:
            reasons[key] = reason(t.error or t.status.value)
    if not reasons:
        return "Nothing was left out."
    return "Left out, with the run's own reason:\n\n" + "\n".join(
        f"- `{label}` on {escape(python)}: {escape(why)}" for (label, python), why in sorted(reasons.items()))


def reason(error: str) -> str:
    """An error's one line: its first, or for an import that failed the exception the traceback ends
    with (the first line cuts the path before the cause), environments' paths shortened."""
    lines = [line.strip() for line in error.splitlines() if line.strip()] or ["?"]
    raised = next((line for line in reversed(lines) if _RAISED.match(line)), None)
    why = f"does not import: {raised}" if lines[0].startswith("does not import") and raised else lines[0]
    return _SITE_PACKAGES.sub("site-packages/", why)


_RAISED = re.compile(r"^\w+(Error|Exception): ")
_SITE_PACKAGES = re.compile(r"/\S*/site-packages/")


def pin_table(trials: Sequence[TrialResult], environments: Mapping[str, EnvironmentRecord]) -> str:
    gate = head_over_base(trials, GATE_THRESHOLD)
    if not gate.rows:
        return "No stack ran both versions."
    lines = [f"Head over base per figure [95% interval], read against ±{GATE_THRESHOLD:.0%} as the gate reads it:",
             "", "| Stack | Figure | Head/base | Verdict |", "|---|---|---:|---|"]
    for row in gate.rows:
        iv = row.interval
        value = "-" if iv is None else f"{iv.center:.3f} [{iv.low:.3f}, {iv.high:.3f}]"
        why = row.verdict.value + (f" ({row.why_none})" if row.why_none else "")
        lines.append(f"| `{row.stack}` | {row.figure.value} | {value} | {escape(why)} |")
    figures = ", ".join(f.value for f in GateFigure)
    return ("\n".join(lines) + f"\n\nFigures: {figures}; lower is better for all but req/s.\n\n"
            + installed(trials, environments) + "\n\n" + left_out(trials))


def installed(trials: Sequence[TrialResult], environments: Mapping[str, EnvironmentRecord]) -> str:
    """What base and head installed that the other did not, from each environment's `uv pip freeze`."""
    sides: dict[str, dict[str, set[str]]] = defaultdict(dict)
    for t in trials:
        env = environments.get(t.stack.env_hash)
        if env is not None and t.spec.alias in (BASE, HEAD):
            sides[t.spec.stack_id][t.spec.alias] = set(env.freeze)
    lines = []
    for stack, found in sorted(sides.items()):
        base, head = found.get(BASE, set()), found.get(HEAD, set())
        if base and head:
            lines.append(f"- `{stack}`: base {escape(', '.join(sorted(base - head)) or 'the same')}; "
                         f"head {escape(', '.join(sorted(head - base)) or 'the same')}")
    if not lines:
        return "No environment record says what base and head installed."
    return "Installed (what each side's `uv pip freeze` has that the other's has not):\n\n" + "\n".join(lines)


def _limits() -> str:
    return ("## What this page cannot say\n\n"
            "- Cells of different interpreters are measured one after another: a drift of the machine between "
            "them widens or moves their ratio; the pin comparison's base and head share rounds and do not have it.\n"
            "- The 3.14t build here is not PGO/LTO-optimised, and neither are pyenv's: compare them with each "
            "other, not with a distribution's Python.\n"
            "- PyPy's JIT warms up over many requests; the windows here are short.")
