import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def short_quiet_samples(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The wait for idle servers before each window samples 0.05 s instead of 0.25 s: the
    unit tests' stdlib servers are idle at once, and a round scheduler test takes dozens of
    windows (the wait itself is tested in test_quiesce.py at its real length)."""
    from pywebbench.measure import quiesce

    monkeypatch.setattr(quiesce, "SAMPLE_S", 0.05)
    yield
