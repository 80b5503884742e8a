"""replay: a recorded log's arrivals sent at their own times (`app --from-log FILE --replay`).

The Go command `replay` (stage/reference/go/cmd/replay) is vegeta's attacker driven by a
schedule instead of a constant rate: request n goes out at the n-th offset after the attack
began, whatever the server does, so the log's bursts reach the server; `connections` caps the
requests in flight, as for vegeta and oha. Its results are vegeta's CSV records, read by
loadgen/vegeta.py, and its latency is corrected the same way: a request that found every
worker busy at its intended time is timed from that time, not from when it went out.

The window's stretch of the recording comes from the workload's Schedule
(catalog/schedule.py): at the window's offered rate, from where its round starts. Besides
the usual load result, each second's offered and answered requests are kept
(`LoadResult.per_second`: scheduled by the log, offered, answered, held back by busy
connections), so a report can show offered against achieved over time and hold what the
generator offered to what the log scheduled.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from typing import ClassVar
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from pywebbench.catalog.protocols import Protocol
from pywebbench.plan.generators import Capabilities, ChosenBy, Mixes, built_with_go
from pywebbench.catalog.schedule import per_second
from pywebbench.core.errors import UserError
from pywebbench.loadgen.base import LoadGenError, LoadRequest, taskset_prefix
from pywebbench.loadgen.oha import latency_spectrum
from pywebbench.loadgen.vegeta import NS_PER_MS, NS_PER_S, MS_PER_S, Records, read_records, due_times, socket_errors
from pywebbench.core.procs import ManagedProcess, describe_exit
from pywebbench.results.model import LoadResult
from pywebbench.stage.envs import cache_root
from pywebbench.stage.reference import GoBuildError, build_go_binaries
from pywebbench.stage.tools import locate

VEGETA_LIBRARY = "github.com/tsenart/vegeta/v12 v12.13.0"
"""The attacker the replay command is built on (stage/reference/go/go.mod pins it)."""


def replay_binary() -> Path | None:
    """The replay command, built with the Go reference binaries (once per source and toolchain)."""
    try:
        return build_go_binaries(cache_root() / "go").replay
    except GoBuildError:
        return None


def targets_lines(request: LoadRequest) -> str:
    """One vegeta JSON target per kind of the window's mix, in mix order (the schedule's indexes)."""
    parts = urlsplit(request.url)
    origin = f"{parts.scheme}://{parts.netloc}"
    lines = []
    for r in request.mix:
        target: dict[str, object] = {"method": r.method, "url": f"{origin}{r.path}"}
        if r.body:
            target["body"] = base64.b64encode(r.body).decode()
        if r.headers:
            target["header"] = {name: [value] for name, value in r.headers}
        lines.append(json.dumps(target))
    return "\n".join(lines) + "\n"


def schedule_text(arrivals: list[tuple[float, int]]) -> str:
    return "".join(f"{round(offset * NS_PER_S)} {kind}\n" for offset, kind in arrivals)


class Replay:
    name = "replay"
    capabilities: ClassVar[Capabilities] = Capabilities(
        closed_loop=False, open_loop=True, mixes=Mixes.ANY, fixed_count=False,
        protocols=frozenset({Protocol.H1}), remote_hosts=False,
        chosen_by=ChosenBy.REPLAY,
        need=built_with_go("sends a recorded log's arrivals at their own times (app --from-log --replay), "
                           "built from the Go reference sources on first use"))

    def __init__(self, binary: str | None = None) -> None:
        self._binary = binary

    def binary(self) -> str:
        if self._binary is None:
            found = replay_binary()
            if found is None:
                raise LoadGenError("the replay command could not be built: Go >= 1.22 is needed (./scripts/install.sh)")
            self._binary = str(found)
        return self._binary

    def version(self) -> str:
        return f"replay on vegeta's attacker ({VEGETA_LIBRARY})"

    def run(self, request: LoadRequest, work_dir: Path) -> LoadResult:
        schedule = request.schedule
        if schedule is None or not request.mix:
            raise UserError("replay sends a recorded log's arrivals: use `app --from-log FILE --replay`")
        if request.rate is None:
            raise LoadGenError("a replayed window needs its offered rate (the log's, times --replay-speed)")
        if request.requests is not None:
            raise LoadGenError("replay runs for a duration, not a request count")
        arrivals = schedule.stretch(request.schedule_from_s, request.duration_s, request.rate)
        if not arrivals:
            raise LoadGenError(f"the log has no request in this window's {request.duration_s:g} s at "
                               f"{request.rate:g} req/s: give a longer --duration or a higher --replay-speed")
        work_dir.mkdir(parents=True, exist_ok=True)
        stem = f"{request.label}.replay"
        targets, plan, table = (work_dir / f"{stem}.targets", work_dir / f"{stem}.schedule",
                                work_dir / f"{stem}.csv")
        table.unlink(missing_ok=True)
        targets.write_text(targets_lines(request), encoding="utf-8")
        plan.write_text(schedule_text(arrivals), encoding="ascii")
        workers = str(max(1, request.connections))
        argv = [*taskset_prefix(request.cpus), self.binary(), "-targets", str(targets), "-schedule", str(plan),
                "-output", str(table), "-workers", workers,
                "-timeout", f"{max(1, round(request.timeout_s * MS_PER_S))}ms"]
        if not request.keepalive:
            argv.append("-keepalive=false")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}  # no HTTP_PROXY: Go's client honours it
        proc = ManagedProcess(argv, env=env, log_dir=work_dir, name=stem)
        with proc:
            try:
                code = proc.wait(timeout=request.duration_s + request.timeout_s + 30)
            except subprocess.TimeoutExpired as exc:
                raise LoadGenError("replay did not finish in time") from exc
        if code != 0 or not table.exists():
            raise LoadGenError(f"replay {describe_exit(code)}: {proc.stderr_tail(5)}".rstrip(": "))
        intended = np.array([round(offset * NS_PER_S) for offset, _ in arrivals], dtype=np.int64)
        return parse_replay(read_records(table), intended, request.duration_s, tuple(argv),
                            workers=max(1, request.connections))


def parse_replay(records: Records, intended_offsets_ns: npt.NDArray[np.int64], duration_s: float,
                 command: tuple[str, ...] = (), workers: int | None = None) -> LoadResult:
    """A LoadResult from the replay's records and the schedule it was given (offsets from the
    attack's start, request n at offset n)."""
    if len(records) != len(intended_offsets_ns):
        raise LoadGenError(f"replay answered {len(records)} of {len(intended_offsets_ns)} scheduled requests: "
                           "it stopped early")
    answered = records.code != 0
    statuses = records.code[answered]
    due = due_times(records, intended_offsets_ns[records.seq], workers)
    began, intended, queued, start = due.began, due.intended, due.queued, due.start
    end = records.sent_ns + records.latency_ns
    window_ns = int(end.max()) - began
    scheduled = per_second(((intended - began) / NS_PER_S).tolist(), duration_s)
    # Offered when sent, or, for a request that found every connection busy, at its intended
    # time: the generator offered it then and the server held it (as the latency counts it).
    offered_ns = np.where(queued, intended, records.sent_ns)
    offered = per_second(((offered_ns - began) / NS_PER_S).tolist(), duration_s, late_in_last=True)
    done = per_second(((end - began) / NS_PER_S)[answered].tolist(), duration_s, late_in_last=True)
    waited = per_second(((intended - began) / NS_PER_S)[queued & (records.sent_ns > intended)].tolist(), duration_s)
    return LoadResult(
        generator="replay",
        requests=int(answered.sum()),
        duration_s=window_ns / NS_PER_S,
        socket_errors=socket_errors(records.errors),
        non_2xx=int(((statuses < 200) | (statuses >= 300)).sum()),
        latency=latency_spectrum((end - start)[answered] / NS_PER_MS),
        command=command,
        rate=len(records) / duration_s,
        latency_uncorrected=latency_spectrum(records.latency_ns[answered] / NS_PER_MS),
        per_second=tuple(zip(scheduled, offered, done, waited)),
    )


def replay_available() -> bool:
    """Go is there to build the replay command (doctor's requirement)."""
    return locate("go") is not None
