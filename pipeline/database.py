"""Opening a built database to read it: the one function every reader goes through.

``open_database`` opens the file read-only inside DuckDB's own sandbox (``SANDBOX_CONFIG``,
given to ``duckdb.connect`` so that it holds before any statement runs): no statement, view or
macro can read or write a file other than the database, reach the network, install or load an
extension, or change a setting. It then checks that the file is a database this wh40k builds
(``check_schema``: the schema version of ``schema_info``, every table and column, nothing
else). ``database_failure`` turns what DuckDB raises later for a damaged file (a truncated or
corrupt block read by a query) into the project's one-line error.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from pipeline.errors import DatabaseError
from pipeline.limits import MAX_SQL_MEMORY, MAX_SQL_THREADS

if TYPE_CHECKING:  # imported where a DuckDB file is opened: an attack served by its replica needs none
    import duckdb

DEFAULT_DB = Path("db") / "wh40k.duckdb"

REBUILD = "rebuild it with `make build-db` (or `wh40k build --db FILE`)"

#: DuckDB's settings for every connection that reads a database (DuckDB's "Securing DuckDB"
#: page), given to ``duckdb.connect``: they apply when the database starts, before any
#: statement, and ``lock_configuration`` keeps any statement from changing them (or any other
#: setting: profiling output files, the temporary folder, threads).
SANDBOX_CONFIG: dict[str, bool | int | str] = {
    # no COPY TO/FROM, EXPORT/IMPORT DATABASE, ATTACH, file or URL readers (read_csv, read_text,
    # glob, ...), INSTALL or LOAD: only the database file itself can be read
    "enable_external_access": False,
    "autoinstall_known_extensions": False,  # no download of an extension a query or file needs
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
    "allow_persistent_secrets": False,  # no secrets read from (or written to) ~/.duckdb
    "allow_unredacted_secrets": False,
    "python_enable_replacements": False,  # a name in a query is never a Python variable
    "temp_directory": "",  # never spill to a `.tmp` folder where the command runs
    "memory_limit": MAX_SQL_MEMORY,  # a crafted query fails ("Out of Memory"), the machine keeps its memory
    "threads": MAX_SQL_THREADS,
    "lock_configuration": True,
}

#: The first bytes of files that are not DuckDB databases, for the error message.
_OTHER_FORMATS = ((b"SQLite format 3\x00", "a SQLite database"), (b"PAR1", "a Parquet file"),
                  (b"PK\x03\x04", "a zip archive"), (b"\x1f\x8b", "a gzip file"))


def _kind_of_file(head: bytes) -> str | None:
    """What a file is when its first bytes say it is not a DuckDB database (None if DuckDB).

    >>> _kind_of_file(b"\\xa7\\xc6\\xb3\\xb4\\xb4\\x87x\\x19DUCK"), _kind_of_file(b"SQLite format 3\\x00...")
    (None, 'a SQLite database')
    >>> _kind_of_file(b""), _kind_of_file(b"hello")
    ('an empty file', 'a file of another kind')
    """
    if head[8:12] == b"DUCK":
        return None
    if not head:
        return "an empty file"
    for magic, kind in _OTHER_FORMATS:
        if head.startswith(magic):
            return kind
    return "a file of another kind"


def open_database(path: Path | str = DEFAULT_DB) -> duckdb.DuckDBPyConnection:
    """Open the database at ``path`` read-only, in DuckDB's sandbox (``SANDBOX_CONFIG``).

    Every reader (``wh40k sql``, the read commands, ``attack``, the Python API) opens the
    database here. Raises ``DatabaseError`` (one line, saying to rebuild) when there is no file,
    when it is a folder, not a DuckDB database, truncated or corrupt, when the sandbox settings
    did not apply, or when ``check_schema`` refuses it.

    ``path`` may be a SQLAlchemy URL (``sqlite:///FILE``, ``postgresql://USER@HOST/DB``:
    ``pipeline.targets``): then the connection is a ``pipeline.sql_connection.SqlConnection``
    with the same ``execute``, read-only in that backend's sandbox, its schema checked
    (``check_sql_schema``). Raises ``InputError`` for a URL of another kind.
    """
    from pipeline.targets import parse_target

    target = parse_target(path)
    if target.backend != "duckdb":
        return _open_sql(target)
    import duckdb

    path = target.path
    if not path.exists():
        raise DatabaseError(f"{path}: no database; build it with `make build-db` (or `wh40k build`)")
    if path.is_dir():
        raise DatabaseError(f"{path} is a folder, not a database file; give --db the database file "
                            f"(`make build-db` writes {DEFAULT_DB})")
    try:
        with path.open("rb") as file:
            kind = _kind_of_file(file.read(16))
    except OSError as exc:
        raise DatabaseError(f"{path}: cannot read ({exc.strerror}); check the file's permissions") from None
    if kind is not None:
        raise DatabaseError(f"{path} is {kind}, not a database built by wh40k; give --db the file "
                            f"`make build-db` writes ({DEFAULT_DB}), or {REBUILD}")
    try:
        con = sandboxed_connection(path)
    except duckdb.Error as exc:
        raise DatabaseError(f"{path}: cannot open the database ({one_line(exc)}); "
                            f"the file may be damaged or truncated: {REBUILD}") from None
    try:
        identity = _file_identity(path)
        if identity not in _CHECKED:
            check_schema(con, path)
            _CHECKED.add(identity)
    except BaseException:
        con.close()
        raise
    return con


def _open_sql(target):  # -> SqlConnection
    """``open_database`` of a SQLite file or a PostgreSQL database: sandboxed, schema checked."""
    from pipeline.sql_connection import check_sql_schema, open_sql

    con = open_sql(target)
    try:
        check_sql_schema(con)
    except BaseException:
        con.close()
        raise
    return con


#: Files ``check_schema`` accepted in this process, by ``_file_identity``: a process that opens
#: the same unchanged file again (the Python API, the tests, a server) checks it once.
_CHECKED: set[tuple] = set()


def _file_identity(path: Path) -> tuple:
    """What changes when a database file (or its write-ahead log) is replaced or written:
    device, inode, size and modification time of both."""
    def stat(p: Path) -> tuple | None:
        try:
            st = p.stat()
        except FileNotFoundError:
            return None
        return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns
    return str(path.resolve()), stat(path), stat(path.with_name(path.name + ".wal"))


def sandboxed_connection(path: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the DuckDB file at ``path`` with ``SANDBOX_CONFIG``, checked
    by ``check_sandbox``, and no check of the schema (the build uses it to read the database it
    is about to replace, which may be of an older schema). Raises ``duckdb.Error`` when DuckDB
    cannot open the file, ``DatabaseError`` when the settings did not apply."""
    import duckdb

    con = duckdb.connect(str(path), read_only=True, config=SANDBOX_CONFIG)
    try:
        check_sandbox(con)
    except BaseException:
        con.close()
        raise
    return con


def check_sandbox(con: duckdb.DuckDBPyConnection) -> None:
    """Raise ``DatabaseError`` unless every setting of ``SANDBOX_CONFIG`` is in force on ``con``
    (read back from DuckDB itself)."""
    wanted = {name: str(value).lower() for name, value in SANDBOX_CONFIG.items()}
    found = {name: str(value or "").lower() for name, value in con.execute(
        "SELECT name, value FROM system.main.duckdb_settings()").fetchall() if name in wanted}
    wrong = [name for name, value in wanted.items() if found.get(name) != value]
    if wrong:
        raise DatabaseError("DuckDB did not apply the read-only sandbox settings " + ", ".join(wrong)
                            + "; another connection to this file in this process has other settings: close it")


# The catalog is read through the system's own functions (``system.main.``): a database's macro
# of the same name (``duckdb_tables``, ``lower``) stands in for an unqualified one.
_CATALOG_SQL = """
    SELECT 'table' AS kind, schema_name, table_name AS name FROM system.main.duckdb_tables()
    WHERE database_name = system.main.current_database()
    UNION ALL SELECT 'view', schema_name, view_name FROM system.main.duckdb_views()
    WHERE NOT internal AND database_name = system.main.current_database()
    UNION ALL SELECT DISTINCT 'macro', schema_name, function_name FROM system.main.duckdb_functions()
    WHERE NOT internal AND database_name = system.main.current_database()
    UNION ALL SELECT 'type', schema_name, type_name FROM system.main.duckdb_types()
    WHERE NOT internal AND database_name = system.main.current_database()
    UNION ALL SELECT 'sequence', schema_name, sequence_name FROM system.main.duckdb_sequences()
    WHERE database_name = system.main.current_database()
    UNION ALL SELECT 'index', schema_name, index_name FROM system.main.duckdb_indexes()
    WHERE database_name = system.main.current_database()
    UNION ALL SELECT 'schema', schema_name, schema_name FROM system.main.duckdb_schemas()
    WHERE NOT internal AND database_name = system.main.current_database()
"""

_COLUMNS_SQL = """
    SELECT c.table_name, c.column_name, c.data_type, c.is_nullable
    FROM system.main.duckdb_columns() c
    JOIN system.main.duckdb_tables() t USING (database_name, schema_name, table_name)
    WHERE c.database_name = system.main.current_database() AND c.schema_name = 'main'
    ORDER BY c.table_name, c.column_index
"""

_KEYS_SQL = """
    SELECT table_name, constraint_column_names FROM system.main.duckdb_constraints()
    WHERE constraint_type = 'PRIMARY KEY' AND database_name = system.main.current_database()
      AND schema_name = 'main'
"""


def check_schema(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Raise ``DatabaseError`` unless the database is one this wh40k builds.

    That is: a ``schema_info`` table whose ``schema_version`` is
    ``schemas.catalog.schema_version()`` (the declarations this code reads with); every declared
    table, as a table, with its columns (name, type, nullability, key) in order; the views of
    ``db/views.sql``, as it defines them; and nothing else (no other table, view, macro, type, sequence, index or
    schema: a macro can stand in for a built-in function, a view for a table). The message names
    the first difference and says to rebuild.
    """
    import duckdb

    from schemas.catalog import ColumnSpec, declared_tables, schema_version, view_name, view_statements

    tables = declared_tables()
    try:
        objects = con.execute(_CATALOG_SQL).fetchall()
        keys = {table: set(names) for table, names in con.execute(_KEYS_SQL).fetchall()}
        columns: dict[str, list[ColumnSpec]] = {}
        for table, column, sql_type, nullable in con.execute(_COLUMNS_SQL).fetchall():
            columns.setdefault(table, []).append(ColumnSpec(column, sql_type, nullable, column in keys.get(table, ())))
        info = columns.get("schema_info") == list(tables["schema_info"]) and con.execute(
            "SELECT schema_version, project_version FROM main.schema_info").fetchall()
    except duckdb.Error as exc:
        raise DatabaseError(f"{path}: cannot read the database's catalog ({one_line(exc)}); "
                            f"the file may be damaged or truncated: {REBUILD}") from None
    if not info or len(info) != 1:
        raise DatabaseError(f"{path} states no schema version (no schema_info row): it was built by an older "
                            f"wh40k or by something else; {REBUILD}")
    (stored, built_by), = info
    if stored != schema_version():
        raise DatabaseError(f"{path} has schema version {stored} (built by wh40k-rules-db {built_by}); this wh40k "
                            f"reads schema version {schema_version()}: {REBUILD}")
    views = view_statements()
    problem = _catalog_difference(tables, [view_name(s) for s in views], objects, columns)
    if problem is None:
        try:
            problem = _view_difference(con, views)
        except duckdb.Error as exc:
            problem = f"its tables do not bind the views of db/views.sql ({one_line(exc)})"
    if problem:
        raise DatabaseError(f"{path} is not as the build makes it: {problem}; {REBUILD}")


def _catalog_difference(tables: dict[str, Iterable], views: list[str], objects: list[tuple[str, str, str]],
                        columns: dict[str, list]) -> str | None:
    """The first difference between the declared catalog and the database's, as a phrase (None
    when they agree).

    >>> from schemas.catalog import ColumnSpec as C
    >>> declared = {"t": (C("a", "INTEGER", False, True), C("b", "VARCHAR", True))}
    >>> found = {"t": [C("a", "INTEGER", False, True), C("b", "VARCHAR", True)]}
    >>> _catalog_difference(declared, ["v"], [("table", "main", "t"), ("view", "main", "v")], found) is None
    True
    >>> _catalog_difference(declared, ["v"], [("table", "main", "t"), ("view", "main", "v")], {"t": found["t"][:1]})
    'the table t has no column b'
    >>> _catalog_difference(declared, ["v"], [("view", "main", "t"), ("view", "main", "v")], {})
    't is a view, not a table'
    >>> _catalog_difference(declared, ["v"], [("table", "main", "t"), ("view", "main", "v"), ("macro", "main", "lower")],
    ...                     found)
    'it holds the macro lower, which the build does not create'
    """
    found = {(kind, name) for kind, schema, name in objects if schema == "main" and kind in ("table", "view")}
    for table, declared in tables.items():
        if ("table", table) not in found:
            return f"{table} is a view, not a table" if ("view", table) in found else f"it has no table {table}"
        actual = columns.get(table, [])
        by_name = {c.name: c for c in actual}
        for column in declared:
            if column.name not in by_name:
                return f"the table {table} has no column {column.name}"
            if by_name[column.name] != column:
                return (f"the column {table}.{column.name} is {by_name[column.name].text()}, "
                        f"not {column.text()}")
        extra = [c.name for c in actual if c.name not in {d.name for d in declared}]
        if extra:
            return f"the table {table} has a column {extra[0]} the build does not create"
        if [c.name for c in actual] != [c.name for c in declared]:
            return f"the columns of {table} are in another order"
    for view in views:
        if ("view", view) not in found:
            return f"it has no view {view}"
    expected = {("table", t) for t in tables} | {("view", v) for v in views}
    for kind, schema, name in objects:
        if (kind, name) not in expected or schema != "main":
            where = "" if schema == "main" or kind == "schema" else f" (schema {schema})"
            return f"it holds the {kind} {name}{where}, which the build does not create"
    return None


def _view_difference(con: duckdb.DuckDBPyConnection, views: list[str]) -> str | None:
    """The first view of the database that is not the one ``db/views.sql`` defines (None when
    all are): each statement is created as a temporary view, so that DuckDB writes both in its
    own words, then dropped."""
    from schemas.catalog import view_name

    for statement in views:
        name = view_name(statement)
        con.execute(re.sub(r"^\s*CREATE\s+VIEW\s+\w+", "CREATE TEMP VIEW _wh40k_expected", statement, count=1))
        try:
            texts = dict(con.execute(
                "SELECT view_name, sql FROM system.main.duckdb_views() "
                "WHERE (view_name, temporary) IN ((?, false), (?, true))",
                [name, "_wh40k_expected"]).fetchall())
        finally:
            con.execute("DROP VIEW _wh40k_expected")
        stored, expected = texts.get(name, ""), texts.get("_wh40k_expected", "")
        if stored.split(" AS ", 1)[-1] != expected.split(" AS ", 1)[-1]:
            return f"the view {name} is not the one db/views.sql defines"
    return None


def one_line(exc: BaseException) -> str:
    """DuckDB's message on one line, with its suggestions and without the quoted query and caret.

    >>> import duckdb
    >>> one_line(duckdb.CatalogException(
    ...     'Catalog Error: Table with name datasheet does not exist!\\nDid you mean "datasheets"?\\n\\n'
    ...     'LINE 1: select * from datasheet\\n                      ^^^^^^^^^'))
    'Catalog Error: Table with name datasheet does not exist! Did you mean "datasheets"?'
    """
    lines = [line.strip() for line in str(exc).splitlines()]
    kept = [line for line in lines if line and not line.startswith("LINE ") and set(line) != {"^"}]
    sentences = [line if line.endswith((".", "!", "?", ":")) or i == len(kept) - 1 else line + "."
                 for i, line in enumerate(kept)]
    return " ".join(sentences).replace("Candidate bindings: : ", "Candidate bindings: ")


#: What a refusal of the sandbox adds to DuckDB's message.
SANDBOX_HINT = ("wh40k reads the database alone: files, URLs, extensions and settings are out of reach "
                "(see Safety in the README)")


def database_failure(exc: BaseException) -> DatabaseError | None:
    """The one-line ``DatabaseError`` for what DuckDB raises while a command reads an opened
    database: a refusal of the sandbox (``PermissionException``), or a damaged file (a block
    that cannot be read, a checksum that does not match, an internal error after one). None for
    any other exception, which is a bug and keeps its traceback.
    """
    duckdb = sys.modules.get("duckdb")  # not loaded: no DuckDB database was read
    if duckdb is None or not isinstance(exc, duckdb.Error):
        return None
    message = one_line(exc)
    if isinstance(exc, duckdb.PermissionException):
        return DatabaseError(f"refused: {message}; {SANDBOX_HINT}")
    damaged = (duckdb.IOException, duckdb.SerializationException, duckdb.InternalException,
               duckdb.FatalException)
    if isinstance(exc, damaged) or "Corrupt database file" in message or "database has been invalidated" in message:
        return DatabaseError(f"the database cannot be read ({message}); the file may be damaged or truncated: "
                             f"{REBUILD}")
    return None


def backend_of(con: object) -> str:
    """The backend of a connection ``open_database`` gave: ``duckdb``, ``sqlite`` or ``postgresql``."""
    return getattr(con, "backend", "duckdb")


def ordered_join(con: object, value: str, separator: str, order: str, from_where: str) -> str:
    """A scalar subquery joining ``value`` of the rows of ``from_where`` (``FROM ... WHERE ...``)
    with ``separator`` (SQL text) in the order of ``order``, in the SQL of ``con``'s backend
    (SQLite before 3.44 has no ``ORDER BY`` inside an aggregate: it joins an ordered subquery).

    >>> ordered_join(None, "a.x", "', '", "a.pos", "FROM t a")
    "(SELECT string_agg(a.x, ', ' ORDER BY a.pos) FROM t a)"
    """
    if backend_of(con) == "sqlite":
        return f"(SELECT group_concat(v, {separator}) FROM (SELECT {value} AS v {from_where} ORDER BY {order}))"
    return f"(SELECT string_agg({value}, {separator} ORDER BY {order}) {from_where})"
