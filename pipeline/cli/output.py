"""One shared set of output formats for every read command: table (people), json, csv."""

from __future__ import annotations

import csv
import datetime as dt
import json
import sys
from enum import Enum
from typing import Any, Iterable


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


def render_rows(rows: list[dict[str, Any]], fmt: Format, title: str | None = None,
                columns: Iterable[str] | None = None) -> None:
    """Print rows on stdout in the chosen format (data only; notes go to stderr)."""
    cols = list(columns) if columns is not None else (list(rows[0]) if rows else [])
    if fmt is Format.json:
        print(to_json([{c: r.get(c) for c in cols} for r in rows]))
    elif fmt is Format.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(cols)
        for r in rows:
            writer.writerow(["" if r.get(c) is None else _plain(r.get(c)) for c in cols])
    else:
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        table = Table(title=title, show_lines=False, title_justify="left")
        for c in cols:
            table.add_column(c, overflow="fold")
        for r in rows:
            # data is shown as printed: "[[source]]" or "[BLAST]" are not rich markup
            table.add_row(*("" if r.get(c) is None else escape(str(_plain(r.get(c)))) for c in cols))
        Console(width=None if sys.stdout.isatty() else 200).print(table)


def note(message: str) -> None:
    """A note for people, on stderr."""
    from rich.console import Console

    Console(stderr=True).print(message, style="dim", highlight=False, markup=False)
