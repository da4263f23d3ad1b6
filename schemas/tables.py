"""SQL tables derived from the pydantic records (the records are the one declaration).

The columns are those of ``schemas.catalog.column_specs`` (a field of a primitive type is one
column, a ``DiceExpr`` field four; ``Optional`` fields are nullable; the record's ``__key__`` is
the primary key), as SQLAlchemy tables for the build's DDL.
"""

from __future__ import annotations

import operator
from functools import lru_cache
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel

from schemas.catalog import DICE_PARTS, column_specs, unwrap
from schemas.records import ALL_RECORDS, Record, key_getter  # noqa: F401  (key_getter: re-exported)
from schemas.types import DiceExpr

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


@lru_cache(maxsize=None)
def _layout(record_type: type[BaseModel]) -> tuple[tuple[str, bool], ...]:
    """(field name, is a DiceExpr field) for each field of a record class."""
    return tuple(
        (name, unwrap(field.annotation)[0] is DiceExpr) for name, field in record_type.model_fields.items()
    )


def row_of(record: Record) -> dict[str, Any]:
    """A record as a flat dict of column values (``DiceExpr`` fields flattened)."""
    row: dict[str, Any] = {}
    for name, is_dice in _layout(type(record)):
        value = getattr(record, name)
        if is_dice:
            for part, _ in DICE_PARTS:
                row[f"{name}_{part}"] = None if value is None else getattr(value, part)
        else:
            row[name] = value
    return row


def column_values(record_type: type[Record], records: list[Record]) -> dict[str, list[Any]]:
    """Records of one class as columns: column name -> the values in record order.

    The same values as ``row_of`` gives row by row (``DiceExpr`` fields flattened).

    >>> from schemas.records import Faction
    >>> rows = [Faction(source_id="s", locator="line 2", faction_id="sm", name="Space Marines")]
    >>> column_values(Faction, rows) == {name: [value] for name, value in row_of(rows[0]).items()}
    True
    """
    columns: dict[str, list[Any]] = {}
    for name, is_dice in _layout(record_type):
        values = list(map(operator.attrgetter(name), records))
        if is_dice:
            for part, _ in DICE_PARTS:
                columns[f"{name}_{part}"] = [None if v is None else getattr(v, part) for v in values]
        else:
            columns[name] = values
    return columns


TABLES: dict[str, sa.Table] = {
    rec.__table__: sa.Table(rec.__table__, metadata, *columns_of(rec)) for rec in ALL_RECORDS
}
RECORD_OF_TABLE: dict[str, type[Record]] = {rec.__table__: rec for rec in ALL_RECORDS}
