"""The command line's grammar: every subcommand, its flags and their types (one line per bad value)."""

from __future__ import annotations

import argparse
from pathlib import Path
from collections.abc import Sequence
from typing import Any, NoReturn

from pywebbench import __version__
from pywebbench.analyze.calibrate import DEFAULT_SLOWDOWN
from pywebbench.commands.pin_gate import add_gate_flags
from pywebbench.commands.python import add_python_parser
from pywebbench.measure.answers import parse_path
from pywebbench.plan.declared import Command, add_options, fraction
from pywebbench.report.formats import FORMATS
from pywebbench.analyze.history import Figure
from pywebbench.report.history_view import HISTORY_FORMATS

EXIT_CODES = """exit codes:
  0    every trial valid
  1    the run finished, but some trial failed or is invalid (all results saved), or a
       backing service died and could not be restarted (finished trials kept; --resume DIR)
  2    bad input: nothing was started
  130  interrupted (Ctrl-C, SIGTERM, SIGHUP): every finished trial kept; --resume DIR goes on"""


def _add_run_flags(p_run: argparse.ArgumentParser, command: Command, knob: str | None = None) -> None:
    if knob is not None:  # run and sweep: a grid of knobs
        p_run.add_argument("--knob", action="append", dest="knobs", default=[], metavar="NAME=V1,V2|A..B", help=knob)
    p_run.add_argument("--config", type=Path, help="TOML file with a [run] table of options")
    p_run.add_argument("--preset", help="a seed experiment (see `pywebbench list --presets`); flags override it")
    p_run.add_argument("--resume", type=Path, metavar="DIR", help="finish an interrupted run in DIR: only "
                       "the missing trials run, with the options it was started with")
    add_options(p_run, command)


def _add_ci_files(parser: argparse.ArgumentParser, what: str) -> None:
    """--junit and --summary: the answer in CI's own terms, written after it (the exit code unchanged)."""
    parser.add_argument("--junit", type=Path, metavar="FILE", help=f"write JUnit XML for CI's test reporters: {what}")
    parser.add_argument("--summary", type=Path, metavar="FILE", help="write a Markdown summary for a pull-request "
                        "comment or $GITHUB_STEP_SUMMARY: PASS or FAIL, the verdict table, each ratio's 95%% "
                        "interval, the command")


def _status(text: str) -> int:
    if not text.isdigit() or not 100 <= int(text) <= 599:
        raise argparse.ArgumentTypeError(f"an HTTP status such as 200, got {text!r}")
    return int(text)


def _field_path(text: str) -> str:
    try:
        parse_path(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a field path such as 'rows[*].elapsed' or 'headers.Date': {exc}") from None
    return text.strip()


def _add_app_parser(sub: "argparse._SubParsersAction[OneLineParser]") -> None:
    p_app = sub.add_parser("app", help="benchmark your own WSGI or ASGI app across servers", epilog=EXIT_CODES,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    p_app.add_argument("--app", required=True, metavar="MODULE:CALLABLE", help="the app, e.g. mysite.wsgi:application")
    p_app.add_argument("--factory", action="store_true", help="CALLABLE is a factory that returns the app")
    p_app.add_argument("--app-dir", type=Path, default=Path("."), help="put on the import path; servers start "
                       "there (default: the current directory)")
    p_app.add_argument("--requirements", type=Path, metavar="FILE", help="the app's packages (default: its "
                       "pyproject's [project] dependencies), installed into each server's environment")
    p_app.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="for the app (repeatable)")
    p_app.add_argument("--env-file", type=Path, metavar="FILE", help="KEY=VALUE lines for the app")
    p_app.add_argument("--interface", choices=["wsgi", "asgi"], help="force the interface instead of detecting it")
    p_app.add_argument("--server", action="append", dest="servers", default=[], metavar="NAME",
                       help="a server (repeatable; globs such as 'gunicorn-*'); default: every one for the interface")
    p_app.add_argument("--allow-monkeypatch", action="store_true",
                       help="also run greenlet servers (gevent, eventlet, meinheld), which monkey-patch the app")
    p_app.add_argument("--with-postgres", action="store_true",
                       help="start the harness's private PostgreSQL and pass DATABASE_URL to the app and --setup")
    p_app.add_argument("--pgbouncer", action="store_true", help="with --with-postgres: DATABASE_URL goes through pgbouncer")
    p_app.add_argument("--setup", metavar="CMD", help="run once per environment in the app dir before serving")
    p_app.add_argument("--request", action="append", dest="requests", default=[],
                       metavar="'METHOD PATH [@BODYFILE] [header:value] [weight=N]'",
                       help="a request of the traffic mix (repeatable; default 'GET /')")
    p_app.add_argument("--requests-file", type=Path, metavar="FILE", help="requests, one per line")
    _add_recorded_traffic(p_app)
    p_app.add_argument("--expect", type=_status, default=200, help="the status every request must get (200)")
    p_app.add_argument("--expect-body", metavar="SUBSTRING", help="a text every answer must contain")
    p_app.add_argument("--ignore-field", action="append", dest="ignore_fields", default=[], type=_field_path,
                       metavar="PATH", help="where servers' answers may differ (repeatable): a JSON path into the body "
                       "('query_ms', 'rows[*].elapsed', 'meta.timing') or a header ('headers.Date')")
    p_app.add_argument("--tune", action="store_true", help="search each server's workers x threads (bounded by "
                       "this machine's CPUs and memory); a ranked table with ties and the command to deploy the best")
    p_app.add_argument("--slo", metavar="pNN<TIME", help="with --tune: the highest offered rate (open loop: oha, one "
                       "process per kind of --request at its weight's share) whose corrected "
                       "percentile stays under TIME, e.g. 'p99<100ms'")
    p_app.add_argument("--baseline-dir", type=Path, metavar="DIR", help="a gate: the base version of the app (its "
                       "app dir); base and head run under each server in the same rounds, answered as head/base")
    p_app.add_argument("--baseline-ref", metavar="REF", help="a gate: the base version as a git ref of the app dir's "
                       "repository (checked out with git worktree, removed after the run)")
    p_app.add_argument("--fail-on-regression", type=fraction, metavar="PCT", default=None,
                       help="with a baseline: exit 1 when a head/base interval lies wholly past PCT (e.g. 2%%) on "
                       "the worse side: req/s down, p99 or CPU per request up")
    _add_ci_files(p_app, "a case per server and figure with a baseline (failed by a regression), else per "
                  "server (failed by an invalid window)")
    add_options(p_app, Command.APP)


def _add_recorded_traffic(p_app: argparse.ArgumentParser) -> None:
    """app's traffic read from a recording (plan/app_traffic.py checks how they combine)."""
    p_app.add_argument("--from-log", type=Path, metavar="FILE", help="the traffic mix from an access log (nginx or "
                       "Apache combined, or JSON lines): requests grouped by method and path, ids folded")
    p_app.add_argument("--from-har", type=Path, metavar="FILE", help="the traffic mix from a HAR file (bodies and "
                       "content types kept; cookies and credentials left out)")
    p_app.add_argument("--max-kinds", type=int, metavar="N", help="with --from-log/--from-har: keep the N heaviest "
                       "kinds of request (the rest's share is said)")
    p_app.add_argument("--fold", action="append", dest="folds", default=[], metavar="RULE",
                       help="with --from-log/--from-har: fold paths further (repeatable): 'query' drops query "
                       "strings, 'query:a,b' keeps only those parameters, 'values[:a,b]' folds their values, "
                       "'re:PATTERN=>REPLACEMENT' rewrites a path")
    p_app.add_argument("--keep-header", action="append", dest="keep_headers", default=[], metavar="NAME",
                       help="with --from-har: send this recorded header although it may carry a credential")
    p_app.add_argument("--keep-failed", action="store_true",
                       help="with --from-log/--from-har: keep requests the log records as failed (4xx, 5xx)")
    p_app.add_argument("--replay", action="store_true", help="with --from-log/--from-har: send the recorded "
                       "arrival times, open loop, bursts kept, instead of a constant rate")
    p_app.add_argument("--replay-speed", type=float, metavar="X", help="with --replay: play the log X times as fast "
                       "(default 1)")


class _CompareFormat(argparse.Action):
    """compare --format NAME sets the flag of that name (--markdown, --json): one switch, two spellings."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        namespace.markdown, namespace.json = values == "markdown", values == "json"


class OneLineParser(argparse.ArgumentParser):
    """Bad flags get one line and exit 2, like every other refusal (no usage dump)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _add_compare_parser(sub: "argparse._SubParsersAction[OneLineParser]") -> None:
    p_cmp = sub.add_parser("compare", help="what changed between two result sets, and whether it is noise")
    p_cmp.add_argument("before", type=Path)
    p_cmp.add_argument("after", type=Path)
    p_cmp.add_argument("--json", action="store_true", help="machine-readable output")
    p_cmp.add_argument("--markdown", action="store_true", help="a Markdown table, e.g. for a pull-request comment")
    p_cmp.add_argument("--format", choices=["terminal", "markdown", "json"], action=_CompareFormat,
                       help="the same as --markdown or --json (report's spelling)")
    p_cmp.add_argument("--fail-on-regression", type=fraction, metavar="PCT", default=None,
                       help="exit 1 when a row got significantly worse by more than PCT (e.g. 5%%): req/s down, "
                       "p99 or CPU per request up")
    _add_ci_files(p_cmp, "a case per stack, workload and figure, failed by a regression past --fail-on-regression")


def _add_history_parser(sub: "argparse._SubParsersAction[OneLineParser]") -> None:
    p_history = sub.add_parser("history", help="a performance history over commits (one SQLite file) and where "
                               "its figures step")
    actions = p_history.add_subparsers(dest="history_command", required=True)
    p_append = actions.add_parser("append", help="add a finished run's rows to the history (created if absent)")
    p_append.add_argument("run_dir", type=Path)
    p_append.add_argument("--history", type=Path, required=True, metavar="FILE")
    p_append.add_argument("--commit", metavar="SHA", help="default: HEAD of the git checkout here")
    p_append.add_argument("--branch", metavar="NAME", help="default: the branch checked out here")
    p_show = actions.add_parser("show", help="each series over commits, with its change points")
    p_show.add_argument("history", type=Path, metavar="FILE")
    p_show.add_argument("--figure", default=Figure.RPS.value, choices=[f.value for f in Figure],
                        help="rps, ratio (to the baseline), p99 (ms) or cpu (ms per request)")
    p_show.add_argument("--format", default="terminal", choices=list(HISTORY_FORMATS))
    p_show.add_argument("-o", "--output", type=Path, help="write to a file instead of stdout")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="pywebbench", description="A benchmark harness for Python web stacks.",
                           epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"pywebbench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p_list = sub.add_parser("list", help="every stack in the catalog and whether it can run here")
    p_list.add_argument("--json", action="store_true", help="machine-readable output")
    p_list.add_argument("--build", action="store_true", help="build missing stack environments first")
    p_list.add_argument("--stack", action="append", default=None, help="only stacks matching (glob)")
    p_list.add_argument("--presets", action="store_true", help="the seed experiments `run --preset` reproduces")

    p_run = sub.add_parser("run", help="run a benchmark and save its results", epilog=EXIT_CODES,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_run_flags(p_run, Command.RUN, knob="sweep a knob within the run (as `sweep --knob`), e.g. rtt=0,2ms")
    p_run.add_argument("--tune", action="store_true",
                       help="search each selected stack's workers x threads (bounded by this machine's CPUs and "
                       "memory) in interleaved rounds; a ranked table with ties and the command to deploy the best")
    p_run.add_argument("--slo", metavar="pNN<TIME", help="with --tune: the objective is the highest offered rate "
                       "(open loop, oha) whose corrected percentile stays under TIME, e.g. 'p99<100ms'")
    _add_ci_files(p_run, "a case per stack and workload, failed by an invalid window")
    add_gate_flags(p_run)

    p_sweep = sub.add_parser("sweep", help="run the benchmark at every point of a grid of knobs", epilog=EXIT_CODES,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_run_flags(p_sweep, Command.SWEEP, knob="a knob and its values (repeatable: a grid); see `pywebbench sweep --help-knobs`")

    p_cal = sub.add_parser("calibrate", help="this machine's noise (A/A) and power (A/B with a known slowdown)",
                           epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_run_flags(p_cal, Command.CALIBRATE)
    p_cal.add_argument("--slowdown", type=float, default=DEFAULT_SLOWDOWN,
                       help="the known slowdown of B, as a fraction (0.05); B's extra CPU per request is sized "
                       "from A's, measured in the run")
    p_cal.add_argument("--json", action="store_true", help="print one JSON object (the figures) on stdout")
    p_cal.add_argument("--extra-us", type=float, default=None,
                       help="microseconds of CPU work B adds per request (as an empty loop timed here), "
                       "instead of sizing it from --slowdown in the run")

    _add_compare_parser(sub)

    p_report = sub.add_parser("report", help="render a finished or interrupted run from its results file")
    p_report.add_argument("run_dir", type=Path)
    p_report.add_argument("--format", default="terminal", choices=sorted(FORMATS))
    p_report.add_argument("-o", "--output", type=Path, help="write to a file instead of stdout")
    add_options(p_report, Command.REPORT)

    _add_app_parser(sub)
    _add_history_parser(sub)
    add_python_parser(sub)
    p_doctor = sub.add_parser("doctor", help="what is installed, what is missing, and how to fix it")
    p_doctor.add_argument("--hosts", type=Path, metavar="HOSTS_TOML",
                          help="check every inventory host over SSH instead of this machine")
    p_doctor.add_argument("--allow-remote", action="store_true", help="the inventory may name public addresses")
    return parser
