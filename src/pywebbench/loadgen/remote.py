"""wrk on a generator host, driven over SSH; its Lua report parsed exactly as a local run's.

The report script and the JSON it writes live in a remote work directory; the JSON comes back
over the same connection (on the netns rig the paths are shared, so nothing is copied).
"""

from __future__ import annotations

import json
import subprocess
from importlib import resources
from pathlib import Path

from pywebbench.loadgen.base import LoadGenError, LoadRequest
from pywebbench.loadgen.wrk import Wrk, parse_wrk_report
from pywebbench.results.model import LoadResult
from pywebbench.stage.ssh import SshConnection, SshError


class RemoteWrk:
    """wrk on `conn`'s host: `run` has the LoadGenerator signature, the load leaves from there."""

    name = "wrk"

    def __init__(self, conn: SshConnection, remote_dir: str, binary: str = "wrk") -> None:
        self.conn = conn
        self.remote_dir = remote_dir
        self.wrk = Wrk(binary)

    def version(self) -> str:
        done = self.conn.run([self.wrk.binary, "-v"], check=False, timeout=15)
        first = (done.stdout or done.stderr).strip().splitlines()
        return first[0] if first else "unknown"

    def run(self, request: LoadRequest, work_dir: Path) -> LoadResult:
        work_dir.mkdir(parents=True, exist_ok=True)
        script = f"{self.remote_dir}/wrk_report.lua"
        report = f"{self.remote_dir}/{request.label}.wrk.json"
        lua = resources.files("pywebbench.loadgen").joinpath("wrk_report.lua").read_text(encoding="utf-8")
        try:
            self.conn.run(["mkdir", "-p", self.remote_dir])
            self.conn.run_line(f"cat > {script} <<'PWB_LUA'\n{lua}\nPWB_LUA")
            self.conn.run(["rm", "-f", report])
        except SshError as exc:
            raise LoadGenError(f"generator host: {exc}") from None
        argv = self.wrk.command(request, Path(script))
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "PYWEBBENCH_WRK_REPORT": report}
        proc = self.conn.spawn(argv, name=f"{request.label}.wrk", remote_dir=self.remote_dir,
                               local_log_dir=work_dir, env=env)
        with proc:
            try:
                code = proc.wait(timeout=request.duration_s + request.timeout_s + 30)
            except subprocess.TimeoutExpired as exc:
                raise LoadGenError("wrk did not finish in time") from exc
        local = work_dir / f"{request.label}.wrk.json"
        try:
            if self.conn.target.shared_fs:
                text = Path(report).read_text()
            else:
                self.conn.fetch(report, local)
                text = local.read_text()
        except (OSError, SshError):
            text = ""
        if code != 0 or not text:
            _, err = proc.fetch_logs()
            raise LoadGenError(f"wrk on {self.conn.name} exited with {code}: {_tail(err)}".rstrip(": "))
        return parse_wrk_report(json.loads(text), tuple(argv))


def _tail(path: Path) -> str:
    try:
        return " ".join(path.read_text(errors="replace").strip().splitlines()[-3:])
    except OSError:
        return ""
