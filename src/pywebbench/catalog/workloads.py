"""Workloads: the endpoint each one loads and how to tell a right answer from a wrong one.

A workload the Python apps serve is one `Workload` here and its route one line in the apps' table
(apps/pwb_routes.ROUTES: path, body, content type), which every framework's app module registers in
its own idiom; the Go reference (stage/reference/go/cmd/reference) keeps its own handlers.
tests/unit/test_recipe_workload.py holds the places to each other.

Every answer is checked byte for byte against what the harness computes itself: from the
database it loaded (/db, /api, /posts), the template it renders (/template), the upstream it
started (/upstream), the sieve (/cpu). So "identical bytes across stacks" is enforced, not
hoped for.
"""

from __future__ import annotations

import json
import re

from pywebbench.catalog.shapes.registry import SHAPE_WORKLOADS
from pywebbench.catalog.workload_model import Check as Check, Expected as Expected, HttpRequest as HttpRequest
from pywebbench.catalog.workload_model import Needs as Needs, Workload as Workload
from pywebbench.core.errors import UserError


def _same(expected: bytes | None, body: bytes, what: str) -> str | None:
    if expected is None:
        return f"no reference answer for {what}"
    if body != expected:
        return f"body {body[:60]!r}... ({len(body)} bytes) differs from the expected {what} ({len(expected)} bytes)"
    return None


def cpu_body(size: int) -> bytes:
    """Primes strictly below size, counted by a sieve: the same number every app computes."""
    if size < 3:
        count = 0
    else:
        sieve = bytearray([1]) * size
        sieve[0:2] = b"\x00\x00"
        for i in range(2, int(size**0.5) + 1):
            if sieve[i]:
                sieve[i * i :: i] = bytearray(len(range(i * i, size, i)))
        count = sum(sieve)
    return json.dumps({"n": size, "primes": count}).encode()


_DB_BODY = re.compile(rb'\{"a": "(\d{10})", "b": "([a-z]{20})"\}')


def _check_db(body: bytes, expected: Expected) -> str | None:
    match = _DB_BODY.fullmatch(body)
    if match is None:
        return f"body {body[:80]!r} is not {{\"a\": \"<10 digits>\", \"b\": \"<20 letters>\"}}"
    if expected.db_row is not None:
        key = int(match.group(1))
        stored = expected.db_row(key)
        if stored != match.group(2).decode():
            return f"row {key} is {stored!r} in the database, the app answered {match.group(2)!r}"
    return None


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload("hello", "/hello", "text/plain", "plain text 'Hello World!': framework and server overhead alone",
                 lambda body, e: None if body == b"Hello World!" else f"body {body[:60]!r}, expected b'Hello World!'"),
        Workload("db", "/db", "application/json",
                 "seed 000: pg_sleep(delay) then one random row by key, through pgbouncer",
                 _check_db, frozenset({Needs.DATABASE}), io_bound=True,
                 knobs=("db_delay", "db_pool", "max_db_sessions")),
        Workload("upstream", "/upstream", "application/json",
                 "seeds 001/002: call a slow HTTP API and return its body",
                 lambda body, e: _same(e.upstream_body, body, "upstream body"), frozenset({Needs.UPSTREAM}),
                 io_bound=True, knobs=("upstream_delay",)),
        Workload("template", "/template", "text/html", "seed 004: render a small Jinja2 template",
                 lambda body, e: _same(e.template_body, body, "rendered template")),
        Workload("api", "/api", "application/json",
                 "seed 004: one DB write, one DB read, filter in Python, JSON",
                 lambda body, e: _same(e.api_body, body, "/api answer"), frozenset({Needs.DATABASE}), io_bound=True,
                 knobs=("db_pool", "max_db_sessions")),
        Workload("posts", "/posts", "application/json", "seed 001: 300 rows as about 12 KB of JSON",
                 lambda body, e: _same(e.posts_body, body, "/posts answer"), frozenset({Needs.DATABASE}),
                 io_bound=True, knobs=("db_pool", "max_db_sessions")),
        Workload("cpu", "/cpu", "application/json", "seed 003: a compute-bound handler (pure-Python sieve)",
                 lambda body, e: _same(cpu_body(e.cpu_size), body, "/cpu answer"), knobs=("cpu_size",)),
        Workload("static", "/static", "text/plain", "seed 004: a file served by nginx alone, the machine's ceiling",
                 lambda body, e: _same(e.static_body, body, "static file"), frozenset({Needs.NGINX}), nginx_only=True),
        *SHAPE_WORKLOADS,  # the connection shapes (issue 50): a module each, registered in catalog/shapes/registry.py
    )
}
HELLO = WORKLOADS["hello"]


def get_workload(name: str) -> Workload:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise UserError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}") from None


def posts_body(rows: list[tuple[int, str]]) -> bytes:
    return json.dumps([{"id": a, "title": b} for a, b in rows]).encode()


def api_body(rows: list[tuple[int, str]]) -> bytes:
    items = [{"a": a, "b": b} for a, b in rows if "a" <= b[:1] <= "m"]
    return json.dumps({"count": len(items), "items": items}).encode()
