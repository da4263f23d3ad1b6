"""Load: validated records -> a DuckDB file, written to a temporary file and then renamed.

The tables are created from their SQLAlchemy declarations (derived from the records); the rows
go in as one Arrow batch per table, built column by column and typed by that same declaration,
which DuckDB inserts in bulk.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import sqlalchemy as sa

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


def load_database(records: list[Record], db_path: Path) -> dict[str, int]:
    """Write ``records`` into a new DuckDB database at ``db_path``; return rows per table.

    The database is written to ``<db_path>.tmp`` and renamed over ``db_path`` only when
    complete, so a failed build leaves the previous database intact. Raises DuckDB's error
    (a bug in the validation) if a row breaks a primary key.
    """
    db_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = db_path.with_name(db_path.name + ".tmp")
    for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
        leftover.unlink(missing_ok=True)
    by_table: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        by_table[record.__table__].append(record)
    engine = sa.create_engine(f"duckdb:///{tmp}")
    try:
        metadata.create_all(engine)
        with engine.begin() as conn:
            duck = conn.connection.driver_connection
            for name, table in TABLES.items():
                rows = by_table.get(name)
                if not rows:
                    continue
                columns = column_values(RECORD_OF_TABLE[name], rows)
                batch = pa.Table.from_pydict(columns, schema=_arrow_schema(table))
                duck.register("_batch", batch)
                duck.execute(f'INSERT INTO "{name}" SELECT * FROM _batch')
                duck.unregister("_batch")
        with engine.begin() as conn:
            for statement in VIEWS_FILE.read_text(encoding="utf-8").split(";\n"):
                if statement.strip() and not all(
                    line.strip().startswith("--") or not line.strip() for line in statement.splitlines()
                ):
                    conn.execute(sa.text(statement))
        with engine.begin() as conn:
            conn.execute(sa.text("CHECKPOINT"))
    finally:
        engine.dispose()
    os.replace(tmp, db_path)
    return {name: len(by_table.get(name, [])) for name in TABLES}
