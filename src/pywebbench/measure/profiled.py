"""`--profile`: after a run's measured windows, one more window per stack and workload with
py-spy on every process of the server, recorded apart from them.

`execute` calls `profile_sessions` once the last measured window is done: never between two of
them (py-spy pauses each worker at each sample, and the windows around it would carry that) and
whatever the method. Each stack is launched once more as its measured windows were (its
environment, start, answer checks, warmup), and each workload gets the settle a measured window
gets, then one window of the same load (its spec: connections, duration, rate) with py-spy
attached before the load starts and stopped when it ends. Each becomes a ProfileRecord, never a
trial: the samples by function, their CPU split (profile/split.py), the files in the run folder,
and the window's req/s against the mean of the stack's measured windows of that cell, which
is the sampling's overhead. A stack the sampler cannot read says why in one line.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timezone

from pywebbench.catalog.workloads import Workload
from pywebbench.core.errors import UserError
from pywebbench.loadgen.base import LoadGenError
from pywebbench.measure.runner import Runner
from pywebbench.measure.window import LaunchFailed, Live
from pywebbench.plan.app import APP_DIR_ENV
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import Plan, Session, point_label
from pywebbench.profile import files
from pywebbench.profile.sampler import (
    RATE_HZ,
    NativeUnwindCrash,
    Recording,
    Sampled,
    SamplerError,
    locate,
    unreadable,
    version,
)
from pywebbench.profile.flame import by_category
from pywebbench.profile.split import Category, function_categories, on_cpu, packages_of, split
from pywebbench.profile.stacks import by_function, compact, read_collapsed
from pywebbench.results.model import LoadResult, ProfileRecord, TrialSpec

SAMPLER_MARGIN_S = 10.0
"""py-spy's --duration bound past the window: it is stopped at the window's end, this only caps it."""


def precise_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def require_sampler() -> str:
    """py-spy's path, or a one-line refusal before any minute is spent."""
    found = locate()
    if found is None:
        raise UserError("--profile needs py-spy (a dependency of pywebbench: run scripts/install.sh)")
    return found


def first_round(plan: Plan) -> tuple[Session, ...]:
    """Each stack once per sweep point, with all its workloads: the plan's first round."""
    first = min((s.round for s in plan.sessions), default=0)
    return tuple(s for s in plan.sessions if s.round == first)


def profile_after(options: RunOptions, runner: Runner, plan: Plan, on_note: Callable[[str], None], *,
                  tuning: bool) -> None:
    """--profile's windows, called once the run's last measured window is done: each stack of the
    plan's first round (so once per sweep point) with all its workloads."""
    if not options.profile:
        return
    if tuning:
        on_note("--profile: a tuning run's probes are not profiled (profile its answer with run --profile)")
        return
    profile_sessions(runner, first_round(plan), on_note, window_s=options.profile_s)


def profile_sessions(runner: Runner, sessions: Sequence[Session], on_note: Callable[[str], None], *,
                     window_s: float | None = None) -> None:
    """One profiled window per session's workload, each recorded with runner.writer.add_profile;
    `window_s` (--profile-window) lengthens it past the measured windows' own."""
    py_spy = require_sampler()
    said = version(py_spy)
    started = time.monotonic()
    for session in sessions:
        for record in _profile_session(runner, session, py_spy, said, window_s):
            runner.writer.add_profile(record)
            on_note(describe(record, point_label(session.point)))
    runner.ledger.add("profiling", time.monotonic() - started)


def _profile_session(runner: Runner, session: Session, py_spy: str, said: str,
                     window_s: float | None) -> list[ProfileRecord]:
    specs = [replace(spec, trial_id=f"{spec.trial_id}.profile", duration_s=window_s or spec.duration_s)
             for spec in session.trials]
    native = session.stack.server.native
    if native is not None:
        not_python = f"its server is not Python ({native}): nothing for a Python sampler to read"
        return [ProfileRecord(spec, precise_now(), precise_now(), unreadable=not_python) for spec in specs]
    records: list[ProfileRecord] = []
    try:
        with runner.launch(session, launch=0, label=f"profile-{files.slug(session.label)}") as live:
            why = unreadable(live.server.pids[0]) if live.server.pids else \
                "its server runs on another host: py-spy samples this machine's processes"
            for spec, workload in zip(specs, session.workloads, strict=True):
                if why is not None:
                    records.append(ProfileRecord(spec, precise_now(), precise_now(), unreadable=why))
                elif (wrong := live.problems.get(workload.name)) is not None:  # nothing to sample
                    records.append(ProfileRecord(spec, precise_now(), precise_now(), error=f"wrong answer: {wrong}"))
                else:
                    records.append(_profiled(runner, live, spec, workload, py_spy, said))
    except LaunchFailed as failed:
        error = f"did not start: {failed.error.splitlines()[0] if failed.error else failed.status.value}"
        records += [ProfileRecord(spec, precise_now(), precise_now(), error=error) for spec in specs[len(records):]]
    finally:
        runner.reset_pool()
    return records


def _profiled(runner: Runner, live: Live, spec: TrialSpec, workload: Workload, py_spy: str,
              said: str) -> ProfileRecord:
    """The window itself: settled as a measured one, loaded with py-spy attached; loaded again
    with Python frames only should py-spy --native crash in it (the sampler line says so)."""
    session = live.session
    runner.progress(f"{session.label} {workload.name} (profile)", spec.warmup_s + spec.settle_s + spec.duration_s)
    try:
        return _sampled(runner, live, spec, workload, py_spy, said, native=True, python_only_because="")
    except NativeUnwindCrash as crash:
        runner.progress(f"{session.label} {workload.name} (profile again: {crash})",
                        spec.warmup_s + spec.settle_s + spec.duration_s)
        return _sampled(runner, live, spec, workload, py_spy, said, native=False,
                        python_only_because=f"{crash}; the window loaded again")


def _sampled(runner: Runner, live: Live, spec: TrialSpec, workload: Workload, py_spy: str, said: str, *,
             native: bool, python_only_because: str) -> ProfileRecord:
    folder = files.profile_folder(runner.run_dir, live.session.label, workload.name, point_label(live.session.point))
    request = runner.windows.load_request(spec, live.port, workload.path, workload.requests, host=live.host)
    started_at = finished_at = ""
    try:
        runner.windows.prepare(live, spec, workload, warmup_s=spec.warmup_s, settle_s=spec.settle_s)
        bound = spec.duration_s + SAMPLER_MARGIN_S
        with Recording(py_spy, live.server.pids[0], folder / files.COLLAPSED, bound_s=bound,
                       native=native, python_only_because=python_only_because) as recording:
            started_at = precise_now()
            load = runner.generator.run(request, runner.run_dir / "loadgen")
            finished_at = precise_now()
    except NativeUnwindCrash:
        raise  # only a --native recording raises it: _profiled loads the window again
    except (LoadGenError, SamplerError, OSError) as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        return ProfileRecord(spec, started_at or precise_now(), finished_at or precise_now(), error=first)
    assert recording.result is not None  # set by a Recording that exited without raising
    return _record(runner, live, spec, load, recording.result, (started_at, finished_at), said)


def _record(runner: Runner, live: Live, spec: TrialSpec, load: LoadResult, sampled: Sampled,
            window: tuple[str, str], said: str) -> ProfileRecord:
    """The samples read, split and drawn; the overhead against the measured windows."""
    session = live.session
    busy, idle = on_cpu(read_collapsed(sampled.path.read_text(errors="replace")))  # waits are no CPU
    packages = packages_of(session.stack, app_dirs(session))
    counts = split(busy, packages)
    functions = by_function(busy, packages.app)
    title = f"{session.label} {spec.workload}{' ' + point_label(session.point) if session.point else ''}"
    frames, stacks = compact(functions)
    categories = function_categories(busy, packages)
    speedscope, flame = files.write_views(sampled.path.parent, busy, functions, title, by_category(categories))
    measured = measured_rps(runner, spec)
    how = f"{said} --rate {RATE_HZ}" + (" --native" if sampled.native else
                                        f" --nonblocking (Python frames only: {sampled.python_only_because})")
    return ProfileRecord(
        spec, window[0], window[1], load=load, sampler=how, samples=busy.total, idle_samples=idle.total,
        sampler_errors=sampled.errors,
        split=tuple((c.value, counts[c]) for c in Category), measured_rps=measured,
        overhead=load.rps / measured - 1 if measured and load.rps > 0 else None, frames=frames, stacks=stacks,
        frame_categories=tuple(categories.get(f, "") for f in frames),
        files=tuple(str(p.relative_to(runner.run_dir)) for p in (sampled.path, speedscope, flame)))


def app_dirs(session: Session) -> tuple[str, ...]:
    """Where a person's app lives (`pywebbench app`, a gate's base or head); () for the built-in apps."""
    found = [dict(pairs).get(APP_DIR_ENV) for pairs in (session.app_env, session.stack.framework.env)]
    return tuple(dict.fromkeys(d for d in found if d))


def measured_rps(runner: Runner, spec: TrialSpec) -> float | None:
    """The mean req/s of the stack's valid measured windows of this cell that had the CPUs to
    themselves (a duet's windows shared them with a partner: not comparable)."""
    values = [t.load.rps for t in runner.results if t.valid and t.load is not None and not t.spec.partner
              and t.spec.label == spec.label and t.spec.cell == spec.cell]
    return sum(values) / len(values) if values else None


def describe(record: ProfileRecord, point: str = "") -> str:
    """One line for the terminal: the split and the overhead, or why there is no profile."""
    head = f"profile {record.label} {record.spec.workload}" + (f" at {point}" if point else "")
    if record.unreadable is not None:
        return f"{head}: not sampled: {record.unreadable}"
    if record.error is not None:
        return f"{head}: failed: {record.error}"
    total = max(1, record.samples)
    parts = ", ".join(f"{name} {count / total:.0%}" for name, count in record.split)
    line = f"{head}: {record.samples:,} samples on the CPU ({parts})"
    if record.load is not None and record.overhead is not None and record.measured_rps is not None:
        line += (f"; {record.load.rps:,.0f} req/s sampled against {record.measured_rps:,.0f} measured "
                 f"({record.overhead:+.1%})")
    return line

