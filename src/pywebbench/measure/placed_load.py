"""The generator role across hosts: wrk on every generator host of a `HostPlacement`, as the
runner's LoadGenerator, and the settle load before each window."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pywebbench.loadgen.base import LoadGenError, LoadRequest
from pywebbench.loadgen.remote import RemoteWrk, run_together
from pywebbench.results.model import LoadResult


class PlacedGenerator:
    """The LoadGenerator the runner sees: wrk on the generator hosts."""

    name = "wrk"

    def __init__(self, generators: Sequence[RemoteWrk]) -> None:
        self.generators = tuple(generators)

    def version(self) -> str:
        return self.generators[0].version() if self.generators else "unknown"

    def run(self, request: LoadRequest, work_dir: Path) -> LoadResult:
        """The window's load from every generator host, merged from raw records when there are several."""
        if len(self.generators) == 1:
            return self.generators[0].run(request, work_dir)
        return run_together(self.generators, request, work_dir).result

    def settle(self, request: LoadRequest, seconds: float, work_dir: Path) -> None:
        """A discarded load from the first generator host before a window (--settle, a warmup):
        `seconds` of it, as on one host (measure/settle.wrk_settle). wrk takes whole seconds, so it
        is started for longer and its group stopped on time; a 0.25 s settle was a 1 s window."""
        if seconds <= 0:
            return
        settle = replace(request, duration_s=float(math.ceil(seconds) + 1), label=f"{request.label}.settle")
        try:
            started = self.generators[0].start(settle, work_dir)
        except LoadGenError:
            return  # a discarded load: the window after it says what is wrong
        with started.proc:  # stopped on the host (TERM to its group, grace, KILL) on the way out
            time.sleep(seconds)
