"""The database a server reads (``Database``): a DuckDB file, a SQLite file or a PostgreSQL
database (``--db`` as the read commands take it: ``pipeline.targets``), read through the same
layer as they are (``query.open_database``: DuckDB's sandbox, or ``SqlConnection``'s).

Why a DuckDB file is served from a SQLite copy: the answers of one unit or one attack are some
10 to 60 small queries by datasheet id, and DuckDB, built for scans, spends about 1 to 8 ms on
each (planning and a scan of the table), SQLite a tenth of a millisecond. So at start (and again
when the file is replaced) the server copies every table of the DuckDB file into a SQLite file
in a temporary folder (``sqlite_copy``: the tables and views the SQLite build makes, the same
rows) and reads that one, sandboxed as ``--db sqlite:///...`` is; ``copy=False`` reads the
DuckDB file itself. The temporary folder is removed when the server stops.

Each worker thread keeps its own connection (SQLite, PostgreSQL) or cursor (DuckDB), opened on
its first request and again after the database was replaced. What every request would read
again (the datasheet names, the editions, the fetch hints) is read once per database
(``query.Preread``).
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections import OrderedDict
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from pipeline import query
from pipeline.service import DEFAULT_CACHE_SIZE
from pipeline.targets import Target, parse_target

#: Rows read from DuckDB and written to the SQLite copy at a time.
_COPY_BATCH = 5000


def sqlite_copy(con: Any, path: Path) -> None:
    """Write every table of the DuckDB database of ``con`` into a new SQLite file at ``path``,
    as ``wh40k build --db sqlite:///...`` writes it: the tables of the declarations
    (``schemas.tables.metadata``), the values stored as the SQLite build stores them
    (``pipeline.load._sqlite_value``: a date as ISO text), the views of ``db/views.sqlite.sql``. Raises ``DatabaseError`` when a table
    cannot be read."""
    import sqlite3

    import sqlalchemy as sa

    from pipeline.sql_connection import backend_view_statements
    from schemas.tables import TABLES, metadata

    engine = sa.create_engine(f"sqlite:///{path}")
    try:
        with engine.begin() as conn:
            metadata.create_all(conn)
    finally:
        engine.dispose()
    out = sqlite3.connect(path)
    try:
        out.execute("PRAGMA journal_mode = OFF")  # a new file, discarded when the copy fails
        out.execute("PRAGMA synchronous = OFF")
        with out:
            copy_rows(con, out, {name: [(c.name, isinstance(c.type, sa.Date)) for c in metadata.tables[name].columns]
                                 for name in TABLES})
            for statement in backend_view_statements("sqlite"):
                out.execute(statement)
    finally:
        out.close()


def copy_rows(con: Any, out: Any, tables: dict[str, list[tuple[str, bool]]]) -> None:
    """Copy the rows of ``tables`` (name: its columns as (name, is a date)) from the DuckDB
    connection ``con`` into the same tables of the SQLite connection ``out``, ``_COPY_BATCH``
    rows at a time; a date as the SQLite build stores it (ISO text), turned by DuckDB itself.
    The service's copy and the attack's replica (``pipeline.replica``) both write with it."""
    for name, columns in tables.items():
        select = ", ".join(f'CAST("{c}" AS VARCHAR)' if is_date else f'"{c}"' for c, is_date in columns)
        cursor = con.execute(f'SELECT {select} FROM main."{name}"')
        marks = ", ".join("?" * len(columns))
        while rows := cursor.fetchmany(_COPY_BATCH):
            out.executemany(f'INSERT INTO "{name}" VALUES ({marks})', rows)


def _stat(path: Path) -> tuple | None:
    """Device, inode, size and modification time of a file (None when there is none)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


class _Opened:
    """One opening of the database: what the workers connect to, and what is read once."""

    def __init__(self, source: Target, preread: query.Preread, folder: Path | None, duck: Any = None) -> None:
        self.source = source
        self.preread = preread
        self.folder = folder  # the temporary folder of a SQLite copy (None: none)
        self.duck = duck  # the DuckDB connection whose cursors the workers use (copy=False)

    def connect(self) -> Any:
        """A new connection (or DuckDB cursor) for one worker thread."""
        return self.duck.cursor() if self.duck is not None else query.open_database(self.source)

    def close(self) -> None:
        if self.duck is not None:
            self.duck.close()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


class Database:
    """The database a server reads, and the cache of answers over it.

    ``db``: a DuckDB file path or a URL (``sqlite:///FILE``, ``postgresql://USER@HOST/DB``);
    ``copy``: serve a DuckDB file from a SQLite copy (see the module). Raises ``InputError``
    for a ``--db`` of another kind and ``DatabaseError`` (from ``open_database``) when it is
    not a database this wh40k builds. A database file that is replaced while the server runs
    (a rebuild renames the new file over the old) is opened (and copied) again on the next
    request, and the cache emptied. A PostgreSQL database is not watched: restart the server
    after rebuilding it.
    """

    def __init__(self, db: str | Path | Target, cache_size: int = DEFAULT_CACHE_SIZE, copy: bool = True) -> None:
        self.target = parse_target(db)
        self.cache_size = cache_size
        self.copy = copy
        self._lock = threading.Lock()
        self._local = threading.local()
        self._cache: OrderedDict[tuple, Any] = OrderedDict()
        #: The wording of each rule an attack's steps name, by (rule key, edition): kept whatever
        #: ``cache_size`` (a few dozen rules; each lookup reads several tables).
        self.wordings: dict[tuple[str, int], Any] = {}
        self._wal = None if self.target.path is None else self.target.path.with_name(self.target.path.name + ".wal")
        self._identity = self._identity_now()
        self._opened = self._open()
        self._generation = 0

    @property
    def name(self) -> str:
        """The database as ``/api/info`` names it: the file's name, or the PostgreSQL database's."""
        if self.target.path is not None:
            return self.target.path.name
        import sqlalchemy as sa

        return sa.engine.make_url(self.target.url).database or ""

    def _identity_now(self) -> tuple:
        """What changes when the database file is replaced or written (as ``_file_identity``,
        without resolving the path again: one ``stat`` of the file and one of its log)."""
        if self.target.path is None:
            return (self.target.url,)
        return tuple(_stat(p) for p in (self.target.path, self._wal))

    def _open(self) -> _Opened:
        con = query.open_database(self.target)
        try:
            if self.target.backend != "duckdb":
                return _Opened(self.target, query.Preread(con), None)
            if not self.copy:
                duck, con = con, None
                return _Opened(self.target, query.Preread(duck), None, duck=duck)
            folder = Path(tempfile.mkdtemp(prefix="wh40k-serve-"))
            try:
                path = folder / "copy.sqlite"
                sqlite_copy(con, path)
                source = Target("sqlite", path=path)
                with closing(query.open_database(source)) as lite:
                    preread = query.Preread(lite)
            except BaseException:
                shutil.rmtree(folder, ignore_errors=True)
                raise
            return _Opened(source, preread, folder)
        finally:
            if con is not None:
                con.close()

    def _current(self) -> _Opened:
        """The opening in force: opened again when the file was replaced (the cache emptied)."""
        if self.target.path is not None:
            identity = self._identity_now()
            if identity != self._identity:
                with self._lock:
                    if identity != self._identity:
                        old, self._opened = self._opened, self._open()
                        self._identity = identity
                        self._generation += 1
                        self._cache.clear()
                        self.wordings.clear()
                        old.close()
        return self._opened

    @contextmanager
    def reading(self) -> Iterator[Any]:
        """This worker thread's connection, inside ``query.preread`` of the database."""
        opened = self._current()
        local = self._local
        if getattr(local, "generation", None) != self._generation or getattr(local, "con", None) is None:
            stale = getattr(local, "con", None)
            if stale is not None:
                stale.close()
            local.con, local.generation = opened.connect(), self._generation
        with query.preread(opened.preread):
            yield local.con

    def cached(self, key: tuple) -> Any:
        """The cached answer for ``key``, or None."""
        self._current()
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        return None

    def answer(self, key: tuple, compute: Callable[[Any], Any]) -> Any:
        """The cached answer for ``key``, or ``compute(connection)`` (kept when it succeeds)."""
        found = self.cached(key)
        if found is not None:
            return found
        with self.reading() as con:
            value = compute(con)
        if self.cache_size > 0:
            with self._lock:
                self._cache[key] = value
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return value

    def close(self) -> None:
        """Close the database (and remove its SQLite copy)."""
        self._opened.close()
