"""The method and the generator as enums: spelt as text anywhere, asked what they support."""

from __future__ import annotations

import os

import pytest

from pywebbench.commands.arguments import build_parser
from pywebbench.commands.common import options_and_knobs
from pywebbench.core.errors import UserError
from pywebbench.loadgen.base import LoadRequest
from pywebbench.loadgen.registry import window_generator
from pywebbench.catalog.workloads import HttpRequest
from pywebbench.plan.generators import CHOSEN_GENERATORS, Generator
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sources import from_json
from pywebbench.results.model import Method, TrialSpec


def test_text_from_flags_and_files_becomes_the_enum() -> None:
    options = RunOptions(method="duet", generator="oha")  # type: ignore[arg-type]
    assert options.method is Method.DUET and options.generator == "oha" and isinstance(options.generator, Generator)
    assert from_json(options.to_json()).method is Method.DUET  # a results header read back for --resume
    spec = TrialSpec("t", "a:b", "hello", 10, 1.0, 0.0, 1, "wrk", method="interleaved")  # type: ignore[arg-type]
    assert spec.method is Method.INTERLEAVED and spec.method == "interleaved"


@pytest.mark.parametrize(("options", "says"), [
    (RunOptions(method="sideways"), "--method must be one of interleaved, duet, restart, auto, got 'sideways'"),  # type: ignore[arg-type]
    (RunOptions(generator="siege"), "--generator must be one of wrk, ab, oha, vegeta, got 'siege'"),  # type: ignore[arg-type]
    (RunOptions(method="sideways", hosts="h.toml"), "--method must be one of"),  # type: ignore[arg-type]
])
def test_an_unknown_method_or_generator_is_one_line_before_any_check_asks_it(options: RunOptions, says: str) -> None:
    with pytest.raises(UserError, match=says.replace("(", r"\(").replace(")", r"\)")):
        options.validate()


def test_what_each_method_supports() -> None:
    assert [m for m in Method if m.paired] == [Method.INTERLEAVED, Method.DUET, Method.AUTO]
    assert [m.loaded_at_once for m in Method] == [1, 2, 1, 1]
    assert [m for m in Method if not m.on_several_hosts] == [Method.DUET]
    assert [m for m in Method if m.allocates] == [Method.INTERLEAVED, Method.AUTO]  # auto chooses interleaved
    assert RunOptions(method="restart").rounds == 1 and RunOptions().rounds > 1  # type: ignore[arg-type]


def test_the_generator_a_window_goes_to_agrees_with_what_each_supports() -> None:
    paths = (HttpRequest("GET", "/a"), HttpRequest("GET", "/b"))
    methods = (HttpRequest("GET", "/a"), HttpRequest("POST", "/b", b"{}"))
    for configured in (Generator(g) for g in CHOSEN_GENERATORS):
        # replay: only a recording's windows (test_replay); shapes: only a shape's (test_shapes);
        # h2load: only a window in a protocol other than h1 (test_protocols)
        for rate in (None, 100.0):
            for requests in ((HttpRequest("GET", "/a"),), paths, methods):
                chosen = Generator(window_generator(configured, LoadRequest(
                    url="http://127.0.0.1:1/a", connections=1, duration_s=1.0, rate=rate, mix=requests)))
                assert chosen.open_loop or rate is None, (configured, rate, requests)
                assert rate is not None or len(requests) > 1 or chosen == configured  # nothing to redirect
                assert chosen.can_send(requests, at_a_rate=rate is not None), (configured, rate, requests)
                if Generator(configured).can_send(requests, rate is not None) and (rate is None or Generator(configured).open_loop):
                    assert chosen == configured, (configured, rate, requests)  # what was asked for, where it can


def test_every_mix_at_a_rate_goes_to_oha_unless_vegeta_was_asked_for() -> None:
    def at_a_rate(*mix: HttpRequest, configured: str = "wrk") -> str:
        return window_generator(configured, LoadRequest(url="http://127.0.0.1:1/a", connections=1, duration_s=1.0,
                                                         rate=100.0, mix=mix))
    assert at_a_rate(HttpRequest("GET", "/a", weight=3), HttpRequest("GET", "/b")) == "oha"
    assert at_a_rate(HttpRequest("GET", "/a"), HttpRequest("POST", "/b", b"{}")) == "oha"
    assert at_a_rate(HttpRequest("GET", "/a"), HttpRequest("GET", "/b", headers=(("X-K", "1"),))) == "oha"
    assert at_a_rate(HttpRequest("GET", "/a"), HttpRequest("POST", "/b", b"{}"), configured="vegeta") == "vegeta"
    assert not Generator("oha").can_send((HttpRequest("GET", "/a"), HttpRequest("POST", "/b", b"{}")))  # closed loop
    assert not Generator("ab").can_send((HttpRequest("GET", "/a"), HttpRequest("GET", "/b")))


@pytest.mark.parametrize("generator", [Generator(g) for g in CHOSEN_GENERATORS])
def test_a_list_of_rates_asks_the_generator_whether_it_keeps_a_rate(generator: Generator,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith("PYWEBBENCH_") and key != "PYWEBBENCH_CACHE":
            monkeypatch.delenv(key)
    args = build_parser().parse_args(["run", "--rate", "500,1000", "--generator", generator.value,
                                      "--stack", "flask:gunicorn-sync"])
    if generator.open_loop:  # oha and vegeta alike (vegeta was refused by name): a latency-versus-load curve
        options, _, knobs = options_and_knobs(args)
        assert options.generator == generator and knobs == ("rate=500,1000",)
    else:
        with pytest.raises(UserError, match=rf"^an open-loop --rate needs --generator oha or vegeta \({generator} is "):
            options_and_knobs(args)
