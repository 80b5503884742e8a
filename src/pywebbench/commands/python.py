"""`pywebbench python install NAME` (a CPython built into the cache) and `python list` (the
interpreters the python knob can name)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from collections.abc import Sequence
from typing import Any

from pywebbench.stage.interpreters import Interpreter, installed
from pywebbench.stage.pybuild import install


def add_python_parser(sub: "argparse._SubParsersAction[Any]") -> None:
    p_python = sub.add_parser("python", help="the interpreters stacks can run on (the python knob)")
    actions = p_python.add_subparsers(dest="python_command", required=True)
    p_install = actions.add_parser("install", help="build a CPython (e.g. 3.14t, free-threaded) once into the "
                                   "cache, from the upstream tarball on the Debian mirror apt uses")
    p_install.add_argument("name", metavar="NAME", help="3.X or 3.Xt (t: free-threaded, --disable-gil), e.g. 3.14t")
    p_install.add_argument("--source", type=Path, metavar="FILE", help="a Python-3.X.N.tar.xz to build "
                           "instead of the mirror's")
    p_install.add_argument("--optimized", action="store_true", help="PGO and LTO (--enable-optimizations "
                           "--with-lto): as distributions build, several times as long")
    p_install.add_argument("--jobs", type=int, metavar="N", help="make -jN (default: this process's CPUs)")
    actions.add_parser("list", help="every interpreter found (PATH, pyenv, uv, /usr/bin, the cache's builds)")


def cmd_python(args: argparse.Namespace) -> int:
    if args.python_command == "install":
        built = install(args.name, source=args.source, optimized=args.optimized, jobs=args.jobs, say=_say)
        gil = "" if built.gil_enabled is None else f", sys._is_gil_enabled() {built.gil_enabled}"
        print(f"{built.name}: {built.executable} (CPython {built.version}{gil}; built in {built.build_seconds:.0f} s)")
        return 0
    print(render_interpreters(installed()), end="")
    return 0


def render_interpreters(found: Sequence[Interpreter]) -> str:
    """One line per interpreter the python knob can name: its name, where it was found, its path."""
    if not found:
        return "interpreters: none found (PATH, pyenv, uv, /usr/bin)\n"
    width = max(len(i.name) for i in found)
    lines = [f"  {i.name:<{width}}  {i.where:<10}  {i.path}" for i in found]
    return "interpreters (--python, --knob python=...; `pywebbench python install 3.14t` builds one):\n" + \
        "\n".join(lines) + "\n"


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
