"""close: a new TCP connection per request (`Connection: close`): the cost of accept and of each
server's per-connection set-up, which keep-alive hides. Sent by the run's HTTP generator with
keep-alive off (wrk's `Connection: close` header, oha's --disable-keepalive)."""

from __future__ import annotations

from pywebbench.catalog.shapes.answers import check_hello
from pywebbench.catalog.shapes.base import Drive, Shape
from pywebbench.catalog.workload_model import Workload

WORKLOAD = Workload(
    "close", "/hello", "text/plain", "plain text over a new TCP connection per request: accept and set-up cost",
    check_hello,
    shape=Shape(measures="req/s and latency with a new connection per request", drive=Drive(keepalive=False)),
)
