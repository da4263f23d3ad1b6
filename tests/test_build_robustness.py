"""The build's failure modes: a wrong --db, missing tables of a folder source, an interrupt.

In each, the error says what, where and how to fix, and the previous database survives with no
temporary file left beside it.
"""

from __future__ import annotations

import shutil

import pytest

import pipeline.load
from pipeline.build import build
from pipeline.errors import BuildError, RawFileError
from tests.conftest import RAW
from tests.test_build_and_cli import wh40k


def test_a_folder_given_as_db_is_an_error_before_the_parse(tmp_path):
    with pytest.raises(BuildError, match=r"is a folder: give the path of a database file, e\.g\. .*wh40k\.duckdb"):
        build(RAW, tmp_path)
    out = wh40k("build", "-q", "--raw", str(RAW), "--db", str(tmp_path))
    assert out.returncode == 1
    assert out.stderr.startswith(f"Error: --db {tmp_path} is a folder") and "Traceback" not in out.stderr


def test_an_interrupted_load_keeps_the_previous_database_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    db = tmp_path / "wh40k.duckdb"
    build(RAW, db)
    before = db.read_bytes()

    def interrupted(records, tmp, links=(), later=None, writer=None):
        tmp.write_bytes(b"half a database")
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline.load, "_write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build(RAW, db)
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wh40k.duckdb"]


def test_two_builds_write_temporary_files_of_their_own(tmp_path, monkeypatch):
    seen = []
    real = pipeline.load._write

    def spy(records, tmp, links=(), later=None, writer=None):
        seen.append(tmp.name)
        return real(records, tmp, links, later, writer)

    monkeypatch.setattr(pipeline.load, "_write", spy)
    build(RAW, tmp_path / "wh40k.duckdb")
    build(RAW, tmp_path / "wh40k.duckdb")
    assert len(set(seen)) == 2 and all(n.startswith(".wh40k.duckdb.") and n.endswith(".tmp") for n in seen)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wh40k.duckdb"]


def test_a_listed_table_missing_from_a_folder_source_is_named(tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    (raw / "export").mkdir()
    (raw / "export" / "Factions.csv").write_text("id|name|link|\nSM|Space Marines|x|\n", encoding="utf-8")
    with (raw / "manifest.toml").open("a", encoding="utf-8") as manifest:
        manifest.write(
            '\n[[source]]\nid = "mini-export"\nfile = "export/"\nformat = "wahapedia-csv"\n'
            'title = "Export"\npublisher = "Wahapedia"\nedition = 10\nkind = "export"\n'
            'origin = "test"\nfiles = ["Factions.csv", "Stratagems.csv", "Datasheets.csv"]\n'
        )
    with pytest.raises(RawFileError) as err:
        build(raw, tmp_path / "wh40k.duckdb")
    assert str(err.value) == (
        f"{raw / 'export'}: Stratagems.csv, Datasheets.csv of source 'mini-export' are missing "
        "(listed in the raw manifest's files); `wh40k fetch --only mini-export` brings them back"
    )
    assert not (tmp_path / "wh40k.duckdb").exists()
