"""Safe with hostile input: hostile SQL statements and hostile databases are refused with one
`Error: ...` line and exit status 1, the database file unchanged, no file written anywhere (the
working folder and the home folder are temporary folders, checked before and after), no
`~/.duckdb` created, no file read.

The CLI runs in this process (``pipeline.cli.run``) so that the 100-odd statements stay fast;
a few run as a real subprocess too.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from pipeline.build import build
from pipeline.cli import run
from pipeline.database import SANDBOX_CONFIG, open_database
from pipeline.errors import DatabaseError
from pipeline.query import run_sql
from pipeline.replica import replica_path
from tests.conftest import RAW, ROOT

#: What a file in the home folder holds; no output may ever show it.
SECRET = "the-secret-in-the-home-folder"

#: Statements `wh40k sql` must refuse. ``{db}`` is the database's path, ``~`` the (temporary)
#: home folder, relative paths the (temporary) working folder.
HOSTILE_STATEMENTS = [
    # COPY in every form
    "COPY (SELECT 'x') TO 'anywhere.txt'",
    "COPY (SELECT 'x') TO 'anywhere.txt' (HEADER false)",
    "COPY datasheets TO 'datasheets.csv'",
    "COPY datasheets TO 'out.parquet' (FORMAT parquet)",
    "COPY datasheets TO 'out.json' (FORMAT json)",
    "COPY datasheets TO 'out.csv' (FORMAT csv, DELIMITER '|')",
    "COPY (SELECT * FROM sources) TO '/dev/stdout'",
    "COPY (SELECT * FROM sources) TO '/dev/stderr' (FORMAT json)",
    "COPY (SELECT 1) TO '~/written.txt'",
    "COPY datasheets FROM 'datasheets.csv'",
    "COPY datasheets FROM '/etc/passwd' (DELIMITER ':')",
    "COPY FROM DATABASE wh40k TO other",
    "EXPLAIN ANALYZE COPY (SELECT 'x') TO 'anywhere.txt' (HEADER false)",
    "EXPLAIN COPY (SELECT 1) TO 'x.txt'",
    "EXPLAIN (FORMAT json) COPY (SELECT 1) TO 'x.txt'",
    "EXPLAIN ANALYZE EXPORT DATABASE 'exported'",
    "/* a comment */ COPY (SELECT 1) TO 'c.txt'",
    "-- a comment\nCOPY (SELECT 1) TO 'c.txt'",
    "SELECT 1; COPY (SELECT 1) TO 'x.txt'",
    "SELECT 1 /* ; */; COPY (SELECT 1) TO 'x.txt'",
    "WITH a AS (SELECT 1) SELECT * FROM a; COPY (SELECT 1) TO 'x.txt'",
    "SELECT '; COPY (SELECT 1) TO ''x.txt'''; COPY (SELECT 1) TO 'x.txt'",
    "SeLeCt 1; cOpY (select 1) to 'x.txt'",
    # EXPORT / IMPORT DATABASE
    "EXPORT DATABASE 'exported'",
    "EXPORT DATABASE 'exported' (FORMAT parquet)",
    "IMPORT DATABASE 'some-folder'",
    "PRAGMA import_database('some-folder')",
    # ATTACH / DETACH / USE
    "ATTACH 'new.duckdb'",
    "ATTACH 'new.duckdb' AS n; CREATE TABLE n.t AS SELECT 1",
    "ATTACH ':memory:' AS m",
    "ATTACH '{db}' AS again (READ_ONLY)",
    "ATTACH 'lite.db' AS l (TYPE sqlite)",
    "ATTACH 'https://example.com/x.duckdb' AS r",
    "DETACH wh40k",
    "USE memory",
    "-- SELECT\nATTACH 'x.duckdb'",
    # INSTALL / LOAD / UPDATE EXTENSIONS
    "INSTALL httpfs",
    "FORCE INSTALL httpfs",
    "INSTALL h3 FROM community",
    "INSTALL './evil.duckdb_extension'",
    "LOAD httpfs",
    "LOAD './evil.duckdb_extension'",
    "LOAD sqlite_scanner",
    "UPDATE EXTENSIONS",
    "UPDATE EXTENSIONS (httpfs)",
    "SELECT 1; UPDATE EXTENSIONS",
    "/*+ hint */ INSTALL httpfs",
    # SET / RESET / PRAGMA
    "SET enable_external_access = true",
    "SET GLOBAL enable_external_access = true",
    "SET SESSION enable_external_access = true",
    "RESET enable_external_access",
    "SET lock_configuration = false",
    "SET allow_community_extensions = true",
    "SET autoinstall_known_extensions = true",
    "SET temp_directory = 'spill'",
    "SET profiling_output = 'profile.json'",
    "SET log_query_path = 'queries.log'",
    "SET home_directory = '.'",
    "SET threads = 1",
    "SET VARIABLE f = '/etc/passwd'",
    "SET VARIABLE f = '/etc/passwd'; SELECT * FROM read_text(getvariable('f'))",
    "PRAGMA enable_profiling",
    "PRAGMA enable_profiling = 'json'",
    "PRAGMA profiling_output = 'profile.json'",
    "PRAGMA profile_output = 'profile.json'",
    "PRAGMA threads = 1",
    "PRAGMA memory_limit = '1GB'",
    "PRAGMA enable_checkpoint_on_shutdown",
    "PRAGMA force_checkpoint",
    "PRAGMA disable_optimizer",
    # table functions that read files or URLs, or need an extension
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM read_text('~/secret.txt')",
    "SELECT * FROM read_blob('~/secret.txt')",
    "SELECT * FROM read_blob('{db}')",
    "SELECT content FROM read_text('{db}.wal')",
    "SELECT * FROM read_text(['/etc/passwd', '/etc/hostname'])",
    "SELECT * FROM read_text('file:///etc/passwd')",
    "SELECT * FROM read_text('/proc/self/environ')",
    "SELECT * FROM read_csv('/etc/passwd', sep = ':')",
    "SELECT * FROM read_csv_auto('/etc/passwd')",
    "SELECT * FROM read_csv('~/secret.txt')",
    "SELECT * FROM read_csv('http://example.com/x.csv')",
    "SELECT * FROM read_csv('https://example.com/x.csv')",
    "SELECT * FROM read_csv('s3://bucket/x.csv')",
    "SELECT * FROM read_csv('/dev/stdin')",
    "SELECT * FROM read_parquet('x.parquet')",
    "SELECT * FROM read_parquet('https://example.com/x.parquet')",
    "SELECT * FROM parquet_metadata('x.parquet')",
    "SELECT * FROM parquet_schema('x.parquet')",
    "SELECT * FROM read_json('x.json')",
    "SELECT * FROM read_json_auto('~/secret.txt')",
    "SELECT * FROM read_ndjson('x.json')",
    "SELECT * FROM glob('*')",
    "SELECT * FROM glob('/etc/*')",
    "SELECT * FROM glob('~/*')",
    "SELECT * FROM sniff_csv('/etc/passwd')",
    "SELECT * FROM '/etc/passwd'",
    "SELECT * FROM '~/secret.txt'",
    "FROM read_text('/etc/hostname')",
    "SELECT * FROM duckdb_extensions()",
    "SELECT * FROM sqlite_scan('lite.db', 't')",
    "SELECT * FROM read_xlsx('x.xlsx')",
    "SELECT * FROM st_read('x.shp')",
    "SELECT * FROM delta_scan('x')",
    "SELECT * FROM iceberg_scan('x')",
    "SELECT * FROM query('SELECT * FROM read_text(''/etc/passwd'')')",
    "SELECT * FROM (SELECT 1) t, read_text('/etc/passwd')",
    "WITH x AS (SELECT * FROM read_text('/etc/passwd')) SELECT * FROM x",
    "SELECT (SELECT content FROM read_text('~/secret.txt'))",
    "DESCRIBE SELECT * FROM read_text('/etc/passwd')",
    "SUMMARIZE SELECT * FROM read_csv('/etc/passwd')",
    "EXPLAIN ANALYZE SELECT * FROM read_text('/etc/passwd')",
    "SELECT getenv('HOME')",
    "SELECT * FROM con",
    "CREATE SECRET s (TYPE s3, KEY_ID 'x', SECRET 'y')",
    "CREATE PERSISTENT SECRET s (TYPE s3, KEY_ID 'x', SECRET 'y')",
    # CREATE MACRO / VIEW / TABLE / TEMP TABLE and other writes
    "CREATE MACRO m() AS 1",
    "CREATE TEMP MACRO m() AS TABLE SELECT * FROM read_text('/etc/passwd')",
    "CREATE OR REPLACE MACRO lower(x) AS 'shadowed'",
    "CREATE VIEW v AS SELECT * FROM read_text('/etc/passwd')",
    "CREATE TEMP VIEW v AS SELECT 1",
    "CREATE TABLE t AS SELECT 1",
    "CREATE TEMP TABLE t AS SELECT 1",
    "CREATE TEMPORARY TABLE t (a INTEGER)",
    "CREATE SEQUENCE s",
    "CREATE TYPE e AS ENUM ('a')",
    "CREATE SCHEMA s",
    "CREATE INDEX i ON datasheets (name)",
    "CREATE OR REPLACE TABLE datasheets AS SELECT 1 AS x",
    "INSERT INTO factions VALUES ('a', 'b', 'c', 'd')",
    "INSERT INTO factions SELECT * FROM read_csv('x.csv')",
    "UPDATE datasheets SET name = 'x'",
    "DELETE FROM datasheets",
    "TRUNCATE datasheets",
    "DROP TABLE datasheets",
    "DROP VIEW weapons",
    "ALTER TABLE datasheets ADD COLUMN x INTEGER",
    "ALTER TABLE datasheets RENAME TO d",
    "COMMENT ON TABLE datasheets IS 'x'",
    "MERGE INTO factions USING factions f ON true WHEN MATCHED THEN DELETE",
    "EXPLAIN ANALYZE CREATE TABLE t AS SELECT 1",
    "EXPLAIN ANALYZE INSERT INTO factions VALUES ('a', 'b', 'c', 'd')",
    "SELECT 1; DROP TABLE datasheets",
    "SELECT 1;/*x*/DROP TABLE datasheets",
    # CALL, CHECKPOINT, VACUUM, transactions, prepared statements
    "CALL read_text('/etc/passwd')",
    "CALL duckdb_extensions()",
    "CALL pragma_table_info('datasheets')",
    "CHECKPOINT",
    "FORCE CHECKPOINT",
    "CHECKPOINT wh40k",
    "VACUUM",
    "VACUUM ANALYZE",
    "ANALYZE",
    "BEGIN TRANSACTION",
    "BEGIN; DELETE FROM datasheets; COMMIT",
    "ROLLBACK",
    "PREPARE p AS COPY (SELECT 1) TO 'x.txt'",
    "PREPARE p AS SELECT 1; EXECUTE p",
    "EXECUTE p",
]


def _checksum(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _tree(folder: Path) -> dict[str, str]:
    """Every file and folder under ``folder``, with the checksum of each file."""
    return {p.relative_to(folder).as_posix(): (_checksum(p) if p.is_file() else "folder")
            for p in sorted(folder.rglob("*"))}


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    """The seed database, built once. A connection stays open while the module runs, so that
    DuckDB starts the database once (each command's own connection joins it, with the same
    settings; DuckDB reads the home folder anew at each use)."""
    path = tmp_path_factory.mktemp("db") / "wh40k.duckdb"
    build(RAW, path)
    kept = open_database(path)
    yield path
    kept.close()


@pytest.fixture(scope="module")
def db_sum(db) -> str:
    return _checksum(db)


@pytest.fixture
def world(tmp_path, monkeypatch) -> Path:
    """A temporary home folder (with a secret file) and working folder (with an IMPORT DATABASE
    folder and a SQLite file), both checked by ``assert_untouched``."""
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    home.mkdir()
    (home / "secret.txt").write_text(SECRET + "\n", encoding="utf-8")
    (cwd / "some-folder").mkdir(parents=True)
    (cwd / "some-folder" / "schema.sql").write_text("CREATE TABLE pwned (a INTEGER);\n", encoding="utf-8")
    (cwd / "some-folder" / "load.sql").write_text("COPY (SELECT 1) TO 'imported.txt';\n", encoding="utf-8")
    with sqlite3.connect(cwd / "lite.db") as lite:
        lite.execute("CREATE TABLE t (a)")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    return tmp_path


def wh40k(capsys, *args: str) -> tuple[int, str, str]:
    """Run the CLI in this process: (exit status, stdout, stderr)."""
    status = run(list(args))
    out = capsys.readouterr()
    return status, out.out, out.err


def assert_one_line_error(status: int, out: str, err: str) -> None:
    assert (status, out) == (1, ""), (status, out, err)
    assert err.startswith("Error: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err and SECRET not in err


def assert_untouched(world: Path, before: dict[str, str], db: Path, db_sum: str) -> None:
    """Nothing written in the working or home folder, no ~/.duckdb, the database unchanged;
    beside it only the attack's replica (``pipeline.replica``), a SQLite file this code can read."""
    assert _tree(world) == before
    assert not (world / "home" / ".duckdb").exists()
    assert _checksum(db) == db_sum
    beside = sorted(p.name for p in db.parent.iterdir())
    assert beside in ([db.name], sorted([db.name, replica_path(db).name])), beside  # no .wal, no spill files
    if len(beside) == 2:
        with sqlite3.connect(f"file:{replica_path(db)}?mode=ro", uri=True) as lite:
            assert lite.execute("SELECT count(*) FROM replica_stamp").fetchone() == (1,)


def test_there_are_more_than_a_hundred_distinct_hostile_statements():
    assert len(set(HOSTILE_STATEMENTS)) == len(HOSTILE_STATEMENTS) >= 100


@pytest.mark.parametrize("statement", HOSTILE_STATEMENTS)
def test_hostile_statement_is_refused_and_changes_nothing(db, db_sum, world, capsys, statement):
    before = _tree(world)
    status, out, err = wh40k(capsys, "sql", "--db", str(db), "--format", "json", "--", statement.format(db=db))
    assert_one_line_error(status, out, err)
    assert_untouched(world, before, db, db_sum)


#: The hostile statements DuckDB's sandbox runs when the statement filter is left out: each
#: touches nothing outside the connection (temporary objects in memory, the database attached
#: again read-only, a CHECKPOINT or VACUUM of a read-only file, which writes nothing).
HARMLESS_UNDER_THE_SANDBOX = {
    "ATTACH '{db}' AS again (READ_ONLY)", "SET VARIABLE f = '/etc/passwd'", "CREATE TEMP VIEW v AS SELECT 1",
    "CREATE TEMP TABLE t AS SELECT 1", "CREATE TEMPORARY TABLE t (a INTEGER)",
    "CALL pragma_table_info('datasheets')", "CHECKPOINT", "FORCE CHECKPOINT", "CHECKPOINT wh40k", "VACUUM",
    "VACUUM ANALYZE", "ANALYZE", "BEGIN TRANSACTION", "PREPARE p AS SELECT 1; EXECUTE p",
    # DuckDB keeps the database's own file and its write-ahead log readable (its allowed_paths):
    # the statement filter refuses the file readers by name
    "SELECT * FROM read_blob('{db}')", "SELECT content FROM read_text('{db}.wal')",
}


def test_the_sandbox_alone_refuses_every_hostile_statement_that_could_reach_outside(db, tmp_path_factory, world):
    """Layer one without layer two: each statement run straight on a connection with
    SANDBOX_CONFIG (no statement filter). DuckDB refuses all but HARMLESS_UNDER_THE_SANDBOX, and
    nothing is written or read outside the database, whatever ran."""
    path = tmp_path_factory.mktemp("layer-one") / "wh40k.duckdb"
    shutil.copy(db, path)  # a file of its own: ATTACH and DETACH act on DuckDB's instance of the file
    before, db_sum = _tree(world), _checksum(path)
    kept = duckdb.connect(str(path), read_only=True, config=SANDBOX_CONFIG)
    ran = set()
    for statement in HOSTILE_STATEMENTS:
        con = duckdb.connect(str(path), read_only=True, config=SANDBOX_CONFIG)
        try:
            for part in con.extract_statements(statement.format(db=path)):
                result = con.execute(part.query).fetchall()
                assert SECRET not in repr(result)
            ran.add(statement)
        except (duckdb.Error, ValueError) as exc:
            assert SECRET not in str(exc)
        finally:
            con.close()
    kept.close()
    assert ran == HARMLESS_UNDER_THE_SANDBOX
    assert_untouched(world, before, path, db_sum)


@pytest.mark.parametrize("statement, error", [
    ("EXPLAIN ANALYZE COPY (SELECT 'x') TO 'anywhere.txt' (HEADER false)",
     "Error: statement 1 (EXPLAIN ANALYZE COPY) is refused: EXPLAIN runs over a query only; "),
    ("IMPORT DATABASE 'some-folder'", "Error: statement 1 (IMPORT DATABASE) is refused: it is not a query; "),
    ("SELECT 1; UPDATE EXTENSIONS", "Error: statement 2 (UPDATE EXTENSIONS) is refused: it is not a query; "),
    ("PRAGMA enable_profiling", "Error: statement 1 (PRAGMA enable_profiling) is refused: that PRAGMA changes a "
                                "setting or reaches outside the database; "),
    ("/* hidden */ CREATE TEMP TABLE t AS SELECT 1", "Error: statement 1 (CREATE TEMP TABLE) is refused: "),
    ("SELECT * FROM read_text('~/secret.txt')",
     "Error: statement 1 (SELECT) is refused: read_text reads files (the database's own file included); "),
    ("SELECT * FROM \"READ_BLOB\"('wh40k.duckdb')",
     "Error: statement 1 (SELECT) is refused: read_blob reads files (the database's own file included); "),
    ("SELECT * FROM 'http://example.com/x.csv'",
     'Error: SQL failed: Permission Error: Cannot access file "http://example.com/x.csv" - file system '
     "operations are disabled by configuration; wh40k reads the database alone: "),
])
def test_refusals_name_the_statement_and_what_runs(db, world, capsys, statement, error):
    status, out, err = wh40k(capsys, "sql", "--db", str(db), statement)
    assert_one_line_error(status, out, err)
    assert err.startswith(error)
    if "is refused" in error:
        assert err.rstrip("\n").endswith(
            "the database is read-only here and `sql` runs queries only (SELECT, WITH, FROM, VALUES, SHOW, "
            "DESCRIBE, SUMMARIZE, EXPLAIN of a query, PRAGMA table_info and the other PRAGMAs that list)")


@pytest.mark.parametrize("statement, first_row", [
    ("SELECT count(*) AS n FROM datasheets", {"n": 4}),
    ("SHOW TABLES", {"name": "abilities"}),
    ("DESCRIBE sources", {"column_name": "title", "column_type": "VARCHAR", "null": "NO", "key": None,
                          "default": None, "extra": None}),
    ("PRAGMA table_info('factions')", {"cid": 0, "name": "faction_id", "type": "VARCHAR", "notnull": True,
                                       "dflt_value": None, "pk": True}),
    ("/* comment */ FROM factions SELECT faction_id", {"faction_id": "adepta-sororitas"}),
    ("SELECT 1 AS a; SELECT 2 AS b", {"b": 2}),
    ("EXPLAIN ANALYZE SELECT 1 AS a", None),
    ("EXPLAIN (FORMAT json) SELECT 1", None),
])
def test_queries_still_run(db, db_sum, world, capsys, statement, first_row):
    import json

    before = _tree(world)
    status, out, err = wh40k(capsys, "sql", "--db", str(db), "--format", "json", statement)
    assert (status, err) == (0, ""), err
    rows = json.loads(out)
    if first_row is not None:
        assert rows[0] == first_row
    else:
        assert rows and set(rows[0]) == {"explain_key", "explain_value"}
    assert_untouched(world, before, db, db_sum)


@pytest.mark.parametrize("args", [
    ["units"], ["units", "--name", "sisters", "--format", "json"], ["unit", "Canoness Adalya"],
    ["weapons", "--ability", "devastating wounds"], ["rule", "Lethal Hits"], ["rule", "Leader", "--all"],
    ["rule", "Acts of Faith", "--edition", "10", "--mode", "combat-patrol"],
    ["attack", "Battle Sisters Squad", "--target", "MEQ"],
    ["attack", "Celestian Sacresants", "--phase", "fight", "--target", "TEQ", "--edition", "11", "--explain"],
    ["sql", "SELECT schema_version FROM schema_info"],
])
def test_every_read_command_works_inside_the_sandbox(db, db_sum, world, capsys, args):
    before = _tree(world)
    status, out, err = wh40k(capsys, *args, "--db", str(db))
    assert status == 0, err
    assert out.strip()
    assert_untouched(world, before, db, db_sum)


def test_detect_edition_reads_its_file(capsys):
    status, out, _ = wh40k(capsys, "detect-edition", str(RAW / "wahapedia-11e-core-rules-astra-militarum-page.txt"))
    assert status == 0 and "edition 11" in out


def test_every_setting_of_the_sandbox_holds_on_the_connection(db):
    con = open_database(db)
    found = dict(con.execute("SELECT name, value FROM duckdb_settings()").fetchall())
    assert {name: found[name] for name in SANDBOX_CONFIG} == {
        "enable_external_access": "false", "autoinstall_known_extensions": "false",
        "autoload_known_extensions": "false", "allow_community_extensions": "false",
        "allow_unsigned_extensions": "false", "allow_persistent_secrets": "false",
        "allow_unredacted_secrets": "false", "python_enable_replacements": "false", "temp_directory": "",
        "memory_limit": "1.0 GiB", "threads": "2", "lock_configuration": "true",
    }
    # a setting can no longer be changed, even by the code that holds the connection
    with pytest.raises(duckdb.InvalidInputException, match="the configuration has been locked"):
        con.execute("SET enable_external_access = true")
    with pytest.raises(duckdb.PermissionException):
        con.execute("SELECT * FROM read_text('/etc/hostname')")


@pytest.mark.parametrize("args", [
    ["sql", "SELECT * FROM read_csv('http://example.com/x.csv')"],
    ["sql", "INSTALL httpfs"],
    ["sql", "EXPLAIN ANALYZE COPY (SELECT 'x') TO 'anywhere.txt' (HEADER false)"],
    ["units", "--db", "lite.db"],
])
def test_a_real_process_creates_no_file_and_no_duckdb_folder(db, db_sum, world, args):
    before = _tree(world)
    out = subprocess.run([sys.executable, "-m", "pipeline.cli", *args, *(["--db", str(db)] if "--db" not in args else [])],
                         capture_output=True, text=True, cwd=world / "cwd",
                         env={**os.environ, "HOME": str(world / "home"), "PYTHONPATH": str(ROOT)})
    assert_one_line_error(out.returncode, out.stdout, out.stderr)
    assert_untouched(world, before, db, db_sum)


# --- hostile databases -------------------------------------------------------------------------

def _handed(db: Path, world: Path, *statements: str, name: str = "handed.duckdb") -> Path:
    """A copy of the built database in the working folder with ``statements`` run on it (a
    database handed to a user); ``{home}`` is the home folder."""
    path = world / "cwd" / name
    shutil.copy(db, path)
    con = duckdb.connect(str(path))
    for statement in statements:
        con.execute(statement.replace("{home}", str(world / "home")))
    con.close()
    return path


_LEAK = "SELECT content AS name FROM read_text('{home}/secret.txt')"

#: Databases whose views or macros would read a file: (statements run on a copy, error).
HOSTILE_DATABASES = {
    "a view over read_text in place of a table": (
        ["ALTER TABLE datasheets RENAME TO datasheets_kept",
         "CREATE VIEW datasheets AS SELECT d.* REPLACE (r.content AS name) FROM datasheets_kept d, "
         "read_text('{home}/secret.txt') r"],
        "datasheets is a view, not a table"),
    "an extra view over read_text": ([f"CREATE VIEW leak AS {_LEAK}"], "it holds the view leak,"),
    "a macro standing in for lower()": (
        ["CREATE MACRO lower(x) AS (SELECT content FROM read_text('{home}/secret.txt'))"],
        "it holds the macro lower,"),
    "a table macro over read_text": ([f"CREATE MACRO leak() AS TABLE {_LEAK}"], "it holds the macro leak,"),
    "a view of the views file replaced": (
        ["DROP VIEW units", f"CREATE VIEW units AS {_LEAK}"], "the view units is not the one db/views.sql defines"),
    "a schema_info view over read_text": (
        ["DROP TABLE schema_info",
         "CREATE VIEW schema_info AS SELECT content AS schema_version, content AS project_version "
         "FROM read_text('{home}/secret.txt')"],
        "states no schema version (no schema_info row)"),
    "a table in another schema": (["CREATE SCHEMA other", "CREATE TABLE other.datasheets AS SELECT 1 AS a"],
                                  "is not as the build makes it: it holds the table datasheets (schema other), which the build does not create;"),
}


@pytest.mark.parametrize("case", list(HOSTILE_DATABASES))
def test_handed_database_with_views_or_macros_that_read_a_file_is_refused(db, world, capsys, case):
    statements, error = HOSTILE_DATABASES[case]
    handed = _handed(db, world, *statements)
    before, handed_sum = _tree(world), _checksum(handed)
    for args in (["units"], ["attack", "Canoness Adalya", "--target", "MEQ"], ["sql", "SELECT * FROM units"]):
        status, out, err = wh40k(capsys, *args, "--db", str(handed))
        assert_one_line_error(status, out, err)
        assert "rebuild it with `make build-db`" in err
        assert error in err, err
    assert _tree(world) == before and _checksum(handed) == handed_sum
    assert not (world / "home" / ".duckdb").exists()


@pytest.mark.parametrize("case", list(HOSTILE_DATABASES))
def test_the_sandbox_alone_keeps_a_handed_database_from_reading_files(db, world, case):
    """Without the schema check: a connection with SANDBOX_CONFIG cannot run what the handed
    database's views and macros would read."""
    statements, _ = HOSTILE_DATABASES[case]
    handed = _handed(db, world, *statements)
    con = duckdb.connect(str(handed), read_only=True, config=SANDBOX_CONFIG)
    for statement in ("SELECT name FROM datasheets", "SELECT lower('A')", "SELECT * FROM units",
                      "SELECT * FROM schema_info"):
        try:
            rows = run_sql(con, statement)
        except DatabaseError as exc:
            assert "\n" not in str(exc) and SECRET not in str(exc)
            continue
        assert SECRET not in repr(rows)
    con.close()


def test_a_build_over_a_handed_database_reads_none_of_its_views(db, world, capsys):
    """The build reads the database it replaces (its accounting, to warn of a shrink) in the
    sandbox too: a `build_accounting` view over a file of the home folder is not read."""
    handed = _handed(db, world, "DROP TABLE build_accounting",
                     "CREATE VIEW build_accounting AS SELECT content AS source_id, content AS stage, "
                     "content AS table_name, 1 AS input_rows, 1 AS loaded, 0 AS duplicates, 0 AS rejected "
                     "FROM read_text('{home}/secret.txt')")
    from pipeline.build import previous_counts

    assert previous_counts(handed) is None  # the view cannot be read: no previous accounting
    status, out, err = wh40k(capsys, "build", "--raw", str(RAW), "--db", str(handed))
    assert status == 0, err
    assert SECRET not in out + err
    assert not (world / "home" / ".duckdb").exists()
    open_database(handed).close()  # now a database of this build


def test_a_view_added_through_a_wal_file_is_refused(db, world, capsys):
    """A handed database with its write-ahead log: the log's view is replayed, and refused."""
    path = world / "cwd" / "walled.duckdb"
    shutil.copy(db, path)
    con = duckdb.connect(str(path))
    con.execute("SET checkpoint_threshold = '1TB'")
    con.execute("PRAGMA disable_checkpoint_on_shutdown")
    con.execute(f"CREATE VIEW leak AS {_LEAK}".replace("{home}", str(world / "home")))
    con.close()
    if not path.with_name(path.name + ".wal").exists():
        pytest.skip("this DuckDB checkpointed on close: no write-ahead log to hand over")
    status, out, err = wh40k(capsys, "units", "--db", str(path))
    assert_one_line_error(status, out, err)
    assert "it holds the view leak," in err


# --- databases of another version, missing a table or column, damaged, not databases ----------

def _schema_db(db: Path, folder: Path, *statements: str) -> Path:
    return _handed(db, folder, *statements, name="other.duckdb")


SCHEMA_CASES = {
    "another schema version": (
        ["UPDATE schema_info SET schema_version = '0123456789abcdef', project_version = '0.0.1'"],
        "has schema version 0123456789abcdef (built by wh40k-rules-db 0.0.1); this wh40k reads schema version "),
    "no schema_info table (an older build)": (["DROP TABLE schema_info"],
                                              "states no schema version (no schema_info row): it was built by an "
                                              "older wh40k or by something else; rebuild it with `make build-db`"),
    "two schema_info rows": (["INSERT INTO schema_info VALUES ('x', 'y')"], "states no schema version"),
    "a missing table": (["DROP TABLE rule_texts"], " is not as the build makes it: it has no table rule_texts;"),
    "a missing column": (["ALTER TABLE datasheets DROP COLUMN starting_strength"],
                         " is not as the build makes it: the table datasheets has no column starting_strength;"),
    "a column of another type": (
        ["ALTER TABLE model_profiles ALTER COLUMN wounds TYPE VARCHAR"],
        ": the column model_profiles.wounds is wounds VARCHAR, not wounds INTEGER;"),
    "an extra column": (["ALTER TABLE factions ADD COLUMN colour VARCHAR"],
                        ": the table factions has a column colour the build does not create;"),
    "an extra table": (["CREATE TABLE notes (a INTEGER)"], ": it holds the table notes, which the build does not create;"),
    "a missing view": (["DROP VIEW weapons"], " is not as the build makes it: it has no view weapons;"),
    "a sequence": (["CREATE SEQUENCE s"], ": it holds the sequence s, which the build does not create;"),
    "a type": (["CREATE TYPE colour AS ENUM ('red')"], ": it holds the type colour, which the build does not create;"),
    "an index": (["CREATE INDEX by_name ON datasheets (name)"], ": it holds the index by_name, which the build does not create;"),
}


@pytest.mark.parametrize("case", list(SCHEMA_CASES))
def test_database_of_another_schema_is_a_one_line_error_that_says_to_rebuild(db, world, capsys, case):
    statements, error = SCHEMA_CASES[case]
    other = _schema_db(db, world, *statements)
    for args in (["units"], ["attack", "Canoness Adalya", "--target", "MEQ"]):
        status, out, err = wh40k(capsys, *args, "--db", str(other))
        assert_one_line_error(status, out, err)
        assert err.startswith(f"Error: {other}") and error in err, err
        assert err.rstrip("\n").endswith("rebuild it with `make build-db` (or `wh40k build --db FILE`)")


def _not_databases(db: Path, folder: Path) -> dict[str, tuple[Path, str]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = db.read_bytes()
    files: dict[str, tuple[bytes | None, str]] = {
        "an empty file": (b"", "is an empty file, not a database built by wh40k"),
        "a text file": (b"hello\n", "is a file of another kind, not a database built by wh40k"),
        "a file of zeros": (bytes(300_000), "is a file of another kind"),
        "truncated to 5,000 bytes": (data[:5000], ": cannot open the database (IO Error: Could not read enough bytes"),
        "truncated to half": (data[: len(data) // 2], "the file may be damaged or truncated"),
        "its header overwritten": (data[:4096 + 10] + bytes(30) + data[4096 + 40:],
                                   "Corrupt database file: computed checksum"),
        "a folder": (None, "is a folder, not a database file"),
        "a SQLite database": (None, "is a SQLite database, not a database built by wh40k"),
        "a Parquet file": (None, "is a Parquet file, not a database built by wh40k"),
    }
    out = {}
    for name, (content, error) in files.items():
        path = folder / (name.replace(" ", "-").replace(",", "") + ".duckdb")
        if name == "a folder":
            path.mkdir()
        elif name == "a SQLite database":
            with sqlite3.connect(path) as lite:
                lite.execute("CREATE TABLE datasheets (name)")
        elif name == "a Parquet file":
            pq.write_table(pa.table({"name": ["x"]}), path)
        else:
            path.write_bytes(content)
        out[name] = (path, error)
    return out


NOT_DATABASES = ["an empty file", "a text file", "a file of zeros", "truncated to 5,000 bytes", "truncated to half",
                 "its header overwritten", "a folder", "a SQLite database", "a Parquet file"]


@pytest.mark.parametrize("case", NOT_DATABASES)
def test_a_damaged_file_or_one_that_is_no_database_is_a_one_line_error(db, world, capsys, case):
    path, error = _not_databases(db, world / "cwd")[case]
    before = _tree(world)
    for args in (["units"], ["attack", "Canoness Adalya", "--target", "MEQ"]):
        status, out, err = wh40k(capsys, *args, "--db", str(path))
        assert_one_line_error(status, out, err)
        assert error in err and "make build-db" in err, err
    assert _tree(world) == before
    assert not (world / "home" / ".duckdb").exists()


def test_a_corrupt_block_read_by_a_query_is_a_one_line_error(db, world, capsys):
    """256 KiB blocks of the file overwritten one at a time, from the first: `unit` either works
    or says in one line that the file is damaged, at the open or later, when a query reads the
    block (the blocks are tried until both have been seen, and at least six)."""
    data, block = db.read_bytes(), 262_144
    seen: set[str] = set()
    for number, start in enumerate(range(4096 * 3, len(data) - block, block)):
        if number >= 6 and {"open", "query"} <= seen:
            break
        path = world / "cwd" / f"block-{number}.duckdb"
        path.write_bytes(data[:start + 8] + b"\x55" * (block - 8) + data[start + block:])
        status, out, err = wh40k(capsys, "unit", "Canoness Adalya", "--db", str(path))
        if status != 0:
            assert_one_line_error(status, out, err)
            assert "the file may be damaged or truncated: rebuild it with `make build-db`" in err, err
            seen.add("query" if err.startswith("Error: the database cannot be read (") else "open")
        path.unlink()
    assert {"open", "query"} <= seen
