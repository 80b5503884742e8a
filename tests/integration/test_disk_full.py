"""A disk that fills while results are written: one line, and the file whole up to the last record.

A real full disk: a 1 MiB tmpfs, filled but for a few KiB, so the results file runs out of
space after a few trials (root only, as CI runs; the suite runs as root on this project's
machines).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pywebbench.results.store import ResultsWriteError, ResultsWriter, load_results, results_path
from support.builders import header, trial

FREE_BYTES = 24 * 1024


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], check=True)
    try:
        with open(mount / "filler", "wb", buffering=0) as filler:
            try:
                while True:
                    filler.write(b"\0" * 4096)
            except OSError:
                pass  # full: nothing buffered is left to fail again on close
        (mount / "filler").write_bytes((mount / "filler").read_bytes()[:-FREE_BYTES])
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_full_disk_is_one_line_and_every_earlier_record_stays_whole(small_disk: Path) -> None:
    run_dir = small_disk / "run"
    writer = ResultsWriter(results_path(run_dir), header())
    written = []
    with pytest.raises(ResultsWriteError) as caught:
        for n in range(10_000):
            record = trial("flask:gunicorn-sync", 1000.0 + n)
            writer.add_trial(record)
            written.append(record)
    writer.close()
    message = str(caught.value)
    assert "\n" not in message and "No space left on device" in message and "intact" in message
    assert 0 < len(written) < 10_000
    assert results_path(run_dir).read_bytes().endswith(b"\n")  # no torn tail
    loaded = load_results(run_dir)
    assert loaded.trials == tuple(written) and not loaded.complete
