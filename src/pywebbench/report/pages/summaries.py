"""A committed run's summary, computed once per page build: several pages read the same large runs
(the catalog's 125 stacks take seconds to summarize) and scripts/docs builds them all in one process."""

from __future__ import annotations

import functools
from pathlib import Path

from pywebbench.analyze.rows import Summary, summarize
from pywebbench.results.store import load_results, results_path


def summary_of(folder: Path) -> Summary:
    """summarize(load_results(folder)), memoised on the folder and its results file's mtime."""
    return _summary(str(folder.resolve()), results_path(folder).stat().st_mtime_ns)


@functools.lru_cache(maxsize=32)
def _summary(folder: str, stamp: int) -> Summary:
    return summarize(load_results(Path(folder)))
