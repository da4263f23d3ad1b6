"""Read-only queries over the built database, shared by the CLI and the Python API.

Every function takes a connection from ``open_database`` (read-only, in DuckDB's sandbox:
``pipeline.database``) and returns plain rows (lists of dicts that also know their column
names), so callers can render them as a table, JSON or CSV.
"""

from __future__ import annotations

import re
import threading
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, NamedTuple

from pipeline.database import (  # noqa: F401  (DEFAULT_DB, open_database: re-exported)
    DEFAULT_DB, SANDBOX_HINT, database_failure, one_line, open_database, ordered_join,
)
from pipeline.errors import DatabaseError, InputError, NotFoundError
from pipeline.limits import (
    MAX_NAME_LENGTH, MAX_SQL_ADDRESS_SPACE, MAX_SQL_MEMORY, MAX_SQL_OUTPUT_BYTES, MAX_SQL_ROWS, MAX_SQL_SECONDS,
    check_name,
)
from pipeline.normalise.names import name_key
from pipeline.normalise.text import clean_line, slug

if TYPE_CHECKING:  # imported by what runs SQL text on DuckDB: an attack served by its replica needs none
    import duckdb

#: The raw folder (manifest.toml and snapshots) of ``wh40k fetch`` and ``wh40k build``.
DEFAULT_RAW = Path("raw")

#: PRAGMAs that only list or describe (``sql`` runs these; any other PRAGMA is refused).
READ_ONLY_PRAGMAS = frozenset({
    "table_info", "show", "show_tables", "show_tables_expanded", "show_databases", "database_list",
    "database_size", "storage_info", "metadata_info", "version", "platform", "user_agent", "functions",
    "collations",
})

#: What ``sql`` runs, for the refusal message.
ALLOWED_SQL = ("SELECT, WITH, FROM, VALUES, SHOW, DESCRIBE, SUMMARIZE, EXPLAIN of a query, "
               "PRAGMA table_info and the other PRAGMAs that list")


class Rows(list[dict[str, Any]]):
    """Rows of a query, as dicts by column name, with the query's column names (also when empty).

    >>> rows = Rows([{"a": 1, "b": 2}], columns=["a", "b"])
    >>> rows == [{"a": 1, "b": 2}], rows.columns, Rows(columns=["a"]).columns
    (True, ['a', 'b'], ['a'])
    """

    def __init__(self, rows: Iterable[dict[str, Any]] = (), columns: Iterable[str] = ()) -> None:
        super().__init__(rows)
        self.columns = list(columns)
        self.notes: list[str] = []  # what the caller should tell on stderr (a cut output, renamed columns)


def _rows(cursor: duckdb.DuckDBPyConnection) -> Rows:
    names = [d[0] for d in cursor.description or []]
    return Rows((dict(zip(names, row)) for row in cursor.fetchall()), columns=names)


class _Word(NamedTuple):
    offset: int
    text: str
    is_keyword: bool


def _words(text: str) -> list[_Word]:
    """The tokens of SQL text outside comments, with their offsets.

    >>> [(w.offset, w.text) for w in _words("/* x */ EXPLAIN -- y\\n ANALYZE COPY (SELECT 1) TO 'f'")[:4]]
    [(8, 'EXPLAIN'), (22, 'ANALYZE'), (30, 'COPY'), (35, '(')]
    """
    import duckdb

    tokens = duckdb.tokenize(text)
    ends = [offset for offset, _ in tokens[1:]] + [len(text)]
    return [_Word(offset, text[offset:end].strip(), kind == duckdb.token_type.keyword)
            for (offset, kind), end in zip(tokens, ends) if kind != duckdb.token_type.comment]


def _label(words: list[_Word]) -> str:
    """A statement's leading keywords (up to three), upper-cased, to name it in a message.

    >>> _label(_words("import database 'x'")), _label(_words("create temp table t (a int)"))
    ('IMPORT DATABASE', 'CREATE TEMP TABLE')
    >>> _label(_words("COPY datasheets TO 'x.csv'")), _label(_words("update extensions"))
    ('COPY', 'UPDATE EXTENSIONS')
    """
    label = []
    for word in words[:3]:
        if not word.is_keyword:
            break
        label.append(word.text.upper())
    return " ".join(label) or (words[0].text.upper() if words else "?")


def _statement_kind(st: duckdb.Statement) -> str:
    """DuckDB's type of a parsed statement (``SELECT``, ``COPY``, ...; ``UNKNOWN`` for a type this
    DuckDB's Python API cannot name, as ``UPDATE EXTENSIONS``)."""
    try:
        return str(st.type).rsplit(".", 1)[-1]
    except ValueError:
        return "UNKNOWN"


def _explained(con: duckdb.DuckDBPyConnection, text: str, words: list[_Word]) -> bool:
    """Whether an EXPLAIN statement explains a query (``EXPLAIN [ANALYZE] [(options)] SELECT
    ...``): EXPLAIN ANALYZE runs the statement it explains."""
    rest = words[1:]
    if rest and rest[0].text.upper() == "ANALYZE":
        rest = rest[1:]
    candidates = [rest]
    if rest and rest[0].text == "(":  # options, as in EXPLAIN (FORMAT json) SELECT ...
        depth = 0
        for i, word in enumerate(rest):
            depth += word.text.count("(") - word.text.count(")")
            if depth == 0:
                candidates.append(rest[i + 1:])
                break
    import duckdb

    for candidate in candidates:
        if not candidate:
            continue
        try:
            inner = con.extract_statements(text[candidate[0].offset:])
        except (duckdb.Error, ValueError):
            continue
        if len(inner) == 1 and _statement_kind(inner[0]) == "SELECT":
            return True
    return False


#: DuckDB's table functions that read files. The sandbox (``enable_external_access`` off) refuses
#: every path but the database's own file and its write-ahead log, which DuckDB keeps reachable
#: (its ``allowed_paths``): ``read_blob('wh40k.duckdb')`` would read the whole file into one value.
FILE_READERS = frozenset({
    "read_blob", "read_text", "read_csv", "read_csv_auto", "read_single_csv_file", "sniff_csv", "read_json",
    "read_json_auto", "read_json_objects", "read_json_objects_auto", "read_ndjson", "read_ndjson_auto",
    "read_ndjson_objects", "read_single_json_file", "read_parquet", "parquet_scan", "read_single_parquet_file",
    "parquet_metadata", "parquet_file_metadata", "parquet_kv_metadata", "parquet_schema", "parquet_full_metadata",
    "parquet_page_index", "parquet_bloom_probe", "read_duckdb", "glob",
})


def _file_reader(words: list[_Word]) -> str | None:
    """The first of ``FILE_READERS`` called in a statement's tokens (quoted or not), None if none.

    >>> _file_reader(_words('SELECT * FROM "READ_BLOB"(1)')), _file_reader(_words("SELECT 'read_blob('"))
    ('read_blob', None)
    """
    for word, after in zip(words, words[1:]):
        name = word.text.strip('"').lower()
        if name in FILE_READERS and after.text.startswith("("):
            return name
    return None


def refusal(con: duckdb.DuckDBPyConnection, number: int, st: duckdb.Statement) -> str | None:
    """Why ``sql`` refuses a parsed statement (None when it runs it): only queries run (a
    SELECT, an EXPLAIN of a query, a PRAGMA of ``READ_ONLY_PRAGMAS``).

    This is the second layer: the sandbox of ``open_database`` refuses whatever would reach
    outside the database, whatever the statement; this names the statement and what runs.
    """
    words = _words(st.query)
    kind = _statement_kind(st)
    first = words[0].text.upper() if words else ""
    reader = _file_reader(words)
    if reader:
        return (f"statement {number} ({_label(words)}) is refused: {reader} reads files (the database's own file "
                f"included); the database is read-only here and `sql` runs queries only ({ALLOWED_SQL})")
    if kind == "SELECT":
        return None
    if kind == "EXPLAIN" and first == "EXPLAIN" and _explained(con, st.query, words):
        return None
    if kind == "PRAGMA" and first == "PRAGMA" and len(words) > 1 and words[1].text.lower() in READ_ONLY_PRAGMAS:
        return None
    label = _label(words)
    if kind == "EXPLAIN":
        why = "EXPLAIN runs over a query only"
    elif kind == "PRAGMA" and first == "PRAGMA":
        label = f"PRAGMA {words[1].text}" if len(words) > 1 else label
        why = "that PRAGMA changes a setting or reaches outside the database"
    else:
        why = "it is not a query"
    return (f"statement {number} ({label}) is refused: {why}; the database is read-only here and `sql` "
            f"runs queries only ({ALLOWED_SQL})")


def run_sql(con: duckdb.DuckDBPyConnection, statement: str) -> Rows:
    """Run one or more read-only SQL statements; return the last one's rows.

    Raises ``DatabaseError`` for a statement that is not a query (INSERT, CREATE, COPY, ATTACH,
    SET, INSTALL, a PRAGMA that is not in ``READ_ONLY_PRAGMAS``, EXPLAIN ANALYZE of anything but a
    query ...), naming it, before any statement runs; and for a statement DuckDB rejects, with
    DuckDB's message on one line and, for an unknown table or column, close names and how to
    list them, or, for what the sandbox refuses (a file, a URL, an extension), why; and for a
    query that runs past ``MAX_SQL_SECONDS`` (it is stopped) or gives more than ``MAX_SQL_ROWS``.
    """
    import duckdb

    if not isinstance(con, duckdb.DuckDBPyConnection):  # SQLite or PostgreSQL: pipeline.sql_connection
        names, fetched = con.run_query(statement)
        if len(fetched) > MAX_SQL_ROWS:
            raise DatabaseError(f"the query gives more than {MAX_SQL_ROWS:,} rows (the limit of one sql call); "
                                "narrow it or add a LIMIT")
        return sql_rows(names, fetched)
    try:
        statements = con.extract_statements(statement)
    except duckdb.Error as exc:
        raise DatabaseError(f"SQL does not parse: {one_line(exc)}") from None
    if not statements:
        raise DatabaseError("no SQL statement given; example: wh40k sql \"SELECT name FROM datasheets\"")
    for i, st in enumerate(statements, start=1):
        refused = refusal(con, i, st)
        if refused:
            raise DatabaseError(refused)
    timer = threading.Timer(MAX_SQL_SECONDS, con.interrupt)
    timer.daemon = True
    timer.start()
    try:
        return _run_statements(con, statements)
    except duckdb.InterruptException:
        if timer.is_alive():
            raise KeyboardInterrupt from None  # the user's Ctrl-C, not the time limit
        raise DatabaseError(f"the query ran past {MAX_SQL_SECONDS} s (the limit of one sql call) and was "
                            "stopped; narrow it or add a LIMIT") from None
    except MemoryError:  # Python's side of a statement past ``address_space_limit``
        raise DatabaseError(f"SQL failed: out of memory; the query needs more than the {MAX_SQL_MEMORY} one sql "
                            "call may use: narrow it or add a LIMIT") from None
    except duckdb.Error as exc:
        damaged = not isinstance(exc, duckdb.PermissionException) and database_failure(exc)
        if damaged:
            raise damaged from None
        message = _without_settings_advice(one_line(exc))
        if _IN_EXTENSION.search(message):  # DuckDB's advice (INSTALL, SET autoinstall) cannot apply here
            message = message.split(" Please try installing", 1)[0].rstrip(".")
        raise DatabaseError(f"SQL failed: {message}{_sql_hint(con, exc)}") from None
    finally:
        timer.cancel()
        timer.join()  # gone before the caller goes on (a live timer thread at exit aborted the process)


def _run_statements(con: duckdb.DuckDBPyConnection, statements: list) -> Rows:
    """The work of ``run_sql``: every statement run, the last one's rows fetched."""
    cursor = None
    for st in statements:
        # the statement runs (and its result is made) under the limit; the rows are fetched after
        # it: DuckDB aborts the process when making Python objects fails ("Buffer::Buffer(): out
        # of memory (unrecoverable error)"), so that part must not meet the limit
        with address_space_limit(MAX_SQL_ADDRESS_SPACE):
            cursor = con.execute(st.query)
    if cursor is None:
        return Rows()
    names = [d[0] for d in cursor.description or []]
    fetched = cursor.fetchmany(MAX_SQL_ROWS + 1)
    if len(fetched) > MAX_SQL_ROWS:
        raise DatabaseError(f"the query gives more than {MAX_SQL_ROWS:,} rows (the limit of one sql call); "
                            "narrow it or add a LIMIT")
    return sql_rows(names, fetched)


_ADDRESS_SPACE_LOCK = threading.Lock()
_address_space_users = 0
_address_space_before: tuple[int, int] | None = None


@contextmanager
def address_space_limit(extra_bytes: int) -> Iterator[None]:
    """While the block runs, the process may map at most ``extra_bytes`` more than it has mapped
    when the block starts (``RLIMIT_AS``, soft limit; the limit the process had is restored at the
    end): an allocation past it fails (DuckDB: "Out of Memory", Python: ``MemoryError``) instead of
    taking the machine's memory. Blocks in several threads at once share the limit of the first
    (the last to leave restores it); a lower limit the process already has is kept. Does nothing
    where ``/proc/self/statm`` or ``RLIMIT_AS`` is not there (not Linux)."""
    global _address_space_users, _address_space_before
    import resource

    with _ADDRESS_SPACE_LOCK:
        if _address_space_users == 0:
            try:
                with open("/proc/self/statm") as statm:
                    mapped = int(statm.read().split()[0]) * resource.getpagesize()
                before = resource.getrlimit(resource.RLIMIT_AS)
            except (OSError, ValueError, AttributeError):
                before = None
            if before is not None:
                soft, hard = before
                limit = mapped + extra_bytes
                for bound in (soft, hard):
                    if bound != resource.RLIM_INFINITY:
                        limit = min(limit, bound)
                resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
            _address_space_before = before
        _address_space_users += 1
    try:
        yield
    finally:
        with _ADDRESS_SPACE_LOCK:
            _address_space_users -= 1
            if _address_space_users == 0 and _address_space_before is not None:
                resource.setrlimit(resource.RLIMIT_AS, _address_space_before)
                _address_space_before = None


def unique_columns(names: list[str]) -> list[str]:
    """Column names made unique: a repeated name gets ``_2``, ``_3`` ... (a name that is taken
    already skipped).

    >>> unique_columns(["a", "a", "b", "a", "a_4"]), unique_columns(["a", "a", "a_2"])
    (['a', 'a_2', 'b', 'a_3', 'a_4'], ['a', 'a_3', 'a_2'])
    """
    taken = set(names)
    seen: set[str] = set()
    out = []
    for name in names:
        new, n = name, 1
        while new in seen or (new != name and new in taken):
            n += 1
            new = f"{name}_{n}"
        seen.add(new)
        out.append(new)
    return out


def value_size(value: Any) -> int:
    """About how many bytes ``value`` takes to print: text by its characters, a blob at 4 per
    byte (``\\xHH``), a list or dict by its items, anything else 20.

    >>> value_size("abc"), value_size(b"ab"), value_size([1, "xy"]), value_size(None)
    (3, 8, 22, 20)
    """
    if isinstance(value, str):
        return len(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return 4 * len(value)
    if isinstance(value, dict):
        return sum(value_size(k) + value_size(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return sum(value_size(v) for v in value)
    return 20


def sql_rows(names: list[str], fetched: list[tuple], limit: int | None = None) -> Rows:
    """The rows of a ``sql`` query: repeated column names made unique (``unique_columns``), and
    the rows cut after ``limit`` bytes of values (``MAX_SQL_OUTPUT_BYTES``, ``value_size``);
    ``notes`` says what was renamed or cut. Raises ``DatabaseError`` when the first row alone is
    over the limit."""
    limit = MAX_SQL_OUTPUT_BYTES if limit is None else limit
    columns = unique_columns(names)
    notes = []
    if columns != names:
        renamed = [f"{n!r} as {c!r}" for n, c in zip(names, columns) if n != c]
        notes.append("columns of the same name renamed: " + ", ".join(renamed) + " (give each column its own "
                     "name with AS)")
    total, kept = 0, 0
    for row in fetched:
        total += sum(value_size(v) for v in row)
        if total > limit:
            break
        kept += 1
    if kept == 0 and fetched:
        raise DatabaseError(f"the first row of the query has more than {limit:,} bytes (the limit of one sql call's "
                            "output); select a part of the long values, e.g. substr(x, 1, 1000) or length(x)")
    if kept < len(fetched):
        notes.append(f"output cut: the first {kept:,} of {len(fetched):,} rows shown, at most {limit:,} bytes in "
                     "one sql call's output; narrow the query or add a LIMIT")
    rows = Rows((dict(zip(columns, row)) for row in fetched[:kept]), columns=columns)
    rows.notes = notes
    return rows


def _without_settings_advice(message: str) -> str:
    """DuckDB's message without its advice to change a setting (``SET ...``), which ``sql``
    refuses: the limit is named instead.

    >>> _without_settings_advice("Out of Memory Error: could not allocate (1.0 GiB used). Database is launched ...")
    'Out of Memory Error: could not allocate (1.0 GiB used); the query needs more than the 1.0 GiB one sql call may use: narrow it or add a LIMIT'
    """
    if message.startswith("Out of Memory Error"):
        head = message.split(". Database is launched", 1)[0].split(" Possible solutions", 1)[0].rstrip(".")
        return (f"{head}; the query needs more than the {MAX_SQL_MEMORY} one sql call may use: narrow it or add "
                "a LIMIT")
    if "max_expression_depth" in message:
        head = re.split(r"[.;,]? *(?:Use|use|Increase|increase|set|SET) [^.]*max_expression_depth", message)[0]
        return head.rstrip(" .;,") + "; the query nests too deeply: write it with fewer nested expressions"
    return message


_IN_EXTENSION = re.compile(r"is not in the catalog, but it exists in the \w+ extension")
_MISSING_TABLE = re.compile(r'Table with name "?([^"\s]+?)"? does not exist')


def _sql_hint(con: duckdb.DuckDBPyConnection, exc: duckdb.Error) -> str:
    """Close table names for an unknown table (when DuckDB offers none) and where to list names;
    for what the sandbox refuses, why."""
    import duckdb

    message = str(exc)
    if isinstance(exc, duckdb.PermissionException) or _IN_EXTENSION.search(message):
        return f"; {SANDBOX_HINT}"
    missing = _MISSING_TABLE.search(message)
    if isinstance(exc, duckdb.CatalogException) and missing:
        hint = ""
        if "Did you mean" not in message:
            tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
            close = _suggest(missing.group(1).rsplit(".", 1)[-1], tables)
            hint = f" Did you mean: {close}?" if close else ""
        return hint + "; list the tables with `wh40k sql \"SHOW TABLES\"`"
    if isinstance(exc, duckdb.BinderException) and "column" in message:
        return "; list a table's columns with `wh40k sql \"DESCRIBE table_name\"`"
    return ""


def _close(name: str, candidates: list[str], n: int = 5) -> list[str]:
    """Up to ``n`` candidates close to ``name`` (ignoring case), else those containing it, else
    those with a word close to it.

    >>> _close("sororitas", ["adepta-sororitas", "Adepta Sororitas", "orks"])
    ['adepta-sororitas', 'Adepta Sororitas']
    >>> _close("flamr", ["Ministorum flamer", "Boltgun"])
    ['Ministorum flamer']

    A name longer than ``MAX_NAME_LENGTH`` has no close names (difflib's work grows with the
    product of the lengths): ``[]``.
    """
    if len(name) > MAX_NAME_LENGTH:
        return []
    import difflib  # for a miss alone

    lowered = list(dict.fromkeys(c.lower() for c in candidates))
    close = difflib.get_close_matches(name.lower(), lowered, n=n, cutoff=0.5)
    if not close:
        close = [c for c in lowered if name.lower() in c][:n]
    if not close:
        close = [c for c in lowered
                 if difflib.get_close_matches(name.lower(), re.split(r"[\s-]+", c), n=1, cutoff=0.75)][:n]
    originals: dict[str, list[str]] = {}
    for c in candidates:
        originals.setdefault(c.lower(), []).append(c)
    return list(dict.fromkeys(o for c in close for o in originals[c]))


def like_literal(text: str | None) -> str | None:
    r"""``text`` for a LIKE pattern written with ``ESCAPE '\'``: its ``%``, ``_`` and ``\``
    match themselves, not any characters (a name filter is a part of the name, never a pattern).

    >>> like_literal("50%_a\\b"), like_literal(None)
    ('50\\%\\_a\\\\b', None)
    """
    if text is None:
        return None
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _check_names(**filters: str | None) -> None:
    """``InputError`` for a filter (``--name``, ``--faction``) over ``MAX_NAME_LENGTH`` characters."""
    for option, value in filters.items():
        if value is not None:
            check_name(value, f"--{option} filter")


def _suggest(name: str, candidates: list[str]) -> str:
    """The close candidates as one comma-separated string ("" when none)."""
    return ", ".join(dict.fromkeys(c for c in _close(name, candidates)))


def list_units(con: duckdb.DuckDBPyConnection, name: str | None = None, faction: str | None = None,
               edition: int | None = None) -> Rows:
    """Datasheets with their faction, model count and source, ordered by name.

    ``name`` matches part of the unit name, ignoring case; ``faction`` the faction id or name;
    ``edition`` the datasheet's edition (None: every edition).
    Nothing matching gives empty rows (not an error); ``units_filter_note`` says why.
    Raises ``InputError`` for a filter over ``MAX_NAME_LENGTH`` characters.
    """
    _check_names(name=name, faction=faction)
    sql = """
        SELECT d.name, d.datasheet_id, d.faction_id, d.edition, d.game_mode,
               d.starting_strength, d.source_id
        FROM datasheets d
        WHERE (? IS NULL OR lower(d.name) LIKE '%' || lower(?) || '%' ESCAPE '\\')
          AND (? IS NULL OR d.faction_id = ? OR lower(d.faction_id) = lower(?))
          AND (? IS NULL OR d.edition = ?)
        ORDER BY d.name, d.datasheet_id
    """
    return _rows(con.execute(sql, [name, like_literal(name), faction, faction, slug(faction) if faction else None,
                                   edition, edition]))


def _other_editions_note(counts: dict[int, int], edition: int, what: str) -> str:
    """The other editions that have matches, for a filter note ("" when none).

    >>> _other_editions_note({10: 3, 11: 0}, 11, "unit")
    '; edition 10 has 3 matching units (--edition 10)'
    """
    others = [f"edition {e} has {n} matching {what}{'' if n == 1 else 's'} (--edition {e})"
              for e, n in sorted(counts.items()) if e != edition and n]
    return "; " + "; ".join(others) if others else ""


def units_filter_note(con: duckdb.DuckDBPyConnection, name: str | None = None, faction: str | None = None,
                      edition: int | None = None) -> str:
    """Why ``list_units`` found nothing for these filters, with close faction ids and unit names
    and the other editions that have matches (one line, for stderr)."""
    if edition is not None and (name or faction):
        counts = {e: len(list_units(con, name=name, faction=faction, edition=e)) for e in known_editions(con)}
        if any(counts.values()):
            return f"no unit of edition {edition} matches" + _other_editions_note(counts, edition, "unit")
    if edition is not None and not list_units(con, edition=edition):
        return f"no unit of edition {edition} in this database" + _other_editions_note(
            {e: len(list_units(con, edition=e)) for e in known_editions(con)}, edition, "unit")
    why = []
    if faction and not list_units(con, faction=faction):
        factions = con.execute("SELECT faction_id, name FROM factions ORDER BY faction_id").fetchall()
        by_text = {text: fid for fid, fname in factions for text in (fid, fname)}
        close = list(dict.fromkeys(by_text[t] for t in _close(faction, list(by_text))))
        names = dict(factions)
        why.append(f"no faction {faction!r}; " + (
            "did you mean: " + ", ".join(f"{fid} ({names[fid]})" for fid in close) + "?" if close
            else "faction ids: " + ", ".join(fid for fid, _ in factions)))
    if name and not list_units(con, name=name):
        close = _suggest(name, [r[0] for r in con.execute("SELECT DISTINCT name FROM datasheets").fetchall()])
        why.append(f"no unit name contains {name!r}" + (f"; did you mean: {close}?" if close else ""))
    if not why:
        why.append(f"no unit of faction {faction!r} has {name!r} in its name")
    return "no unit matches: " + "; ".join(why)


class DatasheetIndex:
    """The datasheets of a database by datasheet id and by name key (``name_key``): what
    ``find_datasheet`` looks a name up in. ``read(con)`` reads every row once (a server reads them
    once per database, ``preread``); ``narrow(con)`` reads the id and name of each datasheet
    (one narrow query) and, per lookup, the rows of its matches alone: what a command that looks
    up a name or two uses (reading every column of every datasheet took most of the first lookup,
    about 50 ms over the full database)."""

    def __init__(self, names: dict[str, str], rows_of: Callable[[list[str]], Rows]) -> None:
        #: name key -> the ids of the datasheets whose name reads so
        self.by_key: dict[str, list[str]] = {}
        for datasheet_id, text in names.items():
            self.by_key.setdefault(name_key(text), []).append(datasheet_id)
        #: Every datasheet name once, sorted (for the close names of a miss).
        self.names = sorted(set(names.values()))
        self._ids, self._rows_of = names, rows_of

    @classmethod
    def of_rows(cls, rows: Rows) -> "DatasheetIndex":
        """The index of datasheet rows (dicts with ``datasheet_id`` and ``name``) held in memory."""
        by_id = {r["datasheet_id"]: r for r in rows}
        return cls({i: r["name"] for i, r in by_id.items()}, lambda ids: [by_id[i] for i in ids])

    @classmethod
    def read(cls, con: duckdb.DuckDBPyConnection) -> "DatasheetIndex":
        """The index of the datasheets of ``con``'s database, every row read now."""
        return cls.of_rows(_rows(con.execute("SELECT * FROM datasheets")))

    @classmethod
    def narrow(cls, con: duckdb.DuckDBPyConnection) -> "DatasheetIndex":
        """The index of the datasheets of ``con``'s database, the rows of each lookup's matches
        read when it is made."""
        def rows_of(ids: list[str]) -> Rows:
            marks = ", ".join("?" for _ in ids)
            by_id = {r["datasheet_id"]: r for r in _rows(con.execute(
                f"SELECT * FROM datasheets WHERE datasheet_id IN ({marks})", ids))}
            return [by_id[i] for i in ids]

        return cls(dict(con.execute("SELECT datasheet_id, name FROM datasheets").fetchall()), rows_of)

    def named(self, name: str) -> list[dict[str, Any]]:
        """Copies of the datasheets whose id is ``name`` or whose name reads as ``name``, ordered
        by datasheet id.

        >>> index = DatasheetIndex.of_rows([{"datasheet_id": "11e/x/canoness", "name": "CANONESS"},
        ...                                 {"datasheet_id": "10e/x/canoness", "name": "Canoness"}])
        >>> [r["datasheet_id"] for r in index.named("canoness")], index.named("11e/x/canoness")[0]["name"]
        (['10e/x/canoness', '11e/x/canoness'], 'CANONESS')
        """
        ids = sorted(set(self._ids_of_key(name_key(clean_line(name)))) | ({name} if self._is_id(name) else set()))
        return [dict(r) for r in self._rows_of(ids)] if ids else []

    def _ids_of_key(self, key: str) -> list[str]:
        return self.by_key.get(key, [])

    def _is_id(self, text: str) -> bool:
        return text in self._ids


class KeyedDatasheetIndex(DatasheetIndex):
    """A ``DatasheetIndex`` over a connection that keeps the name key of each datasheet in a
    table (``keys``: ``name_key``, ``datasheet_id``; the attack's replica, ``pipeline.replica``):
    a lookup reads the ids of one key and their rows, and ``names`` (the close names of a miss)
    is read when first asked for. It finds what ``DatasheetIndex.narrow`` finds, without keying
    every datasheet's name (some 25 ms of the full data)."""

    def __init__(self, con: Any, keys: str) -> None:
        self._con, self._keys = con, keys
        self._names: list[str] | None = None

    @property
    def names(self) -> list[str]:  # type: ignore[override]
        """Every datasheet name once, sorted (for the close names of a miss)."""
        if self._names is None:
            self._names = sorted({n for (n,) in self._con.execute("SELECT DISTINCT name FROM datasheets").fetchall()})
        return self._names

    def _ids_of_key(self, key: str) -> list[str]:
        return [i for (i,) in self._con.execute(
            f"SELECT datasheet_id FROM {self._keys} WHERE name_key = ? ORDER BY datasheet_id", [key]).fetchall()]

    def _is_id(self, text: str) -> bool:
        return bool(self._con.execute("SELECT 1 FROM datasheets WHERE datasheet_id = ?", [text]).fetchall())

    def _rows_of(self, ids: list[str]) -> Rows:
        marks = ", ".join("?" for _ in ids)
        by_id = {r["datasheet_id"]: r for r in _rows(self._con.execute(
            f"SELECT * FROM datasheets WHERE datasheet_id IN ({marks})", ids))}
        return [by_id[i] for i in ids]


class Preread:
    """What a long-running reader (``wh40k serve``) reads once per database instead of once
    per call: the datasheets by name (``DatasheetIndex``), the editions, and the fetch hints
    of each edition (which read the raw folder's manifest). Used inside ``preread(...)``."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.datasheets = DatasheetIndex.read(con)
        self.editions = _known_editions(con)
        self.latest = _latest_edition(con)
        self.fetch_hints: dict[tuple[int, Path], str] = {}


_PREREAD: "ContextVar[Preread | None]" = ContextVar("preread", default=None)


@contextmanager
def preread(read: Preread) -> Iterator[None]:
    """Within this block, the functions of this module read the datasheet names, the editions
    and the fetch hints from ``read`` (made over the same database) instead of the database."""
    token = _PREREAD.set(read)
    try:
        yield
    finally:
        _PREREAD.reset(token)


def datasheet_index(con: duckdb.DuckDBPyConnection) -> DatasheetIndex:
    """The datasheets by name: the preread one (``preread``), the one ``con`` gives when it
    keeps the name keys (its ``datasheet_index()``: the attack's replica), or the narrow index
    of ``con``."""
    read = _PREREAD.get()
    if read is not None:
        return read.datasheets
    keyed = getattr(con, "datasheet_index", None)
    return keyed() if keyed is not None else DatasheetIndex.narrow(con)


def find_datasheet(
    con: duckdb.DuckDBPyConnection, name: str, edition: int | None = None, mode: str | None = None
) -> tuple[dict[str, Any], Rows]:
    """The datasheet for a name or datasheet id, and the other matches (if several).

    Matching compares names as a reader does (``pipeline.normalise.names.name_key``: case,
    hyphens, quotes, British and American spellings); ``edition`` and ``mode`` narrow the matches. Several
    matches are ordered by: matched play before Combat Patrol, then the newest edition.
    Raises ``NotFoundError`` with close names when no unit has the name, or with the editions
    and game modes it has when ``edition`` or ``mode`` excludes it; ``InputError`` for a name
    over ``MAX_NAME_LENGTH`` characters.
    """
    check_name(name, "unit name")
    index = datasheet_index(con)
    named = index.named(name)
    matches = [r for r in named if (edition is None or r["edition"] == edition)
               and (mode is None or (r["game_mode"] or "matched") == mode)]
    if not matches and named:
        found = sorted({(r["edition"] or 0, r["game_mode"] or "matched") for r in named})
        raise NotFoundError(
            f"no unit named {name!r}" + (f" in edition {edition}" if edition is not None else "")
            + (f" for {mode} games" if mode is not None else "") + "; it is in: "
            + ", ".join(f"edition {e} ({m})" for e, m in found) + "; change or drop --edition / --mode"
        )
    if not matches:
        hint = _suggest(name, index.names)
        raise NotFoundError(
            f"no unit named {name!r}"
            + (f"; did you mean: {hint}?" if hint else "; list units with `wh40k units`")
        )
    rank = lambda r: (r["game_mode"] is not None, -(r["edition"] or 0))  # noqa: E731
    matches.sort(key=lambda r: (*rank(r), r["datasheet_id"]))
    top = [r for r in matches if rank(r) == rank(matches[0])]
    if len({r["faction_id"] for r in top}) > 1 and not any(r["datasheet_id"] == name for r in top):
        own = own_faction_copies(con, top)
        if len({r["faction_id"] for r in own}) != 1:
            raise InputError(
                f"{name!r} names datasheets of {len({r['faction_id'] for r in top})} factions and none is another's "
                f"copy: {', '.join(r['datasheet_id'] for r in top)}; name one by its datasheet id "
                f"(e.g. {top[0]['datasheet_id']!r})")
        matches = own + [r for r in matches if r not in own]
    return matches[0], matches[1:]


def own_faction_copies(con: duckdb.DuckDBPyConnection, sheets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Of ``sheets`` (datasheet rows of one name, several factions), those that are not a copy
    another faction borrows: a sheet is borrowed when it lacks its own faction's keyword or
    carries that of another of the sheets' factions (a faction's own keyword: the faction keyword
    most of its datasheets carry; ``Plague Marines`` of Chaos Space Marines carries DEATH GUARD,
    ``Bloodletters`` of World Eaters lacks WORLD EATERS). Returns them in the order given."""
    factions = sorted({r["faction_id"] for r in sheets if r["faction_id"]})
    marks = ", ".join("?" for _ in factions)
    counted = con.execute(
        "SELECT d.faction_id, upper(k.keyword), count(*) FROM datasheets d JOIN keywords k USING (datasheet_id) "
        f"WHERE k.is_faction_keyword AND d.faction_id IN ({marks}) GROUP BY d.faction_id, upper(k.keyword) "
        "ORDER BY 3 DESC, 2",
        factions).fetchall()
    own_keyword: dict[str, str] = {}
    for faction, keyword, _ in counted:
        own_keyword.setdefault(faction, keyword)
    carried = {r["datasheet_id"]: {k.upper() for (k,) in con.execute(
        "SELECT keyword FROM keywords WHERE datasheet_id = ? AND is_faction_keyword", [r["datasheet_id"]]).fetchall()}
        for r in sheets}

    def borrowed(r: dict[str, Any]) -> bool:
        mine = carried[r["datasheet_id"]]
        return own_keyword.get(r["faction_id"]) not in mine or any(
            own_keyword.get(f) in mine for f in factions
            if f != r["faction_id"] and own_keyword.get(f) != own_keyword.get(r["faction_id"]))

    return [r for r in sheets if not borrowed(r)]


def unit_detail(con: duckdb.DuckDBPyConnection, datasheet_id: str) -> dict[str, Any]:
    """Everything about one datasheet: profiles, weapons with abilities, abilities, keywords, gaps."""
    one = lambda sql: _rows(con.execute(sql, [datasheet_id]))  # noqa: E731
    return {
        "datasheet": one("SELECT * FROM datasheets WHERE datasheet_id = ?")[0],
        "model_profiles": one("SELECT * FROM model_profiles WHERE datasheet_id = ? ORDER BY line"),
        "weapons": weapons(con, datasheet_id=datasheet_id),
        "abilities": one(
            "SELECT kind, name, parameter, text, source_id FROM abilities WHERE datasheet_id = ? "
            "ORDER BY CASE kind WHEN 'core' THEN 0 WHEN 'faction' THEN 1 WHEN 'datasheet' THEN 2 ELSE 3 END, name"
        ),
        "keywords": one(
            "SELECT keyword, is_faction_keyword FROM keywords WHERE datasheet_id = ? "
            "ORDER BY is_faction_keyword, keyword"
        ),
        "loadout": one("SELECT models, equipment FROM wargear_loadouts WHERE datasheet_id = ? ORDER BY line"),
        "data_gaps": one(
            "SELECT table_name, field, reason, source_id, locator FROM data_gaps WHERE entity_key = ?"
        ),
    }


#: The parts of ``unit_detail`` in the flat layout, as (section, key of ``unit_detail``).
UNIT_SECTIONS = (
    ("datasheet", "datasheet"), ("model_profile", "model_profiles"), ("wargear", "loadout"),
    ("weapon", "weapons"), ("ability", "abilities"), ("keyword", "keywords"), ("data_gap", "data_gaps"),
)


def flat_unit(detail: dict[str, Any]) -> Rows:
    """``unit_detail`` as one flat table (for CSV): one row per item, a first column ``section``
    (datasheet, model_profile, wargear, weapon, ability, keyword, data_gap), then the union of the
    sections' columns in that order; a column a section does not have is None in its rows.

    >>> flat = flat_unit({"datasheet": {"datasheet_id": "x", "name": "X"},
    ...                   "weapons": Rows([{"weapon_name": "Bolter", "kind": "ranged"}],
    ...                               columns=["weapon_name", "kind"]),
    ...                   "keywords": Rows(columns=["keyword"])})
    >>> flat.columns
    ['section', 'datasheet_id', 'name', 'weapon_name', 'kind', 'keyword']
    >>> [(r["section"], r["name"], r["weapon_name"]) for r in flat]
    [('datasheet', 'X', None), ('weapon', None, 'Bolter')]
    """
    columns: dict[str, None] = {"section": None}
    rows: list[dict[str, Any]] = []
    for section, key in UNIT_SECTIONS:
        part = detail.get(key)
        if part is None:
            continue
        items = [part] if isinstance(part, dict) else part
        names = list(part) if isinstance(part, dict) else getattr(part, "columns", None) or [
            c for item in items for c in item]
        columns.update(dict.fromkeys(names))
        rows.extend({"section": section, **item} for item in items)
    return Rows(({c: r.get(c) for c in columns} for r in rows), columns=list(columns))


def weapons(
    con: duckdb.DuckDBPyConnection,
    name: str | None = None,
    ability: str | None = None,
    datasheet_id: str | None = None,
    edition: int | None = None,
) -> Rows:
    """Weapon profiles with their abilities, filtered by weapon name, ability, datasheet and the
    datasheet's edition (None: every edition).

    ``ability`` matches the canonical ability name (``DEVASTATING WOUNDS``, ``ANTI``) or the
    printed form (``anti-infantry``), ignoring case. Nothing matching gives empty rows (not an
    error); ``weapons_filter_note`` says why. Raises ``InputError`` for a filter over
    ``MAX_NAME_LENGTH`` characters.
    """
    _check_names(name=name, ability=ability)
    abilities = ordered_join(con, "a.raw_text", "', '", "a.position", """
        FROM weapon_abilities a
        WHERE a.datasheet_id = w.datasheet_id AND a.weapon_name = w.weapon_name
          AND a.is_melee = w.is_melee AND a.profile_name = w.profile_name""")
    sql = f"""
        SELECT w.weapon_name, w.profile_name, d.name AS datasheet, w.datasheet_id,
               CASE WHEN w.is_melee THEN 'melee' ELSE 'ranged' END AS kind,
               CASE WHEN w.is_melee THEN 'Melee' ELSE w.range_inches || '"' END AS range,
               w.attacks_text AS "A",
               CASE WHEN w.skill IS NULL THEN 'N/A' ELSE w.skill || '+' END AS skill,
               w.strength AS "S", w.armour_penetration AS "AP", w.damage_text AS "D",
               coalesce({abilities}, '') AS abilities,
               w.source_id
        FROM weapon_profiles w JOIN datasheets d USING (datasheet_id)
        {{where}}
        ORDER BY w.is_melee, w.weapon_name, d.name, w.profile_name
    """
    # only the filters given, so that a lookup by datasheet reads by its key (no `? IS NULL OR`)
    where: list[str] = []
    params: list[Any] = []
    if datasheet_id is not None:
        where.append("w.datasheet_id = ?")
        params.append(datasheet_id)
    if edition is not None:
        where.append("d.edition = ?")
        params.append(edition)
    if name is not None:
        where.append("lower(w.weapon_name) LIKE '%' || lower(?) || '%' ESCAPE '\\'")
        params.append(like_literal(name))
    if ability:
        where.append("""EXISTS (
                SELECT 1 FROM weapon_abilities a
                WHERE a.datasheet_id = w.datasheet_id AND a.weapon_name = w.weapon_name
                  AND a.is_melee = w.is_melee AND a.profile_name = w.profile_name
                  AND (upper(a.name) = upper(?) OR upper(a.raw_text) = upper(?)
                       OR upper(a.name || '-' || coalesce(a.target_keyword, '')) = upper(?)))""")
        params.extend([clean_line(ability)] * 3)
    sql = sql.replace("{where}", "WHERE " + " AND ".join(where) if where else "")
    return _rows(con.execute(sql, params))


def weapons_filter_note(con: duckdb.DuckDBPyConnection, name: str | None = None, ability: str | None = None,
                        edition: int | None = None) -> str:
    """Why ``weapons`` found nothing for these filters, with close weapon names and abilities
    and the other editions that have matches (one line, for stderr)."""
    if edition is not None:
        counts = {e: len(weapons(con, name=name, ability=ability, edition=e)) for e in known_editions(con)}
        if any(counts.values()):
            return f"no weapon of edition {edition} matches" + _other_editions_note(counts, edition, "weapon")
    why = []
    if name and not weapons(con, name=name):
        known = [r[0] for r in con.execute("SELECT DISTINCT weapon_name FROM weapon_profiles").fetchall()]
        close = _suggest(name, known)
        why.append(f"no weapon name contains {name!r}" + (f"; did you mean: {close}?" if close else ""))
    if ability and not weapons(con, ability=ability):
        known = sorted(r[0] for r in con.execute("SELECT DISTINCT name FROM weapon_abilities").fetchall())
        close = _suggest(ability, known)
        why.append(f"no weapon has the ability {ability!r}; "
                   + (f"did you mean: {close}?" if close else f"known abilities: {', '.join(known)}"))
    if not why:
        why.append(f"no weapon whose name contains {name!r} has the ability {ability!r}")
    return "no weapon matches: " + "; ".join(why)


def known_editions(con: duckdb.DuckDBPyConnection) -> list[int]:
    """The editions of the database's sources, ascending (``[10, 11]``)."""
    read = _PREREAD.get()
    return list(read.editions) if read is not None else _known_editions(con)


def _known_editions(con: duckdb.DuckDBPyConnection) -> list[int]:
    return [r[0] for r in con.execute(
        "SELECT DISTINCT edition FROM sources WHERE edition IS NOT NULL ORDER BY edition").fetchall()]


def check_edition(con: duckdb.DuckDBPyConnection, edition: int | None, option: str = "--edition") -> None:
    """Raise ``InputError`` naming the known editions when ``edition`` is not one of them."""
    known = known_editions(con)
    if edition is not None and edition not in known:
        raise InputError(f"{option} {edition}: no such edition; the known editions are "
                         + ", ".join(str(e) for e in known))


#: The edition commands default to in a database that states none (no datasheet, no source edition).
FALLBACK_EDITION = 10


def latest_edition(con: duckdb.DuckDBPyConnection) -> int:
    """The edition every command defaults to: the latest edition of the database's datasheets
    (10 for a database whose datasheets are all of the 10th edition, even if it holds rules of
    the 11th); for a database without datasheets, the latest edition of its sources;
    ``FALLBACK_EDITION`` when none states one."""
    read = _PREREAD.get()
    return read.latest if read is not None else _latest_edition(con)


def _latest_edition(con: duckdb.DuckDBPyConnection) -> int:
    for table in ("datasheets", "sources"):
        (latest,) = con.execute(f"SELECT max(edition) FROM {table}").fetchone()
        if latest is not None:
            return int(latest)
    return FALLBACK_EDITION


def resolve_edition(con: duckdb.DuckDBPyConnection, edition: int | None, option: str = "--edition") -> int:
    """``edition`` checked against the database's editions (``check_edition``), or, when None,
    ``latest_edition``. Raises ``InputError`` for an edition the database does not have."""
    check_edition(con, edition, option)
    return latest_edition(con) if edition is None else edition


def find_datasheet_preferring(
    con: duckdb.DuckDBPyConnection, name: str, edition: int, mode: str | None = None
) -> tuple[dict[str, Any], Rows]:
    """``find_datasheet`` in ``edition`` when the name has a datasheet of that edition, else in
    any edition (the newest first): the caller sees the other edition in the sheet's
    ``edition`` and says so. Raises what ``find_datasheet`` raises when no edition has it."""
    try:
        return find_datasheet(con, name, edition=edition, mode=mode)
    except NotFoundError:
        return find_datasheet(con, name, mode=mode)


def unbuilt_fetch_sources(
    con: duckdb.DuckDBPyConnection, edition: int, raw_dir: Path = DEFAULT_RAW
) -> tuple[list[str], list[str]]:
    """The fetch-only sources of ``edition`` listed in ``raw_dir``'s manifest that are not in
    the database's ``sources`` table, as (not fetched into ``raw_dir``, fetched but not built).
    Both are empty when ``raw_dir`` has no readable manifest."""
    from pipeline.errors import ManifestError
    from pipeline.extract import is_present
    from pipeline.manifest import read_manifest

    try:
        listed = read_manifest(raw_dir)
    except (ManifestError, OSError):
        return [], []
    built = {r[0] for r in con.execute("SELECT source_id FROM sources").fetchall()}
    missing = [s for s in listed if s.fetch_only and s.edition == edition and s.source_id not in built]
    return ([s.source_id for s in missing if not is_present(raw_dir, s)],
            [s.source_id for s in missing if is_present(raw_dir, s)])


def fetch_hint(con: duckdb.DuckDBPyConnection, edition: int, raw_dir: Path = DEFAULT_RAW) -> str:
    """How to bring the fetch-only sources of ``edition`` the database lacks ("" when it has them
    all): ``wh40k fetch`` for those not in ``raw_dir``, a rebuild for those fetched (read once
    per edition and raw folder inside ``preread``)."""
    read = _PREREAD.get()
    if read is None:
        return _fetch_hint(con, edition, raw_dir)
    key = (edition, raw_dir)
    if key not in read.fetch_hints:
        read.fetch_hints[key] = _fetch_hint(con, edition, raw_dir)
    return read.fetch_hints[key]


def _fetch_hint(con: duckdb.DuckDBPyConnection, edition: int, raw_dir: Path) -> str:
    unfetched, unbuilt = unbuilt_fetch_sources(con, edition, raw_dir)
    hints = []
    if unfetched:
        hints.append(f"this database lacks the fetch-only sources of edition {edition} "
                     f"{', '.join(unfetched)}: `wh40k fetch` then `make build-db` bring them")
    if unbuilt:
        hints.append(f"{', '.join(unbuilt)} {'is' if len(unbuilt) == 1 else 'are'} fetched into {raw_dir} "
                     "but not in this database: rebuild it with `make build-db`")
    return "; ".join(hints)


def rule_keys_for(name: str) -> tuple[str, str]:
    """(canonical rule key, section or "") for a printed name, alias or section number.

    Raises ``InputError`` for a name over ``MAX_NAME_LENGTH`` characters.
    """
    from pipeline.aliases import canonical_rule_key, split_section

    check_name(name, "rule name")
    _, section = split_section(name.strip())
    try:
        return canonical_rule_key(name), section or ""
    except (NotFoundError, ValueError):
        return slug(name), section or name.strip()


def title_key(title: str) -> str:
    """A rule title as a name in any language is compared: brackets, stars and case dropped,
    spaces folded.

    >>> title_key("[TÖDLICHE TREFFER]") == title_key("tödliche  treffer")
    True
    """
    return " ".join(re.sub(r"[\[\]［］*]", " ", title).lower().split())


def rule_keys_by_title(con: duckdb.DuckDBPyConnection, name: str) -> list[tuple[str, str]]:
    """(rule key, language) of every stored wording whose title, in any language, is ``name``
    (``Tödliche Treffer`` -> ``("lethal-hits", "de")``), English first."""
    wanted = title_key(name)
    if not wanted:
        return []
    found = con.execute(
        "SELECT DISTINCT rule_key, language, title FROM rule_texts WHERE length(title) < 200").fetchall()
    hits = {(key, lang) for key, lang, title in found if title_key(title) == wanted}
    return sorted(hits, key=lambda h: (h[1] != "en", h[1], h[0]))


def rule_texts(con: duckdb.DuckDBPyConnection, name: str, edition: int | None = None) -> Rows:
    """Every stored wording of a rule, by title (in any language), rule key, alias or section number.

    The name is resolved to its canonical key through the alias table (``Hazardous test``,
    ``hazard roll`` and ``06.03`` all find ``hazard-rolls``); every text stored under that key,
    under one of its aliases or under one of its section numbers matches; a name that matches
    none is looked up among the titles of every language (``Tödliche Treffer``, the German
    Lethal Hits, finds ``lethal-hits``). With an ``edition``
    in which the rule has no text but is part of another rule (``part_of`` in the alias table:
    the 10th-edition Hazardous test is worded in Hazardous), that rule's texts.
    Each row: rule_key, title, section, edition, game_mode, effective_date, source_id, locator,
    text, language, erratum_id. Raises ``NotFoundError`` with close rule names when nothing matches.
    """
    from pipeline.aliases import part_of

    key, section = rule_keys_for(name)
    rows = _rule_rows(con, key, section, edition)
    if not rows and edition is not None and (part := part_of(name, edition)) is not None:
        return rule_texts(con, part.rule_name, edition)
    if not rows:
        for other, _ in rule_keys_by_title(con, name):
            rows = _rule_rows(con, other, "", edition)
            if rows:
                break
    if not rows:
        # a datasheet's wording that errata change is stored as "Datasheet: Ability" or
        # "Datasheet keywords", with " (faction)" after it when factions share the datasheet name
        asked = name.strip().lower()
        scoped = sorted({r[0] for r in con.execute(
            "SELECT title FROM rule_texts WHERE erratum_id IS NOT NULL AND (lower(title) LIKE '%: ' || ? "
            "ESCAPE '\\' OR lower(title) LIKE '%: ' || ? || ' (%)' ESCAPE '\\' OR lower(title) LIKE ? || ' (%)' "
            "ESCAPE '\\')", [like_literal(asked)] * 3).fetchall()})
        if len(scoped) == 1:
            return rule_texts(con, scoped[0], edition)
        if scoped:
            raise NotFoundError(
                f"{name!r} names {len(scoped)} datasheet wordings that errata change: "
                + "; ".join(scoped[:12]) + ("; ..." if len(scoped) > 12 else "")
                + f"; ask for one by its full name, e.g. {scoped[0]!r}")
    if not rows:
        titles = sorted({r[0] for r in con.execute("SELECT title FROM rule_texts WHERE language = 'en'").fetchall()})
        hint = _suggest(name, titles)
        raise NotFoundError(
            f"no rule named {name!r}" + (f" in edition {edition}" if edition else "")
            + (f"; did you mean: {hint}?" if hint else "; list rules with `wh40k sql \"SELECT title FROM rule_texts\"`")
        )
    return rows


def _rule_rows(con: duckdb.DuckDBPyConnection, key: str, section: str, edition: int | None) -> Rows:
    sql = """
        WITH names AS (
            SELECT ? AS k UNION SELECT alias_key FROM rule_aliases WHERE rule_key = ?
        )
        SELECT r.rule_key, r.title, r.section, r.edition, r.game_mode, r.effective_date,
               r.source_id, r.locator, r.text, r.language, r.erratum_id
        FROM rule_texts r
        WHERE (r.rule_key IN (SELECT k FROM names) OR r.section IN (SELECT k FROM names)
               OR r.section = ?)
          AND (? IS NULL OR r.edition = ?)
        ORDER BY r.edition, r.source_id, r.locator
    """
    return _rows(con.execute(sql, [key, key, section or None, edition, edition]))
