"""The presets of seed 004 (see the seed text under ../shared/seeds)."""

from __future__ import annotations

from pywebbench.plan.presets.model import Claim, Figure, Preset, options_of


# --- seed 004: selecting a Python app server for a REST API ----------------------------------

_SEED004_FLASK = ("flask:gunicorn-sync", "flask:gunicorn-gevent", "flask:gunicorn-eventlet",
                  "flask:gunicorn-meinheld", "flask:uwsgi", "flask:waitress", "flask:flask-dev")


def _others(*stacks: str) -> tuple[str, ...]:
    return tuple(s for s in _SEED004_FLASK if s not in stacks)


SEED004 = Preset(
    name="seed004",
    title="Seed 004: Flask app servers on a template and an API route vs nginx static, ab -c 100, "
          "mean of 10, on 1 and 2 CPUs",
    description=(
        "Seed 004's charts: Flask on Gunicorn's sync, gevent, eventlet and meinheld workers, uWSGI, "
        "Waitress and the Flask development server on the template and api workloads, and nginx serving "
        "a static file as the machine's ceiling; `ab -c 100 -n 10000` (-n 1000 for the API route) "
        "without keep-alive, straight to the app server, 10 runs averaged, req/s and p95; on 1 CPU and "
        "on 2 CPUs with workers = CPUs x 3. Scaled: the seed's app, database, web and test servers were "
        "separate VMs of 1 or 2 vCPUs each; here both configurations share this 2-core machine. With 1 "
        "CPU the stack has CPU 1 while ab, PostgreSQL and pgbouncer share CPU 0; with 2 CPUs the stack "
        "spans both and competes with them, so the 2-CPU point understates the seed's scaling. Waitress "
        "and the Flask development server are single processes (workers do not apply; threads stay at "
        "the harness default, 10); the seed did not say how it configured them. The seed's API route "
        "(its own survey code: one DB write, one DB read, a filter in Python) is the api workload. No "
        "stack of the seed is missing. Most of the seed's figures are in charts; the published figures "
        "are the few its text states."
    ),
    seed="004_ecb123d0e69ec49c",
    options=options_of(
        stacks=("flask:gunicorn-sync", "flask:gunicorn-gevent", "flask:gunicorn-eventlet",
                "flask:gunicorn-meinheld", "flask:uwsgi", "flask:waitress", "flask:flask-dev", "nginx:static"),
        workloads=("static", "template", "api"),
        generator="ab",
        connections=100,
        requests=10_000,
        keepalive=False,
        topology="direct",
        repeats=10,
        # ab stops at its count; duration bounds it (10 x) and sizes the estimate.
        duration=15.0,
    ),
    grid=(("stack_cpus", (1, 2)),),
    aggregation="mean",
    workers_per_cpu=3,
    workload_requests=(("api", 1000),),
    published=(
        Figure("nginx:static", "rps", 1200, "static", (("stack_cpus", 1),), note="'1.2k requests per second'"),
        Figure("nginx:static", "rps", 2800, "static", (("stack_cpus", 2),), note="'2.8k responses per second'"),
        Figure("flask:gunicorn-meinheld", "rps", 530, "template", (("stack_cpus", 1),),
               note="'530 requests per second'"),
        Figure("flask:gunicorn-sync", "p95_ms", 2000, "api", (("stack_cpus", 1),),
               note="'Gunicorn takes around 2 seconds to respond to each request'"),
        Figure("flask:gunicorn-meinheld", "p95_ms", 810, "api", (("stack_cpus", 2),),
               note="'serving most of the responses under 810 milliseconds'"),
    ),
    published_from="seed 004's text (its charts are images): nginx static req/s on configurations #1 "
                   "and #2, Gunicorn-Meinheld's template req/s on #1, the API p95 of Gunicorn on #1 and "
                   "of Gunicorn-Meinheld on #2",
    claims=(
        Claim(("flask:gunicorn-meinheld",), _others("flask:gunicorn-meinheld"), "template",
              "Meinheld worker class for gunicorn is a clear winner capable of outputting 530 requests per "
              "second in this particular test.", (("stack_cpus", 1),)),
        # One sentence, two orderings: each claim quotes its half.
        Claim(("flask:gunicorn-eventlet",), _others("flask:gunicorn-eventlet"), "api",
              "In this test Gunicorn Eventlet takes the lead", (("stack_cpus", 1),)),
        Claim(("flask:waitress",), _others("flask:gunicorn-eventlet", "flask:waitress"), "api",
              "followed by waitress.", (("stack_cpus", 1),)),
        Claim(("flask:gunicorn-meinheld", "flask:gunicorn-eventlet"),
              _others("flask:gunicorn-meinheld", "flask:gunicorn-eventlet"), "api",
              "Gunicorn-Meinheld and Gunicorn-Eventlet are leading the pack.", (("stack_cpus", 2),)),
    ),
)
