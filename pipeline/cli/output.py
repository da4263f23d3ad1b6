"""One shared set of output formats for every read command: table (people), json, csv."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import sys
from enum import Enum
from typing import TYPE_CHECKING, Any, Iterable, Iterator

if TYPE_CHECKING:  # rich is imported when a table is drawn
    from rich.console import Console
    from rich.text import Text


class ModeChoice(str, Enum):
    """A game mode, as the command line takes it."""

    matched = "matched"
    combat_patrol = "combat-patrol"


class Format(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


def _duration(value: dt.timedelta) -> str:
    """An interval as an ISO 8601 duration (DuckDB gives a month as 30 days).

    >>> _duration(dt.timedelta(days=423, seconds=14706, microseconds=500000)), _duration(-dt.timedelta(days=1))
    ('P423DT4H5M6.5S', '-P1D')
    >>> _duration(dt.timedelta(0)), _duration(dt.timedelta(minutes=2))
    ('PT0S', 'PT2M')
    """
    sign, value = ("-", -value) if value < dt.timedelta(0) else ("", value)
    hours, rest = divmod(value.seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    seconds_text = f"{seconds}.{value.microseconds:06d}".rstrip("0").rstrip(".") if value.microseconds else str(seconds)
    time = "".join(f"{n}{unit}" for n, unit in ((hours, "H"), (minutes, "M")) if n)
    time += f"{seconds_text}S" if seconds or value.microseconds else ""
    if not value.days and not time:
        return "PT0S"
    return sign + "P" + (f"{value.days}D" if value.days else "") + (f"T{time}" if time else "")


def _blob(value: bytes) -> str:
    r"""A blob as DuckDB prints it: printable ASCII but the backslash as is, every other byte as
    ``\xHH``.

    >>> print(_blob(b"\xaa\x00ab\\"))
    \xAA\x00ab\x5C
    """
    return "".join(chr(b) if 32 <= b < 127 and b != 0x5C else f"\\x{b:02X}" for b in value)


def _plain(value: Any) -> Any:
    r"""A value of a query or of the engine as JSON can hold it: dates, times and timestamps as
    ISO 8601 text, intervals as ISO 8601 durations, decimals as exact text (``"1.10"``), blobs
    as DuckDB prints them, UUIDs and other objects as text, NaN and infinities as None (null);
    numpy numbers as Python numbers; lists, tuples and dicts element by element (dict keys as
    text).

    >>> import decimal, uuid
    >>> _plain({"d": decimal.Decimal("1.10"), dt.date(2024, 1, 2): [float("nan"), float("-inf"), 1.5],
    ...         "t": dt.time(12, 34, 56), "u": uuid.UUID(int=1), "b": b"\x01"})
    {'d': '1.10', '2024-01-02': [None, None, 1.5], 't': '12:34:56', 'u': '00000000-0000-0000-0000-000000000001', 'b': '\\x01'}
    """
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(_plain(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return _duration(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _blob(bytes(value))
    decimal = sys.modules.get("decimal")  # a Decimal is of a module loaded already (not loaded here)
    if decimal is not None and isinstance(value, decimal.Decimal):
        return str(value) if value.is_finite() else None
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return _plain(value.tolist())
    return str(value)


def to_json(data: Any) -> str:
    """JSON text of rows or nested dicts, always valid JSON (``_plain``: NaN and infinities are
    null, dates, times, intervals, decimals, blobs and UUIDs are text).

    >>> print(to_json({"p": float("nan"), "when": dt.date(2024, 1, 2)}))
    {
      "p": null,
      "when": "2024-01-02"
    }
    """
    return json.dumps(_plain(data), ensure_ascii=False, indent=2, allow_nan=False)


def _text(value: Any) -> str:
    """A value as the text of a table cell or a CSV field: "" for None; numbers, lists and
    dicts as Python prints them (``nan``, ``inf``); other values as ``_plain`` gives them.

    >>> _text(None), _text(float("nan")), _text(dt.timedelta(hours=1)), _text(b"a\\x00")
    ('', 'nan', 'PT1H', 'a\\\\x00')
    """
    if value is None:
        return ""
    if isinstance(value, (float, list, tuple, dict)):
        return str(value)
    return str(_plain(value))


@contextlib.contextmanager
def time_limit(seconds: float, message: str) -> Iterator[None]:
    """Raise ``DatabaseError(message)`` in the main thread once ``seconds`` have passed inside the
    block (``SIGALRM``; elsewhere, or outside the main thread, no limit is set: the callers'
    own limits still hold). Python code is stopped between two bytecodes; a call into C (a
    DuckDB query) is stopped when it returns (``run_sql`` interrupts DuckDB itself)."""
    import signal
    import threading

    from pipeline.errors import DatabaseError

    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(_signum, _frame):
        raise DatabaseError(message)

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def console(stderr: bool = False, width: int | None = None) -> Console:
    """A rich console that shows data as it is: no markup (``[bold]``), no emoji codes (``:x:``),
    no highlighting of numbers or paths."""
    from rich.console import Console

    return Console(stderr=stderr, width=width, markup=False, emoji=False, highlight=False)


def cell(value: Any) -> Text:
    """A table cell holding a value literally (``"[BLAST]"`` or ``":x:"`` are data, not markup)."""
    from rich.text import Text

    return Text(_text(value))


def render_rows(rows: list[dict[str, Any]], fmt: Format, title: str | None = None,
                columns: Iterable[str] | None = None) -> None:
    """Print rows on stdout in the chosen format (data only; notes go to stderr).

    The columns are ``columns``, else the rows' own (``query.Rows`` knows them even when empty),
    else the first row's keys. With no rows, JSON is ``[]``, CSV is the header line alone and a
    table prints nothing; a table shows the first ``limits.MAX_TABLE_ROWS`` rows and counts the
    rest in a note (JSON and CSV print every row).
    """
    if columns is not None:
        cols = list(columns)
    else:
        cols = list(getattr(rows, "columns", None) or (rows[0] if rows else []))
    if fmt is Format.json:
        print(to_json([{c: r.get(c) for c in cols} for r in rows]))
    elif fmt is Format.csv:
        if not cols:
            return
        import csv

        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(cols)
        for r in rows:
            writer.writerow([_text(r.get(c)) for c in cols])
    elif rows:
        from rich.table import Table

        from pipeline.limits import MAX_TABLE_ROWS

        table = Table(title=cell(title) if title else None, show_lines=False, title_justify="left")
        for c in cols:
            table.add_column(cell(c), overflow="fold")
        for r in rows[:MAX_TABLE_ROWS]:
            table.add_row(*(cell(r.get(c)) for c in cols))
        console(width=None if sys.stdout.isatty() else 200).print(table)
        if len(rows) > MAX_TABLE_ROWS:
            note(f"the table shows the first {MAX_TABLE_ROWS:,} of {len(rows):,} rows: --format csv or "
                 "--format json prints every row (or add a LIMIT, a WHERE)")


def note(message: str) -> None:
    """A note for people, on stderr: one line, never wrapped to the terminal's width."""
    from rich.text import Text

    console(stderr=True).print(Text(message, style="dim"), soft_wrap=True)
