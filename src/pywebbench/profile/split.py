"""Where a stack's CPU went: each sample to the kernel and system calls, the server, the
framework, the app's own code, or the rest, by the file of one frame of it.

The choice, once: a sample goes to the category of its innermost frame that a rule of RULES
classifies, read from the leaf outwards. Standard-library and interpreter frames match no rule,
so they count with whoever called them (`json.dumps` under the app's handler is the app's,
`socket.send` under Gunicorn's worker is the server's). The kernel and system calls are the
samples whose leaf itself is in the C library or the vDSO: a worker inside `send`, `recv`,
`epoll_wait` or `writev` (py-spy's `--native`; without it no sample has such a leaf, and the
category reads 0). Only the leaf counts there, since every stack's root frame is libc's
`__libc_start_main`. Time off the CPU is not counted at all: py-spy runs without `--idle`, and a
sample it lets through of a worker waiting (in `select`, `epoll_wait`, a lock: WAITS) is set apart
by `on_cpu` before the split; what a sampled system call cost the kernel beyond the moment py-spy
caught it cannot be seen from user space. A sample no rule claims is the rest.

The server's and the framework's packages come from the catalog (their pinned requirements, plus
COMPANIONS: packages a requirement brings with it under other names); the app's own code is
the harness's apps directory, or a person's app directory (`pywebbench app`). A framework's own
server (Sanic, aiohttp, Tornado) is one package: its frames count as the framework's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from fnmatch import fnmatchcase

from pywebbench.catalog.model import Stack
from pywebbench.catalog.servers import APPS_DIR
from pywebbench.profile.stacks import Stacks, function_name, parse_frame


class Category(StrEnum):
    KERNEL = "kernel"
    SERVER = "server"
    FRAMEWORK = "framework"
    APP = "app"
    REST = "rest"

    @property
    def words(self) -> str:
        return {"kernel": "kernel and system calls", "app": "the app's own code"}.get(self.value, self.value)


@dataclass(frozen=True)
class Rule:
    """Frames whose file matches `pattern` (fnmatch, case-sensitive) belong to `category`.

    `{server}`, `{framework}`, `{app}` and `{harness}` stand for each of the stack's server
    packages, its framework packages, its app directories and the harness's apps directory (the
    rule is tried once for each)."""

    pattern: str
    category: Category
    leaf_only: bool = False
    """Only the sample's innermost frame may match (the C library: see the module's docstring)."""


RULES: tuple[Rule, ...] = (
    # The C library and the vDSO, where a worker enters the kernel.
    Rule("*/libc.so*", Category.KERNEL, leaf_only=True),
    Rule("*/libc-*.so", Category.KERNEL, leaf_only=True),
    Rule("*/libpthread*.so*", Category.KERNEL, leaf_only=True),
    Rule("[vdso]", Category.KERNEL, leaf_only=True),
    # Servers the harness starts from its apps directory, and the development servers.
    Rule("{harness}/serve_wsgi.py", Category.SERVER),
    Rule("{harness}/pwb_serve.py", Category.SERVER),
    Rule("*/site-packages/werkzeug/serving.py", Category.SERVER),
    Rule("*/socketserver.py", Category.SERVER),
    Rule("*/http/server.py", Category.SERVER),
    Rule("{app}/*", Category.APP),
    Rule("*/site-packages/{server}/*", Category.SERVER),
    Rule("*/site-packages/{server}.*", Category.SERVER),  # a one-file module or an extension (.so)
    Rule("*/{server}/*.c", Category.SERVER),  # an extension's own C source (uvloop's loop.c, httptools)
    Rule("*/site-packages/{framework}/*", Category.FRAMEWORK),
    Rule("*/site-packages/{framework}.*", Category.FRAMEWORK),
    Rule("*/{framework}/*.c", Category.FRAMEWORK),
    Rule("*/site-packages/*", Category.REST),  # every other library: the DB driver, Jinja2, ...
)
"""The one table, first match wins; append a Rule to extend it (split() also takes a table)."""

COMPANIONS: Mapping[str, tuple[str, ...]] = {
    "flask": ("werkzeug", "itsdangerous", "blinker", "click"),
    "aioflask": ("flask", "werkzeug", "itsdangerous", "blinker", "click", "greenletio"),
    "quart": ("werkzeug", "itsdangerous", "blinker", "click", "aiofiles"),
    "fastapi": ("starlette", "pydantic", "pydantic_core", "annotated_types"),
    "django": ("asgiref", "sqlparse"),
    "litestar": ("msgspec", "multidict"),
    "sanic": ("sanic_routing", "sanic_ext"),
    "aiohttp": ("multidict", "yarl", "aiosignal", "frozenlist", "propcache", "aiohappyeyeballs"),
    "blacksheep": ("guardpost", "rodi", "essentials", "essentials_openapi"),
    "apistar": ("werkzeug",),
    "gevent": ("greenlet", "zope"),
    "eventlet": ("greenlet", "dns"),
    "meinheld": ("greenlet",),
    "hypercorn": ("h11", "h2", "wsproto", "priority", "hpack", "hyperframe"),
}
"""Import packages a catalog requirement brings under other names, counted with it."""


@dataclass(frozen=True)
class Packages:
    """What the rules' placeholders stand for, for one stack."""

    server: tuple[str, ...]
    framework: tuple[str, ...]
    app: tuple[str, ...]
    """Directories of the app's own code."""
    harness: tuple[str, ...] = ()
    """The harness's apps directory, whose launchers (serve_wsgi.py) start some servers."""


def import_name(requirement: str) -> str:
    """`gunicorn[gevent]==27.0.1` -> `gunicorn`, `uvicorn-worker==0.4.0` -> `uvicorn_worker`."""
    name = re.split(r"[\[<>=!~ ;@]", requirement.strip(), maxsplit=1)[0]
    return name.lower().replace("-", "_").replace(".", "_")


def _with_companions(requirements: Iterable[str]) -> tuple[str, ...]:
    names = [import_name(r) for r in requirements]
    return tuple(dict.fromkeys(n for name in names for n in (name, *COMPANIONS.get(name, ()))))


def packages_of(stack: Stack, app_dirs: Iterable[str]) -> Packages:
    """The stack's server and framework packages from the catalog, and its app directories (the
    harness's own apps unless it serves a person's app)."""
    harness = str(APPS_DIR)
    dirs = tuple(app_dirs) or ((harness,) if stack.framework.target is None else ())
    framework = _with_companions((stack.framework.name, *stack.framework.requirements)
                                 if stack.framework.target is None else stack.framework.requirements)
    server = _with_companions((stack.server.server, *stack.server.requirements)
                              if stack.server.own_framework is None else stack.server.requirements)
    return Packages(tuple(n for n in server if n not in framework), framework,
                    tuple(d.rstrip("/") for d in dirs), (harness,))


def expand(rules: Iterable[Rule], packages: Packages) -> tuple[Rule, ...]:
    """Each rule once per package or directory its placeholder stands for (none: the rule is dropped)."""
    out: list[Rule] = []
    for rule in rules:
        fills = {"{server}": packages.server, "{framework}": packages.framework, "{app}": packages.app,
                 "{harness}": packages.harness}
        holder = next((h for h in fills if h in rule.pattern), None)
        if holder is None:
            out.append(rule)
            continue
        out += [Rule(rule.pattern.replace(holder, value), rule.category, rule.leaf_only) for value in fills[holder]]
    return tuple(out)


WAITS: frozenset[str] = frozenset({
    "select", "poll", "ppoll", "pselect", "pselect6", "epoll_wait", "epoll_pwait", "epoll_pwait2",
    "nanosleep", "clock_nanosleep", "usleep", "sleep", "pause", "sigsuspend", "sigtimedwait", "sigwaitinfo",
    "wait4", "waitpid", "waitid", "pthread_cond_wait", "pthread_cond_timedwait", "pthread_cond_clockwait",
    "sem_wait", "sem_timedwait", "sem_clockwait", "PyThread_acquire_lock_timed", "take_gil",
})
"""Native functions a worker waits in, off the CPU. py-spy's own idle test misses them under
--native (it pauses the process to read it, and its fallback reads Python frames): an idle
Gunicorn worker gave 81 samples in 2 s. A sample whose innermost native frames include one is
waiting, and not counted (see `on_cpu`); add a name here to extend it."""


def _native(path: str) -> bool:
    return not (path.endswith(".py") or path.startswith("<"))


def waiting(stack: tuple[str, ...]) -> bool:
    """Is this sample a wait: one of WAITS among the native frames at its leaf end?"""
    for text in reversed(stack):
        frame = parse_frame(text)
        if not _native(frame.path):
            return False
        if frame.function in WAITS:
            return True
    return False


def on_cpu(stacks: Stacks) -> tuple[Stacks, Stacks]:
    """(the samples on the CPU, the waits): only the first are split, drawn and counted."""
    busy = [(stack, count) for stack, count in stacks.counts if not waiting(stack)]
    idle = [(stack, count) for stack, count in stacks.counts if waiting(stack)]
    return Stacks.of(busy), Stacks.of(idle)


def classify(stack: tuple[str, ...], rules: tuple[Rule, ...]) -> Category:
    """The category of one sample (frames root first): see the module's docstring."""
    for depth, text in enumerate(reversed(stack)):
        path = parse_frame(text).path
        for rule in rules:
            if (depth == 0 or not rule.leaf_only) and fnmatchcase(path, rule.pattern):
                return rule.category
    return Category.REST


def frame_category(text: str, rules: tuple[Rule, ...]) -> Category | None:
    """One frame's own category by its file (a flame graph's colour); None where no rule claims it."""
    path = parse_frame(text).path
    return next((rule.category for rule in rules if fnmatchcase(path, rule.pattern)), None)


def function_categories(stacks: Stacks, packages: Packages, rules: Iterable[Rule] = RULES) -> dict[str, str]:
    """Each function (stacks.function_name, as by_function names it) and its own category ('' none)."""
    table = expand(rules, packages)
    found: dict[str, str] = {}
    for frame in {f for stack, _count in stacks.counts for f in stack}:
        name = function_name(frame, packages.app)
        if not found.get(name):
            category = frame_category(frame, table)
            found[name] = category.value if category is not None else ""
    return found


def split(stacks: Stacks, packages: Packages, rules: Iterable[Rule] = RULES) -> dict[Category, int]:
    """Samples per category, every category present, summing to stacks.total."""
    table = expand(rules, packages)
    found = dict.fromkeys(Category, 0)
    for stack, count in stacks.counts:
        found[classify(stack, table)] += count
    return found


def shares(split_counts: Mapping[str, int]) -> dict[str, float]:
    """Each category's fraction of the samples (empty when there are none)."""
    total = sum(split_counts.values())
    return {name: count / total for name, count in split_counts.items()} if total else {}
