"""The DuckDB side of a load: a new database file filled table by table, in the calling process
(``DuckdbFile``) or in a second one (``ForkedDuckdbFile``, the build's).

Each table's rows come as columns (``schemas.catalog.column_values``: lists of Python values in
the table's column order), go in as one Arrow batch typed by the column specs, and get the
table's primary key right after (``duckdb_primary_key_statements``: the index built once, from
those rows; rows a table gets later go into the index one by one). The rows are committed
every ``COMMIT_EVERY_ROWS`` rows or so, and at ``finish`` with the views: each commit writes what
came since to the file (a checkpoint threshold of almost nothing, so that nothing goes through
the write-ahead log), so that little is left to write once the last table is in.

The build's second process is forked while the process is small: by ``wh40k build`` first thing
(``start_early``: it imports DuckDB and Arrow at once, while the command line's own modules load
on the other CPU), else by the build before its parse (it imports them when told its file). It
is told the file after the parse (``open``), gets the parse's link tables while the sources are
merged (``rows_ahead``), then the other tables' columns: the caller hands them over (a thread of
the caller's sends them) and goes on making the next ones.
"""

from __future__ import annotations

import os
import queue
import signal
import sys
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

from schemas.catalog import declared_tables, duckdb_create_statements, duckdb_primary_key_statements, view_statements

#: Rows inserted between two commits (each writes the rows since to the file): measured on the
#: export, some thousands keep the work after the last table to a few milliseconds without
#: adding to the whole.
COMMIT_EVERY_ROWS = 5000


@lru_cache(maxsize=None)
def _arrow_schema(name: str) -> Any:
    """The Arrow schema of table ``name``: each column typed by its SQL type."""
    import pyarrow as pa

    types = {"VARCHAR": pa.string(), "INTEGER": pa.int64(), "BOOLEAN": pa.bool_(), "DOUBLE": pa.float64(),
             "DATE": pa.date32()}
    return pa.schema([(c.name, types[c.sql_type]) for c in declared_tables()[name]])


class DuckdbFile:
    """A new DuckDB file at ``path`` with every declared table (no rows, no keys yet), in this
    process: ``rows`` for each table, then ``finish``; ``close`` in any case.

    Raises DuckDB's errors: ``IOException`` when the file cannot be written, a
    ``ConstraintException`` (or a ``TransactionException`` at a commit) when a row breaks a
    primary key (a bug in the validation)."""

    def __init__(self, path: Path) -> None:
        import duckdb

        self._con = duckdb.connect(str(path))
        self._keys = duckdb_primary_key_statements()
        self._pending = 0
        # One thread: tables of some thousands of rows gain nothing from DuckDB's parallelism
        # but its coordination (measured: the inserts a third quicker). A checkpoint threshold
        # of (almost) nothing: each COMMIT writes the tables to the file itself, instead of
        # writing every row to the write-ahead log first and again to the file at the
        # CHECKPOINT (measured: a fifth of the load).
        self._con.execute("SET threads = 1")
        self._con.execute("SET checkpoint_threshold = '1KB'")
        self._con.execute("BEGIN TRANSACTION")
        for statement in duckdb_create_statements(primary_keys=False):  # each key after its rows
            self._con.execute(statement)
        # DuckDB sets up its scan of Arrow batches on the first one (some 0.03 s): done here, on
        # a batch of nothing, so that the build's second process does it while it waits.
        self._con.register("_batch", _arrow_schema("schema_info").empty_table())
        self._con.execute("SELECT count(*) FROM _batch").fetchall()
        self._con.unregister("_batch")

    def rows(self, name: str, columns: dict[str, list]) -> None:
        """Insert the rows of table ``name`` (``columns``: its values by column, every column of
        the table, in its order); the table's primary key is added after its first rows."""
        import pyarrow as pa

        batch = pa.Table.from_pydict(columns, schema=_arrow_schema(name))
        self._con.register("_batch", batch)
        self._con.execute(f'INSERT INTO "{name}" SELECT * FROM _batch')
        self._con.unregister("_batch")
        key = self._keys.pop(name, None)
        if key is not None:
            self._con.execute(key)
        self._pending += batch.num_rows
        if self._pending >= COMMIT_EVERY_ROWS:
            self._con.execute("COMMIT")
            self._con.execute("BEGIN TRANSACTION")
            self._pending = 0

    def replace(self, name: str, columns: dict[str, list]) -> None:
        """The rows of table ``name`` are ``columns`` instead of those inserted before (``rows``)."""
        self._con.execute(f'DELETE FROM "{name}"')
        self.rows(name, columns)

    def finish(self) -> None:
        """The keys of the tables that got no rows, the views, the last commit."""
        for statement in [*self._keys.values(), *view_statements()]:
            self._con.execute(statement)
        self._keys = {}
        self._con.execute("COMMIT")
        self._con.execute("CHECKPOINT")

    def close(self) -> None:
        self._con.close()


#: The second process ``start_early`` forked, until ``start`` takes it.
_EARLY: ForkedDuckdbFile | None = None


class WriterGone(Exception):
    """The second process ended (killed) before the database was complete."""


def _prepare() -> None:
    """What a ``DuckdbFile`` needs before its file is named and keeps: DuckDB, Arrow, the tables'
    column specs and Arrow schemas (for a second process forked with nothing else to do yet)."""
    import duckdb  # noqa: F401

    for name in declared_tables():
        _arrow_schema(name)


def _serve(receiver: Any, sender: Any, caller: int, prepare: bool = False, parent_ends: tuple = ()) -> None:
    """The second process: ``_prepare`` first when ``prepare``, then take the messages of
    ``ForkedDuckdbFile`` in turn. After an error, read the messages up to ``finish`` without
    acting on them, and answer ``finish`` with the error (its module, class name and message).
    A caller that is gone (its pipe closed, or this process's parent no longer process
    ``caller``) leaves no file behind."""
    from pipeline.forked import end_with_caller

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's to handle
    target: DuckdbFile | None = None
    path: Path | None = None

    def remove_file() -> None:  # the caller is gone without finishing: nobody renames it
        if path is not None:
            for leftover in (path, path.with_name(path.name + ".wal")):
                leftover.unlink(missing_ok=True)

    end_with_caller(caller, remove_file)  # even while blocked on a message half sent
    for other in parent_ends:  # the caller's ends of the two pipes: this process's copies
        other.close()
    if prepare:
        _prepare()
    failure: tuple[str, str, str] | None = None
    try:
        while True:
            while not receiver.poll(1.0):
                if os.getppid() != caller:
                    return
            try:
                message = receiver.recv()
            except (EOFError, OSError):
                return
            kind = message[0]
            if failure is None:
                try:
                    if kind == "open":
                        path = Path(message[1])
                        target = DuckdbFile(path)
                    elif kind == "rows" and target is not None:
                        target.rows(message[1], message[2])
                    elif kind == "replace" and target is not None:
                        target.replace(message[1], message[2])
                    elif kind == "finish" and target is not None:
                        target.finish()
                        target.close()
                        target = None
                except Exception as exc:  # sent to the caller, which raises it again
                    failure = (type(exc).__module__, type(exc).__name__, str(exc))
            if kind == "finish":
                sender.send(failure if failure is not None else ("done",))
                path = None  # complete (or failed): the caller renames or removes it
                return
    finally:
        if target is not None:
            try:
                target.close()
            except Exception:  # noqa: BLE001  (a file being given up)
                pass
        remove_file()
        sender.close()


class ForkedDuckdbFile:
    """``DuckdbFile`` in a second process: ``open(path)``, ``rows`` for each table, then
    ``finish``, which waits for the file to be complete and raises the error the second process
    met (DuckDB's, rebuilt in this process), or ``WriterGone`` when it ended without answering;
    ``abort`` stops it and removes the file. ``rows`` and ``open`` return once the message is
    in the pipe: the caller goes on while the second process works. Use ``start``."""

    def __init__(self, prepare: bool = False) -> None:
        import multiprocessing  # the build's alone: readers of the database never load it

        context = multiprocessing.get_context("fork")
        self._receiver, child_sender = context.Pipe(duplex=False)
        child_receiver, self._sender = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_serve, args=(child_receiver, child_sender, os.getpid(), prepare, (self._receiver, self._sender)),
            daemon=True)
        self._process.start()
        child_receiver.close()
        child_sender.close()
        self.path: Path | None = None
        #: The second process's id.
        self.pid: int = self._process.pid  # type: ignore[assignment]
        #: The messages of ``rows`` and ``finish``, sent by a thread of this process (``_feed``):
        #: the pipe holds little, and the caller goes on while the second process reads.
        self._outbox: queue.SimpleQueue[tuple | None] = queue.SimpleQueue()
        self._feeder: threading.Thread | None = None
        self._feed_failed = False
        #: The columns of the tables sent ahead of the others (``rows_ahead``), by table.
        self.ahead: dict[str, dict[str, list]] = {}

    @classmethod
    def start(cls) -> ForkedDuckdbFile | None:
        """Fork the second process (or take the one ``start_early`` forked); None where there is
        none (``pipeline.forked.can_fork``: ``WH40K_JOBS=1``, no fork on this system, or not a safe
        one: Linux only) or the fork fails."""
        global _EARLY
        early, _EARLY = _EARLY, None
        if early is not None:
            return early
        return cls._fork()

    @classmethod
    def _fork(cls, prepare: bool = False) -> ForkedDuckdbFile | None:
        from pipeline.forked import can_fork

        if not can_fork():
            return None
        try:
            return cls(prepare)
        except OSError:
            return None

    @classmethod
    def start_early(cls) -> None:
        """Fork the second process now, for the next ``start``, and have it import DuckDB and
        Arrow at once: for a process that will build (``wh40k build``, whose own start-up, the
        command line's modules, runs meanwhile on the other CPU). ``discard_early`` stops it
        where no build takes it."""
        from pipeline.errors import InputError

        global _EARLY
        if _EARLY is None:
            try:
                _EARLY = cls._fork(prepare=True)
            except InputError:  # WH40K_JOBS misread: the build says so, as the command line does
                _EARLY = None

    @staticmethod
    def discard_early() -> None:
        """Stop the process ``start_early`` forked, if no ``start`` took it."""
        global _EARLY
        early, _EARLY = _EARLY, None
        if early is not None:
            early.abort()

    def _send(self, message: tuple) -> None:
        try:
            self._sender.send(message)
        except OSError as exc:  # BrokenPipeError: the second process is gone
            raise WriterGone() from exc

    def open(self, path: Path) -> None:
        """Start the file at ``path`` (not yet existing): the second process imports DuckDB and
        Arrow, creates it and its tables. A second process already gone is found by ``rows``."""
        self.path = path
        try:
            self._send(("open", str(path)))
        except WriterGone:
            pass

    def _feed(self) -> None:
        """The thread sending the outbox's messages in turn, up to ``finish`` (or None: stop)."""
        while (message := self._outbox.get()) is not None:
            try:
                self._sender.send(message)
            except OSError:  # the second process is gone: ``finish`` says so
                self._feed_failed = True
                return
            if message[0] == "finish":
                return

    def _post(self, message: tuple) -> None:
        if self._feeder is None:  # started by the load, after the build's last fork
            self._feeder = threading.Thread(target=self._feed, name="duckdb-file-feeder", daemon=True)
            self._feeder.start()
        self._outbox.put(message)

    def rows(self, name: str, columns: dict[str, list]) -> None:
        """``DuckdbFile.rows``, in the second process (sent by a thread: returns at once)."""
        self._post(("rows", name, columns))

    def rows_ahead(self, name: str, columns: dict[str, list]) -> None:
        """``rows``, sent before the others: the rows of table ``name`` as the load will most
        likely give them (the parse's, before the merge). The load sends the table again only
        if its rows are not these (``replace``)."""
        self.ahead[name] = columns
        self.rows(name, columns)

    def replace(self, name: str, columns: dict[str, list]) -> None:
        """``DuckdbFile.replace``, in the second process."""
        self._post(("replace", name, columns))

    def finish(self) -> None:
        """``DuckdbFile.finish``, waited for; the file is complete and closed on return."""
        self._post(("finish",))
        assert self._feeder is not None
        self._feeder.join()
        if self._feed_failed:
            raise WriterGone()
        try:
            answer = self._receiver.recv()
        except (EOFError, OSError) as exc:
            raise WriterGone() from exc
        finally:
            self._process.join(timeout=5)
        if answer[0] != "done":
            raise _rebuilt(*answer)

    def abort(self) -> None:
        """Stop the second process at once and remove the file it was writing (nothing is kept)."""
        if self._process.is_alive():
            self._process.kill()
        self._process.join(timeout=5)
        if self._feeder is not None:  # its send fails now that nobody reads, or it waits for this
            self._outbox.put(None)
            self._feeder.join(timeout=5)
        self._sender.close()
        self._receiver.close()
        if self.path is not None:
            for leftover in (self.path, self.path.with_name(self.path.name + ".wal")):
                leftover.unlink(missing_ok=True)


def _rebuilt(module: str, name: str, message: str) -> Exception:
    """The exception the second process met, as this process would have raised it: DuckDB's and
    Python's own by class; any other as a ``RuntimeError`` naming its class."""
    import builtins

    if module.split(".")[0] in ("duckdb", "_duckdb"):  # DuckDB's classes are _duckdb's, exported by duckdb
        import duckdb

        kind = getattr(duckdb, name, None)
    else:
        kind = getattr(builtins, name, None) if module == "builtins" else None
    if isinstance(kind, type) and issubclass(kind, Exception):
        try:
            return kind(message)
        except TypeError:  # a constructor of another shape
            pass
    return RuntimeError(f"{module}.{name}: {message}")
