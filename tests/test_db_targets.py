"""Database targets by SQLAlchemy URL: the same database built into DuckDB, SQLite and PostgreSQL.

The database of both editions (``tests/editions_db.py``'s raw folder) is built into each of the
three; every table has the same row count and checksum in each (``pipeline.export.table_checksums``),
and the read commands give the same output on each. The PostgreSQL server is a throwaway one
the tests start (``tests/postgres_server.py``); without the server binaries those tests skip.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from pipeline.build import build
from pipeline.cli import run
from pipeline.errors import DatabaseError, InputError
from pipeline.export import table_checksums
from pipeline.query import open_database
from pipeline.targets import parse_target
from schemas.catalog import declared_tables
from tests.editions_db import editions_raw
from tests.postgres_server import postgres_server, server_binaries

NO_SERVER = "PostgreSQL server binaries not found (apt-get install postgresql, or set WH40K_PG_BIN)"


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return editions_raw(tmp_path_factory.mktemp("targets") / "raw")


@pytest.fixture(scope="module")
def built_rows(raw: Path) -> dict[str, int]:
    """The rows per table the build of the DuckDB database reported."""
    return build(raw, raw.parent / "editions.duckdb").rows


@pytest.fixture(scope="module")
def duckdb_db(raw: Path, built_rows: dict[str, int]) -> str:
    return str(raw.parent / "editions.duckdb")


@pytest.fixture(scope="module")
def sqlite_db(raw: Path) -> str:
    url = f"sqlite:///{raw.parent / 'editions.sqlite'}"
    build(raw, url)
    return url


@pytest.fixture(scope="module")
def server() -> str:
    if server_binaries() is None:
        pytest.skip(NO_SERVER)
    with postgres_server() as url:
        yield url


@pytest.fixture(scope="module")
def postgres_db(server: str, raw: Path) -> str:
    build(raw, server)
    return server


@pytest.fixture(scope="module")
def reader_db(postgres_db: str) -> str:
    """The PostgreSQL database as a role that may only read its tables (what `sql` asks for)."""
    import psycopg

    with psycopg.connect(parse_target(postgres_db).url.replace("postgresql+psycopg", "postgresql"),
                         autocommit=True) as con:
        con.execute("CREATE ROLE wh40k_reader LOGIN")
        con.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO wh40k_reader")
    return postgres_db.replace("//wh40k@", "//wh40k_reader@")


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = run(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def _checksums(db: str) -> dict[str, tuple[int, str]]:
    con = open_database(db)
    try:
        return table_checksums(con)
    finally:
        con.close()


def test_sqlite_has_the_tables_and_rows_of_duckdb(duckdb_db: str, sqlite_db: str, built_rows: dict[str, int]) -> None:
    duck, lite = _checksums(duckdb_db), _checksums(sqlite_db)
    assert {table: rows for table, (rows, _) in duck.items()} == built_rows  # every row the build loaded
    assert lite == duck
    # the tables with no rows in this database: no source of it gives them, and the matchups
    # tables are filled after the build (`wh40k matchups`)
    assert sorted(t for t, (rows, _) in duck.items() if not rows) == [
        "damaged_profiles", "errata", "erratum_targets", "matchup_targets", "matchup_weapons", "matchups",
        "secondary_objectives"]


def test_postgresql_has_the_tables_and_rows_of_duckdb(duckdb_db: str, postgres_db: str) -> None:
    assert _checksums(postgres_db) == _checksums(duckdb_db)


#: A representative set of read commands: every command with --db, each pipeline query module.
READ_COMMANDS = [
    ["units", "--format", "json"],
    ["units", "--edition", "10", "--faction", "adepta-sororitas", "--format", "csv"],
    ["unit", "Battle Sisters Squad", "--format", "json"],
    ["unit", "Battle Sisters Squad", "--edition", "10", "--format", "csv"],
    ["weapons", "--ability", "anti-infantry", "--format", "json"],
    ["weapons", "--name", "bolt", "--edition", "10", "--format", "csv"],
    ["rule", "Lethal Hits", "--format", "json"],
    ["rule", "Lethal Hits", "--edition", "10", "--format", "json"],
    ["rule-diff", "Lethal Hits", "--format", "json"],
    ["search", "lethal hits", "--format", "json"],
    ["sources-agree", "--format", "json"],
    ["unit-diff", "Battle Sisters Squad", "--format", "csv"],
    ["attack", "Battle Sisters Squad", "--target", "MEQ", "--format", "json"],
    ["units", "--name", "no such unit at all"],
    ["unit", "Batle Sisters"],
]


@pytest.mark.parametrize("args", READ_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_read_commands_answer_the_same_on_sqlite(args: list[str], duckdb_db: str, sqlite_db: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    expected = _cli(capsys, *args, "--db", duckdb_db)
    assert expected[0] in (0, 1) and (expected[1] or expected[2])
    assert _cli(capsys, *args, "--db", sqlite_db) == expected


@pytest.mark.parametrize("args", READ_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_read_commands_answer_the_same_on_postgresql(args: list[str], duckdb_db: str, postgres_db: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    expected = _cli(capsys, *args, "--db", duckdb_db)
    assert _cli(capsys, *args, "--db", postgres_db) == expected


PORTABLE_SQL = [
    "SELECT name, starting_strength FROM datasheets ORDER BY name, datasheet_id",
    "SELECT edition, count(*) AS n FROM datasheets GROUP BY edition ORDER BY edition",
    "SELECT weapon_name, is_melee, ability_names FROM weapons ORDER BY datasheet_id, weapon_name, is_melee, profile_name "
    "LIMIT 40",
    "SELECT datasheet_name, keywords FROM units ORDER BY datasheet_id, line LIMIT 20",
    "SELECT source_id, version_date FROM sources ORDER BY source_id",
]


@pytest.mark.parametrize("statement", PORTABLE_SQL)
def test_sql_gives_the_same_rows(statement: str, duckdb_db: str, sqlite_db: str, reader_db: str,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    expected = _cli(capsys, "sql", statement, "--format", "json", "--db", duckdb_db)
    assert expected[0] == 0 and json.loads(expected[1])
    assert _cli(capsys, "sql", statement, "--format", "json", "--db", sqlite_db) == expected
    assert _cli(capsys, "sql", statement, "--format", "json", "--db", reader_db) == expected


def test_export_from_sqlite_and_postgresql_is_the_export_from_duckdb(
        duckdb_db: str, sqlite_db: str, postgres_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folders = []
    for i, db in enumerate((duckdb_db, sqlite_db, postgres_db)):
        folders.append(tmp_path / str(i))
        assert _cli(capsys, "export", str(folders[-1]), "--format", "csv", "--db", db, "--quiet") == (0, "", "")
    files = sorted(p.name for p in folders[0].iterdir())
    assert len(files) == len(declared_tables()) + 2  # and the data dictionary's two files
    for folder in folders[1:]:
        assert sorted(p.name for p in folder.iterdir()) == files
        assert [(folder / f).read_bytes() for f in files] == [(folders[0] / f).read_bytes() for f in files]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


SQLITE_HOSTILE = [
    ("ATTACH DATABASE 'x.sqlite' AS x", "is refused"),
    ("SELECT 1; ATTACH DATABASE 'x.sqlite' AS x", "one statement at a time"),
    ("WITH a AS (SELECT 1) SELECT 1; DETACH main", "one statement at a time"),
    ("SELECT load_extension('/tmp/evil.so')", "not authorized"),
    ("PRAGMA writable_schema = 1", "is refused"),
    ("PRAGMA journal_mode", "is refused"),
    ("VACUUM INTO 'copy.sqlite'", "is refused"),
    ("INSERT INTO factions VALUES ('a', 'b', 'c', 'd')", "is refused"),
    ("/* SELECT */ DELETE FROM datasheets", "is refused"),
    ("CREATE TABLE t (a)", "is refused"),
    ("SELECT * FROM pragma_table_info('datasheets') JOIN pragma_journal_mode", "not authorized"),
    ("EXPLAIN ANALYZE SELECT 1", "is refused"),
]


@pytest.mark.parametrize("statement,expected", SQLITE_HOSTILE, ids=[s for s, _ in SQLITE_HOSTILE])
def test_sqlite_sandbox_refuses(statement: str, expected: str, sqlite_db: str, tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    file = parse_target(sqlite_db).path
    before = _digest(file)
    status, out, err = _cli(capsys, "sql", statement, "--db", sqlite_db)
    assert (status, out) == (1, "")
    assert err.startswith("Error: ") and expected in err and len(err.strip().splitlines()) == 1
    assert _digest(file) == before and list(tmp_path.iterdir()) == []


def test_sqlite_allows_the_pragmas_that_list(sqlite_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _cli(capsys, "sql", "PRAGMA table_info(schema_info)", "--format", "json", "--db", sqlite_db)
    assert status == 0 and [r["name"] for r in json.loads(out)] == ["schema_version", "project_version"]


POSTGRES_HOSTILE = [
    ("SELECT pg_read_file('/etc/passwd')", "permission denied"),
    ("COPY datasheets TO '/tmp/x.csv'", "is refused"),
    ("SELECT 1; DELETE FROM datasheets", "cannot insert multiple commands"),
    ("WITH d AS (DELETE FROM datasheets RETURNING 1) SELECT * FROM d", "read-only transaction"),
    ("SELECT set_config('default_transaction_read_only', 'off', false)", None),
    ("SELECT lo_import('/etc/passwd')", "permission denied for function lo_import"),
    ("SET default_transaction_read_only = off", "is refused"),
    ("EXPLAIN ANALYZE DELETE FROM datasheets", "is refused"),
    ("SELECT * FROM datasheets FOR UPDATE", "read-only transaction"),
]


@pytest.mark.parametrize("statement,expected", POSTGRES_HOSTILE, ids=[s for s, _ in POSTGRES_HOSTILE])
def test_postgres_sandbox_refuses(statement: str, expected: str | None, reader_db: str,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _cli(capsys, "sql", statement, "--db", reader_db)
    if expected is None:  # runs, and changes nothing beyond its own rolled-back transaction
        assert status == 0
    else:
        assert (status, out) == (1, "") and expected in err and len(err.strip().splitlines()) == 1


def test_postgres_unchanged_after_the_hostile_statements(reader_db: str, duckdb_db: str) -> None:
    assert _checksums(reader_db) == _checksums(duckdb_db)


def test_postgres_a_setting_changed_by_a_query_does_not_outlive_it(reader_db: str) -> None:
    con = open_database(reader_db)
    try:
        names, rows = con.run_query("SELECT set_config('default_transaction_read_only', 'off', false) AS was")
        assert (names, rows) == (["was"], [("off",)])
        with pytest.raises(DatabaseError, match="read-only transaction"):
            con.execute("DELETE FROM datasheets")
        assert con.run_query("SHOW default_transaction_read_only") == (["default_transaction_read_only"], [("on",)])
    finally:
        con.close()


def test_postgres_sql_refuses_a_superuser(postgres_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _cli(capsys, "sql", "SELECT 1", "--db", postgres_db)
    assert (status, out) == (1, "")
    assert "`sql` does not run as the role wh40k, a superuser" in err and "GRANT SELECT" in err


def test_postgres_rebuild_replaces_the_tables(raw: Path, postgres_db: str, duckdb_db: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _cli(capsys, "build", "--raw", str(raw), "--db", postgres_db, "--quiet")
    assert (status, err) == (0, "")
    assert _checksums(postgres_db) == _checksums(duckdb_db)


def test_build_refuses_a_postgres_database_of_another_project(server: str, raw: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    import psycopg

    with psycopg.connect(parse_target(server).url.replace("postgresql+psycopg", "postgresql"),
                         autocommit=True) as con:
        con.execute("CREATE DATABASE other")
        with psycopg.connect(con.info.dsn.replace("dbname=postgres", "dbname=other"), autocommit=True) as other:
            other.execute("CREATE TABLE customers (id int)")
    url = server.replace("/postgres?", "/other?")
    status, out, err = _cli(capsys, "build", "--raw", str(raw), "--db", url, "--quiet")
    assert (status, out) == (1, "")
    assert "is a database that this project did not build (it has no tables build_accounting, sources)" in err


def test_build_to_an_unreachable_server_is_one_line_and_writes_nothing(
        raw: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    url = f"postgresql://nobody@/rules?host={tmp_path}&port=1"
    status, out, err = _cli(capsys, "build", "--raw", str(raw), "--db", url, "--quiet")
    assert (status, out) == (1, "")
    assert err.startswith("Error: --db postgresql+psycopg://nobody@/rules") and "cannot connect" in err
    assert len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []  # before: an empty folder named `postgresql:`
    status, _, err = _cli(capsys, "units", "--db", url)
    assert status == 1 and "cannot connect" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("url,message", [
    ("mysql://x@y/z", "wh40k builds and reads DuckDB, SQLite and PostgreSQL"),
    ("postgresql+psycopg2://x@y/z", "the driver psycopg2 is not the one wh40k uses"),
    ("sqlite://", "no file named"),
])
def test_a_url_of_another_kind_is_one_line(url: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InputError, match=message):
        parse_target(url)
    for args in (["build", "--quiet"], ["units"], ["sql", "SELECT 1"]):
        status, out, err = _cli(capsys, *args, "--db", url)
        assert (status, out) == (1, "") and message in err and len(err.strip().splitlines()) == 1


def test_sqlite_file_not_built_by_wh40k(tmp_path: Path, raw: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE customers (id int)")
    status, _, err = _cli(capsys, "units", "--db", f"sqlite:///{other}")
    assert status == 1 and "states no schema version" in err
    status, _, err = _cli(capsys, "build", "--raw", str(raw), "--db", f"sqlite:///{other}", "--quiet")
    assert status == 1 and "did not build" in err
    text = tmp_path / "notes.sqlite"
    text.write_text("hello")
    status, _, err = _cli(capsys, "build", "--raw", str(raw), "--db", f"sqlite:///{text}", "--quiet")
    assert status == 1 and "is not a SQLite database" in err and text.read_text() == "hello"
