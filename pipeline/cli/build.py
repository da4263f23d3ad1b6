"""``wh40k build``: extract, parse, validate and load the raw snapshots into the database."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from pipeline.cli import app
from pipeline.cli.output import cell, console
from pipeline.query import DEFAULT_DB

if TYPE_CHECKING:  # the build (sqlalchemy, pyarrow) and rich are imported when the command runs
    from rich.table import Table
    from rich.text import Text

    from pipeline.build import BuildReport
    from schemas.records import Accounting


_COUNTS = ("input", "loaded", "duplicates", "rejected")


def _accounting(report: BuildReport, width: int) -> list[Text | Table]:
    """The accounting as one table, or, when that does not fit ``width`` columns (a log, a pipe,
    a narrow terminal), a heading line per source followed by that source's rows. No cell is
    ever cut short: a cell too long for its column folds onto the next line.
    """
    from rich import box
    from rich.table import Table
    from rich.text import Text

    def counts(a: Accounting) -> list[Text]:
        return [cell(n) for n in (a.input_rows, a.loaded, a.duplicates, a.rejected)]

    title = "Accounting per source (input = loaded + duplicates + rejected)"
    wide = Table(title=title, title_justify="left")
    for col in ("source", "stage", "table", *_COUNTS):
        wide.add_column(col, justify="right" if col in _COUNTS else "left", overflow="fold")
    for a in report.accounting:
        wide.add_row(cell(a.source_id), cell(a.stage), cell(a.table_name), *counts(a))
    natural = console(width=10_000).measure(wide).maximum  # the width it takes uncut
    if natural <= width:
        return [wide]
    parts: list[Text | Table] = [Text(title, style="italic")]
    for source_id in dict.fromkeys(a.source_id for a in report.accounting):
        parts.append(Text(f"source {source_id}", style="bold"))
        rows = Table(box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 1), collapse_padding=True)
        for col in ("stage", "table", *_COUNTS):
            rows.add_column(col, justify="right" if col in _COUNTS else "left", overflow="fold")
        for a in report.accounting:
            if a.source_id == source_id:
                rows.add_row(cell(a.stage), cell(a.table_name), *counts(a))
        parts.append(rows)
    return parts


def _summary(report: BuildReport) -> None:
    """The build's summary on stderr: rows per table, the accounting, the totals."""
    from rich.table import Table
    from rich.text import Text

    err = console(stderr=True)
    table = Table(title=cell(f"Built {report.db_path}"), title_justify="left")
    table.add_column("table", overflow="fold")
    table.add_column("rows", justify="right", overflow="fold")
    for name, n in report.rows.items():
        table.add_row(cell(name), cell(n))
    err.print(table)
    for part in _accounting(report, err.width):
        err.print(part, soft_wrap=isinstance(part, Text))
    for a in report.inconsistent:
        err.print(Text(f"accounting does not add up: {a.source_id} {a.stage} {a.table_name}", style="red"),
                  soft_wrap=True)
    dropped = sum(report.boilerplate.values())
    if report.skipped:
        err.print(f"skipped (not fetched): {', '.join(report.skipped)}; `wh40k fetch` brings them", soft_wrap=True)
    err.print(
        f"{sum(report.rows.values())} rows in {len(report.rows)} tables; "
        f"{report.duplicates} duplicates collapsed; {report.rejected} rejected (see table rejects); "
        f"{dropped} boilerplate lines dropped",
        soft_wrap=True,
    )


@app.command("build")
def build_command(
    raw: Path = typer.Option(Path("raw"), "--raw", help="Folder with manifest.toml and the snapshots."),
    db: Path = typer.Option(DEFAULT_DB, "--db", help="Database file to write."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress or summary."),
) -> None:
    """Build the database from the raw snapshots (what `make build-db` runs).

    Example: wh40k build --raw raw --db db/wh40k.duckdb
    """
    from pipeline.build import build

    progress = (lambda _m: None) if quiet else (lambda m: print(m, file=sys.stderr))
    try:
        report = build(raw, db, progress)
    except KeyboardInterrupt:
        # the build writes a temporary file of its own, removed on the way out
        print(f"Interrupted: {db} was not changed", file=sys.stderr)
        raise typer.Exit(130) from None
    if not quiet:
        _summary(report)
