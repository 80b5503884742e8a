"""Comparing answers across servers (measure/answers.py): JSON by structure with ignored paths
and wildcards, each server's own address read as a placeholder where an address stands (never
in bare digits), header values without surrounding whitespace, volatile headers left out, and a
difference named by its JSON path or its first byte with an excerpt of both sides."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pywebbench.measure.answers import Reply, difference, normalise_text, odd_answers, parse_path, path_text

A = ("127.0.0.1:40123", "40123")
B = ("127.0.0.1:5001", "5001")


def _json(value: Any, origins: tuple[str, ...] = A, ignore: tuple[str, ...] = (),
          headers: tuple[tuple[str, str], ...] = ()) -> Reply:
    return Reply(json.dumps(value).encode(), headers, origins, ignore)


@pytest.mark.parametrize(("text", "steps"), [
    ("query_ms", ("query_ms",)),
    ("rows[*].elapsed", ("rows", None, "elapsed")),
    ("meta.timing", ("meta", "timing")),
    ("rows[3].name", ("rows", 3, "name")),
    ("[*].id", (None, "id")),
    ("*.elapsed", (None, "elapsed")),
    ("headers.Host", ("headers", "Host")),
    ('meta["a.b"][0]', ("meta", "a.b", 0)),
    ("grid[1][2]", ("grid", 1, 2)),
])
def test_field_paths_parse(text: str, steps: tuple[object, ...]) -> None:
    assert parse_path(text) == steps


@pytest.mark.parametrize("text", ["", "a..b", "a.", ".a", "rows[", "rows[x]", "a]b", "]", "rows[*]name"])
def test_malformed_field_paths_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_path(text)


def test_path_text_is_the_ignore_syntax() -> None:
    assert path_text(("rows", 3, "name")) == "rows[3].name"
    assert path_text((0, "id")) == "[0].id"
    assert path_text(("meta", "a.b")) == 'meta["a.b"]'
    assert parse_path(path_text(("meta", "a.b", 2))) == ("meta", "a.b", 2)
    assert path_text(()) == "the body"


def test_json_is_compared_by_structure_not_bytes() -> None:
    left = Reply(b'{"a": 1, "b": [1, 2]}', origins=A)
    right = Reply(b'{"b":[1,2],"a":1}', origins=B)
    assert difference(left, right) is None


def test_the_json_path_of_the_first_difference() -> None:
    rows = [{"name": n} for n in "xyza"]
    assert difference(_json({"rows": [*rows[:3], {"name": "a"}]}), _json({"rows": [*rows[:3], {"name": "b"}]}, B)) \
        == 'rows[3].name: "a" != "b"'
    assert difference(_json({"n": 1}), _json({"n": 1, "extra": [1]}, B)) == "extra: (absent) != [1]"
    assert difference(_json([1, 2]), _json([1], B)) == "[1]: 2 != (absent)"
    assert difference(_json({"ok": True}), _json({"ok": 1}, B)) == "ok: true != 1"
    assert difference(_json({"n": 1}), _json({"n": 1.0}, B)) is None


def test_ignored_paths_and_wildcards() -> None:
    timed = ("query_ms", "rows[*].elapsed", "meta.timing")
    left = _json({"query_ms": 1.5, "rows": [{"id": 1, "elapsed": 0.1}, {"id": 2, "elapsed": 0.2}],
                  "meta": {"timing": {"db": 3}, "v": 1}}, ignore=timed)
    right = _json({"query_ms": 2.7, "rows": [{"id": 1, "elapsed": 0.3}, {"id": 2, "elapsed": 0.9}],
                   "meta": {"timing": {"db": 4, "cache": 1}, "v": 1}}, B, ignore=timed)
    assert difference(left, right) is None
    assert difference(left, _json({"query_ms": 2.7, "rows": [{"id": 1, "elapsed": 0.3}, {"id": 3, "elapsed": 0.9}],
                                   "meta": {"timing": {}, "v": 1}}, B, ignore=timed)) == "rows[1].id: 2 != 3"
    # an ignored field may be missing on one side
    assert difference(_json({"a": 1, "query_ms": 3}, ignore=("query_ms",)), _json({"a": 1}, B)) is None
    # `*` is any key, `[*]` any index, at that depth only
    assert difference(_json({"x": {"t": 1}, "y": {"t": 2}}, ignore=("*.t",)), _json({"x": {"t": 5}, "y": {"t": 6}}, B)) \
        is None
    assert difference(_json({"x": {"t": 1}}, ignore=("t",)), _json({"x": {"t": 5}}, B)) == "x.t: 1 != 5"


def test_each_servers_own_host_and_port_read_as_a_placeholder() -> None:
    echo_a = {"host": "127.0.0.1:40123", "url": "http://127.0.0.1:40123/x?p=1", "port": 40123, "sport": "40123",
              "headers": {"Host": "127.0.0.1:40123"}, "n": 401234}
    echo_b = {"host": "127.0.0.1:5001", "url": "http://127.0.0.1:5001/x?p=1", "port": 5001, "sport": "5001",
              "headers": {"Host": "127.0.0.1:5001"}, "n": 401234}
    assert difference(_json(echo_a), _json(echo_b, B)) is None
    # "port 40123" is a bare number in text: no longer masked (it used to be), see the next test
    assert normalise_text("on 127.0.0.1:40123, port 40123, not 140123 or 401234", A) \
        == "on <host:port>, port 40123, not 140123 or 401234"
    text_a = Reply(b"served at 127.0.0.1:40123 (http://localhost:40123/)", origins=A)
    text_b = Reply(b"served at 127.0.0.1:5001 (http://localhost:5001/)", origins=B)
    assert difference(text_a, text_b) is None
    # a server that echoes another's port is still different
    assert difference(_json({"port": 5001}), _json({"port": 5001}, B)) == 'port: 5001 != "<port>"'


@pytest.mark.parametrize(("text", "read"), [
    ("http://127.0.0.1:40123/x?p=1", "http://<host:port>/x?p=1"),
    ("http://localhost:40123/x", "http://localhost:<port>/x"),
    ("http://user@[::1]:40123/", "http://user@[::1]:<port>/"),
    ("/login?next=http%3A%2F%2F127.0.0.1%3A40123%2Fx", "/login?next=http%3A%2F%2F127.0.0.1%3A<port>%2Fx"),
    ('<http://127.0.0.1:40123/page/2>; rel="next"', '<http://<host:port>/page/2>; rel="next"'),
    # digits that are not an address: a bare number, a time or ratio, a longer number or name
    ("port 40123", "port 40123"),
    ("19309, 40123, 32204", "19309, 40123, 32204"),
    ("12:40123", "12:40123"),
    ("localhost:401234", "localhost:401234"),
    ("127.0.0.1:140123", "127.0.0.1:140123"),
])
def test_a_port_is_masked_only_where_an_address_stands(text: str, read: str) -> None:
    assert normalise_text(text, A) == read


def test_a_bare_number_equal_to_the_port_is_not_masked_in_a_binary_body() -> None:
    # pypiserver's 58 KB wheel: its bytes held one server's port digits, which were masked
    head, tail = b"PK\x03\x04\xff\xfe\x80 19309, ", b", 32204 \xc3\x28\x00" + bytes(range(256))
    wheel = head + b"40123" + tail
    assert difference(Reply(wheel, origins=A), Reply(wheel, origins=B)) is None
    found = difference(Reply(wheel, origins=A), Reply(head + b"58517" + tail, origins=B))
    assert found is not None
    assert found.startswith(f"byte {len(head)}: ") and "40123" in found and "<port>" not in found
    # the same in a text body, and in a header that is not an address
    assert difference(Reply(b"n=40123", origins=A), Reply(b"n=5001", origins=B)) == \
        "byte 2: 'n=40123' != 'n=5001' (7 and 6 bytes)"
    assert difference(Reply(b"", (("X-Count", "40123"),), A), Reply(b"", (("X-Count", "40123"),), B)) is None


def test_a_binary_body_differing_only_in_each_servers_own_url_is_the_same() -> None:
    left = Reply(b"\x89PNG\r\n\x1a\n\xff\x00 see http://127.0.0.1:40123/x \xfe\x80", origins=A)
    right = Reply(b"\x89PNG\r\n\x1a\n\xff\x00 see http://127.0.0.1:5001/x \xfe\x80", origins=B)
    assert difference(left, right) is None
    assert difference(left, Reply(right.body.replace(b"/x", b"/y"), origins=B)) is not None


def test_address_headers_and_json_strings_read_the_servers_address_as_a_placeholder() -> None:
    def headers(port: int) -> tuple[tuple[str, str], ...]:
        return (("Location", f"http://127.0.0.1:{port}/login?next=http%3A%2F%2F127.0.0.1%3A{port}%2F"),
                ("Content-Location", f"http://localhost:{port}/doc"),
                ("Link", f"<http://127.0.0.1:{port}/2>; rel=next"), ("Host", f"127.0.0.1:{port}"),
                ("Access-Control-Allow-Origin", f"http://127.0.0.1:{port}"), ("Vary", "Origin"),
                ("Origin", f"http://127.0.0.1:{port}"), ("Referer", f"http://localhost:{port}/from"))
    assert difference(Reply(b"", headers(40123), A), Reply(b"", headers(5001), B)) is None
    echo_a = {"url": "http://localhost:40123/x", "origin": "http://127.0.0.1:40123", "server": ["127.0.0.1", 40123]}
    echo_b = {"url": "http://localhost:5001/x", "origin": "http://127.0.0.1:5001", "server": ["127.0.0.1", 5001]}
    assert difference(_json(echo_a), _json(echo_b, B)) is None
    # a number inside a JSON string is not an address
    assert difference(_json({"note": "40123 rows"}), _json({"note": "5001 rows"}, B)) \
        == 'note: "40123 rows" != "5001 rows"'


def test_header_values_are_compared_without_surrounding_whitespace() -> None:
    # Kinto 26.5 ends its Content-Security-Policy with a space: gunicorn strips it, granian and uWSGI keep it
    csp = "default-src 'none'; frame-ancestors 'none'; base-uri 'none';"
    kept = Reply(b"{}", (("Content-Type", "application/json"), ("Content-Security-Policy", csp + " ")), A)
    stripped = Reply(b"{}", (("Content-Type", "application/json"), ("Content-Security-Policy", csp)), B)
    assert difference(kept, stripped) is None
    assert difference(Reply(b"{}", (*stripped.headers[:1], ("Content-Security-Policy", "\t" + csp + " \t")), A),
                      stripped) is None
    # a difference inside the value is still one, shown without the surrounding space
    other = Reply(b"{}", (*stripped.headers[:1], ("Content-Security-Policy", csp.replace("'none'", "'self'", 1))), B)
    assert difference(kept, other) == (f"header content-security-policy: {csp!r} != "
                                       "\"default-src 'self'; frame-ancestors 'none'; base-uri 'none';\"")
    # whitespace inside a value is part of it
    assert difference(Reply(b"", (("X-A", "a  b"),), A), Reply(b"", (("X-A", "a b"),), B)) is not None


def test_the_excerpt_at_the_first_differing_byte() -> None:
    head = b"x" * 800 + b"{'total': 9, 'count': "
    left = Reply(head + b"4, 'more': 'and more and more text'}", origins=A)
    right = Reply(head + b"5, 'more': 'and more and more text'}", origins=B)
    found = difference(left, right)
    assert found is not None
    assert found.startswith(f"byte {len(head)}: ...")
    assert f"byte {len(head)}: ...\"xx{{'total': 9, 'count': 4, 'more': 'and more and\"... != " \
           "...\"xx{'total': 9, 'count': 5, 'more': 'and more and\"..." in found
    assert found.endswith(f"({len(left.body)} and {len(right.body)} bytes)")
    # at the start, and where one body ends
    assert difference(Reply(b"hello from gunicorn"), Reply(b"hello")) == \
        "byte 5: 'hello from gunicorn' != 'hello' (19 and 5 bytes)"
    assert difference(Reply(b"\nA"), Reply(b"\nB")) == r"byte 1: '\nA' != '\nB' (2 and 2 bytes)"


def test_volatile_headers_are_not_compared_and_the_others_are() -> None:
    left = Reply(b"ok", (("Date", "Mon, 01 Jan 2024 00:00:00 GMT"), ("Server", "gunicorn"), ("Content-Length", "2"),
                         ("Connection", "close"), ("Content-Type", "text/plain"),
                         ("Location", "http://127.0.0.1:40123/next")), A)
    right = Reply(b"ok", (("date", "Tue, 02 Jan 2024 00:00:00 GMT"), ("server", "waitress"),
                          ("transfer-encoding", "chunked"), ("content-type", "text/plain"),
                          ("location", "http://127.0.0.1:5001/next")), B)
    assert difference(left, right) is None
    tagged = Reply(b"ok", (*right.headers, ("X-Served-By", "waitress")), B)
    assert difference(tagged, right) == "header x-served-by: 'waitress' != (absent)"
    assert difference(Reply(tagged.body, tagged.headers, B, ("headers.X-Served-By",)), right) is None


def test_a_header_path_also_names_the_echoed_headers_in_a_json_body() -> None:
    left = _json({"headers": {"X-Trace": "1"}}, headers=(("X-Trace", "1"),), ignore=("headers.X-Trace",))
    right = _json({"headers": {"X-Trace": "2"}}, B, headers=(("x-trace", "2"),), ignore=("headers.X-Trace",))
    assert difference(left, right) is None


def test_odd_answers_names_each_server_once_per_request_with_where() -> None:
    same = {"a": {"app GET /": _json({"n": 1}, A)}, "b": {"app GET /": _json({"n": 1}, B)}}
    assert odd_answers(same) == []
    odd = odd_answers({**same, "c": {"app GET /": _json({"n": 2}, ("127.0.0.1:7", "7"))}})
    assert [(o.label, o.request) for o in odd] == [("c", "app GET /")]
    assert odd[0].line == "c answers app GET / differently from a, b: n: 2 != 1"
