"""The SQLite replica of ``wh40k attack`` (``pipeline/replica.py``): the same answers as DuckDB,
rebuilt with the database, and a stale, crafted or damaged one never trusted."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import replica
from pipeline.cli import run
from tests.conftest import ROOT
from tests.editions_db import editions_db

#: Attacks of the database of both editions: standard, inline and unit targets, Leaders on
#: either side, options, both editions, custom weapons, errors; JSON and table.
ATTACKS = [
    ["Battle Sisters Squad", "--target", "MEQ", "--format", "json"],
    ["Battle Sisters Squad", "--target", "MEQ", "--edition", "10", "--format", "json"],
    ["Battle Sisters Squad", "--target", "GEQ", "--edition", "11", "--half-range", "--reroll-hits", "ones",
     "--format", "json"],
    ["Battle Sisters Squad", "--target", "T4 Sv3+ W2 x5 inv4+ fnp5+ INFANTRY", "--cover", "--format", "json"],
    ["Battle Sisters Squad", "--target", "Canoness", "--edition", "10", "--format", "json"],
    ["Battle Sisters Squad", "--target", "Penitent Walker", "--edition", "11", "--format", "json"],
    ["Battle Sisters Squad", "--target", "Spinegaunts", "--target-models", "10", "--edition", "10", "--format", "json"],
    ["Battle Sisters Squad", "--target", "Battle Sisters Squad", "--target-leader", "Canoness", "--edition", "10",
     "--format", "json"],
    ["Battle Sisters Squad", "--target", "MEQ", "--leader", "Canoness", "--edition", "10", "--format", "json"],
    ["Canoness", "--target", "Battle Sisters Squad", "--phase", "fight", "--edition", "11", "--format", "json"],
    ["Exorcist", "--target", "VEHICLE", "--edition", "10", "--format", "json"],
    ["Veteran Guardsmen", "--target", "GEQ", "--edition", "10", "--format", "json"],
    ["Captain in Phobos Armour", "--target", "Test Thurga", "--format", "json"],
    ["Test Canoness", "--target", "Sister Squad", "--target-models", "5", "--objective", "models", "--format", "json"],
    ["--weapon-profile", "A2 BS3+ S4 AP-1 D1 [LETHAL HITS]", "--models", "5", "--target", "Penitent Walker",
     "--format", "json"],
    ["Battle Sisters Squad", "--weapon", "boltgun", "--target", "MEQ", "--edition", "10", "--format", "json"],
    ["Battle Sisters Squad", "--target", "MEQ", "--phase", "fight", "--with", "RIGHTEOUS VENGEANCE", "--edition", "10",
     "--format", "json"],
    ["Battle Sisters Squad", "--target", "Canoness"],
    ["battle sisters  squad", "--target", "MEQ", "--edition", "10"],
    ["No Such Unit", "--target", "MEQ"],
    ["Battle Sisters Squad", "--target", "No Such Target"],
    ["Battle Sisters Squad", "--target", "MEQ", "--leader", "Canoness", "--edition", "11"],
]

#: The attacks of ``ATTACKS`` that are refused (one ``Error:`` line, the same from both).
ERRORS = [ATTACKS[-1], ATTACKS[-2], ATTACKS[-3]]


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    """A copy of the database of both editions, alone in its folder."""
    path = tmp_path / "db" / "editions.duckdb"
    path.parent.mkdir()
    shutil.copy2(editions_db(), path)
    return path


def attack(capsys, db: Path, args: list[str]) -> tuple[int, str, str]:
    status = run(["attack", *args, "--db", str(db)])
    out = capsys.readouterr()
    return status, out.out, out.err


def from_duckdb(monkeypatch, capsys, db: Path, args: list[str]) -> tuple[int, str, str]:
    """The attack read from DuckDB: no replica opened, none written."""
    with monkeypatch.context() as m:
        m.setattr(replica, "open_replica", lambda _db: None)
        m.setattr(replica, "write_replica", lambda _con, _db: None)
        return attack(capsys, db, args)


def from_replica(monkeypatch, capsys, db: Path, args: list[str]) -> tuple[int, str, str]:
    """The attack read from the replica alone: opening DuckDB fails the test."""
    def refused(*_args, **_kwargs):
        raise AssertionError("DuckDB was opened: the replica did not answer")

    with monkeypatch.context() as m:
        m.setattr("pipeline.query.open_database", refused)
        return attack(capsys, db, args)


def test_the_first_attack_writes_the_replica_after_its_answer(monkeypatch, capsys, db):
    expected = from_duckdb(monkeypatch, capsys, db, ATTACKS[0])
    assert not replica.replica_path(db).exists()
    assert attack(capsys, db, ATTACKS[0]) == expected
    assert replica.replica_path(db).is_file()
    assert sorted(p.name for p in db.parent.iterdir()) == [".editions.duckdb.attack.sqlite", "editions.duckdb"]
    assert from_replica(monkeypatch, capsys, db, ATTACKS[0]) == expected


@pytest.mark.parametrize("args", ATTACKS, ids=lambda a: " ".join(a)[:60])
def test_the_replica_answers_as_duckdb(monkeypatch, capsys, db, args):
    attack(capsys, db, ATTACKS[0])  # writes the replica
    expected = from_duckdb(monkeypatch, capsys, db, args)
    assert expected[0] == (1 if args in ERRORS else 0), expected
    assert from_replica(monkeypatch, capsys, db, args) == expected


def test_explain_reads_duckdb(monkeypatch, capsys, db):
    attack(capsys, db, ATTACKS[0])
    args = [*ATTACKS[0], "--explain"]
    expected = from_duckdb(monkeypatch, capsys, db, args)
    assert attack(capsys, db, args) == expected
    with pytest.raises(AssertionError, match="DuckDB was opened"):
        from_replica(monkeypatch, capsys, db, args)


def test_a_rebuilt_database_makes_the_replica_stale(monkeypatch, capsys, db):
    attack(capsys, db, ATTACKS[0])
    assert replica.open_replica(db) is not None
    shutil.copy(db, db.with_name("new.duckdb"))  # the same content, a new file renamed over the old
    os.replace(db.with_name("new.duckdb"), db)
    assert replica.open_replica(db) is None
    assert attack(capsys, db, ATTACKS[1]) == from_duckdb(monkeypatch, capsys, db, ATTACKS[1])
    served = replica.open_replica(db)  # written anew by that attack
    assert served is not None
    served.close()


def test_the_nulls_of_order_by_come_last_as_in_duckdb(db, capsys):
    attack(capsys, db, ATTACKS[0])
    served = replica.open_replica(db)
    try:
        sql = "SELECT datasheet_id, starting_strength FROM datasheets ORDER BY starting_strength, datasheet_id"
        import duckdb

        with duckdb.connect(str(db), read_only=True) as con:
            assert served.execute(sql).fetchall() == con.execute(sql).fetchall()
        rows = served.execute(sql).fetchall()
        assert rows[-1][1] is None and rows[0][1] is not None
        assert served.execute("SELECT lower('ÂB'), 'Ab' LIKE 'ab'").fetchall() == [("âb", False)]
    finally:
        served.close()


def _crafted(path: Path, case: str) -> None:
    if case == "garbage":
        path.write_bytes(b"not a database at all\n" * 100)
        return
    if case == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 3])
        return
    if case == "empty":
        path.write_bytes(b"")
        return
    with sqlite3.connect(path) as lite:
        if case == "wrong stamp":
            lite.execute("UPDATE replica_stamp SET stamp = '[1, 2, 3]'")
        elif case == "missing table":
            lite.execute("DROP TABLE weapon_profiles")
        elif case == "extra trigger":
            lite.execute("CREATE TRIGGER t AFTER INSERT ON datasheets BEGIN SELECT 1; END")
        elif case == "extra index":
            lite.execute("CREATE INDEX extra ON datasheets (name)")
        elif case == "missing index":
            lite.execute("DROP INDEX weapon_profiles_datasheet_id")
        elif case == "extra view":
            lite.execute("CREATE VIEW datasheets_v AS SELECT * FROM datasheets")
        elif case == "a table swapped for a view":
            lite.execute("ALTER TABLE datasheets RENAME TO d2")
            lite.execute("CREATE VIEW datasheets AS SELECT * FROM d2")
        elif case == "two stamps":
            lite.execute("INSERT INTO replica_stamp SELECT stamp FROM replica_stamp")
    lite.close()


@pytest.mark.parametrize("case", ["garbage", "truncated", "empty", "wrong stamp", "missing table", "extra trigger",
                                  "extra index", "missing index", "extra view", "a table swapped for a view", "two stamps"])
def test_a_crafted_or_damaged_replica_is_not_read(monkeypatch, capsys, db, case):
    expected = from_duckdb(monkeypatch, capsys, db, ATTACKS[4])
    attack(capsys, db, ATTACKS[0])
    _crafted(replica.replica_path(db), case)
    assert replica.open_replica(db) is None
    assert attack(capsys, db, ATTACKS[4]) == expected  # and it is written anew
    assert from_replica(monkeypatch, capsys, db, ATTACKS[4]) == expected


def test_a_query_the_replica_cannot_answer_is_answered_by_duckdb(monkeypatch, capsys, db):
    expected = from_duckdb(monkeypatch, capsys, db, ATTACKS[4])
    attack(capsys, db, ATTACKS[0])

    def failing(self, sql, params=None):
        raise replica.ReplicaMiss("no such table: x")

    monkeypatch.setattr(replica.ReplicaConnection, "execute", failing)
    assert attack(capsys, db, ATTACKS[4]) == expected


def test_an_unwritable_folder_gives_the_answer_and_no_replica(monkeypatch, capsys, db):
    expected = from_duckdb(monkeypatch, capsys, db, ATTACKS[0])
    os.chmod(db.parent, 0o555)
    try:
        if os.access(db.parent, os.W_OK):
            pytest.skip("this user writes into read-only folders (root)")
        assert attack(capsys, db, ATTACKS[0]) == expected
        assert sorted(p.name for p in db.parent.iterdir()) == ["editions.duckdb"]
    finally:
        os.chmod(db.parent, 0o755)


def test_no_replica_when_the_folder_cannot_be_written(monkeypatch, db, capsys):
    # as an unwritable folder (for root too): the temporary file cannot be made
    monkeypatch.setattr(replica, "replica_path", lambda d: d.parent / "no-such-folder" / "x.sqlite")
    with __import__("duckdb").connect(str(db), read_only=True) as con:
        assert replica.write_replica(con, db) is None
    assert sorted(p.name for p in db.parent.iterdir()) == ["editions.duckdb"]


def test_a_database_changed_while_it_is_copied_gives_no_replica(monkeypatch, db):
    import duckdb

    stamps = iter(["[1]", "[2]"])
    monkeypatch.setattr(replica, "stamp", lambda _db: next(stamps))
    with duckdb.connect(str(db), read_only=True) as con:
        assert replica.write_replica(con, db) is None
    assert sorted(p.name for p in db.parent.iterdir()) == ["editions.duckdb"]


def test_an_attack_served_by_the_replica_imports_no_duckdb_nor_pydantic(db, capsys):
    attack(capsys, db, ATTACKS[0])
    code = ("import sys; sys.argv = ['wh40k', 'attack', 'Battle Sisters Squad', '--target', 'MEQ', '--format', "
            f"'json', '--db', {str(db)!r}]\n"
            "from pipeline.wh40k import main\n"
            "try:\n    main()\nexcept SystemExit as exc:\n    assert exc.code in (0, None), exc.code\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('duckdb', 'pydantic', 'pydantic_core')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                         env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    *answer, modules = out.stdout.strip().splitlines()
    assert json.loads("\n".join(answer))["target"]["name"] == "MEQ"
    assert modules == "[]"


def test_the_kept_name_keys_find_what_keying_every_name_finds(capsys, db):
    import duckdb

    from pipeline.query import DatasheetIndex, KeyedDatasheetIndex

    attack(capsys, db, ATTACKS[0])
    served = replica.open_replica(db)
    try:
        keyed = served.datasheet_index()
        assert isinstance(keyed, KeyedDatasheetIndex)
        with duckdb.connect(str(db), read_only=True) as con:
            narrow = DatasheetIndex.narrow(con)
            names = [n for (n,) in con.execute("SELECT name FROM datasheets").fetchall()]
            ids = [i for (i,) in con.execute("SELECT datasheet_id FROM datasheets").fetchall()]
            asked = [*names, *ids, *(n.upper() for n in names), *(n.replace(" ", "  ") + "." for n in names),
                     "No Such Unit", "Battle Sister Squad", "Captain in Phobos Armor", ""]
            for name in asked:
                assert keyed.named(name) == narrow.named(name), name
            assert keyed.names == narrow.names
        assert len(keyed.named("battle sisters squad")) >= 2  # both editions' datasheets
    finally:
        served.close()


def test_a_changed_name_key_makes_the_replica_stale(monkeypatch, capsys, db):
    from pipeline.normalise import names

    attack(capsys, db, ATTACKS[0])
    assert replica.open_replica(db) is not None
    fingerprint = names.name_key_fingerprint()
    monkeypatch.setattr(names, "name_key_fingerprint", lambda: fingerprint + " changed")
    assert replica.open_replica(db) is None  # its keys may be another name_key's
    expected = from_duckdb(monkeypatch, capsys, db, ATTACKS[4])
    assert attack(capsys, db, ATTACKS[4]) == expected  # and written anew
    assert replica.open_replica(db) is not None
