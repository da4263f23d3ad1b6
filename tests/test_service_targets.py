"""``wh40k serve --db URL``: the service over the database of both editions built into SQLite and
PostgreSQL (``tests/test_db_targets.py``'s fixtures: a throwaway PostgreSQL server, skipped
without its binaries) answers as over the DuckDB file, whether that is served from its SQLite
copy (the default) or read directly (``--no-copy``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import httpx
import pytest

from pipeline.build import build
from pipeline.cli import run
from pipeline.export import table_checksums
from pipeline.query import open_database
from pipeline.service.reader import Database
from tests.editions_db import editions_db, editions_raw
from tests.postgres_server import postgres_server, server_binaries
from tests.service_server import served

#: The requests whose answers are compared (method, path, query or JSON body).
REQUESTS = [
    ("get", "/api/unit", {"name": "Battle Sisters Squad"}),
    ("get", "/api/unit", {"name": "Canoness", "edition": 10}),
    ("get", "/api/units", {"every_edition": "true"}),
    ("get", "/api/weapons", {"name": "bolt", "edition": 10}),
    ("get", "/api/rule", {"name": "Lethal Hits", "edition": 10}),
    ("get", "/api/rule-diff", {"name": "Lethal Hits"}),
    ("get", "/api/search", {"text": "lethal hits", "limit": 5}),
    ("get", "/api/unit", {"name": "Battle Sister Squad"}),  # a 404 with its close names
    ("post", "/api/attack", {"attacker": "Battle Sisters Squad", "target": "MEQ", "half_range": True}),
    ("post", "/api/attack", {"attacker": "Canoness", "target": "T4 Sv3+ W2 x5 inv5+ INFANTRY", "phase": "fight",
                             "edition": 10, "charged": True}),
    # a datasheet target: its own rules are looked up in the effects table
    ("post", "/api/attack", {"attacker": "Battle Sisters Squad", "target": "Canoness", "edition": 10}),
]


def answers(base: str) -> list[tuple[int, object]]:
    """(status, JSON) of each of ``REQUESTS`` on the server at ``base``."""
    out = []
    with httpx.Client(base_url=base, timeout=60) as client:
        for method, path, params in REQUESTS:
            got = client.get(path, params=params) if method == "get" else client.post(path, json=params)
            out.append((got.status_code, got.json()))
    return out


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return editions_raw(tmp_path_factory.mktemp("serve-targets") / "raw")


@pytest.fixture(scope="module")
def expected() -> list[tuple[int, object]]:
    """The answers over the DuckDB file of both editions (served from its SQLite copy)."""
    with served(editions_db()) as base:
        found = answers(base)
    assert [status for status, _ in found] == [200] * 7 + [404] + [200] * 3
    return found


def test_a_duckdb_file_read_directly_answers_as_its_sqlite_copy(expected):
    with served(editions_db(), extra=["--no-copy"]) as base:
        assert answers(base) == expected


def test_serve_db_sqlite_url(raw, expected):
    url = f"sqlite:///{raw.parent / 'editions.sqlite'}"
    build(raw, url)
    with served(url) as base:
        assert answers(base) == expected
        assert httpx.get(f"{base}/api/info").json()["database"] == "editions.sqlite"


def test_serve_db_postgresql_url(raw, expected):
    if server_binaries() is None:
        pytest.skip("PostgreSQL server binaries not found (apt-get install postgresql, or set WH40K_PG_BIN)")
    with postgres_server() as url:
        build(raw, url)
        with served(url) as base:
            assert answers(base) == expected
            assert httpx.get(f"{base}/api/info").json()["database"] == "postgres"


def test_the_sqlite_copy_has_every_row_of_the_duckdb_file_and_is_removed_at_close():
    database = Database(editions_db())
    folder = database._opened.folder
    assert folder is not None and (folder / "copy.sqlite").is_file()
    duck = open_database(editions_db())
    try:
        expected = table_checksums(duck)
    finally:
        duck.close()
    with database.reading() as con:
        assert con.backend == "sqlite"
        assert table_checksums(con) == expected
    assert expected["datasheets"][0] > 0
    database.close()
    assert not folder.exists()


def test_serve_refuses_a_url_of_another_database_and_a_missing_sqlite_file(tmp_path, capsys):
    assert run(["serve", "--db", "mysql://x@y/z"]) == 1
    assert capsys.readouterr().err.strip() == (
        "Error: --db mysql://x@y/z: wh40k builds and reads DuckDB, SQLite and PostgreSQL; give a DuckDB file "
        "path, sqlite:///FILE.sqlite or postgresql://USER@HOST/DBNAME")
    missing = tmp_path / "none.sqlite"
    assert run(["serve", "--db", f"sqlite:///{missing}"]) == 1
    assert capsys.readouterr().err.strip() == (
        f"Error: {missing}: no database; build it with `wh40k build --db sqlite:///{missing}`")


def test_a_replaced_database_file_is_copied_again_and_the_cache_emptied(tmp_path):
    path = tmp_path / "editions.duckdb"
    shutil.copy(editions_db(), path)
    database = Database(path)
    first = database._opened.folder
    assert database.answer(("units",), lambda con: con.execute("SELECT count(*) FROM datasheets").fetchone()[0]) > 0
    assert database.cached(("units",)) is not None
    shutil.copy(editions_db(), tmp_path / "new.duckdb")
    os.replace(tmp_path / "new.duckdb", path)  # as a rebuild renames its new file over the old
    with database.reading() as con:
        assert con.execute("SELECT count(*) FROM datasheets").fetchone()[0] > 0
    assert database._opened.folder != first and not first.exists()
    assert database.cached(("units",)) is None
    database.close()


def test_the_owning_faction_of_a_shared_name_reads_the_same_over_sqlite():
    """``query.own_faction_copies`` (which copy of a name several factions print is the owner's)
    in portable SQL: over the SQLite copy the server reads, the same datasheets as over DuckDB
    (it once used DuckDB's ``GROUP BY ALL``, and every such name was a 503 over SQLite)."""
    from pipeline.query import own_faction_copies

    duck = open_database(editions_db())
    try:
        cur = duck.execute("SELECT * FROM datasheets WHERE faction_id IS NOT NULL ORDER BY faction_id, datasheet_id")
        rows = [dict(zip([d[0] for d in cur.description], r)) for r in cur.fetchall()]
        sheets = [next(r for r in rows if r["faction_id"] == f) for f in dict.fromkeys(r["faction_id"] for r in rows)]
        assert len(sheets) >= 2
        expected = [r["datasheet_id"] for r in own_faction_copies(duck, sheets)]
    finally:
        duck.close()
    database = Database(editions_db())
    try:
        with database.reading() as con:
            assert con.backend == "sqlite"
            assert [r["datasheet_id"] for r in own_faction_copies(con, sheets)] == expected
    finally:
        database.close()
