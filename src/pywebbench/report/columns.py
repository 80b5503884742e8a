"""The columns of the result tables, once for every format: what a column is called, where its
value comes from in a Row, how it is written, and which formats show it.

The terminal, Markdown and HTML tables each take `shown(format, table)` in this order, so a
new column is one entry in COLUMNS. Where a format writes a column its own way (Markdown puts
the interval beside req/s, the terminal names the stack by its label), the entry says so in that
format's `Look`. The terminal shows a few of them unless asked for all (report/terminal_table.py).
CSV and JSON export every raw field instead (report/record.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from pywebbench.analyze.rows import Row
from pywebbench.report.check_summary import check_kinds
from pywebbench.report.interpreter_label import interpreter_label, shows_interpreter
from pywebbench.report import shape_columns as shapes
from pywebbench.report.common import (
    interval,
    keepalive_label,
    latency_format,
    num,
    server_label,
    validity_label,
    workers_label,
)


class Format(Enum):
    TERMINAL = "terminal"
    MARKDOWN = "markdown"
    HTML = "html"


class Align(Enum):
    LEFT = "left"
    RIGHT = "right"
    CENTER = "center"


@dataclass(frozen=True)
class TableInfo:
    """What a cell's text may depend on besides its own row: the table's rows and the run."""

    rows: Sequence[Row]
    client_keepalive: bool = True
    """False when the generator closed every connection (--no-keepalive)."""

    @property
    def paired(self) -> bool:
        return any(r.method.paired for r in self.rows)

    @property
    def open_loop(self) -> bool:
        return any(r.spec.rate is not None for r in self.rows)

    @property
    def profiled(self) -> bool:
        """Any row with a profiled window (--profile): the CPU split's columns."""
        return any(r.profile is not None for r in self.rows)


Text = Callable[[Row, TableInfo], str]


@dataclass(frozen=True)
class Look:
    """How one format shows a column where it differs from the column's own header and text."""

    header: str | None = None
    text: Text | None = None
    detail: Callable[[Row], str] | None = None
    """A second line under the value (HTML): its interval, its repeats."""


def _always(table: TableInfo) -> bool:
    return True


@dataclass(frozen=True)
class Column:
    name: str
    header: str
    value: Callable[[Row], float | str | None]
    """The raw value: what the HTML table sorts by."""
    text: Text
    formats: Mapping[Format, Look]
    """The formats that show this column, each with its own look (mostly none)."""
    align: Align = Align.RIGHT
    when: Callable[[TableInfo], bool] = _always
    """Shown only in tables where this holds (the paired columns, the open-loop ones)."""
    hint: str = ""
    """What the column means, as the HTML header's tooltip."""
    sort: Callable[[Row], str] | None = None
    """The HTML sort key where the value is not it."""

    def header_in(self, fmt: Format) -> str:
        return self.formats[fmt].header or self.header

    def text_in(self, fmt: Format, row: Row, table: TableInfo) -> str:
        return (self.formats[fmt].text or self.text)(row, table)

    def detail_in(self, fmt: Format, row: Row) -> str:
        detail = self.formats[fmt].detail
        return detail(row) if detail is not None else ""

    def sort_key(self, row: Row) -> str:
        """data-sort: the raw number ('' when missing, sorted last either way), or the text."""
        if self.sort is not None:
            return self.sort(row)
        value = self.value(row)
        if value is None:
            return ""
        return repr(float(value)) if isinstance(value, int | float) else value


def _fmt(get: Callable[[Row], float | int | None], spec: str) -> Text:
    return lambda row, table: num(get(row), spec)


def _latency(get: Callable[[Row], float | None]) -> Text:
    return lambda row, table: latency_format(get(row))


def _bounds(ci: tuple[float, float] | None, spec: str) -> str:
    return "-" if ci is None else f"{format(ci[0], spec)}-{format(ci[1], spec)}"


def _beside(value: str, ci: tuple[float, float] | None, spec: str, note: str | None = None) -> str:
    bounds = interval(ci, spec) or (f"({note})" if note else "")
    return f"{value} {bounds}" if bounds else value


_SHORT_VERDICT = {"different": "!=", "equivalent": "~=", "unresolved": "?"}
"""The terminal's narrow spelling of a row's verdict against the next (the legend says which)."""


def _ratio_with_interval(row: Row, table: TableInfo) -> str:
    """'15.34 [14.52, 16.20]': the ratio and its interval in one cell, so no squeeze can keep one and
    cut the other; or why it has none ('needs 3 launches'), never a range it cannot support."""
    ratio = num(row.ratio, ".2f")
    if row.ratio is None or row.ratio_ci is None:
        return f"{ratio} ({row.interval_note})" if row.ratio is not None and row.interval_note else ratio
    return f"{ratio} [{row.ratio_ci[0]:.2f}, {row.ratio_ci[1]:.2f}]"


def _framework(row: Row) -> str:
    """The framework, and a calibration's alias (A, A2, B): two rows of one stack stay apart."""
    return row.stack.framework_title + (f" #{row.spec.alias}" if row.spec.alias else "")


def _tie(row: Row, table: TableInfo) -> str:
    if row.tie_group is None:
        return "-"
    shared = sum(1 for r in table.rows if r.tie_group == row.tie_group) > 1
    return f"={row.tie_group}" if shared else str(row.tie_group)


def _keepalive(row: Row, table: TableInfo) -> str:
    if not table.client_keepalive:
        return "off (client)"  # the generator closes every connection, whatever the server offers
    return keepalive_label(row)


def _rps_detail(row: Row) -> str:
    repeats = f"n={row.trials}" if row.trials > 1 else ""
    return " ".join(p for p in (interval(row.rps_ci, ",.0f"), repeats) if p)


def _checks_detail(row: Row) -> str:
    count = len(check_kinds(row))
    return f"(!) {count} check{'s' if count > 1 else ''}" if count else ""  # a line each, under the row


def _valid_sort(row: Row) -> str:
    return f"{0 if row.valid else 1}{len(row.checks):03d}{validity_label(row)}"


def _valid_flagged(row: Row, table: TableInfo) -> str:
    count = len(check_kinds(row))
    return validity_label(row) + (f" !{count}" if count else "")


def _paired(table: TableInfo) -> bool:
    return table.paired


def _restart(table: TableInfo) -> bool:
    return not table.paired


def _open_loop(table: TableInfo) -> bool:
    return table.open_loop


def _profiled(table: TableInfo) -> bool:
    return table.profiled


def _split_share(category: str) -> Callable[[Row], float | None]:
    """A category's share of the row's profiled samples (profile/split.py); None unsampled."""
    def share(row: Row) -> float | None:
        profile = row.profile
        if profile is None or not profile.samples:
            return None
        return dict(profile.split).get(category, 0) / profile.samples
    return share


def _profile_overhead(row: Row) -> float | None:
    return row.profile.overhead if row.profile is not None else None


def _split_column(category: str, header: str, hint: str) -> Column:
    share = _split_share(category)
    return Column(f"cpu_{category}", header, share, _fmt(share, ".0%"), _ALL, when=_profiled,
                  hint=f"{hint}: its share of the profiled window's samples (--profile)")


def _shape_column(name: str, header: str, get: shapes.ShapeGet, spec: str, hint: str) -> Column:
    """A connection shape's figure: its value and its interval over launch means in one cell (the
    HTML table's second line holds the interval), shown in that shape's tables only."""
    return Column(name, header, shapes.figure_value(get), lambda r, t: shapes.figure_cell(get, spec)(r),
                  {_T: Look(), _M: Look(),
                   _H: Look(text=lambda r, t: shapes.figure_alone(get, spec)(r), detail=shapes.figure_detail(get, spec))},
                  when=lambda t: shapes.shows(name, t.rows),
                  hint=hint + "; 95% interval: Student's t over the stack's launch means")


def _float(value: int | None) -> float | None:
    return None if value is None else float(value)


_T, _M, _H = Format.TERMINAL, Format.MARKDOWN, Format.HTML
_ALL: Mapping[Format, Look] = {_T: Look(), _M: Look(), _H: Look()}

COLUMNS: tuple[Column, ...] = (
    Column("stack", "Stack", lambda r: r.label, lambda r, t: r.label, {_T: Look()}, Align.LEFT),
    Column("framework", "Framework", _framework, lambda r, t: _framework(r), {_M: Look(), _H: Look()}, Align.LEFT),
    Column("server", "Server", lambda r: server_label(r.stack), lambda r, t: server_label(r.stack),
           {_M: Look(), _H: Look(detail=lambda r: r.label)}, Align.LEFT),
    Column("type", "Type", lambda r: r.stack.concurrency, lambda r, t: r.stack.concurrency, _ALL, Align.LEFT),
    Column("workers", "Workers", lambda r: float(r.stack.workers * r.stack.threads),
           lambda r, t: workers_label(r.stack), _ALL),
    Column("python", "Python", lambda r: interpreter_label(r.stack), lambda r, t: interpreter_label(r.stack), _ALL,
           Align.LEFT, when=lambda t: shows_interpreter(t.rows), hint="the interpreter the workers ran (read from "
           "/proc/PID/exe of a worker); a free-threaded build says whether its workers kept the GIL off"),
    Column("protocol", "Protocol", shapes.protocol_of, lambda r, t: shapes.protocol_of(r), _ALL, Align.LEFT,
           when=lambda t: shapes.shows_protocol(t.rows), hint="the wire protocol the windows spoke (--protocol)"),
    # A connection shape's own figures (report/shape_columns.SHOWN says which table shows which).
    _shape_column("shape_rss", "RSS KB/conn", lambda s: s.rss_kb_per_connection, ".1f",
                  "the server's RSS growth per idle connection, KB"),
    _shape_column("shape_socket", "Socket KB/conn", lambda s: s.socket_kb_per_connection, ".2f",
                  "the kernel's TCP socket memory per idle connection, both ends (one host), KB"),
    _shape_column("shape_active_p99", "Active p99 ms", lambda s: s.p99_ms, "ms",
                  "p99 of the active requests beside the idle connections, from their intended send times"),
    _shape_column("shape_rps", "Req/s (new conn.)", lambda s: s.rate, ",.0f", "requests per second, each on a new connection"),
    _shape_column("shape_mb_s", "MB/s", lambda s: s.mb_s, ",.1f", "MB (10^6 bytes) moved per second"),
    _shape_column("shape_cpu_per_mb", "CPU s/MB", lambda s: s.cpu_s_per_mb, ".4f",
                  "the app server's CPU seconds per MB moved"),
    _shape_column("shape_events", "Events/s", lambda s: s.rate, ",.0f", "server-sent events delivered per second"),
    _shape_column("shape_delivery_p99", "Delivery p99 ms", lambda s: s.p99_ms, "ms",
                  "p99 of each event's delivery latency, from its send stamp"),
    _shape_column("shape_messages", "Messages/s", lambda s: s.rate, ",.0f", "WebSocket messages echoed per second"),
    _shape_column("shape_rtt_p99", "Round-trip p99 ms", lambda s: s.p99_ms, "ms", "p99 of each echo's round trip"),
    Column("shape_connections", "Held/refused/closed", shapes.connections_value,
           lambda r, t: shapes.connections_text(r), _ALL, when=lambda t: shapes.shows("shape_connections", t.rows),
           hint="the fewest connections held at a window's end, the most refused and the most closed by the "
           "server in one window, of those asked for"),
    Column("rps", "Req/s", lambda r: r.rps, _fmt(lambda r: r.rps, ",.0f"),
           {_T: Look(), _M: Look("Req/s [95% CI]", lambda r, t: _beside(num(r.rps, ",.0f"), r.rps_ci, ",.0f")),
            _H: Look(detail=_rps_detail)},
           hint="aggregate of the repeats, with its bootstrap 95% interval"),
    Column("rps_ci", "95% CI", lambda r: None if r.rps_ci is None else r.rps_ci[0],
           lambda r, t: _bounds(r.rps_ci, ",.0f"), {_T: Look()}, when=_restart),
    Column("ratio", "Ratio", lambda r: r.ratio, _fmt(lambda r: r.ratio, ".2f"),
           {_T: Look("Ratio [95% CI]", _ratio_with_interval),
            _M: Look("Ratio [95% CI]", lambda r, t: _beside(num(r.ratio, ".2f"), r.ratio_ci, ".2f", r.interval_note)),
            _H: Look(detail=lambda r: interval(r.ratio_ci, ".2f") or (r.interval_note or ""))},
           hint="req/s relative to the baseline in the same cell, with its 95% interval"),
    Column("tie", "Tie", lambda r: r.tie_group, _tie, _ALL, Align.CENTER, when=_paired,
           hint="rows with the same number are tied: their pair was not called different"),
    Column("next", "vs next", lambda r: r.next_verdict, lambda r, t: r.next_verdict or "",
           {_T: Look("Next", lambda r, t: _SHORT_VERDICT.get(r.next_verdict or "", "")), _M: Look(), _H: Look()},
           Align.CENTER,
           when=_paired, hint="against the row below: different (told apart), equivalent (within "
           "the run's --equivalence margin, two one-sided tests) or unresolved"),
    Column("cpu_ratio", "CPU/req ratio", lambda r: r.cpu_ratio, _fmt(lambda r: r.cpu_ratio, ".3f"), {_T: Look()},
           when=_paired),
    Column("p50", "P50 ms", lambda r: r.p50_ms, _latency(lambda r: r.p50_ms),
           {_T: Look(text=_fmt(lambda r: r.p50_ms, ".1f")), _M: Look(), _H: Look()}),
    Column("p90", "P90 ms", lambda r: r.p90_ms, _latency(lambda r: r.p90_ms), {_H: Look()}),
    Column("p99", "P99 ms", lambda r: r.p99_ms, _latency(lambda r: r.p99_ms),
           {_T: Look(text=_fmt(lambda r: r.p99_ms, ".1f")), _M: Look(), _H: Look()}),
    Column("p99_uncorrected", "P99 uncorr.", lambda r: r.uncorrected_p99_ms,
           _fmt(lambda r: r.uncorrected_p99_ms, ".1f"), {_T: Look()}, when=_open_loop),
    Column("errors", "Errors", lambda r: r.errors, lambda r, t: str(r.errors), _ALL),
    Column("db_sessions", "#DB", lambda r: _float(r.db_sessions), _fmt(lambda r: r.db_sessions, "d"), _ALL,
           hint="peak server sessions pgbouncer held"),
    Column("cpu_ms_per_req", "CPU ms/req", lambda r: r.cpu_ms_per_req, _fmt(lambda r: r.cpu_ms_per_req, ".3g"),
           {_T: Look(text=_fmt(lambda r: r.cpu_ms_per_req, ".3f")), _M: Look(), _H: Look()},
           hint="app server CPU time per completed request"),
    Column("cpu_percent", "CPU %", lambda r: r.cpu_percent, _fmt(lambda r: r.cpu_percent, ".0f"), {_H: Look()},
           hint="app server CPU, percent of one core"),
    Column("rss", "RSS MB", lambda r: r.rss_mb, _fmt(lambda r: r.rss_mb, ",.0f"), _ALL,
           hint="peak resident memory of the app server's processes, summed"),
    # --profile's CPU split by the innermost frame's file (profile/split.py), and what sampling cost.
    _split_column("kernel", "Kernel %", "kernel and system calls (a C-library leaf: send, recv, epoll)"),
    _split_column("server", "Server %", "the server's packages (and the standard library they call)"),
    _split_column("framework", "Framework %", "the framework's packages"),
    _split_column("app", "App %", "the app's own code"),
    _split_column("rest", "Rest %", "other libraries (the DB driver, Jinja2) and samples no rule claims"),
    Column("profile_overhead", "Profile ovh", _profile_overhead, _fmt(_profile_overhead, "+.1%"), _ALL,
           when=_profiled, hint="the profiled window's req/s against the mean of the measured windows, minus 1: "
           "what py-spy's sampling cost (one window: noisy)"),
    Column("keepalive", "Keep-alive", lambda r: keepalive_label(r), _keepalive, {_T: Look(), _H: Look()},
           Align.CENTER),
    Column("valid", "Valid", validity_label, lambda r, t: validity_label(r),
           {_T: Look(text=_valid_flagged),
            _M: Look(), _H: Look("Valid / checks", detail=_checks_detail)},
           Align.LEFT, sort=_valid_sort),
    Column("checks", "Checks", lambda r: ", ".join(check_kinds(r)), lambda r, t: ", ".join(check_kinds(r)),
           {_M: Look()}, Align.LEFT),
)


def shown(fmt: Format, table: TableInfo) -> tuple[Column, ...]:
    """The columns a format shows for this table, in order."""
    return tuple(c for c in COLUMNS if fmt in c.formats and c.when(table))


def column(name: str) -> Column:
    return next(c for c in COLUMNS if c.name == name)


@dataclass(frozen=True)
class Cell:
    """One column of one row as a format writes it."""

    text: str
    sort: str = ""
    detail: str = ""


def row_cells(fmt: Format, table: TableInfo, columns: Sequence[Column], row: Row) -> tuple[Cell, ...]:
    """One row of the table, each of `columns` written as `fmt` writes it."""
    return tuple(Cell(c.text_in(fmt, row, table), c.sort_key(row), c.detail_in(fmt, row)) for c in columns)
