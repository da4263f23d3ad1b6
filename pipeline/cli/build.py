"""``wh40k build``: extract, parse, validate and load the raw snapshots into the database."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from pipeline.cli import app
from pipeline.query import DEFAULT_DB

if TYPE_CHECKING:  # the build (sqlalchemy, pyarrow) is imported when the command runs
    from pipeline.build import BuildReport


def _summary(report: BuildReport) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(stderr=True)
    table = Table(title=f"Built {report.db_path}", title_justify="left")
    for col in ("table", "rows"):
        table.add_column(col, justify="right" if col == "rows" else "left")
    for name, n in report.rows.items():
        table.add_row(name, str(n))
    console.print(table)
    acc = Table(title="Accounting per source (input = loaded + duplicates + rejected)", title_justify="left")
    for col in ("source", "stage", "table", "input", "loaded", "duplicates", "rejected"):
        acc.add_column(col, justify="left" if col in ("source", "stage", "table") else "right")
    for a in report.accounting:
        acc.add_row(a.source_id, a.stage, a.table_name, str(a.input_rows), str(a.loaded),
                    str(a.duplicates), str(a.rejected))
    console.print(acc)
    for a in report.inconsistent:
        console.print(f"[red]accounting does not add up[/red]: {a.source_id} {a.stage} {a.table_name}")
    dropped = sum(report.boilerplate.values())
    if report.skipped:
        console.print(f"skipped (not fetched): {', '.join(report.skipped)}; `wh40k fetch` brings them")
    console.print(
        f"{sum(report.rows.values())} rows in {len(report.rows)} tables; "
        f"{report.duplicates} duplicates collapsed; {report.rejected} rejected (see table rejects); "
        f"{dropped} boilerplate lines dropped"
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
    report = build(raw, db, progress)
    if not quiet:
        _summary(report)
