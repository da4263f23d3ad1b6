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
    # 36 of the 40 tables have rows in this database (not secondary_objectives, damaged_profiles, errata, erratum_targets)
    assert sorted(t for t, (rows, _) in duck.items() if not rows) == [
        "damaged_profiles", "errata", "erratum_targets", "secondary_objectives"]


def test_postgresql_has_the_tables_and_rows_of_duckdb(duckdb_db: str, postgres_db: str) -> None:
    assert _checksums(postgres_db) == _checksums(duckdb_db)


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


@pytest.mark.parametrize("url,message", [
    ("mysql://x@y/z", "wh40k builds and reads DuckDB, SQLite and PostgreSQL"),
    ("postgresql+psycopg2://x@y/z", "the driver psycopg2 is not the one wh40k uses"),
    ("sqlite://", "no file named"),
])
def test_a_url_of_another_kind_is_one_line(url: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InputError, match=message):
        parse_target(url)
    for args in (["build", "--quiet"],):
        status, out, err = _cli(capsys, *args, "--db", url)
        assert (status, out) == (1, "") and message in err and len(err.strip().splitlines()) == 1


def test_sqlite_file_not_built_by_wh40k(tmp_path: Path, raw: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE customers (id int)")
    status, _, err = _cli(capsys, "build", "--raw", str(raw), "--db", f"sqlite:///{other}", "--quiet")
    assert status == 1 and "did not build" in err
    text = tmp_path / "notes.sqlite"
    text.write_text("hello")
    status, _, err = _cli(capsys, "build", "--raw", str(raw), "--db", f"sqlite:///{text}", "--quiet")
    assert status == 1 and "is not a SQLite database" in err and text.read_text() == "hello"
