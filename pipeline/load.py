"""Load: validated records -> a DuckDB file, written to a temporary file and then renamed.

The tables are created from their SQLAlchemy declarations (derived from the records), compiled
to DuckDB DDL; the rows go in as one Arrow batch per table, built column by column and typed by
that same declaration, which DuckDB inserts in bulk.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import duckdb
import pyarrow as pa
import sqlalchemy as sa
from duckdb_engine import Dialect as DuckDBDialect
from sqlalchemy.schema import CreateTable

from schemas.records import Record
from schemas.tables import RECORD_OF_TABLE, TABLES, column_values, metadata

#: Views over the tables, created after the load (``db/views.sql``).
VIEWS_FILE = Path(__file__).resolve().parent.parent / "db" / "views.sql"

_ARROW_TYPES = {
    sa.String: pa.string(),
    sa.Integer: pa.int64(),
    sa.Boolean: pa.bool_(),
    sa.Float: pa.float64(),
    sa.Date: pa.date32(),
}


def _arrow_schema(table: sa.Table) -> pa.Schema:
    return pa.schema([(c.name, _ARROW_TYPES[type(c.type)]) for c in table.columns])


def create_table_statements(dialect: sa.engine.Dialect) -> list[str]:
    """``CREATE TABLE`` statements of every table, compiled from the SQLAlchemy declarations."""
    return [str(CreateTable(table).compile(dialect=dialect)) for table in TABLES.values()]


def view_statements() -> list[str]:
    """The statements of ``db/views.sql`` (each ends with ``;`` at a line end), comments dropped."""
    out = []
    for statement in VIEWS_FILE.read_text(encoding="utf-8").split(";\n"):
        lines = [line for line in statement.splitlines() if line.strip() and not line.strip().startswith("--")]
        if lines:
            out.append("\n".join(lines))
    return out


def load_database(records: list[Record], db_path: Path) -> dict[str, int]:
    """Write ``records`` into a new DuckDB database at ``db_path``; return rows per table.

    The database is written to ``<db_path>.tmp`` and renamed over ``db_path`` only when
    complete, so a failed build leaves the previous database intact. The tables are created by
    the DDL SQLAlchemy compiles from their declarations; the rows and views go in through
    DuckDB's own connection, in one transaction. Raises DuckDB's error (a bug in the
    validation) if a row breaks a primary key.
    """
    db_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = db_path.with_name(db_path.name + ".tmp")
    for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
        leftover.unlink(missing_ok=True)
    by_table: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        by_table[record.__table__].append(record)
    con = duckdb.connect(str(tmp))
    try:
        con.execute("BEGIN TRANSACTION")
        for statement in create_table_statements(DuckDBDialect()):
            con.execute(statement)
        for name, table in TABLES.items():
            rows = by_table.get(name)
            if not rows:
                continue
            columns = column_values(RECORD_OF_TABLE[name], rows)
            batch = pa.Table.from_pydict(columns, schema=_arrow_schema(table))
            con.register("_batch", batch)
            con.execute(f'INSERT INTO "{name}" SELECT * FROM _batch')
            con.unregister("_batch")
        for statement in view_statements():
            con.execute(statement)
        con.execute("COMMIT")
        con.execute("CHECKPOINT")
    finally:
        con.close()
    os.replace(tmp, db_path)
    return {name: len(by_table.get(name, [])) for name in TABLES}
