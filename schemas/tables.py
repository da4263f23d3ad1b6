"""SQL tables derived from the pydantic records (the records are the one declaration).

A field of a primitive type becomes one column; a ``DiceExpr`` field ``attacks`` becomes four
columns ``attacks_text``, ``attacks_dice_count``, ``attacks_dice_sides``, ``attacks_modifier``.
``Optional`` fields are nullable; the record's ``__key__`` is the primary key.
"""

from __future__ import annotations

import datetime as dt
import operator
import types
import typing
from functools import lru_cache
from typing import Any, Callable, Literal, get_args, get_origin

import sqlalchemy as sa
from pydantic import BaseModel

from schemas.records import ALL_RECORDS, Record, key_getter  # noqa: F401  (key_getter: re-exported)
from schemas.types import DiceExpr

metadata = sa.MetaData()

_SCALARS: dict[type, type[sa.types.TypeEngine]] = {
    str: sa.String,
    int: sa.Integer,
    bool: sa.Boolean,
    float: sa.Float,
    dt.date: sa.Date,
}

_DICE_PARTS: tuple[tuple[str, type[sa.types.TypeEngine]], ...] = (
    ("text", sa.String),
    ("dice_count", sa.Integer),
    ("dice_sides", sa.Integer),
    ("modifier", sa.Integer),
)


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """Return (inner type, nullable) for ``X | None`` / ``Annotated[X, ...]`` / ``Literal``."""
    nullable = False
    origin = get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        nullable = len(args) < len(get_args(annotation))
        if len(args) != 1:
            raise TypeError(f"unsupported union {annotation!r}")
        annotation = args[0]
        origin = get_origin(annotation)
    if origin is typing.Annotated:
        annotation = get_args(annotation)[0]
        origin = get_origin(annotation)
    if origin is Literal:
        annotation = type(get_args(annotation)[0])
    return annotation, nullable


def columns_of(record: type[BaseModel]) -> list[sa.Column]:
    """The SQL columns of a record class, in field order."""
    cols: list[sa.Column] = []
    key = set(getattr(record, "__key__", ()))
    provenance_last = sorted(
        record.model_fields.items(), key=lambda item: item[0] in ("source_id", "locator")
    )
    for name, field in provenance_last:
        inner, nullable = _unwrap(field.annotation)
        if inner is DiceExpr:
            for part, sqltype in _DICE_PARTS:
                cols.append(sa.Column(f"{name}_{part}", sqltype(), nullable=nullable))
            continue
        if inner not in _SCALARS:
            raise TypeError(f"{record.__name__}.{name}: no SQL type for {inner!r}")
        cols.append(
            sa.Column(name, _SCALARS[inner](), nullable=nullable, primary_key=name in key)
        )
    return cols


@lru_cache(maxsize=None)
def _layout(record_type: type[BaseModel]) -> tuple[tuple[str, bool], ...]:
    """(field name, is a DiceExpr field) for each field of a record class."""
    return tuple(
        (name, _unwrap(field.annotation)[0] is DiceExpr) for name, field in record_type.model_fields.items()
    )


def row_of(record: Record) -> dict[str, Any]:
    """A record as a flat dict of column values (``DiceExpr`` fields flattened)."""
    row: dict[str, Any] = {}
    for name, is_dice in _layout(type(record)):
        value = getattr(record, name)
        if is_dice:
            for part, _ in _DICE_PARTS:
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
            for part, _ in _DICE_PARTS:
                columns[f"{name}_{part}"] = [None if v is None else getattr(v, part) for v in values]
        else:
            columns[name] = values
    return columns


TABLES: dict[str, sa.Table] = {
    rec.__table__: sa.Table(rec.__table__, metadata, *columns_of(rec)) for rec in ALL_RECORDS
}
RECORD_OF_TABLE: dict[str, type[Record]] = {rec.__table__: rec for rec in ALL_RECORDS}
