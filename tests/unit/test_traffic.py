"""--request parsing: the traffic mix of a person's own app, strict and one line when wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from pywebbench.core.errors import UserError
from pywebbench.plan.traffic import RequestSpec, parse_request, parse_requests, parse_requests_file


def test_a_request_with_body_header_and_weight(tmp_path: Path) -> None:
    (tmp_path / "item.json").write_bytes(b'{"name": "x"}')
    spec = parse_request("post /api/items @item.json content-type:application/json weight=3", tmp_path)
    assert spec == RequestSpec("POST", "/api/items", b'{"name": "x"}', "item.json",
                               (("content-type", "application/json"),), 3)
    assert parse_request("GET /api/items?limit=20") == RequestSpec("GET", "/api/items?limit=20")


@pytest.mark.parametrize(("text", "says"), [
    ("GET", "must look like"),
    ("FETCH /x", "unknown method"),
    ("GET items", "must start with '/'"),
    ("GET /x weight=0", "weight must be a whole number"),
    ("GET /x weight=1.5", "weight must be a whole number"),
    ("GET /x bogus", "neither @BODYFILE"),
    ("POST /x @missing.json", "cannot read body file"),
    ("GET /x 'unclosed", "No closing quotation"),
])
def test_malformed_requests_are_one_line(tmp_path: Path, text: str, says: str) -> None:
    with pytest.raises(UserError) as caught:
        parse_request(text, tmp_path)
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_a_get_with_a_body_and_a_request_given_twice_are_refused(tmp_path: Path) -> None:
    (tmp_path / "b").write_bytes(b"x")
    with pytest.raises(UserError, match="carries no body"):
        parse_request("GET /x @b", tmp_path)
    with pytest.raises(UserError, match="given twice"):
        parse_requests(["GET /x", "get /x weight=2"])


def test_a_requests_file_reads_bodies_beside_it(tmp_path: Path) -> None:
    (tmp_path / "body.json").write_bytes(b"{}")
    mix = tmp_path / "mix.txt"
    mix.write_text("# the mix\nGET /a weight=9\n\nPOST /b @body.json\n")
    assert [(s.label, s.weight, s.body) for s in parse_requests_file(mix)] == [("GET /a", 9, b""),
                                                                               ("POST /b", 1, b"{}")]
    (tmp_path / "empty.txt").write_text("# nothing\n")
    with pytest.raises(UserError, match="holds no request"):
        parse_requests_file(tmp_path / "empty.txt")
