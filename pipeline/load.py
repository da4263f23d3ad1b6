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

from pipeline.errors import BuildError
from pipeline.tempfiles import temp_path
from schemas.catalog import VIEWS_FILE, schema_version, view_statements  # noqa: F401  (VIEWS_FILE: re-exported)
from schemas.records import Record, SchemaInfo
from schemas.tables import RECORD_OF_TABLE, TABLES, column_values, metadata

#: What DuckDB's error says when a signal (Ctrl-C, SIGTERM) stopped the query it was running.
_DUCKDB_INTERRUPTED = "Query interrupted"

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


def project_version() -> str:
    """The installed version of wh40k-rules-db (``"unknown"`` when it is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("wh40k-rules-db")
    except PackageNotFoundError:
        return "unknown"


def schema_info() -> SchemaInfo:
    """The ``schema_info`` row of a database built now: the schema version and project version."""
    return SchemaInfo(schema_version=schema_version(), project_version=project_version())


def load_database(records: list[Record], db_path: Path) -> dict[str, int]:
    """Write ``records`` into a new DuckDB database at ``db_path``; return rows per table.

    The loader adds the ``schema_info`` row (``schema_info()``: the schema version readers
    check, the project version).

    The database is written to a temporary file of its own beside ``db_path``
    (``.<name>.<pid>.<random>.build.tmp``, ``pipeline.tempfiles``) and renamed over ``db_path`` only when complete, so a failed
    or interrupted build leaves the previous database intact and no temporary file; of two
    builds at once, the last to finish wins. Raises ``BuildError`` when the file cannot be
    written. The tables are created by
    the DDL SQLAlchemy compiles from their declarations; the rows and views go in through
    DuckDB's own connection, in one transaction. Raises DuckDB's error (a bug in the
    validation) if a row breaks a primary key.
    """
    # A name of this build's own: two builds at once never write the same file; the last
    # rename wins, and each one is a complete database.
    tmp = temp_path(db_path, "build")
    try:
        rows = _write([*records, schema_info()], tmp)
        os.replace(tmp, db_path)
    except duckdb.InterruptException:  # Ctrl-C while DuckDB works: an interrupt like any other
        raise KeyboardInterrupt from None
    except RuntimeError as exc:  # the same, as DuckDB raises it while it scans an Arrow batch
        if str(exc) != _DUCKDB_INTERRUPTED:
            raise
        raise KeyboardInterrupt from None
    except (OSError, duckdb.IOException) as exc:
        reason = getattr(exc, "strerror", None) or str(exc).splitlines()[0]
        raise BuildError(f"cannot write the database {db_path}: {reason}; choose another --db") from exc
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            leftover.unlink(missing_ok=True)  # after a failure or an interrupt (Ctrl-C)
    return rows


def _write(records: list[Record], tmp: Path) -> dict[str, int]:
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
    return {name: len(by_table.get(name, [])) for name in TABLES}
