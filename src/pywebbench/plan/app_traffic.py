"""Where `app`'s traffic comes from: typed requests, a requests file, an access log or a HAR.

One source gives the whole mix. A log or HAR is read into a weighted mix (plan/traffic_import.py)
and, with `--replay`, into a schedule of its arrivals (catalog/schedule.py) played at
`--replay-speed` times the log's own pace, which sets the windows' offered rate. Every
problem with these flags is found at once, one line each, before anything is built.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path

from pywebbench.catalog.schedule import Schedule
from pywebbench.core.errors import UserError
from pywebbench.plan.traffic import RequestSpec, parse_requests, parse_requests_file
from pywebbench.plan.traffic_import import DerivedMix, derive_mix, parse_fold


@dataclass(frozen=True)
class AppTraffic:
    requests: tuple[RequestSpec, ...]
    derived: DerivedMix | None = None
    """The log or HAR the mix was read from, with what was left out."""
    schedule: Schedule | None = None
    """--replay: the recorded arrivals."""
    replay_speed: float = 1.0

    @property
    def replay_rate(self) -> float | None:
        """The mean offered rate of a replay: the log's own, times --replay-speed."""
        return None if self.schedule is None else self.schedule.mean_rate * self.replay_speed


def flag_problems(args: argparse.Namespace) -> list[str]:
    """Every misuse of the traffic flags, one line each (nothing read yet)."""
    given = [flag for flag, value in (("--request", args.requests), ("--requests-file", args.requests_file),
                                      ("--from-log", args.from_log), ("--from-har", args.from_har)) if value]
    recorded = args.from_log is not None or args.from_har is not None
    problems = []
    if len(given) > 1:
        problems.append(f"give one of {' or '.join(given)}: each is the whole traffic mix")
    for flag, used in (("--max-kinds", args.max_kinds is not None), ("--fold", bool(args.folds)),
                       ("--keep-header", bool(args.keep_headers)), ("--keep-failed", args.keep_failed),
                       ("--replay", args.replay)):
        if used and not recorded:
            problems.append(f"{flag} reads a recording: give --from-log FILE or --from-har FILE")
    if args.max_kinds is not None and args.max_kinds < 1:
        problems.append(f"--max-kinds must be at least 1, got {args.max_kinds}")
    if args.replay_speed is not None:
        if not args.replay:
            problems.append("--replay-speed goes with --replay")
        if not (math.isfinite(args.replay_speed) and args.replay_speed > 0):
            problems.append(f"--replay-speed must be a positive number, got {args.replay_speed:g}")
    if args.replay and args.rate:
        problems.append("--replay offers the log's own rate times --replay-speed; --rate would replace it "
                        "(give one of them)")
    for rule in args.folds:
        try:
            parse_fold(rule)
        except UserError as exc:
            problems.extend(exc.problems)
    return problems


def app_traffic(args: argparse.Namespace) -> AppTraffic:
    """The traffic of an `app` run, or a UserError holding every problem, one per line."""
    problems = flag_problems(args)
    if problems:
        raise UserError("\n".join(problems))
    if args.from_log is None and args.from_har is None:
        requests = parse_requests_file(args.requests_file) if args.requests_file is not None \
            else parse_requests(args.requests or ["GET /"])
        return AppTraffic(requests)
    source: Path = args.from_log if args.from_log is not None else args.from_har
    derived = derive_mix(source, max_kinds=args.max_kinds, folds=tuple(parse_fold(r) for r in args.folds),
                         keep_headers=tuple(args.keep_headers), keep_failed=args.keep_failed,
                         log_format=None)
    requests = tuple(kind.spec for kind in derived.kinds)
    if not args.replay:
        return AppTraffic(requests, derived)
    if not derived.has_times or len(derived.arrivals) < 2:
        raise UserError(f"--replay: {source} records no arrival times to replay (a HAR's startedDateTime, a log's "
                        "timestamp); drop --replay to send its mix at a constant rate")
    schedule = Schedule(tuple(a.offset_s for a in derived.arrivals), tuple(a.kind for a in derived.arrivals),
                        str(source))
    return AppTraffic(requests, derived, schedule, args.replay_speed if args.replay_speed is not None else 1.0)
