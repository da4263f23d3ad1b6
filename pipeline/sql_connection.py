"""Reading a database built into SQLite or PostgreSQL, through the interface the readers use.

The readers (``pipeline.query``, the engine's loaders, ``wh40k sql``) were written against
DuckDB's connection: ``con.execute(sql, [params]).fetchall()``, ``?`` placeholders,
``cursor.description``. ``SqlConnection`` gives the same for a SQLite file (``sqlite3``) and a
PostgreSQL database (psycopg 3, connected through SQLAlchemy), and returns the values DuckDB
returns: a BOOLEAN column as ``bool`` and a DATE as ``datetime.date`` (SQLite stores 0/1 and ISO
text), an integral PostgreSQL ``numeric`` (``sum`` of integers) as ``int``.

The sandbox, per backend (what ``wh40k sql`` runs is any text a user gives):

- SQLite: the file is opened read-only (``mode=ro`` URI), extension loading is off, and an
  authorizer allows only reading: SELECT, reading tables, functions other than
  ``load_extension``, the PRAGMAs that list (``READ_ONLY_PRAGMAS``); it denies
  ATTACH, DETACH, every write, CREATE, DROP, transactions and any other PRAGMA. A query that runs
  past ``MAX_SQL_SECONDS`` is interrupted (a progress handler).
- PostgreSQL: every transaction is read-only (``default_transaction_read_only``, and ``SET
  TRANSACTION READ ONLY`` before each ``sql`` statement), ``statement_timeout`` is
  ``MAX_SQL_SECONDS``, one statement per call (the extended protocol refuses several), and each
  ``sql`` statement is rolled back afterwards, so a ``set_config`` in it does not outlive it.
  ``wh40k sql`` refuses to run as a role that can read or write the server's files (a
  superuser, or a member of ``pg_read_server_files``, ``pg_write_server_files``,
  ``pg_execute_server_program``): connect as a role that may only read the tables.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sqlite3
import time
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Sequence
from urllib.parse import quote

from pipeline.errors import DatabaseError
from pipeline.limits import MAX_SQL_ROWS, MAX_SQL_SECONDS
from pipeline.targets import Target

#: PRAGMAs of SQLite that only list (``wh40k sql`` runs these, without a value).
READ_ONLY_PRAGMAS = frozenset({
    "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
    "foreign_key_list", "collation_list", "function_list", "pragma_list", "compile_options",
})

#: The first keyword of a statement ``wh40k sql`` runs on SQLite and PostgreSQL.
_QUERY_KEYWORDS = {"sqlite": ("SELECT", "WITH", "VALUES", "EXPLAIN", "PRAGMA"),
                   "postgresql": ("SELECT", "WITH", "VALUES", "TABLE", "SHOW", "EXPLAIN")}

#: What ``sql`` runs there, for the refusal message.
ALLOWED_SQL = {"sqlite": "SELECT, WITH, VALUES, EXPLAIN of a query, PRAGMA table_info and the other PRAGMAs that list",
               "postgresql": "SELECT, WITH, VALUES, TABLE, SHOW and EXPLAIN of a query"}

#: The roles of PostgreSQL that reach the server's files or programs.
_FILE_ROLES = ("pg_read_server_files", "pg_write_server_files", "pg_execute_server_program")


@lru_cache(maxsize=1)
def column_types() -> dict[str, str]:
    """The declared type of each column name that has one type in every table (BOOLEAN, DATE,
    ...): how a value of that name read from SQLite is turned back into DuckDB's Python type."""
    from schemas.catalog import declared_tables

    seen: dict[str, set[str]] = {}
    for columns in declared_tables().values():
        for c in columns:
            seen.setdefault(c.name, set()).add(c.sql_type)
    return {name: types.pop() for name, types in seen.items() if len(types) == 1}


#: Columns of the views that are lists (``db/views.sql``): JSON text in SQLite.
_LIST_COLUMNS = frozenset({"ability_names", "keywords"})


def _sqlite_value(kind: str | None, name: str) -> Callable[[Any], Any] | None:
    """The function that turns a SQLite value of the column ``name`` into DuckDB's (None: as is).

    >>> _sqlite_value("BOOLEAN", "is_melee")(1), _sqlite_value("DATE", "version_date")("2024-06-01")
    (True, datetime.date(2024, 6, 1))
    >>> _sqlite_value(None, "keywords")('["A", "B"]')
    ['A', 'B']
    """
    if kind == "BOOLEAN":
        return lambda v: bool(v) if isinstance(v, int) else v
    if kind == "DATE":
        return lambda v: dt.date.fromisoformat(v) if isinstance(v, str) else v
    if name in _LIST_COLUMNS:
        return lambda v: json.loads(v) if isinstance(v, str) and v.startswith("[") else v
    return None


def _postgres_value(v: Any) -> Any:
    """A PostgreSQL value as DuckDB gives it: a ``numeric`` without decimals (a ``sum`` of integers)
    is an int, one with decimals (``round(100.0 * a / b, 2)``) a float.

    >>> _postgres_value(Decimal("12")), _postgres_value(Decimal("100.00")), _postgres_value("x")
    (12, 100.0, 'x')
    """
    if isinstance(v, Decimal):
        return int(v) if v.as_tuple().exponent == 0 else float(v)
    return v


class SqlCursor:
    """The rows of one statement, read as DuckDB's connection gives them (``fetchall``,
    ``fetchone``, ``fetchmany``, ``description``)."""

    def __init__(self, cursor: Any, backend: str) -> None:
        self._cursor = cursor
        self.description = cursor.description
        names = [d[0] for d in self.description or []]
        if backend == "sqlite":
            types = column_types()
            convert = [_sqlite_value(types.get(n), n) for n in names]
        else:
            convert = [_postgres_value] * len(names)
        self._convert = convert if any(convert) else None

    def _row(self, row: Sequence[Any]) -> tuple:
        if self._convert is None:
            return tuple(row)
        return tuple(v if f is None or v is None else f(v) for f, v in zip(self._convert, row))

    def fetchall(self) -> list[tuple]:
        """Every remaining row."""
        return [self._row(r) for r in self._cursor.fetchall()]

    def fetchone(self) -> tuple | None:
        """The next row (None when there is none)."""
        row = self._cursor.fetchone()
        return None if row is None else self._row(row)

    def fetchmany(self, size: int) -> list[tuple]:
        """Up to ``size`` more rows."""
        return [self._row(r) for r in self._cursor.fetchmany(size)]


_PLACEHOLDER = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/|(\?)|(%)", re.DOTALL)


def to_pyformat(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s`` (and a literal ``%`` doubled), outside quotes and comments.

    >>> to_pyformat("SELECT ? WHERE name LIKE '%' || ? || '%' AND x = '?'")
    "SELECT %s WHERE name LIKE '%%' || %s || '%%' AND x = '?'"
    """
    def replace(m: re.Match[str]) -> str:
        if m.group(1):
            return "%s"
        if m.group(2):
            return "%%"
        return m.group(0).replace("%", "%%")
    return _PLACEHOLDER.sub(replace, sql)


class SqlConnection:
    """A read-only connection to a database built into SQLite or PostgreSQL (``open_sql``), with
    the calls the readers make on DuckDB's: ``execute(sql, params)`` with ``?`` placeholders,
    ``close()``; ``run_query`` is ``wh40k sql``'s. ``backend``: ``sqlite`` or ``postgresql``."""

    def __init__(self, raw: Any, target: Target, engine: Any = None) -> None:
        self.raw = raw
        self.target = target
        self.backend = target.backend
        self._engine = engine
        self._deadline: float | None = None

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> SqlCursor:
        """Run one statement of the pipeline's own SQL; raises ``DatabaseError`` (one line) when it fails."""
        try:
            if self.backend == "sqlite":
                cursor = self.raw.execute(sql, tuple(params or ()))
            else:
                cursor = self.raw.cursor()
                cursor.execute(to_pyformat(sql) if params else sql, list(params) if params else None)
        except Exception as exc:
            if not _is_driver_error(exc):
                raise
            self._rollback()
            raise DatabaseError(f"{self.target}: the query failed ({_one_line(exc)})") from None
        return SqlCursor(cursor, self.backend)

    def _rollback(self) -> None:
        if self.backend == "postgresql":
            self.raw.rollback()

    def close(self) -> None:
        """Close the connection (and its engine)."""
        if self._engine is None:
            self.raw.close()
            return
        pooled, engine = self._engine
        try:
            pooled.close()  # NullPool: closes the connection
        finally:
            engine.dispose()

    def run_query(self, statement: str) -> "tuple[list[str], list[tuple]]":
        """``wh40k sql`` here: one read-only statement; returns ``(column names, rows)``.

        Raises ``DatabaseError`` for an empty statement, one that is not a query (its first
        keyword is not one of ``_QUERY_KEYWORDS``; on SQLite also a PRAGMA that is not in
        ``READ_ONLY_PRAGMAS``), several statements, what the backend refuses (the sandbox, see
        the module), a query past ``MAX_SQL_SECONDS`` or over ``MAX_SQL_ROWS`` rows; on
        PostgreSQL for a role that reaches the server's files.
        """
        text = statement.strip().rstrip(";").strip()
        words = re.findall(r"[A-Za-z_]+", _strip_comments(text))
        if not words:
            raise DatabaseError("no SQL statement given; example: wh40k sql \"SELECT name FROM datasheets\"")
        first = words[0].upper()
        allowed = ALLOWED_SQL[self.backend]
        label = " ".join(w.upper() for w in words[:2])
        if first not in _QUERY_KEYWORDS[self.backend] or (
                first == "EXPLAIN" and len(words) > 1 and words[1].upper() in ("ANALYZE", "ANALYSE")):
            raise DatabaseError(f"statement 1 ({label}) is refused: it is not a query; the database is read-only "
                                f"here and `sql` runs queries only ({allowed})")
        if first == "PRAGMA" and (len(words) < 2 or words[1].lower() not in READ_ONLY_PRAGMAS or "=" in text):
            raise DatabaseError(f"statement 1 ({label}) is refused: that PRAGMA changes a setting or reaches outside "
                                f"the database; `sql` runs queries only ({allowed})")
        if self.backend == "postgresql":
            return self._run_postgres(text)
        return self._run_sqlite(text)

    def _run_sqlite(self, text: str) -> "tuple[list[str], list[tuple]]":
        self._deadline = time.monotonic() + MAX_SQL_SECONDS
        try:
            cursor = SqlCursor(self.raw.execute(text), "sqlite")
            names = [d[0] for d in cursor.description or []]
            rows = cursor.fetchmany(MAX_SQL_ROWS + 1)
        except sqlite3.ProgrammingError as exc:  # several statements
            raise DatabaseError(f"SQL failed: {_one_line(exc)}; `sql` runs one statement at a time here") from None
        except sqlite3.DatabaseError as exc:
            if "interrupted" in str(exc) and self._deadline is not None and time.monotonic() >= self._deadline:
                raise DatabaseError(f"the query ran past {MAX_SQL_SECONDS} s (the limit of one sql call) and was "
                                    "stopped; narrow it or add a LIMIT") from None
            raise DatabaseError(f"SQL failed: {_one_line(exc)}{_sqlite_hint(exc)}") from None
        finally:
            self._deadline = None
        return names, rows

    def _run_postgres(self, text: str) -> "tuple[list[str], list[tuple]]":
        import psycopg

        self._check_postgres_role()
        self.raw.rollback()
        try:
            with psycopg.Cursor(self.raw) as cursor:  # server-side binding: one statement only
                cursor.execute("SET TRANSACTION READ ONLY")
                cursor.execute(f"SET LOCAL statement_timeout = '{int(MAX_SQL_SECONDS)}s'")
                cursor.execute(text, prepare=True)  # a prepared statement is one statement
                wrapped = SqlCursor(cursor, "postgresql")
                names = [d[0] for d in cursor.description or []]
                rows = wrapped.fetchmany(MAX_SQL_ROWS + 1) if cursor.description else []
        except psycopg.errors.QueryCanceled:
            raise DatabaseError(f"the query ran past {MAX_SQL_SECONDS} s (the limit of one sql call) and was "
                                "stopped; narrow it or add a LIMIT") from None
        except psycopg.Error as exc:
            raise DatabaseError(f"SQL failed: {_one_line(exc)}{_postgres_hint(exc)}") from None
        finally:
            self.raw.rollback()  # nothing a statement set (set_config) outlives it
        return names, rows

    def _check_postgres_role(self) -> None:
        cursor = self.raw.cursor()
        cursor.execute("SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user")
        user, superuser = cursor.fetchone()
        cursor.execute("SELECT " + ", ".join(f"pg_has_role(current_user, '{r}', 'MEMBER')" for r in _FILE_ROLES))
        member = [r for r, yes in zip(_FILE_ROLES, cursor.fetchone()) if yes]
        self.raw.rollback()
        if superuser or member:
            why = "a superuser" if superuser else f"a member of {member[0]}"
            raise DatabaseError(
                f"{self.target}: `sql` does not run as the role {user}, {why} (it could read or write the server's "
                "files); connect as a role that may only read the tables, e.g. CREATE ROLE wh40k_reader LOGIN; "
                "GRANT SELECT ON ALL TABLES IN SCHEMA public TO wh40k_reader; then --db postgresql://wh40k_reader@...")

    def _progress(self) -> int:
        """SQLite's progress handler: non-zero (stop) once a ``sql`` query is past its deadline."""
        return int(self._deadline is not None and time.monotonic() >= self._deadline)


def _strip_comments(text: str) -> str:
    """SQL text without ``--`` and ``/* */`` comments.

    >>> _strip_comments("/* x */ SELECT -- y\\n 1")
    '  SELECT  \\n 1'
    """
    return re.sub(r"--[^\n]*|/\*.*?\*/", " ", text, flags=re.DOTALL)


def _is_driver_error(exc: BaseException) -> bool:
    if isinstance(exc, sqlite3.Error):
        return True
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is a dependency
        return False
    return isinstance(exc, psycopg.Error)


def _one_line(exc: BaseException) -> str:
    """A driver's message on one line (without PostgreSQL's LINE/caret lines).

    >>> _one_line(Exception('syntax error at or near "x"\\nLINE 1: x\\n        ^'))
    'syntax error at or near "x"'
    """
    lines = [line.strip() for line in str(exc).splitlines()]
    return " ".join(line for line in lines if line and not line.startswith("LINE ") and set(line) != {"^"})


def _sqlite_hint(exc: BaseException) -> str:
    message = str(exc)
    if "not authorized" in message or "readonly" in message or "read-only" in message:
        return "; wh40k reads the database alone: writes, ATTACH, extensions and settings are refused"
    if "no such table" in message:
        return "; list the tables with `wh40k sql \"SELECT name FROM sqlite_master WHERE type = 'table'\"`"
    if "no such column" in message:
        return "; list a table's columns with `wh40k sql \"PRAGMA table_info(table_name)\"`"
    return ""


def _postgres_hint(exc: BaseException) -> str:
    message = str(exc)
    if "read-only transaction" in message or "permission denied" in message:
        return "; wh40k reads the database alone: writes, files and settings are refused"
    if "does not exist" in message and "relation" in message:
        return "; list the tables with `wh40k sql \"SELECT table_name FROM information_schema.tables\"`"
    return ""


#: SQLite's authorizer action codes that a reader may do (all others are denied).
_SQLITE_ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE}
_SQLITE_DENIED_FUNCTIONS = frozenset({"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"})


def _sqlite_authorizer(action: int, arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None) -> int:
    """SQLite's authorizer for readers: reading only (see the module)."""
    if action in _SQLITE_ALLOWED:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION:
        return sqlite3.SQLITE_DENY if (arg2 or "").lower() in _SQLITE_DENIED_FUNCTIONS else sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA:
        # these only list, whatever their argument (a table's name)
        return sqlite3.SQLITE_OK if (arg1 or "").lower() in READ_ONLY_PRAGMAS else sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_DENY


def _strpos(text: str | None, part: str | None) -> int | None:
    """``strpos(text, part)``: the 1-based position of ``part`` in ``text``, 0 when absent.

    >>> _strpos("lethal hits", "hits"), _strpos("lethal", "x"), _strpos(None, "x")
    (8, 0, None)
    """
    if text is None or part is None:
        return None
    return text.find(part) + 1


def _starts_with(text: str | None, prefix: str | None) -> bool | None:
    """``starts_with(text, prefix)`` (DuckDB's and PostgreSQL's): whether ``text`` begins with ``prefix``.

    >>> _starts_with("lethal hits", "leth"), _starts_with("x", "y"), _starts_with(None, "x")
    (True, False, None)
    """
    if text is None or prefix is None:
        return None
    return text.startswith(prefix)


def _concat_ws(separator: str | None, *parts: object) -> str | None:
    """``concat_ws(separator, ...)``: the parts that are not NULL, joined (as DuckDB and PostgreSQL do).

    >>> _concat_ws(" ", "a", None, "b")
    'a b'
    """
    if separator is None:
        return None
    return separator.join(str(p) for p in parts if p is not None)


def open_sqlite(target: Target) -> SqlConnection:
    """A read-only, sandboxed connection to the SQLite file of ``target`` (see the module).

    Raises ``DatabaseError`` when there is no file or SQLite cannot open it."""
    path = target.path
    assert path is not None
    if not path.is_file():
        what = "is a folder, not a database file" if path.is_dir() else "no database"
        raise DatabaseError(f"{path}: {what}; build it with `wh40k build --db sqlite:///{path}`")
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    try:
        raw = sqlite3.connect(uri, uri=True, check_same_thread=False)
        raw.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        raise DatabaseError(f"{path}: cannot open it as a SQLite database ({_one_line(exc)}); rebuild it with "
                            f"`wh40k build --db sqlite:///{path}`") from None
    con = SqlConnection(raw, target)
    sandbox_sqlite(raw, con)
    return con


def sandbox_sqlite(raw: sqlite3.Connection, con: SqlConnection) -> None:
    """The reader's sandbox on the SQLite connection ``raw`` of ``con`` (see the module):
    DuckDB's functions the pipeline's SQL uses, no extensions, the authorizer, the time limit."""
    # DuckDB's and PostgreSQL's strpos, which the pipeline's own SQL uses (pipeline.search)
    raw.create_function("strpos", 2, _strpos, deterministic=True)
    raw.create_function("concat_ws", -1, _concat_ws, deterministic=True)  # SQLite has it from 3.44
    raw.create_function("starts_with", 2, _starts_with, deterministic=True)
    if hasattr(raw, "enable_load_extension"):
        raw.enable_load_extension(False)
    raw.set_authorizer(_sqlite_authorizer)
    raw.set_progress_handler(con._progress, 10_000)


def open_postgres(target: Target) -> SqlConnection:
    """A connection to the PostgreSQL database of ``target`` whose transactions are read-only,
    with ``statement_timeout`` ``MAX_SQL_SECONDS`` (see the module). Raises ``DatabaseError``
    when the server cannot be reached or refuses the connection."""
    import psycopg
    import sqlalchemy as sa
    from sqlalchemy.pool import NullPool

    engine = sa.create_engine(target.url, poolclass=NullPool, connect_args={"cursor_factory": psycopg.ClientCursor})
    try:
        pooled = engine.raw_connection()  # kept by the SqlConnection: the connection closes with it
        raw = pooled.driver_connection
        raw.execute("SET default_transaction_read_only = on")
        raw.execute(f"SET statement_timeout = '{int(MAX_SQL_SECONDS)}s'")
        raw.commit()
    except (sa.exc.DBAPIError, psycopg.Error) as exc:
        engine.dispose()
        reason = _one_line(getattr(exc, "orig", None) or exc)
        raise DatabaseError(f"{target}: cannot connect ({reason}); check the URL, and that the server runs") from None
    return SqlConnection(raw, target, (pooled, engine))


def open_sql(target: Target) -> SqlConnection:
    """``open_sqlite`` or ``open_postgres`` by the target's backend."""
    return open_sqlite(target) if target.backend == "sqlite" else open_postgres(target)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def catalog_columns(con: SqlConnection) -> tuple[dict[str, list[str]], set[str]]:
    """The tables of the database with their column names in order, and the view names."""
    if con.backend == "sqlite":
        objects = con.raw.execute("SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view')").fetchall()
        tables = {name: [] for kind, name in objects if kind == "table" and not name.startswith("sqlite_")}
        for name in tables:
            # PRAGMA table_info: one of the PRAGMAs the authorizer lets through
            tables[name] = [row[1] for row in con.raw.execute(f"PRAGMA table_info({_quote(name)})").fetchall()]
        return tables, {name for kind, name in objects if kind == "view"}
    cursor = con.raw.cursor()
    cursor.execute("SELECT table_name, column_name FROM information_schema.columns "
                   "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position")
    columns: dict[str, list[str]] = {}
    for table, column in cursor.fetchall():
        columns.setdefault(table, []).append(column)
    cursor.execute("SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = current_schema()")
    kinds = dict(cursor.fetchall())
    con.raw.rollback()
    views = {t for t, kind in kinds.items() if kind == "VIEW"}
    return {t: c for t, c in columns.items() if kinds.get(t) == "BASE TABLE"}, views


def check_sql_schema(con: SqlConnection) -> None:
    """Raise ``DatabaseError`` unless the SQLite or PostgreSQL database is one this wh40k builds:
    the schema version of ``schema_info``, every declared table with its columns in order, the
    views, and no other table or view (types are each backend's own and not compared)."""
    from schemas.catalog import declared_tables, schema_version

    rebuild = f"rebuild it with `wh40k build --db {con.target}`"
    tables, views = catalog_columns(con)
    if "schema_info" not in tables:
        raise DatabaseError(f"{con.target} states no schema version (no schema_info table): it was not built by "
                            f"this wh40k; {rebuild}")
    info = con.execute("SELECT schema_version, project_version FROM schema_info").fetchall()
    if len(info) != 1:
        raise DatabaseError(f"{con.target} states no schema version (no schema_info row); {rebuild}")
    (stored, built_by), = info
    if stored != schema_version():
        raise DatabaseError(f"{con.target} has schema version {stored} (built by wh40k-rules-db {built_by}); this "
                            f"wh40k reads schema version {schema_version()}: {rebuild}")
    declared = declared_tables()
    for table, specs in declared.items():
        if table not in tables:
            raise DatabaseError(f"{con.target} is not as the build makes it: it has no table {table}; {rebuild}")
        if tables[table] != [c.name for c in specs]:
            raise DatabaseError(f"{con.target} is not as the build makes it: the columns of {table} differ from "
                                f"the declaration; {rebuild}")
    extra = sorted(set(tables) - set(declared)) + sorted(views - set(view_names()))
    missing = sorted(set(view_names()) - views)
    if extra or missing:
        what = f"it holds {extra[0]}, which the build does not create" if extra else f"it has no view {missing[0]}"
        raise DatabaseError(f"{con.target} is not as the build makes it: {what}; {rebuild}")


def view_names() -> list[str]:
    """The names of the views of ``db/views.sql``."""
    from schemas.catalog import view_name, view_statements

    return [view_name(s) for s in view_statements()]


VIEWS_DIR = Path(__file__).resolve().parent.parent / "db"


def backend_view_statements(backend: str) -> list[str]:
    """The views of ``db/views.sql`` in the SQL of ``backend`` (``db/views.<backend>.sql``:
    the same views, columns and rows; a list is an array in PostgreSQL, JSON text in SQLite)."""
    from schemas.catalog import view_statements

    if backend == "duckdb":
        return view_statements()
    text = (VIEWS_DIR / f"views.{backend}.sql").read_text(encoding="utf-8")
    out = []
    for statement in text.split(";\n"):
        lines = [line for line in statement.splitlines() if line.strip() and not line.strip().startswith("--")]
        if lines:
            out.append("\n".join(lines))
    return out
