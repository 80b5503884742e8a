"""docs/seed-000.md: "Ignore All Web Performance Benchmarks, Including This One", its four
configurations, and its lesson: Better Async against Better Sync, with the noise."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pywebbench.analyze import tau_coverage
from pywebbench.analyze.agreement import Estimate, Lesson, Verdict, lesson, round_ratios
from pywebbench.analyze.ranking import Score, compare
from pywebbench.analyze.paired import launches_of
from pywebbench.analyze.rows import Row
from pywebbench.plan.interval_rule import least_launches
from pywebbench.plan.presets import get_preset
from pywebbench.report.pages.seeds.common import command, estimate_text, measured
from pywebbench.report.pages.seeds.page import SeedPage

ASYNC, SYNC = "seed000-better-async", "seed000-better-sync"
LESSON_QUOTE = ("Isn't this mindblowing? Remember that the benchmark is always the same, all I'm doing is "
                "changing configuration parameters.")

PAGE = SeedPage(
    number="000",
    title="Seed 000: Ignore All Web Performance Benchmarks, Including This One",
    presets=("seed000", "seed000-original", ASYNC, SYNC),
    baseline="flask:gunicorn-sync",
    baseline_why="the seed's own baseline (\"I use the Flask+Gunicorn test as the baseline\"); ours are paired "
                 "ratios to it in the same rounds.",
    why_cpu="The seed's Tput says how many requests a stack finished while its clients waited on the database; "
            "CPU per request says what each one cost the machine, which decides how many such servers a host can "
            "carry and is where a C server (meinheld, uWSGI) should show, whatever the query delay.",
    headline_preset=ASYNC,
)


def _published(preset: str) -> dict[str, float]:
    return {f.stack: f.value for f in get_preset(preset).published if f.metric == "ratio"}


def _ratio(score: Score) -> str:
    low, high = score.interval if score.interval is not None else (None, None)
    return estimate_text(Estimate(score.value, low, high))


@dataclass(frozen=True)
class Partial:
    """The lesson over the stacks that reached the launches a tau interval needs in both columns,
    when some did not (a stack whose windows failed in one launch)."""

    lesson: Lesson
    left_out: tuple[str, ...]


def compute(results: Path, *, resamples: int = 2000
            ) -> tuple[Lesson, dict[str, Row], dict[str, Row], Partial | None] | None:
    """The lesson from the committed Better Async and Better Sync runs (with each run's db rows by
    stack, and the lesson over the stacks with launches enough where the whole has no interval),
    or None before both exist."""
    runs = [measured(results, name, PAGE.baseline) for name in (ASYNC, SYNC)]
    if runs[0] is None or runs[1] is None:
        return None
    stacks = tuple(_published(ASYNC))
    rows = [[r for r in run[1].rows if r.spec.workload == "db"] for run in (runs[0], runs[1])]
    ratios = [round_ratios(run[0], found, PAGE.baseline) for run, found in zip((runs[0], runs[1]), rows)]
    found = lesson(rows[0], rows[1], stacks, PAGE.baseline, ratios[0], ratios[1], resamples=resamples)
    partial = None
    if found.interval is None:
        enough = least_launches(False)
        left_out = tuple(s for s in found.comparison.stacks if s != PAGE.baseline and any(
            launches_of(side.get(s, ())) < enough for side in ratios))
        kept = tuple(s for s in stacks if s not in left_out)
        if left_out and len(kept) > 2:
            partial = Partial(lesson(rows[0], rows[1], kept, PAGE.baseline, ratios[0], ratios[1],
                                     resamples=resamples), left_out)
    return found, {r.label: r for r in rows[0]}, {r.label: r for r in rows[1]}, partial


def _ranks(found: Lesson, first: dict[str, Row], second: dict[str, Row]) -> str:
    """Each stack's place in both rankings, with its tie group in each (same number: tied)."""
    place = {r.stack: r for r in found.second}
    table = ["| Stack | Better Async: rank | ratio | tie | Better Sync: rank | ratio | tie | moved |",
             "|---|---|---|---|---|---|---|---|"]
    for ranked in found.first:
        other = place[ranked.stack]

        def tie(rows: dict[str, Row]) -> str:
            group = rows[ranked.stack].tie_group if ranked.stack in rows else None
            return "-" if group is None else str(group)

        moved = ranked.rank - other.rank
        table.append(f"| `{ranked.stack}` | {ranked.rank} | {_ratio(ranked.score)} | {tie(first)} | {other.rank} | "
                     f"{_ratio(other.score)} | {tie(second)} | {f'{moved:+d}' if moved else '0'} |")
    return "\n".join(table)


def _seed_side() -> tuple[float | None, set[tuple[str, str]], int]:
    seed = compare({"a": _published(ASYNC), "s": _published(SYNC)}, "a", "s")
    return seed.tau, {(f.ahead, f.behind) for f in seed.flips}, seed.swaps


def verdict_sentence(found: Lesson) -> str:
    clear, swaps = len(found.clear_flips), found.comparison.swaps
    if found.verdict is Verdict.AGREES:
        return (f"agrees: the same stacks rank differently under the two configurations, and {clear} of the "
                f"{swaps} swaps are outside the noise.")
    if found.verdict is Verdict.TIED:
        return f"tied here: {swaps} pairs swap places, but every swap is within the noise of one column or both."
    if found.verdict is Verdict.DIFFERS:
        return "differs: no pair of stacks swaps places between the two configurations here."
    return "not measured: the two runs share no ranked stacks."


def _why_no_tau_interval(first: dict[str, Row], second: dict[str, Row]) -> str:
    """The rule agreement.tau_interval applies, with the launches each column reached."""
    least = {column: min((r.launches for label, r in rows.items() if label != PAGE.baseline), default=0)
             for column, rows in (("Better Async", first), ("Better Sync", second))}
    reached = ", ".join(f"{column} {n}" for column, n in least.items())
    return (f"(no interval: a bootstrap over launches needs {least_launches(False)} launches of every stack in both columns; "
            f"the fewest reached: {reached})")


def _partial_text(partial: Partial | None) -> str:
    if partial is None or partial.lesson.interval is None or partial.lesson.tau is None:
        return ""
    n = len(partial.lesson.comparison.stacks)
    got = partial.lesson.interval
    return (f"; over the {n} stacks with {least_launches(False)} launches in both columns "
            f"({', '.join(f'`{s}`' for s in partial.left_out)} left out) **{partial.lesson.tau:+.2f}** "
            f"[{got.low:+.2f}, {got.high:+.2f}] (95%, bootstrap over each run's launches then rounds, "
            f"{got.resamples} resamples)")


def lesson_section(results: Path, *, resamples: int = 2000) -> str:
    seed_tau, seed_flips, seed_swaps = _seed_side()
    seed_tau_text = "undefined" if seed_tau is None else f"{seed_tau:+.2f}"
    head = ["## The lesson: Better Async against Better Sync", f"> *{LESSON_QUOTE}*"]
    computed = compute(results, resamples=resamples)
    if computed is None:
        return "\n\n".join(head + [
            f"**Not yet measured here.** Both columns are needed: `{command(ASYNC)}` and `{command(SYNC)}`. "
            f"The seed's own two columns give Kendall's tau-b {seed_tau_text} over its 21 stacks, with "
            f"{seed_swaps} pairs swapping places; it had no interval to say which swaps are noise."])
    found, first_rows, second_rows, partial = computed
    comparison = found.comparison
    n = len(comparison.stacks)
    if found.interval is not None:
        interval = (f"[{found.interval.low:+.2f}, {found.interval.high:+.2f}] (95%, bootstrap over each run's "
                    f"rounds, launches then rounds within them, {found.interval.resamples} resamples)")
    else:
        interval = _why_no_tau_interval(first_rows, second_rows) + _partial_text(partial)
    tau = "undefined" if found.tau is None else f"{found.tau:+.2f}"
    lines = [
        f"Kendall's tau-b between the two rankings of the seed's {n} stacks by their ratio to "
        f"`{PAGE.baseline}`: ours **{tau}** {interval}; the seed's own two columns: {seed_tau_text}."
        + tau_coverage_note(results),
        f"Pairs that swap places: {comparison.swaps} of {n * (n - 1) // 2} (the seed's columns: {seed_swaps}). "
        f"Outside the noise, both rows' 95% intervals separate in both columns: {len(found.clear_flips)}.",
        verdict_sentence(found),
    ]
    lines.append("Where each stack stands in the two columns (a *moved* of +12: twelve places higher under Better "
                 "Sync; rows of one column with the same *tie* number cannot be told apart by their own paired "
                 "ratio):")
    lines.append(_ranks(found, first_rows, second_rows))
    if comparison.flips:
        table = ["| Ahead under Better Async | its ratio | Behind | its ratio | Better Sync: first's ratio | "
                 "second's ratio | outside the noise | the seed swaps them too |", "|---|---|---|---|---|---|---|---|"]
        clear = set(found.clear_flips)
        ordered = sorted(comparison.flips, key=lambda f: (f not in clear, comparison.stacks.index(f.ahead)))
        for flip in ordered:
            table.append(
                f"| `{flip.ahead}` | {_ratio(flip.ahead_first)} | `{flip.behind}` | {_ratio(flip.behind_first)} | "
                f"{_ratio(flip.ahead_second)} | {_ratio(flip.behind_second)} | "
                f"{'yes' if flip in clear else 'no'} | {'yes' if (flip.ahead, flip.behind) in seed_flips else 'no'} |")
        lines.append(f"<details><summary>Every pair that swaps places ({comparison.swaps}), those outside the noise "
                     "first</summary>\n\n" + "\n".join(table) + "\n\n</details>")
    return "\n\n".join(head + lines)


def tau_coverage_note(results: Path) -> str:
    """What the tau interval's coverage is at this shape (analyze/tau_coverage.py), said beside it:
    a bootstrap of 3-4 launches falls well short of 95%."""
    cells = tau_coverage.load(results)
    if not cells:
        return ""
    one = [c for c in cells if c["rounds_per_launch"] == 1 and c["coverage"] is not None]
    if not one:
        return ""
    held = ", ".join(f"{c['coverage']:.0%} at {c['launches']} launches" for c in one)
    short = all(float(c["coverage"] or 0.0) < 0.93 for c in one)
    more = [c for c in cells if int(c["rounds_per_launch"] or 1) > 1 and c["coverage"] is not None]
    rounds = "".join(f"; with {n} rounds a launch, " + ", ".join(
        f"{c['coverage']:.1%} at {c['launches']}" for c in more if c["rounds_per_launch"] == n)
        for n in dict.fromkeys(c["rounds_per_launch"] for c in more))
    return (f" Simulated at this shape (the two columns' rankings as truth, one round a launch as here), that "
            f"interval holds the true tau {held}" + ("; it is **not a 95% interval**: read it as the run's "
                                                    "own resampling spread, narrower than the truth's"
                                                    if short else "") +
            f"{rounds} (`python -m pywebbench.analyze.tau_coverage`).")


def _short_coverage(results: Path) -> str:
    """The simulated coverage in a few words where the interval falls short of 95%, else empty."""
    one = [c for c in tau_coverage.load(results) or () if c["rounds_per_launch"] == 1 and c["coverage"] is not None]
    if not one or any(float(c["coverage"] or 0.0) >= 0.93 for c in one):
        return ""
    low, high = min(float(c["coverage"] or 0.0) for c in one), max(float(c["coverage"] or 0.0) for c in one)
    return f"an interval that holds the truth {low:.0%}-{high:.0%} of the time at this shape, not 95%"


def render(results: Path) -> str:
    return PAGE.render(results, lesson_section(results))


def headline(results: Path) -> tuple[str, str, str]:
    computed = compute(results)
    quote = f"*{LESSON_QUOTE}*"
    if computed is None:
        return quote, f"not yet measured here: `{command(ASYNC)}` and `{command(SYNC)}`", "-"
    found, partial = computed[0], computed[3]
    tau = "undefined" if found.tau is None else f"{found.tau:+.2f}"
    interval = "" if found.interval is None else f" [{found.interval.low:+.2f}, {found.interval.high:+.2f}]"
    if partial is not None and partial.lesson.interval is not None and partial.lesson.tau is not None:
        interval = (f" ({partial.lesson.tau:+.2f} [{partial.lesson.interval.low:+.2f}, "
                    f"{partial.lesson.interval.high:+.2f}] over the {len(partial.lesson.comparison.stacks)} "
                    "stacks with launches enough)")
    if interval and (short := _short_coverage(results)):
        interval += f" ({short})"
    return (quote, f"Kendall's tau {tau}{interval} between Better Async and Better Sync; "
                   f"{len(found.clear_flips)} of {found.comparison.swaps} swaps outside the noise",
            found.verdict.value)
