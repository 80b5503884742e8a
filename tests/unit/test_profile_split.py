"""The CPU split on stacks py-spy recorded (tests/data/profiles/: `py-spy record --subprocesses
--native --full-filenames --format raw` on flask:gunicorn-sync and starlette:uvicorn under wrk,
1 s at 60-100 Hz; the process frames dropped, the environment's path shortened to /venv and the
apps directory's to /apps, and the starlette file cut to its heaviest stacks, to keep them small)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pywebbench.catalog.registry import build_catalog
from pywebbench.profile.split import (
    RULES,
    Category,
    Packages,
    Rule,
    classify,
    expand,
    function_categories,
    import_name,
    on_cpu,
    packages_of,
    shares,
    split,
    waiting,
)
from pywebbench.profile.stacks import Stacks, read_collapsed

DATA = Path(__file__).resolve().parents[1] / "data" / "profiles"
CATALOG = build_catalog()


def _recorded(name: str) -> Stacks:
    return read_collapsed((DATA / name).read_text())


def _packages(stack_id: str) -> Packages:
    found = packages_of(CATALOG.resolve(stack_id), ("/apps",))
    return Packages(found.server, found.framework, found.app, ("/apps",))  # the recording's apps dir


def test_the_catalog_names_each_side_s_packages() -> None:
    gunicorn = packages_of(CATALOG.resolve("flask:gunicorn-sync"), ())
    assert gunicorn.server == ("gunicorn",)
    assert gunicorn.framework[:2] == ("flask", "werkzeug")  # Flask brings Werkzeug (COMPANIONS)
    assert gunicorn.app == gunicorn.harness  # the harness's own apps
    assert packages_of(CATALOG.resolve("starlette:uvicorn"), ()).server == ("uvicorn", "uvloop", "httptools")
    assert "uvicorn_worker" in packages_of(CATALOG.resolve("fastapi:gunicorn-uvicorn"), ()).server
    fastapi = packages_of(CATALOG.resolve("fastapi:uvicorn"), ()).framework
    assert {"fastapi", "starlette", "pydantic"} <= set(fastapi)
    sanic = packages_of(CATALOG.resolve("sanic:sanic"), ())
    assert "sanic" in sanic.framework and "sanic" not in sanic.server  # its own server: one package
    assert import_name("gunicorn[gevent]==27.0.1") == "gunicorn" and import_name("meinheld==1.0.2+g3") == "meinheld"


@pytest.mark.parametrize(("name", "stack_id", "waits", "expected"), [
    # the sieve in pwb_common.count_primes is the app's own code
    ("flask-gunicorn-sync.cpu.txt", "flask:gunicorn-sync", 0,
     {"kernel": 6, "server": 4, "framework": 3, "app": 46, "rest": 0}),
    # Jinja2 (a library the app calls) is the rest; send/shutdown leaves are system calls, poll a wait
    ("flask-gunicorn-sync.template.txt", "flask:gunicorn-sync", 9,
     {"kernel": 21, "server": 9, "framework": 7, "app": 0, "rest": 8}),
    # uvloop's and httptools' C sources count as the server, writev as a system call, epoll_pwait a wait
    ("starlette-uvicorn.hello.txt", "starlette:uvicorn", 6,
     {"kernel": 48, "server": 10, "framework": 4, "app": 0, "rest": 0}),
])
def test_recorded_stacks_split_into_the_five_categories_and_sum_to_the_samples(
        name: str, stack_id: str, waits: int, expected: dict[str, int]) -> None:
    busy, idle = on_cpu(_recorded(name))
    assert idle.total == waits and busy.total + idle.total == _recorded(name).total
    found = split(busy, _packages(stack_id))
    assert {c.value: n for c, n in found.items()} == expected
    assert sum(found.values()) == busy.total
    assert sum(shares({c.value: n for c, n in found.items()}).values()) == pytest.approx(1.0)


def _frame(function: str, path: str, line: int | None = 1) -> str:
    return f"{function} ({path}:{line})" if line is not None else f"{function} ({path})"


SITE = "/venv/lib/python3.11/site-packages"
ROOT = ("_run_module_as_main (<frozen runpy>:198)", _frame("[unknown]", "/usr/lib/x86_64-linux-gnu/libc.so.6", None),
        _frame("Arbiter.run", f"{SITE}/gunicorn/arbiter.py"))


@pytest.mark.parametrize(("leaf", "category"), [
    ((_frame("send", "/usr/lib/x86_64-linux-gnu/libc.so.6", None),), Category.KERNEL),
    ((_frame("hello", "/apps/app_flask.py"), _frame("Response.__init__", f"{SITE}/werkzeug/wrappers/response.py")),
     Category.FRAMEWORK),
    # the standard library counts with its caller: json under the app is the app's
    ((_frame("hello", "/apps/app_flask.py"), _frame("dumps", "/usr/lib/python3.11/json/__init__.py")), Category.APP),
    ((_frame("SyncWorker.handle", f"{SITE}/gunicorn/workers/sync.py"), _frame("send", "/usr/lib/python3.11/socket.py")),
     Category.SERVER),
    ((_frame("hello", "/apps/app_flask.py"), _frame("connect", f"{SITE}/psycopg/connection.py")), Category.REST),
    ((_frame("serve", "/apps/serve_wsgi.py"),), Category.SERVER),  # the harness's launcher is the server's
])
def test_the_innermost_classified_frame_decides(leaf: tuple[str, ...], category: Category) -> None:
    rules = expand(RULES, _packages("flask:gunicorn-sync"))
    assert classify((*ROOT, *leaf), rules) is category


def test_the_c_library_counts_only_as_the_leaf_and_an_unclaimed_sample_is_the_rest() -> None:
    rules = expand(RULES, _packages("flask:gunicorn-sync"))
    libc_root = (_frame("[unknown]", "/usr/lib/x86_64-linux-gnu/libc.so.6", None),
                 _frame("_run_code", "<frozen runpy>", 88))
    assert classify(libc_root, rules) is Category.REST


def test_a_rule_appended_to_the_table_extends_it() -> None:
    stacks = Stacks.of({(*ROOT, _frame("connect", f"{SITE}/psycopg/connection.py")): 5})
    packages = _packages("flask:gunicorn-sync")
    assert split(stacks, packages)[Category.REST] == 5
    # the rule must come before the catch-all for other site-packages
    drivers = (*RULES[:-1], Rule("*/site-packages/psycopg/*", Category.APP), RULES[-1])
    assert split(stacks, packages, drivers)[Category.APP] == 5


def test_a_person_s_app_directory_is_the_app() -> None:
    stack = CATALOG.resolve("flask:gunicorn-sync")
    packages = packages_of(stack, ("/home/me/notes/",))
    assert packages.app == ("/home/me/notes",)
    frames = (*ROOT, _frame("index", "/home/me/notes/notes.py"))
    assert classify(frames, expand(RULES, packages)) is Category.APP


LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"


@pytest.mark.parametrize(("leaf", "waits"), [
    # an idle Gunicorn worker in select, and its master on a queue's lock (py-spy --native let both through)
    ((_frame("SyncWorker.wait", f"{SITE}/gunicorn/workers/sync.py"), _frame("select", LIBC, None)), True),
    ((_frame("Arbiter.wait_for_signals", f"{SITE}/gunicorn/arbiter.py"), _frame("0x7f4d6ded4bf5", "/x/_queue.so", None),
      _frame("PyThread_acquire_lock_timed", "/usr/bin/python3.11", None), _frame("0x7f4d6e31de96", LIBC, None)), True),
    ((_frame("uv__io_poll", "/project/build/libuv/src/unix/linux.c", 1528), _frame("epoll_pwait", LIBC, None)), True),
    ((_frame("Response.write", f"{SITE}/gunicorn/http/wsgi.py"), _frame("send", LIBC, None)), False),
    # a Python frame ends the native run at the leaf: a wait further out is not this sample's
    ((_frame("select", LIBC, None), _frame("spin", "/apps/app.py")), False),
])
def test_a_sample_waiting_in_a_native_wait_is_not_on_the_cpu(leaf: tuple[str, ...], waits: bool) -> None:
    assert waiting((*ROOT, *leaf)) is waits


def test_each_function_has_its_own_category_for_the_flame_graph_s_colours() -> None:
    busy, _idle = on_cpu(_recorded("flask-gunicorn-sync.cpu.txt"))
    found = function_categories(busy, _packages("flask:gunicorn-sync"))
    assert found["count_primes (pwb_common.py)"] == "app"
    assert found["SyncWorker.handle_request (gunicorn/workers/sync.py)"] == "server"
    assert found["send (libc.so.6)"] == "kernel"
    assert found["_run_code (<frozen runpy>)"] == ""  # claimed by no rule: drawn in its caller's colour
