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
import json
import operator
import os
import re
import types
import typing
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, get_args, get_origin

if TYPE_CHECKING:  # the records (pydantic) are imported only to derive the catalog anew
    from pydantic import BaseModel

#: Views over the tables, created by the build after the load.
VIEWS_FILE = Path(__file__).resolve().parent.parent / "db" / "views.sql"

#: The SQL type (as DuckDB names it in ``duckdb_columns()``) of each primitive field type.
SQL_TYPES: dict[type, str] = {
    str: "VARCHAR",
    int: "INTEGER",
    bool: "BOOLEAN",
    float: "DOUBLE",
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
    from schemas.types import DiceExpr

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


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data`` in hex digits, by the standard library's own implementation when
    it has one (``_sha2``, or ``_sha256`` before Python 3.12): ``hashlib`` would load OpenSSL's
    library, some 6 ms of a command's start for two small digests. The same digest either way.

    >>> sha256_hex(b"abc")[:16]
    'ba7816bf8f01cfea'
    """
    try:
        from _sha2 import sha256  # type: ignore[import-not-found]
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found]
        except ImportError:
            from hashlib import sha256
    return sha256(data).hexdigest()


#: The files the declared tables are derived from: their digest names the cached catalog.
CATALOG_SOURCES = tuple(Path(__file__).resolve().parent / name for name in ("records.py", "types.py", "dice.py", "catalog.py"))


@lru_cache(maxsize=1)
def declared_tables() -> dict[str, tuple[ColumnSpec, ...]]:
    """Every table of the database with its columns, in load order.

    Derived from the records (``derived_tables``) once per version of ``CATALOG_SOURCES``: the
    result is kept beside the compiled modules (``schemas/__pycache__/catalog-<digest>.json``,
    the SHA-256 of those files), so that a reader of the database checks its schema without
    importing pydantic and every record. A folder that cannot be written is no error (the
    catalog is derived each time)."""
    digest = sha256_hex(b"".join(p.read_bytes() for p in CATALOG_SOURCES))[:16]
    cache = Path(__file__).resolve().parent / "__pycache__" / f"catalog-{digest}.json"
    kept = _kept_tables(cache)
    if kept is not None:
        return kept
    tables = derived_tables()
    try:
        cache.parent.mkdir(exist_ok=True)
        partial = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps([[t, [list(c) for c in cols]] for t, cols in tables.items()]), encoding="utf-8")
        os.replace(partial, cache)
    except OSError:
        pass  # a read-only installation: derived again next time
    return tables


def _kept_tables(cache: Path) -> dict[str, tuple[ColumnSpec, ...]] | None:
    """The tables kept in ``cache`` by ``declared_tables``; None when there is no such file or it
    is not one ``declared_tables`` wrote (then the catalog is derived and the file written anew)."""
    try:
        kept = json.loads(cache.read_text(encoding="utf-8"))
        return {table: tuple(ColumnSpec(*c) for c in columns) for table, columns in kept}
    except (OSError, ValueError, TypeError):
        return None


def derived_tables() -> dict[str, tuple[ColumnSpec, ...]]:
    """Every table with its columns, in load order, derived from ``schemas.records``."""
    from schemas.records import ALL_RECORDS

    return {record.__table__: column_specs(record) for record in ALL_RECORDS}


def duckdb_create_statements(primary_keys: bool = True) -> list[str]:
    """``CREATE TABLE`` statements of every declared table, in load order, as DuckDB reads them.

    Written from the column specs alone (no SQLAlchemy: the build into DuckDB does not import
    it); every name is quoted, so a column named like an SQL keyword (``group``, ``when``) needs
    no list of keywords. DuckDB's catalog of these tables is the one of SQLAlchemy's DDL
    (``schemas.tables``), checked by a test. ``primary_keys=False``: the tables without their
    primary keys, which ``duckdb_primary_key_statements`` then adds (the same catalog).

    >>> print(duckdb_create_statements()[0].splitlines()[1])
      "title" VARCHAR NOT NULL,
    """
    statements = []
    for table, columns in declared_tables().items():
        lines = [f'  "{c.name}" {c.sql_type}' + ("" if c.nullable else " NOT NULL") for c in columns]
        key = _primary_key(columns)
        if key and primary_keys:
            lines.append(f"  PRIMARY KEY ({key})")
        statements.append(f'CREATE TABLE "{table}" (\n' + ",\n".join(lines) + "\n)")
    return statements


def duckdb_primary_key_statements() -> dict[str, str]:
    """``ALTER TABLE ... ADD PRIMARY KEY`` of every declared table that has a key, by table, in
    load order: after ``duckdb_create_statements(primary_keys=False)``, the catalog
    (``duckdb_tables()``, ``duckdb_constraints()``) is that of ``duckdb_create_statements()``.
    The build adds each one after the table's rows: DuckDB builds the key's index once instead
    of row by row (some 0.05 s of CPU for the export). A duplicate key fails the statement, or
    the ``COMMIT`` of the transaction that added the row.

    >>> duckdb_primary_key_statements()["sources"]
    'ALTER TABLE "sources" ADD PRIMARY KEY ("source_id")'
    """
    return {table: f'ALTER TABLE "{table}" ADD PRIMARY KEY ({key})'
            for table, columns in declared_tables().items() if (key := _primary_key(columns))}


def _primary_key(columns: tuple[ColumnSpec, ...]) -> str:
    """The quoted key columns of a table's column specs, comma-separated; "" when it has none."""
    return ", ".join(f'"{c.name}"' for c in columns if c.primary_key)


@lru_cache(maxsize=None)
def _layout(record_type: type[BaseModel]) -> tuple[tuple[str, bool], ...]:
    """(field name, is a DiceExpr field) for each field of a record class."""
    from schemas.types import DiceExpr

    return tuple(
        (name, unwrap(field.annotation)[0] is DiceExpr) for name, field in record_type.model_fields.items()
    )


def row_of(record: BaseModel) -> dict[str, Any]:
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


def column_values(record_type: type[BaseModel], records: list[Any]) -> dict[str, list[Any]]:
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
    return sha256_hex(text.encode("utf-8"))[:16]
