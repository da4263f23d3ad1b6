"""End to end: the build over the seed snapshots (``conftest.RAW``) and the CLI over the built
database. Whatever `wh40k fetch` has added to the project's raw/ is not part of these builds."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from pipeline.build import BuildReport, build
from pipeline.errors import RawFileError
from tests.conftest import PROJECT_RAW, RAW, ROOT, copy_seed_snapshots

SEED_FILES = [
    "bsdata-10e-rule-descriptions-acts-of-faith-deadly-demise-leader.txt",
    "manifest.toml",
    "wahapedia-10e-combat-patrol-sanctuary-guardians.txt",
    "wahapedia-11e-core-rules-astra-militarum-page.txt",
]
#: The BattleScribe 10th-edition catalogues (fetch-only): one folder source, read together.
BSDATA_10E_CATALOGUES = ["bsdata-10e-catalogues"]
FETCH_ONLY_SOURCES = [
    "bsdata-10e-gamesystem", "bsdata-11e-gamesystem", "wahapedia-10e-page-termagants",
    "wahapedia-10e-page-cadian-shock-troops", "wahapedia-10e-page-intercessor-squad",
    "wahapedia-10e-export", *BSDATA_10E_CATALOGUES, "gdc-11e-core-rules", "gdc-11e-combat-patrol-rules",
    "gdc-11e-chapter-approved", "gdc-11e-event-companion", "gdc-11e-faqs", "gdc-11e", "gdc-11e-combat-patrol",
    "gdc-10e-combat-patrol", "bsdata-11e-catalogues",
]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, BuildReport]:
    path = tmp_path_factory.mktemp("db") / "wh40k.duckdb"
    return path, build(RAW, path)


@pytest.fixture(scope="module")
def db(built) -> Path:
    return built[0]


def wh40k(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pipeline.cli", *args], capture_output=True, text=True, cwd=ROOT
    )


def test_seed_folder_holds_only_the_manifest_and_the_committed_seeds():
    assert sorted(p.relative_to(RAW).as_posix() for p in RAW.rglob("*")) == SEED_FILES


def test_seed_copy_leaves_fetched_files_behind(tmp_path):
    # a raw folder as `wh40k fetch` leaves it: fetched files and folders beside the seeds
    raw = copy_seed_snapshots(RAW, tmp_path / "raw")
    (raw / "bsdata-10e").mkdir()
    (raw / "bsdata-10e" / "Warhammer 40,000.gst").write_text("<gameSystem/>", encoding="utf-8")
    (raw / "wahapedia-10e").mkdir()
    (raw / "wahapedia-10e" / "Factions.csv").write_text("id|name|\n", encoding="utf-8")
    (raw / ".fetch-state.json").write_text("{}", encoding="utf-8")
    seeds = copy_seed_snapshots(raw, tmp_path / "seeds")
    assert sorted(p.relative_to(seeds).as_posix() for p in seeds.rglob("*")) == SEED_FILES
    assert (seeds / "manifest.toml").read_bytes() == (PROJECT_RAW / "manifest.toml").read_bytes()


def test_build_of_the_seeds_skips_every_fetch_only_source(built):
    _, report = built
    assert report.skipped == FETCH_ONLY_SOURCES
    assert report.inconsistent == []


def test_build_loads_every_table_with_provenance(db):
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM sources").fetchone()[0] == 3
    assert con.execute("SELECT count(*) FROM datasheets").fetchone()[0] == 4
    assert con.execute("SELECT count(*) FROM weapon_profiles").fetchone()[0] == 12
    assert con.execute("SELECT count(DISTINCT weapon_name) FROM weapon_profiles").fetchone()[0] == 11
    for table in ("datasheets", "weapon_profiles", "rule_texts", "stratagems", "keywords"):
        missing = con.execute(
            f"SELECT count(*) FROM {table} t LEFT JOIN sources s USING (source_id) "
            "WHERE s.source_id IS NULL OR t.locator = ''"
        ).fetchone()[0]
        assert missing == 0, table


def test_build_accounting_identity_holds_and_is_stored(db):
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute(
        "SELECT source_id, stage, table_name, input_rows, loaded, duplicates, rejected FROM build_accounting"
    ).fetchall()
    assert rows
    for sid, stage, table, n_in, loaded, dup, rej in rows:
        assert n_in == loaded + dup + rej, (sid, stage, table)
    loaded = dict(con.execute(
        "SELECT table_name, sum(loaded) FROM build_accounting WHERE stage = 'validate' GROUP BY table_name"
    ).fetchall())
    assert loaded["weapon_profiles"] == 12
    # repeated lines of the page (every weapon row twice, TARGET/EFFECT twice) are counted
    assert con.execute("SELECT sum(duplicates) FROM build_accounting").fetchone()[0] > 0


def test_missing_raw_file_stops_with_error_naming_it_and_keeps_previous_db(tmp_path, db):
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    target = tmp_path / "out.duckdb"
    shutil.copy(db, target)
    before = target.read_bytes()
    (raw / "wahapedia-11e-core-rules-astra-militarum-page.txt").unlink()
    with pytest.raises(RawFileError, match="wahapedia-11e-core-rules-astra-militarum-page.txt.*not found"):
        build(raw, target)
    assert target.read_bytes() == before


def test_cli_build_error_is_one_line(tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    (raw / "bsdata-10e-rule-descriptions-acts-of-faith-deadly-demise-leader.txt").write_bytes(b"\xff\xfe bad")
    out = wh40k("build", "--raw", str(raw), "--db", str(tmp_path / "x.duckdb"))
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert lines[-1].startswith("Error: ") and "bsdata-10e-rule-descriptions" in lines[-1]
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "x.duckdb").exists()


def test_cli_sql_reads_and_refuses_writes(db):
    out = wh40k("sql", "--db", str(db), "--format", "csv",
                "SELECT name, starting_strength FROM datasheets ORDER BY name")
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [(r["name"], r["starting_strength"]) for r in rows] == [
        ("Arco-flagellants", "10"), ("Battle Sisters Squad", "10"),
        ("Canoness Adalya", "1"), ("Celestian Sacresants", "5"),
    ]
    for statement in ("DELETE FROM datasheets", "DROP TABLE datasheets",
                      "SELECT 1; INSERT INTO factions VALUES ('a','b','c','d')"):
        out = wh40k("sql", "--db", str(db), statement)
        assert out.returncode == 1
        assert out.stderr.startswith("Error: statement") and "read-only" in out.stderr


def test_cli_unit_json_has_weapons_abilities_keywords(db):
    out = wh40k("unit", "--db", str(db), "--format", "json", "canoness adalya")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    weapons = {(w["weapon_name"], w["kind"]): w for w in data["weapons"]}
    assert set(weapons) == {("Condemnor boltgun", "ranged"), ("Hallowed chainsword", "melee")}
    assert weapons[("Condemnor boltgun", "ranged")]["abilities"] == (
        "anti-psyker 2+, devastating wounds, precision, rapid fire 1"
    )
    assert {(a["kind"], a["name"]) for a in data["abilities"]} >= {
        ("core", "Leader"), ("faction", "Acts of Faith"), ("datasheet", "Lead the Righteous"),
        ("wargear", "Null Rod"),
    }
    assert {k["keyword"] for k in data["keywords"] if k["is_faction_keyword"]} == {"ADEPTA SORORITAS"}
    assert any(g["table_name"] == "model_profiles" for g in data["data_gaps"])


def test_cli_unknown_unit_suggests_close_names(db):
    out = wh40k("unit", "--db", str(db), "Battle Sister Squad")
    assert out.returncode == 1
    assert "Battle Sisters Squad" in out.stderr and out.stderr.startswith("Error: no unit named")


def test_cli_weapons_filter_by_ability(db):
    out = wh40k("weapons", "--db", str(db), "--ability", "devastating wounds", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert sorted(w["weapon_name"] for w in json.loads(out.stdout)) == ["Combi-weapon", "Condemnor boltgun"]
    out = wh40k("weapons", "--db", str(db), "--ability", "anti-infantry 4+", "--format", "json")
    assert [w["weapon_name"] for w in json.loads(out.stdout)] == ["Combi-weapon"]
    out = wh40k("weapons", "--db", str(db), "--ability", "torrent", "--format", "csv")
    assert sorted(r["weapon_name"] for r in csv.DictReader(io.StringIO(out.stdout))) == [
        "Ministorum flamer", "Ministorum heavy flamer"]
    out = wh40k("weapons", "--db", str(db), "--ability", "devastating wound")
    assert (out.returncode, out.stdout) == (0, "")
    assert out.stderr == ("no weapon matches: no weapon has the ability 'devastating wound'; "
                          "did you mean: DEVASTATING WOUNDS?\n")


def test_cli_rule_by_name_and_edition(db):
    out = wh40k("rule", "--db", str(db), "Lethal Hits", "--edition", "11", "--all", "--format", "json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [(r["section"], r["edition"]) for r in rows] == [("24.23", 11)]
    assert "you can choose" in rows[0]["text"]
    out = wh40k("rule", "--db", str(db), "Lethal Hits", "--all", "--format", "json")
    assert sorted(r["edition"] for r in json.loads(out.stdout)) == [10, 11]
    out = wh40k("rule", "--db", str(db), "Letal Hits")
    assert out.returncode == 1 and "LETHAL HITS" in out.stderr.upper()
