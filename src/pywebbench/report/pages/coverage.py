"""docs/method.md's coverage section: how often a nominal 95% ratio interval covers the truth,
per shape, from docs/results/coverage/coverage.json (written by scripts/coverage)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pywebbench.analyze.coverage import BAND, EDGE_MAX_RATIOS, EDGE_SE
from pywebbench.analyze.duet_coverage import MAX_RATIOS, TARGET_SE
from pywebbench.plan.interval_rule import SPREADS_TO_POOL, why_none

LOW, HIGH = 0.93, 0.97


def _cell(cell: dict[str, Any]) -> str:
    if not cell["intervals"]:
        return why_none(cell["launches"], lent=cell["stacks"] - 1 >= SPREADS_TO_POOL)
    coverage = cell["covered"] / cell["intervals"]
    mark = "" if LOW <= coverage <= HIGH else " (!)"
    return f"{coverage:.1%} ±{cell['median_half_width']:.0%}{mark}"


def read_record(results: Path, name: str) -> dict[str, Any] | None:
    """A simulation's committed record under docs/results/coverage/, or None before it is run."""
    path = results / "coverage" / name
    return json.loads(path.read_text()) if path.exists() else None


def _grid(cells: list[dict[str, Any]]) -> tuple[list[str], list[float]]:
    """The table of cells (a row per launches x rounds, a column per stack count), and each
    cell's coverage where it gave intervals."""
    stacks = sorted({c["stacks"] for c in cells})
    shapes = sorted({(c["launches"], c["rounds"]) for c in cells})
    by = {(c["launches"], c["rounds"], c["stacks"]): c for c in cells}
    head = "| launches x rounds | " + " | ".join(f"{s} stacks" for s in stacks) + " |"
    lines = [head, "|---|" + "---|" * len(stacks)]
    for launches, rounds in shapes:
        lines.append(f"| {launches} x {rounds} | "
                     + " | ".join(_cell(by[(launches, rounds, s)]) for s in stacks) + " |")
    return lines, [c["covered"] / c["intervals"] for c in cells if c["intervals"]]


def readme_summary(results: Path) -> str:
    """The README's line on the simulated coverage of both grids (rendered, not typed)."""
    said = []
    for name, what in (("coverage.json", "interleaved"), ("duet.json", "duet")):
        data = read_record(results, name)
        if data is None:
            continue
        cells = [c for c in data["cells"] if c["intervals"]]
        rated = [c["covered"] / c["intervals"] for c in cells]
        inside = sum(LOW <= c <= HIGH for c in rated)
        launches = sorted({c["launches"] for c in cells})
        stacks = sorted({c["stacks"] for c in cells})
        said.append(f"{what}: {inside} of {len(rated)} shapes cover {LOW:.0%}-{HIGH:.0%} (lowest {min(rated):.1%}, "
                    f"highest {max(rated):.1%}), {launches[0]}-{launches[-1]} launches and {stacks[0]}-{stacks[-1]} "
                    "stacks")
    if not said:
        return "No coverage simulation committed yet (`scripts/coverage`).\n"
    return "Simulated runs of known truth ([docs/method.md](docs/method.md)), " + "; ".join(said) + ".\n"


def duet_section(results: Path) -> str:
    """The duet designs' coverage per shape, from docs/results/coverage/duet.json."""
    data = read_record(results, "duet.json")
    if data is None:
        return "No simulation of duet runs committed yet (`scripts/coverage`)."
    cells, noise = data["cells"], data["noise"]
    lines, rated = _grid(cells)
    inside = sum(LOW <= c <= HIGH for c in rated)
    return f"""\
`--method duet` loads two stacks at once on the same CPUs: every pair each round up to five
stacks, and beyond that two cycles through them, 2k windows a round (`plan/duet_design.py`:
each stack beside its neighbours in the order the rounds so far give, and beside the stacks of
a random cycle drawn afresh each round). Each cell simulates {min(c["runs"] for c in cells):,}-{max(c["runs"] for c in cells):,}
duet runs of known truth with the harness's own design, least-squares fit and intervals
(`analyze/duet_coverage.py`): a side's noise of {noise["side_sd"]:.1%} (Student-t tails, {noise["tail_df"]:g} df,
stacks noisier than others as above, an outlier side in {1 / noise["outlier_rate"]:.0f} cut to
{noise["outlier_factor"]:.0%}), a launch effect of {noise["launch_sd"]:.0%}, the run's own offset of each ratio of
{noise["run_sd"]:.2%} that the intervals' run term covers, and a host speed of {noise["machine_sd"]:.0%} per window
shared by both sides. These follow the committed duet calibrations (below), which measured
pairs of one stack with itself; stacks unlike each other are noisier beside each other, and
only a run of them can show by how much (the catalog's run: [catalog.md](catalog.md)).

{chr(10).join(lines)}

{inside} of {len(rated)} cells cover between {LOW:.0%} and {HIGH:.0%} (lowest {min(rated):.1%},
highest {max(rated):.1%}).{_standard_errors(cells)}"""


def _standard_errors(cells: list[dict[str, Any]]) -> str:
    """What the cells' coverage figures are worth as estimates (records before schema 1's "se" say nothing)."""
    errors = [c["se"] for c in cells if c.get("se") is not None]
    if not errors:
        return ""
    return (f" A cell's coverage is itself an estimate: its standard error, each run counted as one cluster (a run's"
            f" ratios share its baseline), is {min(errors):.2%}-{max(errors):.2%} here; cells add runs until it is"
            f" at most {TARGET_SE:.1%} or they have simulated {MAX_RATIOS:,} ratios, and a cell whose reading lies"
            f" within two standard errors of {BAND[0]:.0%} or {BAND[1]:.0%} goes on until it is two clear of it,"
            f" its standard error is {EDGE_SE:.1%}, or {EDGE_MAX_RATIOS:,} ratios (`analyze/duet_coverage.py`).")


def blocks_section(results: Path) -> str:
    """The duet's coverage when stacks run in launch blocks, from docs/results/coverage/duet-blocks.json."""
    data = read_record(results, "duet-blocks.json")
    if data is None:
        return "No simulation of duet runs in launch blocks committed yet (`scripts/coverage`)."
    cells = data["cells"]
    noises: dict[str, dict[str, float]] = data.get("noises", {})
    sizes = sorted({(c.get("noise", ""), c["stacks"], c["block"]) for c in cells}, key=lambda k: (k[0], -k[1]))
    launches = sorted({c["launches"] for c in cells})
    by = {(c.get("noise", ""), c["stacks"], c["block"], c["launches"]): c for c in cells}
    lines = ["| noise | stacks, block | " + " | ".join(f"{n} launches of 1 round" for n in launches) + " |",
             "|---|---|" + "---|" * len(launches)]
    for noise, stacks, block in sizes:
        side = f"{noise}, a side {noises[noise]['side_sd']:.1%}" if noise in noises else noise or "-"
        lines.append(f"| {side} | {stacks}, blocks of {block} | "
                     + " | ".join(_cell(by[(noise, stacks, block, n)]) for n in launches) + " |")
    rated = [c["covered"] / c["intervals"] for c in cells if c["intervals"]]
    inside = sum(LOW <= c <= HIGH for c in rated)
    return f"""\
`--launch-block N` starts at most N stacks and the baseline per launch; a cycle of launches
partitions the stacks into blocks drawn afresh, so each stack has a launch per cycle while the
baseline has one per block, each with a launch effect of its own. A launch holds only its
block, so its common part (the baseline's own deviation, shared by every ratio of the launch) is
read off an additive fit of stack levels and launch effects (`analyze/moderation.launch_effects`):
the plain mean over the launch's stacks would be the mean level of whichever stacks the block
drew. Two noises: the duet calibrations' above (pairs of one stack with itself), and about the
one the committed catalog run showed (`docs/catalog.md` measures it from the run: the RMS of its
windows' log ratios around each launch's fit, about a side's noise times the square root of two). {min(c["runs"] for c in cells):,}-{max(c["runs"] for c in cells):,}
runs per cell, the blocks drawn as `measure/rounds.py` draws them, each block a launch of its own
as the report reads a run (`simulate_block_run`):

{chr(10).join(lines)}

{inside} of {len(rated)} cells cover between {LOW:.0%} and {HIGH:.0%} (lowest {min(rated):.1%},
highest {max(rated):.1%})."""


def section(results: Path) -> str:
    data = read_record(results, "coverage.json")
    if data is None:
        return "No coverage grid committed yet (`scripts/coverage`)."
    cells, noise = data["cells"], data["noise"]
    lines, rated = _grid(cells)
    inside = sum(LOW <= c <= HIGH for c in rated)
    return f"""\
Each cell simulates runs of known truth at one shape (launches x rounds per launch, and stacks
including the baseline), {min(c["runs"] for c in cells):,}-{max(c["runs"] for c in cells):,} runs
per cell{_edge_words(cells)}, and counts how often the interval each ratio gets covers its true value; beside it,
the median half-width. The noise follows the committed calibrations: a launch effect of
{noise["launch_sd"]:.0%} (sd), a window's noise of {noise["round_sd"]:.0%} with Student-t tails
({noise["tail_df"]:g} df) and an outlier window in {1 / noise["outlier_rate"]:.0f} cut to
{noise["outlier_factor"]:.0%}, a machine's speed of {noise["machine_sd"]:.0%} per round that
each stack answers with its own sensitivity ({noise["sensitivity_sd"]:.0%}), stacks noisier
than others (lognormal scale, sd {noise["stack_spread"]:g}; one in
{1 / noise["noisy_share"]:.0f} three times as noisy). The interval is Student's t over launch
means, each stack's own spread moderated across its table (`analyze/moderation.py`).

{chr(10).join(lines)}

{inside} of {len(rated)} cells with an interval cover between {LOW:.0%} and {HIGH:.0%}
(lowest {min(rated):.1%}, highest {max(rated):.1%}). One launch gives no interval, and the
table says "needs 2 launches" instead of a range; below {SPREADS_TO_POOL + 1} stacks nothing is
lent, and two launches, whose t on one degree of freedom covers but tells nothing (t = 12.7),
give none either: "needs 3 launches" (`plan/interval_rule.py`)."""


def _edge_words(cells: list[dict[str, Any]]) -> str:
    """How the grid settles a cell near an edge of BAND (grids committed before say nothing)."""
    if not any("se" in c for c in cells):
        return ""
    return (f" (a cell within two standard errors of {BAND[0]:.0%} or {BAND[1]:.0%}, each run a cluster, adds "
            f"runs until it is two clear of it, its standard error is {EDGE_SE:.1%}, or {EDGE_MAX_RATIOS:,} ratios)")


def _placed_words(cells: list[dict[str, Any]]) -> str:
    placed = [c for c in cells if c["precision"] is None]
    more = sum(c["answered"] > c["even_answered"] for c in placed)
    fewer = sum(c["answered"] < c["even_answered"] for c in placed)
    return (f"At the same windows it answers more ratios than the even design in {more} of {len(placed)} shapes "
            f"and fewer in {fewer}.")


def coverage_mark(cell: dict[str, Any]) -> str:
    """A simulated cell's coverage, marked (!) outside the band; 'no interval' where it gave none."""
    if not cell["intervals"]:
        return "no interval"
    coverage = cell["covered"] / cell["intervals"]
    return f"{coverage:.1%}" + ("" if LOW <= coverage <= HIGH else " (!)")


def allocation_section(results: Path) -> str:
    """The adaptive design's coverage and what it answers, from docs/results/coverage/allocation.json."""
    data = read_record(results, "allocation.json")
    if data is None:
        return "No simulation of adaptive allocation committed yet (`scripts/coverage`)."
    lines = ["| stacks | even design: launches x rounds | rule | coverage | adaptive launches (mean) "
             "| answered: adaptive | even |", "|---|---|---|---|---|---|---|"]
    for c in data["cells"]:
        ratios = c["runs"] * (c["stacks"] - 1)
        rule = f"within ±{c['precision']:.0%}" if c["precision"] is not None else "placed in the ranking"
        lines.append(f"| {c['stacks']} | {c['launches']} x {c['rounds']} | {rule} | {coverage_mark(c)}"
                     f" | {c['launches_used']:.1f} | {c['answered'] / ratios:.0%} | {c['even_answered'] / ratios:.0%} |")
    rated = [c["covered"] / c["intervals"] for c in data["cells"] if c["intervals"]]
    inside = sum(LOW <= c <= HIGH for c in rated)
    return f"""\
`--allocation adaptive` (with `--precision`): after a pilot of two launches, a launch measures
only the stacks still wider than asked, and the baseline. A stack leaving because of what its
windows showed is a look at the data, so the coverage of every final interval is measured here,
on the noise above. Each adaptive run spends the windows the even design spends (every stack in
every round of the launches shown), in as many launches as they buy (up to three times as many);
*answered* is the share of ratios within the precision at the end of each design. The rows
*placed in the ranking* simulate the rule `--allocation adaptive` runs without `--precision`
(with a `--budget`): a stack leaves once its own paired ratio to each neighbour is different or
equivalent within ±{data["margin"]:.0%}. {_placed_words(data["cells"])}
A launch effect is read off the stacks the launch held by an additive fit (`analyze/moderation.launch_effects`):
the plain mean of the few stacks still measured would be their mean level, not the launch's effect.

{chr(10).join(lines)}

{inside} of {len(rated)} cells cover between {LOW:.0%} and {HIGH:.0%} (lowest {min(rated):.1%}, highest {max(rated):.1%})."""


def stopping_section(results: Path) -> str:
    """Coverage under run --precision's stop, from docs/results/coverage/stopping.json."""
    data = read_record(results, "stopping.json")
    if data is None:
        return "No simulation of the precision stop committed yet (`scripts/coverage`)."
    lines = ["| method | stacks | longest run: launches x rounds | stop within | first look after | coverage "
             "| stopped early | rounds (mean) |", "|---|---|---|---|---|---|---|---|"]
    for c in data["cells"]:
        lines.append(f"| {c['method']} | {c['stacks']} | {c['launches']} x {c['rounds']} | ±{c['precision']:.0%} | "
                     f"{c['min_rounds'] // c['rounds']} launches | {coverage_mark(c)}"
                     f" | {c['stopped_early'] / c['runs']:.0%} | {c['mean_rounds']:.1f} |")
    said = []
    for launches in sorted({c["min_rounds"] // c["rounds"] for c in data["cells"]}):
        rated = [c["covered"] / c["intervals"] for c in data["cells"]
                 if c["intervals"] and c["min_rounds"] // c["rounds"] == launches]
        said.append(f"first look after {launches} launches: {sum(LOW <= r <= HIGH for r in rated)} of {len(rated)} "
                    f"cells between {LOW:.0%} and {HIGH:.0%}, lowest {min(rated):.1%}, highest {max(rated):.1%}")
    return f"""\
`run --precision` with every stack in every round: once its planned rounds are in, and at
least {data["first_look_launches"]} launches, the run asks after each round whether every ratio's interval is
within the precision, and stops when it is (`analyze/stopping.first_look`). Stopping because the
intervals came out narrow is a look at the data; the report computes the intervals as if the
rounds had been fixed in advance. Each run below is simulated on the noise of its method's grid
(interleaved: above; duet: below) and the rule applied after every round, up to the longest run
shown; *stopped early* is the share of runs the rule ended before their last round. The rows
whose first look comes after 2 launches are the rule as it was: where most runs stopped early it
cost up to two points of coverage; looking first after {data["first_look_launches"]} costs about one round.

{chr(10).join(lines)}

{"; ".join(said)}."""


def _share_range(cells: list[dict[str, Any]], key: str) -> str:
    shares = [c[key] / (c["runs"] * (c["stacks"] - 1)) for c in cells]
    return f"{min(shares):.0%}-{max(shares):.0%}"


def readme_allocation(results: Path) -> str:
    """The README's sentence on what each adaptive rule buys at the same windows (rendered, not typed)."""
    data = read_record(results, "allocation.json")
    if data is None:
        return "(no simulation of adaptive allocation committed yet: `scripts/coverage`)\n"
    cells = data["cells"]
    stacks = sorted({c["stacks"] for c in cells})
    placed = [c for c in cells if c["precision"] is None]
    said = [f"simulated at {', '.join(map(str, stacks[:-1]))} and {stacks[-1]} stacks: the ranking rule places "
            f"{_share_range(placed, 'answered')} of the stacks where the even design places "
            f"{_share_range(placed, 'even_answered')}, more in {sum(c['answered'] > c['even_answered'] for c in placed)} "
            f"of {len(placed)} shapes"]
    for precision in sorted({c["precision"] for c in cells if c["precision"] is not None}, reverse=True):
        rule = [c for c in cells if c["precision"] == precision]
        said.append(f"within ±{precision:.0%} the precision rule answers {_share_range(rule, 'answered')} of the "
                    f"ratios against {_share_range(rule, 'even_answered')}, more in "
                    f"{sum(c['answered'] > c['even_answered'] for c in rule)} of {len(rule)} shapes")
    return "(" + "; ".join(said) + ")\n"
