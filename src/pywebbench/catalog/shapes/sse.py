"""sse: server-sent events to N clients at a fixed rate each; delivered events per second and
the delivery latency's p99 (each event carries its send time: client and server share the
host's clock). N is the run's --connections; the Go driver `shapes sse` reads the streams.
A sync worker holds a thread per stream: past its threads, clients wait (and time out)."""

from __future__ import annotations

from pywebbench.catalog.shapes.answers import check_events
from pywebbench.catalog.shapes.base import Drive, Shape, python_apps
from pywebbench.catalog.workload_model import Workload

EVENT_RATE = 10.0
"""Events per second to each client."""

WORKLOAD = Workload(
    "sse", "/sse", "text/event-stream", f"server-sent events, {EVENT_RATE:g}/s to each of --connections clients",
    check_events,
    shape=Shape(
        measures="events delivered per second and the delivery latency's p99",
        unit="events/s", left_out=python_apps, paced=True,
        drive=Drive(command="sse", flags=(("-event-rate", f"{EVENT_RATE:g}"),)),
    ),
)
