"""Load: validated records -> a DuckDB file, written to a temporary file and then renamed."""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import sqlalchemy as sa

from schemas.records import Record
from schemas.tables import TABLES, metadata, row_of


def load_database(records: list[Record], db_path: Path) -> dict[str, int]:
    """Write ``records`` into a new DuckDB database at ``db_path``; return rows per table.

    The database is written to ``<db_path>.tmp`` and renamed over ``db_path`` only when
    complete, so a failed build leaves the previous database intact.
    """
    db_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = db_path.with_name(db_path.name + ".tmp")
    for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
        leftover.unlink(missing_ok=True)
    by_table: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        by_table[record.__table__].append(row_of(record))
    engine = sa.create_engine(f"duckdb:///{tmp}")
    try:
        metadata.create_all(engine)
        with engine.begin() as conn:
            for name, table in TABLES.items():
                if by_table.get(name):
                    conn.execute(table.insert(), by_table[name])
        with engine.begin() as conn:
            conn.execute(sa.text("CHECKPOINT"))
    finally:
        engine.dispose()
    os.replace(tmp, db_path)
    return {name: len(by_table.get(name, [])) for name in TABLES}
