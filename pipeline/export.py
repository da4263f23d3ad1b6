"""Reading a whole built database out: a checksum of every table, exports, the data dictionary.

``table_checksums`` gives each table's row count and a checksum of its rows that does not
depend on the backend (DuckDB, SQLite, PostgreSQL) or on the order of the rows: the same
database built into each gives the same figures. ``export_database`` writes every table to a
folder as Parquet, CSV or JSON Lines, with the data dictionary (``data_dictionary``: each table
and column with its meaning, from the record declarations of ``schemas.records``) beside it.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any, Iterable

from pipeline.errors import InputError

#: The formats of ``export_database``, with the file extension of each.
FORMATS = {"parquet": "parquet", "csv": "csv", "jsonl": "jsonl"}


def canonical(value: Any) -> str:
    """A value as one backend-independent text: NULL, booleans, dates, numbers, text.

    >>> [canonical(v) for v in (None, True, 3, "3", dt.date(2024, 6, 1), 1.5)]
    ['\\\\N', 't', '3', "'3'", '2024-06-01', '1.5']
    """
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    return "'" + str(value).replace("'", "''") + "'"


def rows_checksum(rows: Iterable[Iterable[Any]]) -> tuple[int, str]:
    """(row count, the first 16 hex digits of the SHA-256 of the rows' ``canonical`` texts, sorted).

    >>> rows_checksum([(1, "a"), (2, None)]) == rows_checksum([(2, None), (1, "a")])
    True
    >>> rows_checksum([])
    (0, 'e3b0c44298fc1c14')
    """
    lines = sorted("\t".join(canonical(v) for v in row) for row in rows)
    digest = hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()[:16]
    return len(lines), digest


def table_checksums(con: Any) -> dict[str, tuple[int, str]]:
    """Each declared table of the database (a connection from ``open_database``, any backend):
    ``{table: (rows, checksum)}`` (``rows_checksum`` over its columns in declared order)."""
    from schemas.catalog import declared_tables

    out = {}
    for table, columns in declared_tables().items():
        names = ", ".join(f'"{c.name}"' for c in columns)
        out[table] = rows_checksum(con.execute(f'SELECT {names} FROM "{table}"').fetchall())
    return out
