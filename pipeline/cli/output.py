"""One shared set of output formats for every read command: table (people), json, csv."""

from __future__ import annotations

import csv
import datetime as dt
import json
import sys
from enum import Enum
from typing import TYPE_CHECKING, Any, Iterable

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


def _plain(value: Any) -> Any:
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return value


def to_json(data: Any) -> str:
    """JSON text of rows or nested dicts (dates as ISO strings)."""
    return json.dumps(data, default=_plain, ensure_ascii=False, indent=2)


def console(stderr: bool = False, width: int | None = None) -> Console:
    """A rich console that shows data as it is: no markup (``[bold]``), no emoji codes (``:x:``),
    no highlighting of numbers or paths."""
    from rich.console import Console

    return Console(stderr=stderr, width=width, markup=False, emoji=False, highlight=False)


def cell(value: Any) -> Text:
    """A table cell holding a value literally (``"[BLAST]"`` or ``":x:"`` are data, not markup)."""
    from rich.text import Text

    return Text("" if value is None else str(_plain(value)))


def render_rows(rows: list[dict[str, Any]], fmt: Format, title: str | None = None,
                columns: Iterable[str] | None = None) -> None:
    """Print rows on stdout in the chosen format (data only; notes go to stderr).

    The columns are ``columns``, else the rows' own (``query.Rows`` knows them even when empty),
    else the first row's keys. With no rows, JSON is ``[]``, CSV is the header line alone and a
    table prints nothing.
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
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(cols)
        for r in rows:
            writer.writerow(["" if r.get(c) is None else _plain(r.get(c)) for c in cols])
    elif rows:
        from rich.table import Table

        table = Table(title=cell(title) if title else None, show_lines=False, title_justify="left")
        for c in cols:
            table.add_column(cell(c), overflow="fold")
        for r in rows:
            table.add_row(*(cell(r.get(c)) for c in cols))
        console(width=None if sys.stdout.isatty() else 200).print(table)


def note(message: str) -> None:
    """A note for people, on stderr: one line, never wrapped to the terminal's width."""
    from rich.text import Text

    console(stderr=True).print(Text(message, style="dim"), soft_wrap=True)
