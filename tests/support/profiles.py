"""A profiled window's record for tests (--profile)."""

from __future__ import annotations

from dataclasses import replace

from pywebbench.profile.stacks import Stacks, compact
from pywebbench.results.model import ProfileRecord
from support.builders import trial
from support.fake_loadgen import synthetic_result


def profile(stack_id: str = "flask:gunicorn-sync", rps: float = 900.0) -> ProfileRecord:
    """100 samples (60 in the app's handler, 40 in send), 900 req/s against a measured 1,000."""
    measured = trial(stack_id, 1000.0)
    frames, stacks = compact(Stacks.of({("main (gunicorn/app.py)", "handle (app_flask.py)"): 60,
                                        ("main (gunicorn/app.py)", "send (libc.so.6)"): 40}))
    return ProfileRecord(
        replace(measured.spec, trial_id=measured.spec.trial_id + ".profile"), "2026-11-21T00:00:05.000001+00:00",
        "2026-11-21T00:00:07.000002+00:00", load=synthetic_result(rps, 2.0), sampler="py-spy 0.4.3 --rate 100 --native",
        samples=100, split=(("kernel", 40), ("server", 0), ("framework", 0), ("app", 60), ("rest", 0)),
        measured_rps=1000.0, overhead=rps / 1000.0 - 1, frames=frames, stacks=stacks,
        frame_categories=tuple({"main": "server", "handle": "app", "send": "kernel"}[f.split()[0]] for f in frames),
        files=("profiles/x/stacks.txt", "profiles/x/speedscope.json", "profiles/x/flame.svg"))
