"""A person's own app in the stacks' environments: its requirements, its interface, its --setup.

The app's packages join each server's uv environment (so the environment's hash, and the
cache, change with the requirements' content). Whether the app is WSGI or ASGI is decided
by importing it inside a built environment, in a child process: never in the harness's own
interpreter, whose packages are not the app's. `--setup` runs once per environment, in the
app dir, before any of its servers starts.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pywebbench.catalog.model import Interface
from pywebbench.core.errors import UserError
from pywebbench.plan.app import APP_DIR_ENV
from pywebbench.core.procs import ManagedProcess
from pywebbench.stage.envs import BuiltEnv, EnvProvider, EnvSpec

DETECT_TIMEOUT_S = 120.0
SETUP_TIMEOUT_S = 900.0

_DETECT = r'''
import importlib, inspect, json, sys, traceback

def kind(app):
    """ASGI 3: a coroutine function (or an object with an async __call__) of (scope, receive,
    send); WSGI: a plain callable of (environ, start_response)."""
    if not callable(app):
        return None
    call = app if inspect.isroutine(app) else type(app).__call__
    is_async = inspect.iscoroutinefunction(call) or inspect.iscoroutinefunction(getattr(app, "__call__", None))
    try:
        params = list(inspect.signature(app).parameters.values())
    except (TypeError, ValueError):
        return None
    varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    fits = lambda n: varargs or (len(required) <= n <= len(positional))
    if is_async:
        return "ASGI" if fits(3) else None
    return "WSGI" if fits(2) else None

target, factory, out = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
module, _, attr = target.partition(":")
try:
    app = importlib.import_module(module)
    for part in attr.split("."):
        app = getattr(app, part)
    if factory:
        app = app()
except BaseException as exc:
    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    result = {"error": last}
else:
    result = {"interface": kind(app), "type": type(app).__module__ + "." + type(app).__qualname__}
with open(out, "w") as f:
    json.dump(result, f)
'''


def app_requirements(requirements_file: Path | None, app_dir: Path) -> tuple[str, ...]:
    """The app's packages: the requirements file's lines, else its pyproject's dependencies."""
    if requirements_file is not None:
        try:
            lines = requirements_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"cannot read --requirements {requirements_file}: "
                            f"{getattr(exc, 'strerror', None) or exc}") from None
        found = []
        for line in lines:
            text = line.split(" #", 1)[0].strip()
            if not text or text.startswith("#"):
                continue
            if text.startswith("-"):
                # Option lines (-r, -e, --index-url) would be read relative to another directory
                # inside the environment's build, and are not part of the environment's hash.
                raise UserError(f"--requirements {requirements_file}: option line {text!r} is not supported; "
                                "list the packages themselves")
            found.append(text)
        return tuple(found)
    pyproject = app_dir / "pyproject.toml"
    if not pyproject.exists():
        return ()
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"cannot read {pyproject}: {exc}") from None
    deps = data.get("project", {}).get("dependencies", [])
    if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
        raise UserError(f"{pyproject}: [project] dependencies must be a list of strings")
    return tuple(deps)


def app_process_env(env_dir: Path, app_env: Mapping[str, str]) -> dict[str, str]:
    """An explicit environment for the app's own processes (detection, setup) in env_dir."""
    bin_dir = env_dir / "bin"
    return {
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": os.environ.get("HOME", "/tmp"),
        "LANG": "C.UTF-8",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "PYTHONUNBUFFERED": "1",
        "VIRTUAL_ENV": str(env_dir),
        **app_env,
    }


def detect_interface(env: BuiltEnv, target: str, factory: bool, app_dir: Path,
                     app_env: Mapping[str, str], forced: Interface | None = None) -> Interface:
    """WSGI or ASGI, by importing the app in `env`; an app that does not import, or that is
    neither (unless `forced`, --interface), is a one-line UserError (the traceback's last line)."""
    with tempfile.TemporaryDirectory(prefix="pywebbench-detect-") as tmp:
        out = Path(tmp) / "result.json"
        script = Path(tmp) / "detect.py"
        script.write_text(_DETECT, encoding="utf-8")
        try:
            done = subprocess.run(
                [str(env.python), str(script), target, "1" if factory else "0", str(out)],
                cwd=app_dir, env=app_process_env(env.path, app_env), capture_output=True, text=True,
                timeout=DETECT_TIMEOUT_S, stdin=subprocess.DEVNULL, process_group=0, check=False)
        except subprocess.TimeoutExpired:
            raise UserError(f"--app {target}: importing it took over {DETECT_TIMEOUT_S:.0f}s") from None
        if not out.exists():
            lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
            raise UserError(f"--app {target} could not be imported: {lines[-1] if lines else f'exit {done.returncode}'}")
        result = json.loads(out.read_text())
    if "error" in result:
        raise UserError(f"--app {target} does not import: {result['error']}")
    if forced is not None:
        return forced
    if result["interface"] is None:
        raise UserError(f"--app {target} ({result['type']}) is neither a WSGI callable (environ, start_response) "
                        "nor an ASGI 3 app (async (scope, receive, send)); use --interface to force one")
    return Interface(result["interface"])


@dataclass
class AppEnvProvider:
    """The environment builder, plus --setup run once per environment before it serves."""

    inner: EnvProvider
    app_dir: Path
    app_env: Mapping[str, str]
    setup: str | None
    logs: Path
    services_env: Callable[[], Mapping[str, str]] = dict
    """DATABASE_URL and the like, read when the setup runs (the services are up by then)."""
    base_dir: Path | None = None
    """A gate's base version (`app --baseline-*`): the setup runs in its app dir too."""
    _done: set[str] = field(default_factory=set)

    def ensure(self, spec: EnvSpec, *, retry_failed: bool = False) -> BuiltEnv:
        env = self.inner.ensure(spec, retry_failed=retry_failed)
        if self.setup and env.record.hash not in self._done:
            for app_dir in (self.app_dir, *((self.base_dir,) if self.base_dir is not None else ())):
                self._run_setup(env, app_dir)
            self._done.add(env.record.hash)
        return env

    def _run_setup(self, env: BuiltEnv, app_dir: Path) -> None:
        assert self.setup is not None
        own = {} if app_dir == self.app_dir else {"PYTHONPATH": str(app_dir), APP_DIR_ENV: str(app_dir)}
        proc_env = app_process_env(env.path, {**self.app_env, **own, **self.services_env()})
        name = f"setup-{env.record.hash}" + ("-base" if own else "")
        with ManagedProcess(["/bin/sh", "-c", self.setup], env=proc_env, log_dir=self.logs, name=name,
                            cwd=app_dir) as proc:
            try:
                code = proc.wait(timeout=SETUP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                raise UserError(f"--setup {self.setup!r} did not finish in {SETUP_TIMEOUT_S:.0f}s") from None
            if code != 0:
                tail = " | ".join(ln for ln in proc.stderr_tail(3).splitlines() if ln.strip()) or f"exit {code}"
                raise UserError(f"--setup {self.setup!r} failed (exit {code}): {tail}")
