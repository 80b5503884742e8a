"""A traffic mix read from an access log or a HAR (plan/traffic_import.py): each format, told apart
by content; malformed lines counted by number; credentials stripped unless kept; paths folded by
default and by --fold rules; failed requests left out; --max-kinds and the rest's share; weights
within 0.1 pp; arrivals spread within their second; the synthetic notes log's known mix recovered."""

from __future__ import annotations

import gzip
import importlib.util
import json
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pywebbench.core.errors import UserError
from pywebbench.plan.folding import fold_segment
from pywebbench.plan.traffic import MAX_WEIGHT
from pywebbench.plan.traffic_import import (
    Arrival, LogFormat, arrivals, derive_mix, largest_remainder, parse_fold, parse_folds,
)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
COMBINED = DATA / "access-combined.log"
JSONL = DATA / "access.jsonl"
HAR = ROOT / "examples" / "notes" / "sample.har"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_access_log", ROOT / "examples" / "notes" / "make_access_log.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kinds(mix: Any) -> dict[str, int]:
    return {k.kind: k.count for k in mix.kinds}


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def clf(second: int, target: str, status: int = 200, method: str = "GET") -> str:
    return f'192.0.2.1 - - [10/Oct/2000:13:55:{second:02d} +0000] "{method} {target} HTTP/1.1" {status} 5 "-" "ua"'


# The formats.

def test_a_combined_log_is_read_with_apache_common_lines_trailing_fields_and_absolute_targets() -> None:
    mix = derive_mix(COMBINED)
    assert mix.log_format is LogFormat.COMBINED
    assert kinds(mix) == {
        "GET /notes/{id}?x=1": 2,  # nginx with $request_time after the agent, and a bare `200 -`
        "GET /notes/{id}": 1, "POST /notes": 1,  # Apache's common format (no referer, no agent)
        "GET /users/{uuid}/avatar": 1, "GET /health": 1,  # an absolute target: its path
        "GET /files/{hex}": 1, "GET /dl/{token}": 1, "GET /notes/{id}?page=2": 1,
        "GET /blog/top-10-tips-for-2024-and-beyond": 1,  # a slug is no token
    }
    assert (mix.lines, mix.parsed, mix.failed_left_out) == (16, 13, 3)  # the blank line is no line
    assert (mix.malformed, mix.malformed_first) == (3, (6, 11, 16))  # prose, a bad date, an unknown method
    by_kind = {k.kind: k.spec for k in mix.kinds}
    assert by_kind["GET /notes/{id}?x=1"].path == "/notes/42?x=1"  # the concrete target a replay sends
    assert by_kind["GET /users/{uuid}/avatar"].path == "/users/550e8400-e29b-41d4-a716-446655440000/avatar"
    assert by_kind["GET /notes/{id}?page=2"].path == "/notes/17?page=2"  # access_token=abc left out
    assert mix.stripped_params == ("access_token",)
    assert mix.kinds[0].share == pytest.approx(2 / 10)


def test_a_jsonl_log_is_read_by_any_of_its_key_names() -> None:
    mix = derive_mix(JSONL)
    assert mix.log_format is LogFormat.JSONL
    assert kinds(mix) == {"GET /notes/{id}": 2, "GET /notes/{id}?limit=5": 1, "POST /notes": 1, "GET /health": 1,
                          "GET /tags/tag3?page=2": 1, "DELETE /notes/{id}": 1}
    assert (mix.lines, mix.parsed, mix.malformed, mix.failed_left_out) == (12, 8, 4, 1)
    assert mix.malformed_first == (6, 7, 9, 10)  # not JSON, not an object, no path, a time that is none
    # epoch, ISO with Z, whole seconds, ISO with an offset, msec as text, time_local, epoch ms
    assert [a.offset_s for a in mix.arrivals] == [0.0, 0.25, 0.75, 0.75, 1.5, 1.75, 2.25]
    labels = [mix.kinds[a.kind].kind for a in mix.arrivals]
    assert labels[:2] == ["GET /notes/{id}", "GET /notes/{id}?limit=5"] and labels[-1] == "GET /notes/{id}"


def test_a_har_gives_bodies_and_headers_without_credentials() -> None:
    mix = derive_mix(HAR)
    assert mix.log_format is LogFormat.HAR
    assert kinds(mix) == {"GET /notes/{id}": 3, "GET /notes?limit=20": 1, "POST /search": 1, "GET /health": 1}
    assert (mix.lines, mix.failed_left_out, mix.other_hosts_left_out, mix.host) == (8, 1, 1, "notes.example.com")
    assert mix.stripped_headers == ("authorization", "cookie", "x-csrf-token")
    post = next(k.spec for k in mix.kinds if k.spec.method == "POST")
    assert post.body == b'{"tag": "tag3", "limit": 5}'
    names = [name for name, _ in post.headers]
    assert names == ["accept", "user-agent", "content-type"]  # no :authority, accept-encoding, content-length
    get = mix.kinds[0].spec
    assert get.path == "/notes/17" and [n for n, _ in get.headers] == ["accept", "user-agent"]
    assert mix.requests == tuple(k.spec for k in mix.kinds)
    assert [a.offset_s for a in mix.arrivals] == [0.0, 0.4, 0.9, 1.1, 1.5, 2.3]


def test_named_headers_are_kept() -> None:
    mix = derive_mix(HAR, keep_headers=("Authorization", "cookie"))
    assert mix.stripped_headers == ("x-csrf-token",)
    headers = dict(mix.kinds[0].spec.headers)
    assert headers["authorization"].startswith("Bearer ") and headers["cookie"].startswith("session=")
    assert "if-none-match" not in dict(mix.kinds[1].spec.headers)  # never kept: its answer would be a 304


def test_a_har_entry_s_odd_parts(tmp_path: Path) -> None:
    def entry(url: str, method: str = "GET", status: int = 200, **request: Any) -> dict[str, Any]:
        return {"startedDateTime": "2026-01-01T00:00:00Z", "request": {"method": method, "url": url, **request},
                "response": {"status": status}}

    entries = [
        entry("http://a.test/form", "POST", postData={"mimeType": "application/x-www-form-urlencoded",
                                                        "params": [{"name": "q", "value": "a b"}]}),
        entry("http://a.test/raw", "PUT", postData={"mimeType": "application/octet-stream", "text": "AAEC",
                                                     "encoding": "base64"}),
        entry("http://a.test/get", postData={"mimeType": "text/plain", "text": "ignored"}),
        entry("http://a.test/aborted", status=0),
        entry("data:image/png;base64,iVBOR"),
        entry("http://b.test/x"),
        {"request": {"url": "http://a.test/no-method"}},
        entry("http://a.test/tunnel", "CONNECT"),
    ]
    path = tmp_path / "odd.har"
    path.write_text(json.dumps({"log": {"entries": entries}}))  # one line
    mix = derive_mix(path)
    specs = {k.kind: k.spec for k in mix.kinds}
    assert set(specs) == {"POST /form", "PUT /raw", "GET /get"}
    assert specs["POST /form"].body == b"q=a+b"
    assert ("Content-Type", "application/x-www-form-urlencoded") in specs["POST /form"].headers
    assert specs["PUT /raw"].body == b"\x00\x01\x02"
    assert specs["GET /get"].body == b""  # a GET sends none
    assert (mix.failed_left_out, mix.other_hosts_left_out, mix.malformed_first) == (1, 2, (7, 8))
    assert kinds(derive_mix(path, host="B.test")) == {"GET /x": 1}
    with pytest.raises(UserError, match="no request went to host 'c.test'; its hosts: a.test, b.test"):
        derive_mix(path, host="c.test")


def test_the_format_is_told_by_content_or_named(tmp_path: Path) -> None:
    document = json.loads(HAR.read_text())
    one_line = tmp_path / "one.har"
    one_line.write_text("\n\n" + json.dumps(document))
    assert derive_mix(one_line).log_format is LogFormat.HAR
    squeezed = tmp_path / "access.log.gz"
    squeezed.write_bytes(gzip.compress(COMBINED.read_bytes()))
    assert kinds(derive_mix(squeezed)) == kinds(derive_mix(COMBINED))
    spaced = write(tmp_path / "spaced.jsonl", ["", "  ", *JSONL.read_text().splitlines()])
    assert derive_mix(spaced).log_format is LogFormat.JSONL and derive_mix(spaced).malformed_first == (8, 9, 11, 12)
    pretty_other = tmp_path / "other.json"
    pretty_other.write_text(json.dumps({"method": "GET", "path": "/a", "status": 200}, indent=1))
    with pytest.raises(UserError, match="is one JSON document over several lines, neither a HAR"):
        derive_mix(pretty_other)
    with pytest.raises(UserError, match="is not a HAR file"):
        derive_mix(JSONL, log_format=LogFormat.HAR)
    forced = derive_mix(COMBINED, log_format=LogFormat.COMBINED)
    assert forced.log_format is LogFormat.COMBINED
    with pytest.raises(UserError, match="no usable request in 12 lines \\(12 malformed, 0 failed\\)"):
        derive_mix(JSONL, log_format=LogFormat.COMBINED)


def test_files_that_cannot_be_read_or_hold_nothing_are_one_line(tmp_path: Path) -> None:
    for path, message in ((tmp_path / "missing.log", "cannot read .*missing.log: No such file"),
                          (tmp_path, "cannot read"),
                          (write(tmp_path / "empty.log", [""]), "no usable request in 0 lines"),
                          (write(tmp_path / "failed.log", [clf(1, "/a", 500)]), r"\(0 malformed, 1 failed\)")):
        with pytest.raises(UserError, match=message) as caught:
            derive_mix(path)
        assert len(caught.value.problems) == 1
    for name, data in (("bad.gz", b"\x1f\x8b" + b"junk" * 10), ("cut.gz", gzip.compress(COMBINED.read_bytes())[:60]),
                       ("corrupt.gz", gzip.compress(COMBINED.read_bytes())[:20] + b"\xff" * 200)):
        (tmp_path / name).write_bytes(data)
        with pytest.raises(UserError, match=f"cannot read .*{name}"):
            derive_mix(tmp_path / name)


def test_malformed_lines_are_counted_with_the_first_few_numbers(tmp_path: Path) -> None:
    lines = [clf(1, "/a") if i % 3 else f"garbage {i}" for i in range(30)]
    mix = derive_mix(write(tmp_path / "a.log", lines))
    assert (mix.malformed, mix.malformed_first, mix.parsed) == (10, (1, 4, 7, 10, 13), 20)
    assert "malformed: 10 lines left out (lines 1, 4, 7, 10, 13, ...)" in mix.summary_lines()


# Failed requests.

def test_failed_requests_are_left_out_unless_kept() -> None:
    kept = derive_mix(COMBINED, keep_failed=True)
    assert kept.failed_left_out == 0 and kept.keep_failed
    assert kinds(kept)["GET /notes/{id}"] == 2 and kinds(kept)["GET /health"] == 2  # the 404 and the 500
    assert {k.kind: k.status for k in kept.kinds}["POST /notes"] == 201
    assert kept.malformed_first == (6, 8, 11, 16)  # the 400 for TLS junk holds no request to send
    assert "failed requests (status 400 and up): kept in the mix" in kept.summary_lines()


# Folding.

@pytest.mark.parametrize(("segment", "folded"), [
    ("123", "{id}"), ("0", "{id}"), ("550E8400-E29B-41D4-A716-446655440000", "{uuid}"),
    ("0123456789abcdef", "{hex}"), ("deadbeef", "deadbeef"), ("aB3dE6gH9jK2mN5pQ8rS1tU", "{token}"),
    ("dGhpcyBpcyBhIHRva2VuMTIz", "{token}"), ("top-10-tips-for-2024-and-beyond", "top-10-tips-for-2024-and-beyond"),
    ("v1", "v1"), ("notes", "notes"), ("", ""), ("١٢٣", "١٢٣"),
    ("abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz"),  # no digit: a word
])
def test_path_segments_fold_by_default(segment: str, folded: str) -> None:
    assert fold_segment(segment) == folded


def test_fold_rules_group_queries_and_paths(tmp_path: Path) -> None:
    log = write(tmp_path / "a.log", [clf(1, "/search?q=cats&page=2&utm_source=x"), clf(1, "/search?q=dogs&page=2"),
                                     clf(1, "/search?page=3&q=cats"), clf(2, "/search"), clf(2, "/users/ann/posts/7"),
                                     clf(2, "/users/bob/posts/8")])
    assert kinds(derive_mix(log, folds=parse_folds(["query"]))) == {"GET /search": 4, "GET /users/ann/posts/{id}": 1,
                                                                    "GET /users/bob/posts/{id}": 1}
    assert kinds(derive_mix(log, folds=parse_folds(["query:page"])))["GET /search?page=2"] == 2
    assert kinds(derive_mix(log, folds=parse_folds(["values"]))) == {
        "GET /search?q={}&page={}&utm_source={}": 1, "GET /search?q={}&page={}": 1, "GET /search?page={}&q={}": 1,
        "GET /search": 1, "GET /users/ann/posts/{id}": 1, "GET /users/bob/posts/{id}": 1}  # in the order observed
    assert kinds(derive_mix(log, folds=parse_folds(["values:q"])))["GET /search?q={}&page=2"] == 1
    regex = derive_mix(log, folds=parse_folds([r"re:^/users/[^/?]+=>/users/{user}", "query:q", "values"]))
    assert kinds(regex) == {"GET /search?q={}": 3, "GET /search": 1, "GET /users/{user}/posts/{id}": 2}
    assert regex.folds == (r"re:^/users/[^/?]+=>/users/{user}", "query:q", "values")
    # a regex sees the target as logged, before the default folding; groups are allowed
    grouped = derive_mix(log, folds=parse_folds([r"re:/posts/(\d)$=>/posts/\1x"]))
    assert set(kinds(grouped)) >= {"GET /users/ann/posts/7x", "GET /users/bob/posts/8x"}


@pytest.mark.parametrize(("text", "message"), [
    ("bogus", "unknown rule; use query, query:NAME,NAME, values, values:NAME,NAME or re:PATTERN=>REPLACEMENT"),
    ("query:", "names no parameter"),
    ("values:a,,b", "'' is not a query parameter name"),
    ("query:a b", "'a b' is not a query parameter name"),
    ("re:/users/x", "a regex rule looks like re:PATTERN=>REPLACEMENT"),
    ("re:(unclosed=>x", "missing ), unterminated subpattern"),
    (r"re:/a=>\2", "invalid group reference 2"),
    ("re:=>x", "a regex rule looks like"),
])
def test_a_bad_fold_rule_is_refused_in_one_line(text: str, message: str) -> None:
    with pytest.raises(UserError) as caught:
        parse_fold(text)
    assert len(caught.value.problems) == 1
    assert caught.value.problems[0].startswith(f"--fold {text!r}: ") or "names no parameter" in message
    assert message in str(caught.value)


def test_credential_parameters_are_stripped_unless_kept(tmp_path: Path) -> None:
    log = write(tmp_path / "a.log", [clf(1, "/a?api_key=1&Session_Id=2&sig=3&page=4"), clf(1, "/b?token=x")])
    mix = derive_mix(log)
    assert [k.spec.path for k in mix.kinds] == ["/a?page=4", "/b"]
    assert mix.stripped_params == ("Session_Id", "api_key", "sig", "token")
    kept = derive_mix(log, keep_headers=("TOKEN",))
    assert [k.spec.path for k in kept.kinds] == ["/a?page=4", "/b?token=x"]


# The mix.

def test_max_kinds_keeps_the_heaviest_and_says_what_the_rest_was(tmp_path: Path) -> None:
    lines = [clf(1, f"/k{k}") for k, n in enumerate([50, 30, 10, 6, 4]) for _ in range(n)]
    mix = derive_mix(write(tmp_path / "a.log", lines), max_kinds=2)
    assert [(k.kind, k.count, k.share) for k in mix.kinds] == [("GET /k0", 50, 0.5), ("GET /k1", 30, 0.3)]
    assert [k.spec.weight for k in mix.kinds] == [625, 375]  # the mix itself is the two kinds
    assert (mix.rest_kinds, mix.rest_share, mix.rest_count) == (3, pytest.approx(0.2), 20)
    assert "mix: 2 kinds; the other 3 (20.0% of the requests) left out by --max-kinds 2" in mix.summary_lines()
    assert len(mix.arrivals) == 80
    with pytest.raises(UserError, match="--max-kinds must be at least 1"):
        derive_mix(COMBINED, max_kinds=0)


@pytest.mark.parametrize("counts", [
    [1], [1, 1, 1], [333, 333, 334], [6, 1], list(range(1, 200)), [7919 * i % 1000 + 1 for i in range(600)],
    [37046, 24373, 15598, 9749, 5849, 4875], [1000, 1],
])
def test_weights_sum_to_1000_within_a_tenth_of_a_point(counts: list[int]) -> None:
    weights = largest_remainder(counts)
    assert sum(weights) == MAX_WEIGHT and min(weights) >= 1 and max(weights) <= MAX_WEIGHT
    total = sum(counts)
    assert max(abs(w / MAX_WEIGHT - c / total) for w, c in zip(weights, counts)) < 0.001


def test_kinds_under_one_unit_get_one_taken_from_the_others() -> None:
    # Every kind gets at least 1 of the 1000: n tiny kinds take up to n tenths of a point from the rest.
    assert largest_remainder([5000, 3, 1]) == [998, 1, 1]
    assert largest_remainder([10**6, 1, 1, 1, 1]) == [996, 1, 1, 1, 1]
    assert largest_remainder([600, 300, 1, 1]) == [665, 333, 1, 1]


def test_weights_of_more_kinds_than_units_are_each_at_least_one() -> None:
    weights = largest_remainder([1000] + [1] * 1500)
    assert len(weights) == 1501 and min(weights) == 1 and weights[0] == 400
    assert largest_remainder([]) == []


def test_arrivals_spread_each_second_evenly_and_sort_by_time(tmp_path: Path) -> None:
    lines = [clf(11, "/a"), clf(10, "/b"), clf(10, "/a"), clf(10, "/b"), clf(11, "/b"), clf(10, "/a"),
             clf(12, "/gone", 404), clf(13, "/a")]
    mix = derive_mix(write(tmp_path / "a.log", lines))
    a, b = (next(i for i, k in enumerate(mix.kinds) if k.kind == f"GET /{n}") for n in "ab")
    assert mix.arrivals == (Arrival(0.0, b), Arrival(0.25, a), Arrival(0.5, b), Arrival(0.75, a),
                            Arrival(1.0, a), Arrival(1.5, b), Arrival(3.0, a))
    assert Counter(int(x.offset_s) for x in mix.arrivals) == {0: 4, 1: 2, 3: 1}  # each second as in the log
    assert mix.has_times and mix.duration_s == 3.0 and mix.peak_per_s() == 4
    dropped = derive_mix(write(tmp_path / "b.log", lines), max_kinds=1)
    assert all(x.kind == 0 for x in dropped.arrivals) and len(dropped.arrivals) == 4


def test_without_times_there_are_no_arrivals(tmp_path: Path) -> None:
    path = write(tmp_path / "a.jsonl", ['{"method": "GET", "path": "/a", "status": 200}',
                                        '{"method": "GET", "path": "/a", "status": 200, "time": 1700000000}'])
    mix = derive_mix(path)
    assert mix.arrivals == () and not mix.has_times and mix.duration_s == 0.0
    assert mix.summary_lines()[-1] == "times: not every request has one, so the log cannot be replayed in time"
    assert arrivals([(None, "GET /a")], ["GET /a"]) == ()
    assert arrivals([(5.5, "GET /b"), (4.0, "GET /a")], ["GET /a"]) == (Arrival(0.0, 0),)


def test_the_summary_and_the_record() -> None:
    mix = derive_mix(HAR)
    assert mix.summary_lines() == [
        f"read {HAR} (har): 8 entries, 8 requests",
        "malformed: none",
        "failed requests (status 400 and up, or none) left out: 1 (--keep-failed keeps them)",
        "requests to other hosts left out: 1 (the mix is notes.example.com's)",
        "mix: 4 kinds",
        "credentials left out: headers authorization, cookie, x-csrf-token (--keep-header NAME keeps one)",
        "times: 2 s of requests, 3/s on average, 3 in the busiest second",
    ]
    record = json.loads(json.dumps(mix.to_record()))
    assert record["format"] == "har" and record["arrivals"] == 6 and record["has_times"] is True
    assert record["kinds"][2] == {"kind": "POST /search", "method": "POST", "path": "/search", "weight": 167,
                                  "count": 1, "share": pytest.approx(1 / 6), "status": 200, "body_bytes": 27,
                                  "headers": ["accept", "user-agent", "content-type"]}
    assert "Bearer" not in json.dumps(record)


# The synthetic log of examples/notes.

def test_the_synthetic_log_s_known_mix_is_recovered_within_a_point(tmp_path: Path) -> None:
    make = generator()
    lines, known = make.generate(20_000, seed=3)
    assert len(lines) == 20_000
    mix = derive_mix(write(tmp_path / "access.log", lines), folds=parse_folds(known["folds"]))
    derived = {k.kind: k.share for k in mix.kinds}
    assert set(derived) == set(known["shares"])
    assert max(abs(derived[kind] - share) for kind, share in known["shares"].items()) < 0.01
    assert max(abs(k.spec.weight / MAX_WEIGHT - known["observed_shares"][k.kind]) for k in mix.kinds) < 0.001
    assert (mix.malformed, mix.failed_left_out) == (known["counts"]["malformed"], 500)
    assert len(mix.arrivals) == 20_000 - 2 - 500
    per_second = Counter(int(a.offset_s) for a in mix.arrivals)
    assert len(per_second) == known["duration_s"]
    burst = [per_second[s] for s in range(55, 60)]
    calm = [per_second[s] for s in range(10, 50)]
    assert sum(burst) / len(burst) > 2.5 * sum(calm) / len(calm)  # the bursts are there
    ids = [int(k.spec.path.rsplit("/", 1)[1]) for k in mix.kinds if "{id}" in k.kind]
    assert all(1 <= i <= 1000 for i in ids)  # notes.py creates ids 1..1000


def test_the_generator_writes_its_log_and_known_mix(tmp_path: Path) -> None:
    make = generator()
    assert make.main([str(tmp_path / "a.log"), "--lines", "2000", "--mix-out", str(tmp_path / "a.json")]) == 0
    known = json.loads((tmp_path / "a.json").read_text())
    assert sum(known["shares"].values()) == pytest.approx(1.0)
    assert sum(known["counts"].values()) == 2000 == len((tmp_path / "a.log").read_text().splitlines())
    assert make.generate(2000, seed=1)[0] == (tmp_path / "a.log").read_text().splitlines()  # seeded
