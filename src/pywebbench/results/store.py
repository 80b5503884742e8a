"""The results file: JSON lines, one record per line, written as each trial finishes.

Line 1 is the run header with its `schema_version`; then `environment` and `trial` records
in the order they happened; a final `end` record marks a run that finished. A crash loses at
most the line being written: readers skip a torn last line.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import math
import os
from pathlib import Path
from typing import Any, TypeVar

import cattrs

from pywebbench.core.errors import UserError
from pywebbench.results.model import (
    SCHEMA_VERSION,
    EnvironmentRecord,
    KnobSettings,
    ProfileRecord,
    ResultSet,
    RunHeader,
    ServiceRecord,
    TrialResult,
)

RESULTS_FILE = "results.jsonl"


class ResultsWriteError(UserError):
    """The results file cannot take another record (a full disk, a vanished directory)."""

_converter = cattrs.Converter()
# The field-less knobs' settings are an object in the file ({"spin_loops": 30000}), read back in order.
_converter.register_unstructure_hook_func(lambda t: t == KnobSettings, lambda pairs: dict(pairs))
_converter.register_structure_hook_func(lambda t: t == KnobSettings,
                                        lambda data, _: tuple((str(k), v) for k, v in dict(data).items()))


def results_path(run_dir: Path) -> Path:
    return run_dir / RESULTS_FILE


class ResultsWriter:
    """Appends records and fsyncs each, so a finished trial survives a crash or Ctrl-C."""

    def __init__(self, path: Path, header: RunHeader) -> None:
        self.path = path
        try:
            # 0700: the run directory holds generated configs and logs of private services.
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            # A raw descriptor, no buffer: a write that fails leaves no half line queued to be
            # flushed after the torn tail is cut (a full disk frees space when it is cut).
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            raise UserError(f"cannot write results to {path.parent}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            raise UserError(f"another pywebbench run is writing {path}; wait for it or choose another --out") \
                from None
        if path.stat().st_size == 0:
            self._write({"record": "run", **_converter.unstructure(header)})

    def add_environment(self, env: EnvironmentRecord) -> None:
        self._write({"record": "environment", **_converter.unstructure(env)})

    def add_service(self, service: ServiceRecord) -> None:
        self._write({"record": "service", **_converter.unstructure(service)})

    def add_trial(self, trial: TrialResult) -> None:
        self._write({"record": "trial", **_converter.unstructure(trial)})

    def add_tuning(self, tuning: dict[str, Any]) -> None:
        """A tuning run's answer, after its probes: older readers skip a record kind they do not know."""
        self._write({"record": "tuning", "tuning": tuning})

    def add_profile(self, profile: ProfileRecord) -> None:
        """A profiled window (--profile): a record kind of its own, which a reader from before it
        skips (so it needed no new schema version), and no trial record: no statistic reads it."""
        self._write({"record": "profile", **_converter.unstructure(profile)})

    def finish(self, status: str) -> None:
        self._write({"record": "end", "status": status})

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def _write(self, record: dict[str, Any]) -> None:
        data = memoryview((json.dumps(record, sort_keys=True) + "\n").encode("utf-8"))
        try:
            while data:
                data = data[os.write(self._fd, data):]
            os.fsync(self._fd)
        except OSError as exc:
            # A full disk (ENOSPC) mid-line: cut the torn tail, so the file ends at the last
            # whole record, and stop the run with one line.
            self._truncate_torn_tail()
            raise ResultsWriteError(f"cannot write {self.path}: {exc.strerror or exc}; every record before "
                                    f"this one is intact") from None

    def _truncate_torn_tail(self) -> None:
        try:
            data = self.path.read_bytes()
            end = data.rfind(b"\n") + 1
            with open(self.path, "r+b") as file:
                file.truncate(end)
        except OSError:
            return  # the reader tolerates a torn last line anyway


def migrate(record: dict[str, Any], version: int) -> dict[str, Any]:
    """Bring a record from an older schema up to SCHEMA_VERSION, one step at a time."""
    if version < 1:
        raise UserError(f"no migration from results schema {version} to {SCHEMA_VERSION}")
    if version == 1:
        # 2 added the service-backed workloads' knobs, db_sessions and service records; a
        # version-1 trial measured none of them, which their defaults (None, "direct") say.
        if record.get("record") == "run":
            record = {**record, "schema_version": 2}
        version = 2
    if version == 2:
        # 3 added resources, open-loop rates and calibration aliases, all defaulted.
        if record.get("record") == "run":
            record = {**record, "schema_version": 3}
        version = 3
    if version == 3:
        # 4 added the measuring method: every earlier trial was its own server start (the
        # restart method), so its launch is its round.
        if record.get("record") == "run":
            record = {**record, "schema_version": 4}
        elif record.get("record") == "trial":
            spec = dict(record.get("spec", {}))
            spec.setdefault("method", "restart")
            spec.setdefault("launch", int(spec.get("round", 0)))
            record = {**record, "spec": spec}
        version = 4
    if version == 4:
        # 5 added the service-failed status (a backing service died mid-window) and the
        # database a stack read (StackInfo.db, default postgresql): nothing to change.
        if record.get("record") == "run":
            record = {**record, "schema_version": 5}
        version = 5
    if version == 5:
        # 6 added the server-oom status (a process of the server killed for its --memory-limit),
        # the app server's limits (TrialSpec.cpu_quota, memory_limit), its cgroup over each window
        # (TrialResult.server_cgroup) and workers=auto's count (StackInfo.sizing), all defaulted.
        if record.get("record") == "run":
            record = {**record, "schema_version": 6}
        version = 6
    if version == 6:
        # 7 added the interpreter and the pinned package asked for (TrialSpec.python, pin) and the
        # interpreter a server ran with its GIL (StackInfo.interpreter, gil), all defaulted.
        if record.get("record") == "run":
            record = {**record, "schema_version": 7}
        version = 7
    return record


def load_results(location: Path) -> ResultSet:
    """Read a run directory (or its results file) back into a ResultSet."""
    path = location if location.is_file() else results_path(location)
    if not path.exists():
        raise UserError(f"no results file at {path}")
    records = _read_records(path)
    if not records or records[0].get("record") != "run":
        raise UserError(f"{path} does not start with a run header")
    version = records[0].get("schema_version", 0)
    if not isinstance(version, int) or isinstance(version, bool):
        raise UserError(f"{path}: schema_version {version!r} is not a whole number")
    if version > SCHEMA_VERSION:
        raise UserError(
            f"{path} has results schema {version}; this pywebbench reads up to "
            f"{SCHEMA_VERSION}: upgrade pywebbench"
        )
    records = [migrate(r, version) for r in records]
    header = _structure(path, 1, records[0], RunHeader)
    trials: list[TrialResult] = []
    environments: dict[str, EnvironmentRecord] = {}
    services: list[ServiceRecord] = []
    tuning: dict[str, Any] | None = None
    profiles: list[ProfileRecord] = []
    complete = False
    for number, record in enumerate(records[1:], start=2):
        kind = record.get("record")
        if kind == "trial":
            trials.append(_structure(path, number, record, TrialResult))
        elif kind == "environment":
            env = _structure(path, number, record, EnvironmentRecord)
            environments[env.hash] = env
        elif kind == "service":
            services.append(_structure(path, number, record, ServiceRecord))
        elif kind == "profile":
            profiles.append(_structure(path, number, record, ProfileRecord))
        elif kind == "tuning":
            answer = record.get("tuning")
            if not isinstance(answer, dict):
                raise UserError(f"{path}:{number}: a tuning record without its answer")
            tuning = answer
        elif kind == "end":
            complete = record.get("status") == "complete"
    return ResultSet(header, tuple(trials), environments, complete, tuple(services), tuning, tuple(profiles))


T = TypeVar("T")


def _structure(path: Path, number: int, record: dict[str, Any], cls: type[T]) -> T:
    """One record into its value type, or a one-line error naming the record.

    The file may come from anyone (a colleague's run, a download): cattrs reports a wrong
    type, a missing field or a bad enum value as any of several exceptions (an
    ExceptionGroup among them), and every one of them means the same thing here.
    """
    try:
        value = _converter.structure(_strip(record), cls)
        _check_finite(value)
        return value
    except Exception as exc:  # noqa: BLE001 - see the docstring: all of them are "a bad record"
        detail = _first_cause(exc)
        raise UserError(f"{path}: record {number} is not a valid {record.get('record')} record ({detail})") from None


def _first_cause(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {text}"[:200]


def _check_finite(value: object) -> None:
    """NaN and infinities never come from a measurement: a file holding one was edited."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"non-finite number {value}")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _check_finite(getattr(value, f.name))
    elif isinstance(value, (list, tuple)):
        for item in value:
            _check_finite(item)
    elif isinstance(value, dict):
        for item in value.values():
            _check_finite(item)


def _strip(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "record"}


def _read_records(path: Path) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    try:
        # Lines split on \n alone (as written): str.splitlines would also split inside a
        # stored string at \x1c or \u2028, which JSON allows raw.
        lines = path.read_bytes().split(b"\n")
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    while lines and not lines[-1].strip():
        lines.pop()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            if number == len(lines):
                break  # torn last line from a crash mid-write: everything before it stands
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8" \
                if isinstance(exc, UnicodeDecodeError) else "nested too deeply"
            raise UserError(f"{path}:{number}: not a JSON record ({reason})") from None
        if not isinstance(record, dict):
            raise UserError(f"{path}:{number}: not a JSON record (a {type(record).__name__}, not an object)")
        records.append(record)
    return records
