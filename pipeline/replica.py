"""A SQLite replica of the tables ``wh40k attack`` reads, so that an attack needs no DuckDB.

Importing DuckDB takes longer than a whole attack's work (some 80-100 ms of a 2-core machine,
``benchmarks/bench_cli.py``); ``sqlite3`` is in the standard library and imports in about 2 ms.
The first attack on a DuckDB file, after it has printed its answer, copies ``REPLICA_TABLES``
into ``.<db>.attack.sqlite`` beside the database (``replica_path``), written to a temporary
file in the same folder and renamed over the old replica (``os.replace``). Later attacks open it
read-only (``open_replica``) and read from it; ``--explain`` (the rule wordings) always reads
DuckDB. The replica indexes the columns an attack looks rows up by (``INDEXED_COLUMNS``) and
keeps the name key of each datasheet (``NAME_KEYS_TABLE``, indexed).

The replica is keyed by ``stamp``: the DuckDB file's device, inode, size and modification time
(nanoseconds), whether its write-ahead log exists, the schema version, ``REPLICA_VERSION`` and
the fingerprint of ``name_key`` (``pipeline.normalise.names.name_key_fingerprint``).
A rebuilt database (a new file renamed over the old) has another stamp. ``open_replica`` trusts
nothing of the file: its catalog must be exactly the tables ``create_statements`` and the
indexes ``index_statements`` make (no view, trigger or other index), its stamp that of the
database now; anything else, or any SQLite error, and the attack reads DuckDB (a query failing on the replica raises ``ReplicaMiss``, and
the command runs again on DuckDB). An unwritable folder means no replica and no message.

SQLite answers as DuckDB does here (``ReplicaConnection``): ``ORDER BY`` puts NULLs last
(``nulls_last``), ``lower``/``upper`` fold case as Python (and DuckDB) do beyond ASCII, ``LIKE``
is case-sensitive; booleans and dates come back as DuckDB's Python types
(``pipeline.sql_connection.SqlCursor``).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import quote

from pipeline.sql_connection import SqlConnection, SqlCursor, sandbox_sqlite
from pipeline.targets import Target

#: The tables an attack without ``--explain`` reads (units, weapons, loadouts, Leaders, the
#: effects of ``--with``), with ``schema_info``. A query of another table fails on the replica
#: (``ReplicaMiss``) and the attack runs on DuckDB.
REPLICA_TABLES = (
    "schema_info", "sources", "factions", "datasheets", "model_profiles", "unit_composition", "unit_costs",
    "wargear_loadouts", "wargear_options", "weapon_profiles", "weapon_abilities", "abilities", "keywords",
    "feel_no_pain", "damaged_profiles", "leader_links", "data_flags", "effects", "stratagems", "detachments",
    "detachment_abilities", "enhancements",
)

#: The version of the replica's layout: part of its stamp (a new one makes every replica stale).
#: 2: the indexes of ``INDEXED_COLUMNS``, the name keys (``NAME_KEYS_TABLE``).
REPLICA_VERSION = 2

#: The columns an attack looks rows up by, each with an index in the replica (in every table
#: that has it): an attack's queries select the rows of one datasheet (``WHERE datasheet_id =
#: ?``), which without an index each scan a whole table (some 40 ms of the 16 queries of a
#: plain attack), and the latest edition is ``max(edition)`` of the datasheets.
INDEXED_COLUMNS = ("datasheet_id", "leader_datasheet_id", "bodyguard_datasheet_id")
#: Indexes of one table's column: (table, column).
INDEXED_TABLE_COLUMNS = (("datasheets", "edition"),)

#: The table of the replica that holds its stamp (one row).
STAMP_TABLE = "replica_stamp"

#: The table of the replica that holds the name key (``name_key``) of each datasheet's name:
#: (``name_key``, ``datasheet_id``), indexed by key. Finding a unit by name then reads the
#: datasheets of one key, not every datasheet's name to key it (some 25 ms of an attack).
NAME_KEYS_TABLE = "datasheet_name_keys"


class ReplicaMiss(Exception):
    """The replica could not answer (a SQLite error, a table it does not hold): read DuckDB."""


def replica_path(db: Path) -> Path:
    """The replica of the DuckDB file ``db``: ``.<name>.attack.sqlite`` in the same folder.

    >>> replica_path(Path("db/wh40k.duckdb")).as_posix()
    'db/.wh40k.duckdb.attack.sqlite'
    """
    return db.with_name(f".{db.name}.attack.sqlite")


def stamp(db: Path) -> str | None:
    """The key of a replica of ``db`` (JSON text): device, inode, size and mtime_ns of the file,
    whether ``<db>.wal`` exists, the schema version, ``REPLICA_VERSION``, and what the name keys
    depend on (``name_key_fingerprint``: a changed ``name_key`` makes the replica stale). None
    when ``db`` cannot be read (no replica then)."""
    from pipeline.normalise.names import name_key_fingerprint
    from schemas.catalog import schema_version

    try:
        st = db.stat()
        keys = name_key_fingerprint()
    except OSError:
        return None
    wal = db.with_name(db.name + ".wal").exists()
    return json.dumps([st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, wal, schema_version(), REPLICA_VERSION,
                       keys])


@lru_cache(maxsize=1)
def table_columns() -> dict[str, tuple[str, ...]]:
    """The columns of each replicated table, as declared (``schemas.catalog``)."""
    return {t: tuple(c for c, _ in cols) for t, cols in _typed_columns().items()}


@lru_cache(maxsize=1)
def _typed_columns() -> dict[str, tuple[tuple[str, str], ...]]:
    """The columns of each replicated table with their DuckDB type names (``schemas.catalog``)."""
    from schemas.catalog import declared_tables

    declared = declared_tables()
    return {t: tuple((c.name, c.sql_type) for c in declared[t]) for t in REPLICA_TABLES}


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def create_statements() -> dict[str, str]:
    """The replica's tables: their ``CREATE TABLE`` text by name, as ``sqlite_master`` keeps it
    (columns without a type: SQLite keeps each value as given)."""
    out = {t: f"CREATE TABLE {_quote(t)} ({', '.join(_quote(c) for c in cols)})" for t, cols in table_columns().items()}
    out[STAMP_TABLE] = f'CREATE TABLE {STAMP_TABLE} ("stamp")'
    out[NAME_KEYS_TABLE] = f'CREATE TABLE {NAME_KEYS_TABLE} ("name_key", "datasheet_id")'
    return out


def index_statements() -> dict[str, tuple[str, str]]:
    """The replica's indexes: index name -> (its table, its ``CREATE INDEX`` text as
    ``sqlite_master`` keeps it), one for each column of ``INDEXED_COLUMNS`` a table has and
    one for each of ``INDEXED_TABLE_COLUMNS``, and the name keys' (``NAME_KEYS_TABLE``).

    >>> index_statements()["keywords_datasheet_id"]
    ('keywords', 'CREATE INDEX "keywords_datasheet_id" ON "keywords" ("datasheet_id")')
    """
    pairs = [(t, c) for t, cols in table_columns().items() for c in INDEXED_COLUMNS if c in cols]
    return {f"{t}_{c}": (t, f"CREATE INDEX {_quote(f'{t}_{c}')} ON {_quote(t)} ({_quote(c)})")
            for t, c in [*pairs, *INDEXED_TABLE_COLUMNS, (NAME_KEYS_TABLE, "name_key")]}


def _catalog() -> set[tuple[str, str, str, str]]:
    """The rows of ``sqlite_master`` (type, name, table, sql) of a replica this code writes."""
    return ({("table", t, t, s) for t, s in create_statements().items()}
            | {("index", name, t, s) for name, (t, s) in index_statements().items()})


class _Fetched:
    """The rows of a statement already fetched (so that a SQLite error is raised inside
    ``ReplicaConnection.execute``), with a cursor's ``description`` and fetch calls."""

    def __init__(self, description: Any, rows: list) -> None:
        self.description = description
        self._rows = rows
        self._at = 0

    def fetchall(self) -> list:
        rows, self._at = self._rows[self._at:], len(self._rows)
        return rows

    def fetchone(self) -> Any:
        if self._at >= len(self._rows):
            return None
        self._at += 1
        return self._rows[self._at - 1]

    def fetchmany(self, size: int) -> list:
        rows = self._rows[self._at:self._at + size]
        self._at += len(rows)
        return rows


class ReplicaConnection(SqlConnection):
    """A read-only connection to a replica, with DuckDB's ``execute``: ``?`` placeholders, the
    rows as DuckDB gives them, NULLs last in ``ORDER BY``. Raises ``ReplicaMiss`` for any SQLite
    error (a table the replica does not hold, a damaged page)."""

    def datasheet_index(self):
        """The datasheets by name (``pipeline.query.datasheet_index``), looked up in the name
        keys the replica keeps (``NAME_KEYS_TABLE``)."""
        from pipeline.query import KeyedDatasheetIndex

        return KeyedDatasheetIndex(self, NAME_KEYS_TABLE)

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> SqlCursor:
        try:
            cursor = self.raw.execute(nulls_last(sql), tuple(params or ()))
            fetched = _Fetched(cursor.description, cursor.fetchall())
        except sqlite3.Error as exc:
            raise ReplicaMiss(str(exc)) from None
        return SqlCursor(fetched, "sqlite")


_TOKEN = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/|\(|\)|,|\bORDER\s+BY\b"
                    r"|\b(?:LIMIT|OFFSET|UNION|EXCEPT|INTERSECT|WINDOW|ROWS|RANGE|GROUPS)\b", re.I | re.S)
_EXPLICIT = re.compile(r"\b(?:DESC|NULLS\s+(?:FIRST|LAST))\s*$", re.I)


@lru_cache(maxsize=512)
def nulls_last(sql: str) -> str:
    """``sql`` with ``NULLS LAST`` after each ascending ``ORDER BY`` term that names no order of
    NULLs: DuckDB's default order (SQLite puts NULLs first when ascending; descending, both put
    them last).

    >>> nulls_last("SELECT a FROM t ORDER BY a, b DESC, lower(c) LIMIT 1")
    'SELECT a FROM t ORDER BY a NULLS LAST, b DESC, lower(c) NULLS LAST LIMIT 1'
    >>> nulls_last("SELECT (SELECT x FROM u ORDER BY y) AS z, 'ORDER BY q' FROM t ORDER BY 1")
    "SELECT (SELECT x FROM u ORDER BY y NULLS LAST) AS z, 'ORDER BY q' FROM t ORDER BY 1 NULLS LAST"
    """
    inserts: list[int] = []
    depth = 0
    open_terms: list[tuple[int, int]] = []  # (depth of an ORDER BY, start of its current term)

    def close(end: int) -> None:
        term_depth, start = open_terms[-1]
        term = sql[start:end].rstrip()
        if term.strip() and not _EXPLICIT.search(term):
            inserts.append(start + len(term))

    for m in _TOKEN.finditer(sql):
        token = m.group(0)
        upper = token.upper()
        if token[0] in "'\"" or token.startswith(("--", "/*")):
            continue
        if upper.startswith("ORDER"):
            open_terms.append((depth, m.end()))
        elif token == "(":
            depth += 1
        elif token == ")":
            if open_terms and open_terms[-1][0] == depth:
                close(m.start())
                open_terms.pop()
            depth -= 1
        elif open_terms and open_terms[-1][0] == depth:
            close(m.start())
            if token == ",":
                open_terms[-1] = (depth, m.end())
            else:
                open_terms.pop()
    while open_terms:
        close(len(sql))
        open_terms.pop()
    out, last = [], 0
    for at in sorted(inserts):
        out += [sql[last:at], " NULLS LAST"]
        last = at
    return "".join(out) + sql[last:]


def _fold(method: str):
    def fold(value: Any) -> Any:
        return getattr(value, method)() if isinstance(value, str) else value
    return fold


def open_replica(db: Path) -> ReplicaConnection | None:
    """A read-only connection to the replica of the DuckDB file ``db`` when it is one this code
    writes (its catalog exactly ``create_statements`` and ``index_statements``) and its stamp is ``db``'s now; else None
    (no replica, a stale, damaged or crafted one, any SQLite error)."""
    path = replica_path(db)
    if not path.is_file():
        return None
    expected = stamp(db)
    if expected is None:
        return None
    raw = None
    try:
        raw = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True, check_same_thread=False)
        catalog = raw.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
        wanted = _catalog()
        if len(catalog) != len(wanted) or set(catalog) != wanted:
            raw.close()
            return None
        found = raw.execute(f"SELECT stamp FROM {STAMP_TABLE}").fetchall()
        if found != [(expected,)]:
            raw.close()
            return None
        raw.execute("PRAGMA case_sensitive_like = ON")  # DuckDB's LIKE: case matters
        raw.create_function("lower", 1, _fold("lower"), deterministic=True)
        raw.create_function("upper", 1, _fold("upper"), deterministic=True)
        con = ReplicaConnection(raw, Target("sqlite", path))
        sandbox_sqlite(raw, con)
        return con
    except sqlite3.Error:
        if raw is not None:
            raw.close()
        return None


def write_replica(con: Any, db: Path) -> Path | None:
    """Write the replica of the DuckDB file ``db`` from ``con`` (a DuckDB connection to it):
    ``REPLICA_TABLES`` copied in the order DuckDB reads them, with the name key of each
    datasheet (``NAME_KEYS_TABLE``) and ``stamp(db)``; into a temporary file beside it, renamed over the replica when complete. Returns the replica's
    path, or None when nothing was written: the folder cannot be written, SQLite or DuckDB
    failed, or ``db`` changed while it was copied (its stamp before and after differ)."""
    import secrets

    from pipeline.normalise.names import name_key
    from pipeline.service.reader import copy_rows

    before = stamp(db)
    if before is None:
        return None
    path = replica_path(db)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        lite = sqlite3.connect(tmp)
        try:
            with lite:
                for table, statement in create_statements().items():
                    lite.execute(statement)
                copy_rows(con, lite, {t: [(c, kind == "DATE") for c, kind in cols] for t, cols in _typed_columns().items()})
                names = lite.execute("SELECT datasheet_id, name FROM datasheets").fetchall()
                lite.executemany(f"INSERT INTO {NAME_KEYS_TABLE} VALUES (?, ?)",
                                 [(name_key(name), datasheet_id) for datasheet_id, name in names])
                for _table, statement in index_statements().values():  # after the rows: built once
                    lite.execute(statement)
                lite.execute(f"INSERT INTO {STAMP_TABLE} VALUES (?)", (before,))
        finally:
            lite.close()
        if stamp(db) != before:  # the database changed while it was read
            return None
        os.replace(tmp, path)
        return path
    except (OSError, sqlite3.Error):
        return None
    except Exception as exc:
        from pipeline.database import database_failure

        if database_failure(exc) is None:
            raise
        return None
    finally:
        tmp.unlink(missing_ok=True)
