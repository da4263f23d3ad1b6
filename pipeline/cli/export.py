"""``wh40k export``: every table into a folder (Parquet, CSV, JSON Lines) with the data
dictionary beside it; ``wh40k schema``: the data dictionary."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path

import typer

from pipeline import query
from pipeline.cli import app


class ExportFormat(str, Enum):
    parquet = "parquet"
    csv = "csv"
    jsonl = "jsonl"


class SchemaFormat(str, Enum):
    markdown = "markdown"
    json = "json"


@app.command("export")
def export_command(
    folder: Path = typer.Argument(..., help="Folder to write (created): one file per table and the data dictionary."),
    fmt: ExportFormat = typer.Option(ExportFormat.parquet, "--format", "-f", help="parquet, csv or jsonl."),
    db: str = typer.Option(str(query.DEFAULT_DB), "--db",
                           help="Database: a DuckDB file, sqlite:///FILE or postgresql://USER@HOST/DB."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress or summary."),
) -> None:
    """Write every table of the database into FOLDER, with the data dictionary beside it
    (data_dictionary.json and data_dictionary.md: each table and column with its meaning).

    Example: wh40k export exports/ --format csv
    """
    from pipeline.cli.progress import progress_bar
    from pipeline.export import DICTIONARY_FILES, export_database
    from schemas.catalog import declared_tables

    con = query.open_database(db)
    try:
        with progress_bar("export", len(declared_tables()), quiet=quiet) as advance:
            rows = export_database(con, folder, fmt.value, progress=advance)
    finally:
        con.close()
    if not quiet:
        print(f"wrote {len(rows)} tables ({sum(rows.values())} rows) as {fmt.value} into {folder}, with "
              f"{' and '.join(DICTIONARY_FILES)}", file=sys.stderr)


@app.command("schema")
def schema_command(
    fmt: SchemaFormat = typer.Option(SchemaFormat.markdown, "--format", "-f", help="markdown or json."),
) -> None:
    """Print the data dictionary: each table and column with its type and meaning, from the
    record declarations (the same as `wh40k export` writes beside the tables).

    Example: wh40k schema --format json
    """
    from pipeline.export import data_dictionary, dictionary_markdown

    tables = data_dictionary()
    if fmt is SchemaFormat.json:
        print(json.dumps(tables, indent=2, ensure_ascii=False))
    else:
        print(dictionary_markdown(tables), end="")
