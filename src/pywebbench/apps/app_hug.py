"""hug copy of the benchmark app (WSGI: ``wsgi``). hug 2.6.1 runs on falcon 2.0.0."""

from __future__ import annotations

import hug

api = hug.API(__name__)


@hug.get("/hello", api=api, output=hug.output_format.text)
def hello() -> str:
    return "Hello World!"


# Further endpoints (DB query, upstream call, template) go here, beside /hello.

wsgi = api.http.server()
