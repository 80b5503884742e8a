"""Sweeps: which knobs can be swept, their value syntax, and the grid of settings they span.

Seed 000's lesson is that a handful of knobs decide the ranking, so `pywebbench sweep` runs
the same benchmark at every point of a grid. Each `--knob NAME=VALUES` adds one axis:

    --knob connections=10,100,1000     a list
    --knob threads=10..1000            a 1-2-5 series: 10,20,50,100,200,500,1000
    --knob connections=10..1000*3      geometric, factor 3: 10,30,90,270,810,1000
    --knob workers=1..9+2              arithmetic, step 2: 1,3,5,7,9
    --knob db_delay=0,1ms..100ms       parts combine: 0,0.001,0.002,0.005,...,0.1

    --knob workers=auto,1,2            auto: no worker flag, the server sizes itself
    --knob cpu_quota=0.5,1             the app server's CFS quota, in CPUs
    --knob memory_limit=256M..1G*2     its memory limit: 256M,512M,1G
    --knob python=3.11,3.13,pypy3      the interpreter each stack's environment is built on
    --knob pin=gunicorn==22.0.0,gunicorn==23.0.0   a package's version (or git ref, checkout)
    --knob protocol=h1,h2c,h1-tls,h2-tls   the wire protocol to the app server (h2load drives all but h1)

Every range includes both of its ends, whether or not the series lands on the upper one;
the series fills in between. 1-2-5 and geometric ranges must start above zero (list a zero
separately, as above). Durations take `us`, `ms` or `s` (plain numbers are seconds), so
`20ms` and `0.02` are the same value. Byte sizes take K, M, G or T, with or without `i`, in
powers of 1024 as the kernel, Docker and systemd read them (`512M` and `512Mi` are the same);
plain numbers are bytes. Whole-number knobs round geometric values to the
nearest whole number. Duplicates are dropped and the written order is kept. Knob names take
`-` or `_` (`max-db-sessions`). The grid is the cartesian product of the axes, in the order
given, the first axis varying slowest.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from pywebbench.core.errors import UserError
# Kind and Knob are named from here by most callers; they are declared in plan/knob_declarations.py.
from pywebbench.plan.knob_declarations import Kind as Kind
from pywebbench.plan.knob_declarations import Knob as Knob
from pywebbench.plan.knob_declarations import declared_knobs
from pywebbench.plan.limits import AUTO, cpu_quota_problem, format_bytes, memory_limit_problem, parse_bytes
from pywebbench.plan.text_knobs import text_values
from pywebbench.results.server import AUTO_WORKERS

KnobValue = int | float | str
MAX_VALUES_PER_AXIS = 1000
"""A guard against typos like `1..1000000+1`, which would plan a million trials."""


@dataclass(frozen=True)
class KnobAxis:
    knob: Knob
    values: tuple[KnobValue, ...]


@dataclass(frozen=True)
class GridPoint:
    """One setting of every swept knob, in axis order."""

    settings: tuple[tuple[Knob, KnobValue], ...]

    def overrides(self) -> dict[str, object]:
        """RunOptions field (a field-less knob: its name) -> value; `stack_cpus` stays a count for the
        caller to map to CPU ids."""
        return {knob.key: value for knob, value in self.settings}

    def get(self, knob: Knob) -> KnobValue | None:
        return next((value for k, value in self.settings if k is knob), None)

    @property
    def label(self) -> str:
        """'connections=100 db_delay=20ms': short, and each value parses back to itself."""
        if not self.settings:
            return "defaults"
        return " ".join(f"{knob.value}={format_value(knob, value)}" for knob, value in self.settings)


def known_knobs() -> str:
    return ", ".join(k.name for k in declared_knobs())


def knob_named(name: str) -> Knob:
    wanted = name.strip().replace("-", "_").lower()
    knob = next((k for k in declared_knobs() if k.name == wanted), None)
    if knob is None:
        raise UserError(f"unknown knob {name.strip()!r}; known knobs: {known_knobs()}")
    return knob


def format_value(knob: Knob, value: KnobValue) -> str:
    if isinstance(value, str):
        return value
    if knob.auto and value == AUTO_WORKERS:
        return AUTO
    if knob.kind is Kind.BYTES:
        return format_bytes(int(value))
    if knob.kind is Kind.SECONDS:
        if value == 0:
            return "0"
        if value < 1:
            return f"{value * 1000:g}ms"
        return f"{value:g}s"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


_DURATION = re.compile(r"(?P<number>[-+]?(?:\d+(?:\.\d*)?|\.\d+))\s*(?P<unit>us|µs|ms|s)?")
MAX_MAGNITUDE = Decimal("1e12")
MIN_MAGNITUDE = Decimal("1e-9")
_UNIT_SCALE = {None: Decimal(1), "s": Decimal(1), "ms": Decimal("0.001"), "us": Decimal("0.000001"),
               "µs": Decimal("0.000001")}
# start..end with an optional *factor or +step; the end is matched lazily so the suffix is split off.
_RANGE = re.compile(r"(?P<start>.+?)\.\.(?P<end>.+?)(?:(?P<op>[*+])(?P<step>[^*+]+))?")


def _number(knob: Knob, text: str) -> Decimal:
    """One value of this knob as an exact decimal, in the knob's unit (seconds for durations)."""
    value = _magnitude(knob, text)
    _check_sign(knob, value)
    return value


def _magnitude(knob: Knob, text: str) -> Decimal:
    """Parsed in the knob's unit and type, without the knob's sign rule (a range step has its own)."""
    text = text.strip()
    kind = knob.kind
    if kind is Kind.SECONDS:
        match = _DURATION.fullmatch(text)
        if match is None:
            raise UserError(f"{knob.value}: {text!r} is not a duration; use a form like 20ms, 0.02 or 1s")
        value = Decimal(match["number"]) * _UNIT_SCALE[match["unit"]]
    elif kind is Kind.BYTES:
        try:
            value = Decimal(parse_bytes(text))
        except ValueError as exc:
            raise UserError(f"{knob.value}: {exc}") from None
    else:
        try:
            value = Decimal(text)
        except InvalidOperation:
            value = Decimal("NaN")
        if not value.is_finite():
            raise UserError(f"{knob.value}: {text!r} is not a number")
        if kind is Kind.COUNT and value != value.to_integral_value():
            raise UserError(f"{knob.value}: {text!r} is not a whole number")
    # Bounded: 1e30 workers cannot be rounded to an int (decimal precision), and a 1..2..5
    # range from 1e-999999 would walk three million decades before refusing its size.
    if abs(value) > MAX_MAGNITUDE * (2 ** 20 if kind is Kind.BYTES else 1) or (value != 0 and abs(value) < MIN_MAGNITUDE):
        raise UserError(f"{knob.value}: {text!r} is out of range ({MIN_MAGNITUDE:g} to {MAX_MAGNITUDE:g})")
    return value


def _check_sign(knob: Knob, value: Decimal) -> None:
    if knob.zero_allowed and value < 0:
        raise UserError(f"{knob.value} must not be negative, got {value}")
    if not knob.zero_allowed and value <= 0:
        raise UserError(f"{knob.value} must be positive, got {value}")
    floor = {Kind.CPUS: cpu_quota_problem, Kind.BYTES: memory_limit_problem}.get(knob.kind)
    why = floor(float(value)) if floor is not None else None
    if why is not None:
        raise UserError(f"{knob.value} {why}")

def _factor(knob: Knob, text: str) -> Decimal:
    try:
        factor = Decimal(text.strip())
    except InvalidOperation:
        factor = Decimal("NaN")
    if not factor.is_finite() or factor <= 1:
        raise UserError(f"{knob.value}: the factor after '*' must be a number above 1, got {text.strip()!r}")
    return factor


def _one_two_five(start: Decimal, end: Decimal) -> list[Decimal]:
    """Members of ...,1,2,5,10,20,... strictly between start and end, ascending."""
    members: list[Decimal] = []
    for exponent in range(start.adjusted(), end.adjusted() + 1):
        for mantissa in (1, 2, 5):
            value = Decimal(mantissa).scaleb(exponent)
            if start < value < end:
                members.append(value)
    return members


def _range(knob: Knob, item: str, match: re.Match[str]) -> list[Decimal]:
    start, end = _number(knob, match["start"]), _number(knob, match["end"])
    if end < start:
        raise UserError(f"{knob.value}: range {item!r} must go upward")
    op = match["op"]
    if op == "+":
        step = _magnitude(knob, match["step"])
        if step <= 0:
            raise UserError(f"{knob.value}: the step after '+' must be positive, got {match['step'].strip()!r}")
        count = (end - start) / step
        if count >= MAX_VALUES_PER_AXIS:
            raise UserError(f"{knob.value}: range {item!r} has over {MAX_VALUES_PER_AXIS} values")
        inner = [start + step * i for i in range(1, int(count) + 1)]
    else:
        if start <= 0:
            raise UserError(f"{knob.value}: range {item!r} multiplies, so it must start above zero; "
                            f"list 0 separately, e.g. 0,{match['end'].strip()}")
        if op == "*":
            factor = _factor(knob, match["step"])
            inner = []
            value = start * factor
            while value < end:
                inner.append(value)
                value *= factor
                if len(inner) >= MAX_VALUES_PER_AXIS:
                    raise UserError(f"{knob.value}: range {item!r} has over {MAX_VALUES_PER_AXIS} values")
        else:
            inner = _one_two_five(start, end)
    return [start, *(v for v in inner if start < v < end), end]


def _final(knob: Knob, value: Decimal) -> KnobValue:
    if knob.kind in (Kind.COUNT, Kind.BYTES):
        whole = int(value.quantize(Decimal(1), rounding=ROUND_HALF_UP))
        _check_sign(knob, Decimal(whole))
        return whole
    return float(value)


def parse_values(knob: Knob, text: str) -> tuple[KnobValue, ...]:
    """The values of VALUES in `--knob NAME=VALUES` (syntax in the module docstring)."""
    if knob.grammar is not None:
        return text_values(knob.name, knob.grammar, text)
    values: list[KnobValue] = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            raise UserError(f"{knob.value}: empty value in {text!r}")
        if knob.auto and item.lower() == AUTO:
            values.append(AUTO_WORKERS)
            continue
        match = _RANGE.fullmatch(item) if ".." in item else None
        if ".." in item and match is None:
            raise UserError(f"{knob.value}: bad range {item!r}; use a..b, a..b*k or a..b+s")
        exact = _range(knob, item, match) if match is not None else [_number(knob, item)]
        values.extend(_final(knob, v) for v in exact)
    unique = tuple(dict.fromkeys(values))
    if len(unique) > MAX_VALUES_PER_AXIS:
        raise UserError(f"{knob.value}: {len(unique)} values; at most {MAX_VALUES_PER_AXIS} per knob")
    return unique


def parse_knob(text: str) -> KnobAxis:
    """`NAME=VALUES`, e.g. `threads=10..1000` or `db_delay=0,20ms`."""
    name, sep, values = text.partition("=")
    if not sep or not name.strip():
        raise UserError(f"--knob {text!r} must look like NAME=V1,V2,... (knobs: {known_knobs()})")
    knob = knob_named(name)
    if not values.strip():
        raise UserError(f"--knob {text!r} gives no values")
    return KnobAxis(knob, parse_values(knob, values))


def parse_knobs(texts: Iterable[str]) -> tuple[KnobAxis, ...]:
    axes = tuple(parse_knob(text) for text in texts)
    _refuse_duplicates(axes)
    return axes


def _refuse_duplicates(axes: Sequence[KnobAxis]) -> None:
    seen: set[Knob] = set()
    for axis in axes:
        if axis.knob in seen:
            raise UserError(f"knob {axis.knob.value} is given twice; put all its values in one --knob")
        seen.add(axis.knob)


def grid(axes: Sequence[KnobAxis]) -> tuple[GridPoint, ...]:
    """Every combination of the axes' values, first axis slowest; no axes -> one point, the defaults."""
    _refuse_duplicates(axes)
    return tuple(
        GridPoint(tuple(zip((axis.knob for axis in axes), combination, strict=True)))
        for combination in itertools.product(*(axis.values for axis in axes))
    )


def estimate(
    points: Sequence[GridPoint] | int,
    stacks: int,
    workloads: int,
    repeats: int,
    per_trial_s: float,
    per_session_s: float,
) -> tuple[int, float]:
    """(trials, seconds) for the plan printout: an upper bound, as if every stack served every workload.

    Counts one server start (session) per point x stack x round, each measuring all workloads.
    """
    count = points if isinstance(points, int) else len(points)
    sessions = count * stacks * repeats
    trials = sessions * workloads
    return trials, trials * per_trial_s + sessions * per_session_s
