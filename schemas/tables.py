"""SQL tables derived from the pydantic records (the records are the one declaration).

The columns are those of ``schemas.catalog.column_specs`` (a field of a primitive type is one
column, a ``DiceExpr`` field four; ``Optional`` fields are nullable; the record's ``__key__`` is
the primary key), as SQLAlchemy tables: the DDL of the SQLite and PostgreSQL builds, the
service's reader. The DuckDB build writes its DDL from the same specs without SQLAlchemy
(``schemas.catalog.duckdb_create_statements``).
"""

from __future__ import annotations

import sqlalchemy as sa
from pydantic import BaseModel

from schemas.catalog import column_specs, column_values, row_of  # noqa: F401  (the last two: re-exported)
from schemas.records import ALL_RECORDS, RECORD_OF_TABLE, Record, key_getter  # noqa: F401  (RECORD_OF_TABLE, key_getter: re-exported)

metadata = sa.MetaData()

#: The SQLAlchemy type of each SQL type name of ``schemas.catalog``.
_SA_TYPES: dict[str, type[sa.types.TypeEngine]] = {
    "VARCHAR": sa.String,
    "INTEGER": sa.Integer,
    "BOOLEAN": sa.Boolean,
    "DOUBLE": sa.Double,
    "DATE": sa.Date,
}


def columns_of(record: type[BaseModel]) -> list[sa.Column]:
    """The SQL columns of a record class, in field order (``schemas.catalog.column_specs``)."""
    return [sa.Column(c.name, _SA_TYPES[c.sql_type](), nullable=c.nullable, primary_key=c.primary_key)
            for c in column_specs(record)]


TABLES: dict[str, sa.Table] = {
    rec.__table__: sa.Table(rec.__table__, metadata, *columns_of(rec)) for rec in ALL_RECORDS
}
