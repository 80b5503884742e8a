"""idle: N idle keep-alive connections held open while a fixed-rate load runs on a few others.

Where sync workers, threads, greenlets and event loops part ways: a sync worker holds a thread
per open connection (or closes it), an event loop a few kilobytes. Per window: the server's
memory per idle connection (its RSS, and the kernel's TCP socket memory, over N), the active
requests' p99, and the idle connections it refused or closed. N is the run's --connections
(sweep it: --knob connections=100,1000,5000,10000); the Go driver `shapes idle` holds them.
"""

from __future__ import annotations

from pywebbench.catalog.shapes.answers import check_hello
from pywebbench.catalog.shapes.base import Drive, Shape
from pywebbench.catalog.workload_model import Workload

ACTIVE_CONNECTIONS = 4
ACTIVE_RATE = 200.0
"""The active load: open loop, well under what any stack here serves, so its p99 shows what the
idle connections cost the server rather than its capacity."""

WORKLOAD = Workload(
    "idle", "/hello", "text/plain",
    f"--connections idle keep-alive connections held while {ACTIVE_RATE:g} req/s run on {ACTIVE_CONNECTIONS} others",
    check_hello,
    shape=Shape(
        measures="memory per idle connection (RSS and socket memory over N), the active p99, idle ones refused or closed",
        drive=Drive(command="idle", flags=(("-active", str(ACTIVE_CONNECTIONS)), ("-rate", f"{ACTIVE_RATE:g}"))),
        paced=True,
    ),
)
