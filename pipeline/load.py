"""Load: validated records -> a database: a DuckDB file (the default), a SQLite file, a PostgreSQL database.

The tables are created from their declarations (derived from the records). DuckDB: the DDL is
written from the column specs (``schemas.catalog``: no SQLAlchemy is imported), and the rows go
in as one Arrow batch per table, built column by column and typed by those specs, which DuckDB
inserts in bulk (``pipeline.duckdb_file``: in this process, or in the build's second process
while this one makes the next table's columns). SQLite and PostgreSQL: the SQLAlchemy tables of
``schemas.tables``, compiled to each backend's DDL. SQLite: SQLAlchemy's executemany, into a
temporary file renamed over the old one. PostgreSQL: psycopg's COPY, in one
transaction that drops the project's tables and views, creates them and fills them, so that a
failed or interrupted build leaves the previous database as it was.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from pipeline.duckdb_file import DuckdbFile, ForkedDuckdbFile, WriterGone
from pipeline.errors import BuildError
from pipeline.targets import Target, parse_target
from pipeline.tempfiles import temp_path
from schemas.catalog import VIEWS_FILE, column_values, declared_tables, schema_version  # noqa: F401  (VIEWS_FILE: re-exported)
from schemas.records import RECORD_OF_TABLE, Record, SchemaInfo

if TYPE_CHECKING:  # SQLAlchemy is imported by the SQLite and PostgreSQL loads only
    import sqlalchemy as sa

    from pipeline.extractors import LinkColumns

#: What DuckDB's error says when a signal (Ctrl-C, SIGTERM) stopped the query it was running.
_DUCKDB_INTERRUPTED = "Query interrupted"


def create_table_statements(dialect: sa.engine.Dialect) -> list[str]:
    """``CREATE TABLE`` statements of every table, compiled from the SQLAlchemy declarations."""
    from sqlalchemy.schema import CreateTable

    from schemas.tables import TABLES

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


def load_database(records: list[Record], db_path: Path | Target, links: Iterable[LinkColumns] = (),
                  later: Callable[[], list[Record]] | None = None,
                  writer: ForkedDuckdbFile | None = None) -> dict[str, int]:
    """Write ``records`` into a new database at ``db_path``; return rows per table.

    ``links``: rows of link tables kept as columns (``pipeline.extractors.LinkColumns``, as
    ``pipeline.build.validate`` gives them), loaded after the records of their table.
    ``later``: more records, made when it is called, once ``records`` and ``links`` are in the
    DuckDB file (before the commit; the build's rules' effects, which wait for the wordings a
    second process reads meanwhile); for the other backends, called first.

    ``db_path``: a DuckDB file, or a ``Target`` (``pipeline.targets``: a SQLite file, a
    PostgreSQL database; see ``load_sql`` for those).

    The loader adds the ``schema_info`` row (``schema_info()``: the schema version readers
    check, the project version).

    The database is written to a temporary file of its own beside ``db_path``
    (``.<name>.<pid>.<random>.build.tmp``, ``pipeline.tempfiles``) and renamed over ``db_path`` only when complete, so a failed
    or interrupted build leaves the previous database intact and no temporary file; of two
    builds at once, the last to finish wins. Raises ``BuildError`` when the file cannot be
    written. The tables are created by the DDL written from their column specs; the rows and
    views go in through DuckDB's own connection (``pipeline.duckdb_file.DuckdbFile``), each
    table's primary key after its rows. Raises DuckDB's error (a ``ConstraintException``, or a
    ``TransactionException`` at a commit: a bug in the validation) if a row breaks a primary key.

    ``writer``: the build's second process, opened at the temporary file (``ForkedDuckdbFile``):
    DuckDB's work is done there while this process makes the next table's columns. When it
    ends before the file is complete (killed), the load starts again in this process.
    """
    target = parse_target(db_path)
    links = list(links)
    if target.backend != "duckdb":
        extra = later() if later is not None else []
        return load_sql([*records, *extra, *(r for link in links for r in link.records()), schema_info()], target)
    db_path = target.path
    # A name of this build's own: two builds at once never write the same file; the last
    # rename wins, and each one is a complete database.
    tmp = writer.path if writer is not None and writer.path is not None else temp_path(db_path, "build")
    try:
        rows = _write([*records, schema_info()], tmp, links, later, writer)
        os.replace(tmp, db_path)
    except Exception as exc:
        duckdb = sys.modules.get("duckdb")  # a DuckDB error: DuckDB was imported to raise it
        if (duckdb is not None and isinstance(exc, duckdb.InterruptException)) or (
                isinstance(exc, RuntimeError) and str(exc) == _DUCKDB_INTERRUPTED):
            # Ctrl-C while DuckDB works (as DuckDB raises it, or while it scans an Arrow batch):
            # an interrupt like any other
            raise KeyboardInterrupt from None
        if isinstance(exc, OSError) or (duckdb is not None and isinstance(exc, duckdb.IOException)):
            reason = getattr(exc, "strerror", None) or str(exc).splitlines()[0]
            raise BuildError(f"cannot write the database {db_path}: {reason}; choose another --db") from exc
        raise
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            leftover.unlink(missing_ok=True)  # after a failure or an interrupt (Ctrl-C)
    return rows


@contextmanager
def _signals_between_statements() -> Iterator[Callable[[], None]]:
    """Ctrl-C (SIGINT) and SIGTERM held while the rows go in, and delivered by the ``check()``
    this yields, which the loader calls between two statements, and once more on leaving:
    the handlers in place before (Python's ``KeyboardInterrupt``, the build's SIGTERM handler)
    are put back and the signal raised again, so it acts as it would have where it landed.

    Raised where it lands, a signal inside DuckDB comes back in as many shapes as DuckDB has
    callbacks into Python (``InterruptException``, a ``RuntimeError`` from an Arrow scan, an
    ``InvalidInputException`` that counting the rows of a registered batch failed, ...); held
    back, it waits at most one statement (the largest table's insert: a fraction of a second).
    Outside the main thread, where no handler can be set, signals are left as they are; an
    ignored signal stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return
    pressed: list[int] = []
    previous: dict[int, object] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) not in (signal.SIG_IGN, None):
            previous[signum] = signal.signal(signum, lambda number, _frame: pressed.append(number))

    def restore() -> None:
        while previous:
            signum, handler = previous.popitem()
            signal.signal(signum, handler)

    def check() -> None:
        if pressed:
            restore()
            signal.raise_signal(pressed[0])  # the handler of before runs (and raises) here

    try:
        yield check
    finally:
        restore()
    check()


def _write(records: list[Record], tmp: Path, links: Iterable[LinkColumns] = (),
           later: Callable[[], list[Record]] | None = None, writer: ForkedDuckdbFile | None = None) -> dict[str, int]:
    """Writes ``records``, ``links`` and then ``later()`` to a new DuckDB file ``tmp``: through
    ``writer`` (opened at ``tmp``) when given, else in this process, where a Ctrl-C or SIGTERM
    is delivered between two statements (``_signals_between_statements``)."""
    by_table = _by_table(records)
    linked: dict[str, list[LinkColumns]] = defaultdict(list)
    for link in links:
        linked[link.table].append(link)
    made: list[list[Record]] = []

    def later_once() -> list[Record]:  # made once, even when the load starts again
        if not made:
            made.append(later() if later is not None else [])
        return made[0]

    extra: dict[str, list[Record]] | None = None
    if writer is not None:
        try:
            extra = _fill(writer, by_table, linked, later_once, lambda: None)
        except WriterGone:
            writer.abort()  # killed: the load starts again here
        except BaseException:  # an error, Ctrl-C: it stops before the file is removed
            writer.abort()
            raise
    if extra is None:
        with _signals_between_statements() as check:
            target = DuckdbFile(tmp)
            try:
                extra = _fill(target, by_table, linked, later_once, check)
            finally:
                target.close()
    return {name: len(by_table.get(name, [])) + len(extra.get(name, [])) + sum(map(len, linked.get(name, [])))
            for name in RECORD_OF_TABLE}


def _columns(name: str, record_type: type[Record], rows: list[Record], links: list[LinkColumns]) -> dict[str, list]:
    """The values of table ``name`` by column: its records' (``column_values``), then its link rows'."""
    columns = column_values(record_type, rows)
    for link in links:
        for field_name, values in link.columns().items():
            columns[field_name] = columns[field_name] + values if columns[field_name] else values
    return columns


def load_ahead(writer: ForkedDuckdbFile, links: Iterable[LinkColumns]) -> None:
    """Send ``writer`` the rows of each link table that one of ``links`` alone gives (the
    parse's ``ParseResult.links``, before the merge: most of the build's rows), to go in while
    the sources are merged; ``load_database`` sends such a table again only if the merge changed
    its rows (``ForkedDuckdbFile.rows_ahead``)."""
    by_table: dict[str, list[LinkColumns]] = defaultdict(list)
    for link in links:
        by_table[link.table].append(link)
    for name, given in by_table.items():
        if len(given) == 1 and len(given[0]):
            writer.rows_ahead(name, _columns(name, RECORD_OF_TABLE[name], [], given))


def _fill(target: DuckdbFile | ForkedDuckdbFile, by_table: dict[str, list[Record]],
          linked: dict[str, list[LinkColumns]], later: Callable[[], list[Record]],
          check: Callable[[], None]) -> dict[str, list[Record]]:
    """``by_table`` and ``linked`` into ``target``, table by table, then the records of ``later()``
    (a table may get rows from both), then ``finish``; ``check()`` between two statements.
    Returns the records of ``later()`` by table."""

    ahead = dict(target.ahead) if isinstance(target, ForkedDuckdbFile) else {}

    def insert(part: dict[str, list[Record]], part_links: dict[str, list[LinkColumns]]) -> None:
        for name, record_type in RECORD_OF_TABLE.items():
            rows, links = part.get(name, []), part_links.get(name, [])
            sent = ahead.pop(name, None)
            if not rows and not any(links) and sent is None:
                continue
            check()
            columns = _columns(name, record_type, rows, links)
            if sent is None:
                target.rows(name, columns)
            elif columns != sent:  # the merge changed the rows sent ahead (or left none)
                target.replace(name, columns)  # type: ignore[union-attr]  (only a writer sends ahead)

    insert(by_table, linked)
    extra = _by_table(later())
    insert(extra, {})
    check()
    target.finish()
    check()
    return extra


def _by_table(records: list[Record]) -> dict[str, list[Record]]:
    by_table: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        by_table[record.__table__].append(record)
    return by_table


def _table_rows(name: str, records: list[Record]) -> tuple[list[str], list[tuple]]:
    """The column names of table ``name`` and its rows as tuples, in the table's column order."""
    values = column_values(RECORD_OF_TABLE[name], records)
    names = [c.name for c in declared_tables()[name]]
    return names, list(zip(*(values[n] for n in names)))


def load_sql(records: list[Record], target: Target) -> dict[str, int]:
    """Write ``records`` (with their ``schema_info`` row) into a SQLite file or a PostgreSQL
    database; return rows per table.

    SQLite: a temporary file beside the target's, renamed over it when complete (as for DuckDB).
    PostgreSQL: one transaction drops the project's views and tables (those of the
    declarations; nothing else of the database), creates and fills them (COPY) and commits;
    a failure or Ctrl-C rolls it back. The views are ``db/views.<backend>.sql``. Raises
    ``BuildError`` when the file cannot be written or the server refuses.
    """
    if target.backend == "sqlite":
        tmp = temp_path(target.path, "build")
        try:
            rows = _write_sqlite(records, tmp)
            os.replace(tmp, target.path)
        except OSError as exc:
            raise BuildError(f"cannot write the database {target.path}: {exc.strerror}; choose another --db") from exc
        finally:
            for leftover in (tmp, tmp.with_name(tmp.name + "-journal")):
                leftover.unlink(missing_ok=True)
        return rows
    return _write_postgres(records, target)


def _write_sqlite(records: list[Record], tmp: Path) -> dict[str, int]:
    import sqlite3

    import sqlalchemy as sa

    from pipeline.sql_connection import backend_view_statements
    from schemas.tables import metadata

    by_table = _by_table(records)
    engine = sa.create_engine(f"sqlite:///{tmp}")
    try:
        with engine.begin() as conn:
            metadata.create_all(conn)
        con = sqlite3.connect(tmp)
        try:
            with con:  # one transaction
                for name in RECORD_OF_TABLE:
                    rows = by_table.get(name)
                    if rows:
                        columns, values = _table_rows(name, rows)
                        marks = ", ".join("?" * len(columns))
                        con.executemany(f'INSERT INTO "{name}" VALUES ({marks})',
                                        [tuple(_sqlite_value(v) for v in row) for row in values])
                for statement in backend_view_statements("sqlite"):
                    con.execute(statement)
        finally:
            con.close()
    finally:
        engine.dispose()
    return {name: len(by_table.get(name, [])) for name in RECORD_OF_TABLE}


def _sqlite_value(value: object) -> object:
    """A value as SQLAlchemy stores it in SQLite: a date as ISO text (``2024-06-01``), the rest as is.

    >>> import datetime as dt
    >>> _sqlite_value(dt.date(2024, 6, 1)), _sqlite_value(True), _sqlite_value("x")
    ('2024-06-01', True, 'x')
    """
    import datetime as dt

    return value.isoformat() if isinstance(value, dt.date) else value


def _write_postgres(records: list[Record], target: Target) -> dict[str, int]:
    import sqlalchemy as sa
    from sqlalchemy.pool import NullPool

    from pipeline.sql_connection import backend_view_statements, view_names
    from schemas.tables import metadata

    by_table = _by_table(records)
    engine = sa.create_engine(target.url, poolclass=NullPool)
    try:
        with engine.begin() as conn:
            for view in view_names():
                conn.exec_driver_sql(f'DROP VIEW IF EXISTS "{view}"')
            metadata.drop_all(conn, checkfirst=True)
            metadata.create_all(conn)
            cursor = conn.connection.driver_connection.cursor()
            for name in RECORD_OF_TABLE:
                rows = by_table.get(name)
                if not rows:
                    continue
                columns, values = _table_rows(name, rows)
                quoted = ", ".join(f'"{c}"' for c in columns)
                with cursor.copy(f'COPY "{name}" ({quoted}) FROM STDIN') as copy:
                    for row in values:
                        copy.write_row(row)
            for statement in backend_view_statements("postgresql"):
                conn.exec_driver_sql(statement)
    except sa.exc.OperationalError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        raise BuildError(f"cannot build into {target}: {reason}; check the URL, and that the server runs") from None
    except sa.exc.DBAPIError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        raise BuildError(f"cannot build into {target}: {reason}; the previous database is kept") from None
    finally:
        engine.dispose()
    return {name: len(by_table.get(name, [])) for name in RECORD_OF_TABLE}
