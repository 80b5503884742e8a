"""The generator role across hosts: wrk on every generator host of a `HostPlacement`, as the
runner's LoadGenerator, and the settle load before each window."""

from __future__ import annotations

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
        """A discarded load from the first generator host before a window (--settle)."""
        if seconds <= 0:
            return
        try:
            self.generators[0].run(
                replace(request, duration_s=max(1.0, seconds), label=f"{request.label}.settle"), work_dir)
        except LoadGenError:
            pass  # a discarded load: the window after it says what is wrong
