"""The database's catalog as the declarations give it, and the schema version derived from it.

The columns of each table come from its record (``schemas.records``): a field of a primitive
type is one column, a ``DiceExpr`` field ``attacks`` four (``attacks_text``,
``attacks_dice_count``, ``attacks_dice_sides``, ``attacks_modifier``); ``Optional`` fields are
nullable (but for a column of the primary key); the record's ``__key__`` is the primary key. The views are the statements of
``db/views.sql``. ``schemas.tables`` builds the SQLAlchemy tables from the same column specs;
this module needs pydantic only, so a reader can check a database without importing SQLAlchemy.

``schema_version()`` is a hash of that catalog: any change to a table, a column (name, type,
nullability, key, order) or a view gives another version, with nothing to bump by hand. The
build stores it in ``schema_info``; a reader refuses a database of another version.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import types
import typing
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, NamedTuple, get_args, get_origin

from pydantic import BaseModel

from schemas.records import ALL_RECORDS
from schemas.types import DiceExpr

#: Views over the tables, created by the build after the load.
VIEWS_FILE = Path(__file__).resolve().parent.parent / "db" / "views.sql"

#: The SQL type (as DuckDB names it in ``duckdb_columns()``) of each primitive field type.
SQL_TYPES: dict[type, str] = {
    str: "VARCHAR",
    int: "INTEGER",
    bool: "BOOLEAN",
    float: "FLOAT",
    dt.date: "DATE",
}

DICE_PARTS: tuple[tuple[str, str], ...] = (
    ("text", "VARCHAR"),
    ("dice_count", "INTEGER"),
    ("dice_sides", "INTEGER"),
    ("modifier", "INTEGER"),
)


class ColumnSpec(NamedTuple):
    """One column of a table: name, DuckDB type name, nullable, part of the primary key."""

    name: str
    sql_type: str
    nullable: bool
    primary_key: bool = False

    def text(self) -> str:
        """The column as one line of the catalog text.

        >>> ColumnSpec("source_id", "VARCHAR", False, True).text()
        'source_id VARCHAR NOT NULL PRIMARY KEY'
        """
        return " ".join([self.name, self.sql_type] + ([] if self.nullable else ["NOT NULL"])
                        + (["PRIMARY KEY"] if self.primary_key else []))


def unwrap(annotation: Any) -> tuple[Any, bool]:
    """(inner type, nullable) for ``X | None`` / ``Annotated[X, ...]`` / ``Literal``.

    >>> unwrap(int | None), unwrap(Literal["a", "b"])
    ((<class 'int'>, True), (<class 'str'>, False))
    """
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


def column_specs(record: type[BaseModel]) -> tuple[ColumnSpec, ...]:
    """The SQL columns of a record class, in field order with ``source_id`` and ``locator``
    last; raises ``TypeError`` for a field with no SQL type."""
    cols: list[ColumnSpec] = []
    key = set(getattr(record, "__key__", ()))
    provenance_last = sorted(
        record.model_fields.items(), key=lambda item: item[0] in ("source_id", "locator")
    )
    for name, field in provenance_last:
        inner, nullable = unwrap(field.annotation)
        if inner is DiceExpr:
            cols.extend(ColumnSpec(f"{name}_{part}", sql_type, nullable) for part, sql_type in DICE_PARTS)
            continue
        if inner not in SQL_TYPES:
            raise TypeError(f"{record.__name__}.{name}: no SQL type for {inner!r}")
        # a primary key column is NOT NULL in SQL, whatever the field's annotation
        cols.append(ColumnSpec(name, SQL_TYPES[inner], nullable and name not in key, name in key))
    return tuple(cols)


def declared_tables() -> dict[str, tuple[ColumnSpec, ...]]:
    """Every table of the database with its columns, in load order."""
    return {record.__table__: column_specs(record) for record in ALL_RECORDS}


def view_statements() -> list[str]:
    """The statements of ``db/views.sql`` (each ends with ``;`` at a line end), comments dropped."""
    out = []
    for statement in VIEWS_FILE.read_text(encoding="utf-8").split(";\n"):
        lines = [line for line in statement.splitlines() if line.strip() and not line.strip().startswith("--")]
        if lines:
            out.append("\n".join(lines))
    return out


_VIEW_NAME = re.compile(r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+(\w+)", re.IGNORECASE)


def view_name(statement: str) -> str:
    """The name of the view a ``CREATE VIEW`` statement creates.

    >>> view_name("CREATE VIEW weapons AS\\nSELECT 1")
    'weapons'
    """
    found = _VIEW_NAME.match(statement)
    if not found:
        raise ValueError(f"not a CREATE VIEW statement: {statement[:60]!r}")
    return found.group(1)


def catalog_text(tables: dict[str, tuple[ColumnSpec, ...]], views: list[str]) -> str:
    """The catalog as canonical text: tables sorted by name with their columns in order, then
    the view statements in order. ``schema_version`` hashes it.

    >>> print(catalog_text({"b": (ColumnSpec("x", "INTEGER", True),), "a": ()}, ["CREATE VIEW v AS SELECT 1"]))
    table a ()
    table b (x INTEGER)
    CREATE VIEW v AS SELECT 1;
    """
    lines = [f"table {name} (" + ", ".join(c.text() for c in tables[name]) + ")" for name in sorted(tables)]
    return "\n".join(lines + [statement + ";" for statement in views])


@lru_cache(maxsize=1)
def schema_version() -> str:
    """The schema version of the declarations: 16 hex digits of the SHA-256 of ``catalog_text``
    over the declared tables and ``db/views.sql``."""
    text = catalog_text(declared_tables(), view_statements())
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
