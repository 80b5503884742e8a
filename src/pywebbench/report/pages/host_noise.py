"""How steady this machine's CPU is (scripts/host-noise), as the README says it: rendered from the
latest record under docs/results/host-noise/, never typed."""

from __future__ import annotations

import json
from pathlib import Path


def readme_line(results: Path) -> str:
    records = sorted((results / "host-noise").glob("*.json"))
    if not records:
        return "(`scripts/host-noise` has not been run on this machine yet)\n"
    data = json.loads(records[-1].read_text())
    return (f"a fixed piece of pure-Python work varied by {data['rate_sd_relative']:.1%} (sd) between "
            f"{data['window_s']:g}-second windows with nothing else running ({data['windows']} windows, the "
            f"slowest at {data['rate_min_relative']:.0%} and the fastest at {data['rate_max_relative']:.0%} of the "
            f"mean; `scripts/host-noise`, `docs/results/host-noise/{records[-1].name}`),\n")
