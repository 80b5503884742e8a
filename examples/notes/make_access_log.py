"""A synthetic nginx access log (`combined` format) of the notes app, with a known mix and bursts.

    python make_access_log.py access.log [--lines 100000] [--seed 1] [--mix-out access.mix.json]

Each successful request's kind is drawn at random with MIX's probabilities (seeded), so the
log's own shares differ from MIX by sampling alone; FAILED_SHARE of the lines are 404s and 500s
and a few (one in MALFORMED_EVERY) are cut short, as a log's last line is when a disk fills. The
pace is BASE_RATE requests a second with a burst of BURST_FACTOR times that for BURST_S seconds
every BURST_EVERY_S (100,000 lines span about 7 minutes). `--mix-out` writes the known mix as
JSON: MIX's shares (`shares`) and the shares the draw gave (`observed_shares`), labelled as
`pywebbench app --from-log` labels them with FOLDS, and the counts behind them.

Every kind answers 200 from notes.py (ids within the 1,000 notes `python notes.py` creates).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

MIX: dict[str, float] = {
    "GET /notes/{id}": 0.38,
    "GET /notes?limit=20": 0.25,
    "GET /tags/{tag}": 0.16,
    "GET /health": 0.10,
    "GET /notes?limit=100": 0.06,
    "HEAD /notes/{id}": 0.05,
}
"""Each kind's share of the successful requests."""
FOLDS = ("re:^/tags/[^/?]+=>/tags/{tag}",)
"""The --fold rules that label the log's requests as MIX does (ids fold by default)."""
BASE_RATE = 200
BURST_FACTOR = 3
BURST_S = 5
BURST_EVERY_S = 60
FAILED_SHARE = 0.025
"""404s (4 in 5: unknown notes, probes) and 500s (1 in 5)."""
MALFORMED_EVERY = 10_000
START = datetime(2026, 11, 28, 9, 0, 0, tzinfo=timezone.utc)
NOTES = 1000
TAGS = 7
_AGENTS = ("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
           "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 Version/17.5 Safari/605.1.15",
           "notes-mobile/2.3 (Android 14)", "curl/8.5.0")
_PROBES = ("/wp-login.php", "/.env", "/favicon.ico", "/notes/{missing}")


def counts(lines: int, rng: random.Random) -> dict[str, int]:
    """How many lines of each kind (and `404`, `500`, `malformed`) a log of `lines` holds: each
    successful request's kind drawn at random with MIX's probabilities, so the log's shares differ
    from MIX by sampling, as a real log's do from its traffic's (about 0.15 points at 100,000)."""
    malformed = lines // MALFORMED_EVERY
    failed = round(lines * FAILED_SHARE)
    drawn = rng.choices(list(MIX), weights=list(MIX.values()), k=lines - malformed - failed)
    whole = {kind: drawn.count(kind) for kind in MIX}
    return {**whole, "404": failed - failed // 5, "500": failed // 5, "malformed": malformed}


def _target(kind: str, rng: random.Random) -> tuple[str, str, int, int]:
    """(method, target, status, body bytes) of one request of a kind."""
    note_id = 1 + int(NOTES * rng.random() ** 3)  # the newest notes are read most
    if kind == "404":
        probe = rng.choice(_PROBES).replace("{missing}", str(NOTES + 1 + rng.randrange(5000)))
        return "GET", probe, 404, 207
    if kind == "500":
        return "GET", "/notes?limit=20", 500, 265
    method, _, path = kind.partition(" ")
    path = path.replace("{id}", str(note_id)).replace("{tag}", f"tag{rng.randrange(TAGS)}")
    size = {"/health": 12, "/notes?limit=20": 2900, "/notes?limit=100": 14300}.get(path, 400 + note_id % 300)
    return method, path, 200, 0 if method == "HEAD" else size


def _pace(lines: int, rng: random.Random) -> list[int]:
    """Requests in each second, the bursts included, until `lines` are placed."""
    per_second: list[int] = []
    while sum(per_second) < lines:
        second = len(per_second)
        rate = BASE_RATE * (BURST_FACTOR if second % BURST_EVERY_S >= BURST_EVERY_S - BURST_S else 1)
        per_second.append(max(1, round(rng.gauss(rate, rate * 0.1))))
    per_second[-1] -= sum(per_second) - lines
    return per_second


def generate(lines: int = 100_000, seed: int = 1) -> tuple[list[str], dict[str, object]]:
    """The log's lines and its known mix."""
    rng = random.Random(seed)
    counted = counts(lines, rng)
    kinds = [kind for kind, n in counted.items() for _ in range(n)]
    rng.shuffle(kinds)
    out: list[str] = []
    pace = _pace(lines, rng)
    for second, n in enumerate(pace):
        stamp = (START + timedelta(seconds=second)).strftime("%d/%b/%Y:%H:%M:%S +0000")
        for _ in range(n):
            kind = kinds[len(out)]
            method, target, status, size = _target("GET /notes/{id}" if kind == "malformed" else kind, rng)
            ip = f"10.{rng.randrange(4)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
            line = (f'{ip} - - [{stamp}] "{method} {target} HTTP/1.1" {status} {size} "-" '
                    f'"{rng.choice(_AGENTS)}"')
            out.append(line[:rng.randrange(20, line.index(" HTTP/1.1"))] if kind == "malformed" else line)
    ok = sum(counted[kind] for kind in MIX)
    known: dict[str, object] = {
        "lines": lines, "seed": seed, "folds": list(FOLDS), "shares": dict(MIX),
        "counts": counted, "observed_shares": {kind: counted[kind] / ok for kind in MIX},
        "base_rate": BASE_RATE, "burst": {"factor": BURST_FACTOR, "seconds": BURST_S, "every_s": BURST_EVERY_S},
        "duration_s": len(pace), "per_second": pace,
    }
    return out, known


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("log", type=Path, help="where the log goes")
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mix-out", type=Path, help="where the known mix goes as JSON (else printed)")
    args = parser.parse_args(argv)
    if args.lines < MALFORMED_EVERY // 100:
        parser.error(f"--lines must be at least {MALFORMED_EVERY // 100}")
    lines, known = generate(args.lines, args.seed)
    args.log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    text = json.dumps(known, indent=2) + "\n"
    if args.mix_out is not None:
        args.mix_out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
