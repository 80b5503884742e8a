"""wrk, closed-loop, reporting through a Lua done() hook that writes JSON."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from pywebbench.catalog.protocols import Protocol
from pywebbench.plan.generators import Capabilities, Loop, Mixes, Need
from pywebbench.catalog.workloads import HttpRequest
from pywebbench.loadgen.base import LoadGenError, LoadRequest, taskset_prefix
from pywebbench.core.procs import ManagedProcess, describe_exit
from pywebbench.results.model import Latency, LoadResult, SocketErrors

US_PER_MS = 1000.0


class Wrk:
    name = "wrk"
    capabilities: ClassVar[Capabilities] = Capabilities(
        closed_loop=True, open_loop=False, mixes=Mixes.ANY, fixed_count=False, protocols=frozenset({Protocol.H1}),
        remote_hosts=True, default_for=Loop.CLOSED, mean_has_omission_samples=True,
        need=Need("wrk", "closed-loop load generator (default)", "sudo apt-get install -y wrk", required=True))

    def __init__(self, binary: str = "wrk") -> None:
        self.binary = binary

    def version(self) -> str:
        path = shutil.which(self.binary)
        if path is None:
            return "missing"
        done = subprocess.run([path, "-v"], capture_output=True, text=True, check=False)
        first = (done.stdout or done.stderr).strip().splitlines()
        return first[0] if first else "unknown"

    def command(self, request: LoadRequest, script: Path) -> list[str]:
        threads = max(1, min(len(request.cpus) or 1, request.connections))
        argv = [
            *taskset_prefix(request.cpus),
            self.binary,
            "--threads", str(threads),
            "--connections", str(request.connections),
            "--duration", f"{max(1, math.ceil(request.duration_s))}s",
            "--timeout", f"{max(1, math.ceil(request.timeout_s))}s",
            "--script", str(script),
        ]
        if not request.keepalive:
            argv += ["--header", "Connection: close"]
        return [*argv, request.url]

    def run(self, request: LoadRequest, work_dir: Path) -> LoadResult:
        work_dir.mkdir(parents=True, exist_ok=True)
        report = work_dir / f"{request.label}.wrk.json"
        report.unlink(missing_ok=True)
        script = work_dir / "wrk_report.lua"
        if not script.exists():
            script.write_text(_report_lua(), encoding="utf-8")
        if request.mix:
            script = work_dir / f"{request.label}.mix.lua"
            script.write_text(mix_lua(request.mix) + _report_lua(), encoding="utf-8")
        argv = self.command(request, script)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYWEBBENCH_WRK_REPORT": str(report)}
        proc = ManagedProcess(argv, env=env, log_dir=work_dir, name=f"{request.label}.wrk")
        with proc:
            try:
                if request.duration_s != math.ceil(request.duration_s):
                    # wrk takes whole seconds only; started for the next whole second, it is stopped by
                    # SIGINT at the window's end, and a stopped wrk still reports, its own duration measured
                    try:
                        proc.wait(timeout=request.duration_s)
                    except subprocess.TimeoutExpired:
                        os.kill(proc.pid, signal.SIGINT)
                code = proc.wait(timeout=request.duration_s + request.timeout_s + 30)
            except subprocess.TimeoutExpired as exc:
                raise LoadGenError("wrk did not finish in time") from exc
        if code != 0 or not report.exists():
            raise LoadGenError(f"wrk {describe_exit(code)}: {proc.stderr_tail(5)}".rstrip(": "))
        return parse_wrk_report(json.loads(report.read_text()), tuple(argv))


def _report_lua() -> str:
    return resources.files("pywebbench.loadgen").joinpath("wrk_report.lua").read_text(encoding="utf-8")


def lua_string(data: bytes) -> str:
    """A Lua string literal of any bytes: printable ASCII as is, every other byte as \\ddd."""
    return '"' + "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:03d}" for b in data) + '"'


def mix_lua(mix: tuple[HttpRequest, ...]) -> str:
    """wrk's request() hook for a weighted mix: each thread formats every request once, then
    cycles through a pool holding each request `weight` times, so the mix is exact, not sampled."""
    entries = []
    for r in mix:
        headers = ", ".join(f"[{lua_string(k.encode())}] = {lua_string(v.encode())}" for k, v in r.headers)
        body = lua_string(r.body) if r.body else "nil"
        entries.append(f"  {{{lua_string(r.method.encode())}, {lua_string(r.path.encode())}, {{{headers}}}, "
                       f"{body}, {r.weight}}},")
    return "\n".join([
        "-- The traffic mix of the `app` command (generated).",
        "local mix = {", *entries, "}",
        "local pool, next_index = {}, 0",
        "init = function(args)",
        "  for _, r in ipairs(mix) do",
        "    local text = wrk.format(r[1], r[2], r[3], r[4])",
        "    for _ = 1, r[5] do pool[#pool + 1] = text end",
        "  end",
        "end",
        "request = function()",
        "  next_index = next_index % #pool + 1",
        "  return pool[next_index]",
        "end",
        "",
    ])


def parse_wrk_report(data: dict[str, Any], command: tuple[str, ...] = ()) -> LoadResult:
    """Turn the Lua hook's JSON into a LoadResult (wrk's status errors are its non-2xx)."""
    errors = data["errors"]
    lat = data["latency_us"]
    return LoadResult(
        generator="wrk",
        requests=int(data["requests"]),
        duration_s=float(data["duration_us"]) / 1e6,
        socket_errors=SocketErrors(
            connect=int(errors["connect"]),
            read=int(errors["read"]),
            write=int(errors["write"]),
            timeout=int(errors["timeout"]),
        ),
        non_2xx=int(errors["status"]),
        latency=Latency(
            mean_ms=float(lat["mean"]) / US_PER_MS,
            stdev_ms=float(lat["stdev"]) / US_PER_MS,
            max_ms=float(lat["max"]) / US_PER_MS,
            percentiles=tuple((float(p), float(v) / US_PER_MS) for p, v in lat["percentiles"]),
        ),
        bytes_read=int(data["bytes"]),
        command=command,
    )
