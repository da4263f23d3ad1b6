"""The BattleScribe catalogues in a build with the Wahapedia export: one datasheet per unit given
by both, their disagreements in `conflicts`; the sizes and default loadouts of the units only the
catalogues give."""

from __future__ import annotations

import shutil

import pytest

from pipeline.build import build
from pipeline.database import open_database
from pipeline.engine.service import AttackRequest, attack
from pipeline.fetch import fetch_sources, read_folder_files
from pipeline.manifest import read_manifest
from tests.conftest import CORPUS, RAW

pytestmark = pytest.mark.skipif(not CORPUS.exists(), reason="the shared corpus is not beside the checkout")

WANTED = ("wahapedia-10e-export", "bsdata-10e-catalogues")


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    raw = tmp_path_factory.mktemp("bsdata") / "raw"
    shutil.copytree(RAW, raw)
    sources = [s for s in read_manifest(raw) if s.source_id in WANTED]
    fetch_sources(sources, raw, mirror=str(CORPUS), folder_files=read_folder_files(raw), delay_seconds=0)
    report = build(raw, raw / "db.duckdb")
    assert report.inconsistent == []
    return raw / "db.duckdb"


@pytest.fixture(scope="module")
def con(db):
    # the readers' sandboxed connection: DuckDB refuses two connections to one file with other settings
    return open_database(db)


def test_a_unit_from_both_sources_is_one_datasheet(con):
    rows = con.execute(
        "SELECT datasheet_id, source_id FROM datasheets WHERE name ILIKE 'Battle Sisters Squad' AND edition = 10 "
        "AND datasheet_id LIKE '10e/%'"
    ).fetchall()
    assert rows == [("10e/adepta-sororitas/battle-sisters-squad", "wahapedia-10e-export")]
    # the catalogue's copy was merged into it (a counted duplicate), not loaded beside it
    assert con.execute(
        "SELECT input_rows, loaded, duplicates, rejected FROM build_accounting WHERE stage = 'validate' "
        "AND source_id = 'bsdata-10e-catalogues' AND table_name = 'datasheets'"
    ).fetchone() == (465, 33, 432, 0)  # 432 of the 465 units of the 11 catalogues are Wahapedia datasheets too
    # the two sources agree on the datasheet row; each one's own id is in external_ids, not a conflict
    assert con.execute(
        "SELECT field, value_a, value_b FROM conflicts WHERE entity_key = '10e/adepta-sororitas/battle-sisters-squad'"
    ).fetchall() == []
    assert con.execute(
        "SELECT source_id, external_id FROM external_ids WHERE datasheet_id = '10e/adepta-sororitas/battle-sisters-squad' "
        "ORDER BY source_id"
    ).fetchall() == [("bsdata-10e-catalogues", "f26d-450d-1c55-caeb"), ("wahapedia-10e-export", "000000903")]


def test_spelling_twins_are_one_datasheet_with_the_first_sources_name(con):
    # the catalogues spell Armor and Defense; the export (first in precedence) Armour and Defence
    rows = con.execute(
        "SELECT datasheet_id, name, source_id FROM datasheets WHERE datasheet_id LIKE '10e/space-marines/%' "
        "AND (name ILIKE 'Ancient in Terminator Armo%' OR name ILIKE 'Tarantula Air Defe%') ORDER BY 1"
    ).fetchall()
    assert rows == [
        ("10e/space-marines/ancient-in-terminator-armour", "Ancient In Terminator Armour", "wahapedia-10e-export"),
        ("10e/space-marines/tarantula-air-defence-battery", "Tarantula Air Defence Battery", "wahapedia-10e-export"),
    ]
    # the catalogue's rows of the twin moved with it: its id, its weapons merged into the export's
    assert con.execute(
        "SELECT source_id, external_id FROM external_ids WHERE datasheet_id = '10e/space-marines/ancient-in-terminator-armour' "
        "ORDER BY source_id"
    ).fetchall() == [("bsdata-10e-catalogues", "fc7f-8176-c10c-ca8"), ("wahapedia-10e-export", "000002677")]
    assert con.execute(
        "SELECT count(*) FROM weapon_profiles WHERE datasheet_id LIKE '10e/space-marines/%-armor' "
        "OR datasheet_id LIKE '10e/space-marines/%-defense-%'"
    ).fetchone()[0] == 0


def test_weapon_names_in_another_case_are_one_profile_with_the_stats_conflict(con):
    # the catalogues print "Thunder Hammer", the export "Thunder hammer": one profile, the export's
    # name, and the Weapon Skill on which they disagree recorded with both values and sources
    assert con.execute(
        "SELECT weapon_name, skill, source_id FROM weapon_profiles "
        "WHERE datasheet_id = '10e/space-marines/terminator-assault-squad' ORDER BY 1"
    ).fetchall() == [("Thunder hammer", 4, "wahapedia-10e-export"), ("Twin lightning claws", 3, "wahapedia-10e-export")]
    assert con.execute(
        "SELECT field, value_a, source_id_a, value_b, source_id_b, chosen_source_id FROM conflicts "
        "WHERE entity_key LIKE '10e/space-marines/terminator-assault-squad|Thunder hammer|%'"
    ).fetchall() == [("skill", "4", "wahapedia-10e-export", "3", "bsdata-10e-catalogues", "wahapedia-10e-export")]


def test_characteristics_agree_so_no_conflict_and_genuine_ones_are_recorded(con):
    # Canoness: the same characteristics and invulnerable save in both sources
    assert con.execute(
        "SELECT count(*) FROM conflicts WHERE entity_key LIKE '10e/adepta-sororitas/canoness|%' "
        "AND table_name = 'model_profiles'"
    ).fetchone()[0] == 0
    # Repentia Squad: the two sources list the model lines in another order; matched by model name
    # (Repentia Superior; SISTERS REPENTIA and Sister Repentia are one name in the singular or the
    # plural), the characteristics agree: no conflict at all
    assert con.execute(
        "SELECT line, model_name, source_id FROM model_profiles "
        "WHERE datasheet_id = '10e/adepta-sororitas/repentia-squad' ORDER BY line"
    ).fetchall() == [(1, "REPENTIA SUPERIOR", "wahapedia-10e-export"), (2, "SISTERS REPENTIA", "wahapedia-10e-export")]
    assert con.execute(
        "SELECT field, value_a, value_b FROM conflicts WHERE entity_key LIKE '10e/adepta-sororitas/repentia-squad|%'"
    ).fetchall() == []
    # a genuine disagreement on a model's name is still one (the unit's name as the model's in one)
    assert con.execute(
        "SELECT field, value_a, value_b FROM conflicts WHERE entity_key LIKE '10e/adepta-sororitas/battle-sisters-squad|%' "
        "AND table_name = 'model_profiles'"
    ).fetchall() == [("model_name", "Battle Sisters Squad", "Battle Sister")]


def test_a_unit_only_the_catalogues_give_has_its_size_and_default_loadout(con):
    recon = "10e/astra-militarum/cadian-recon-squad"
    assert con.execute("SELECT starting_strength FROM datasheets WHERE datasheet_id = ?", [recon]).fetchone() == (10,)
    assert con.execute(
        "SELECT line, model_name, min_models, max_models, text FROM unit_composition WHERE datasheet_id = ? ORDER BY line",
        [recon]).fetchall() == [(1, "Recon Sergeant", 1, 1, "1 Recon Sergeant"), (2, "Recon Troopers", 9, 9, "9 Recon Troopers")]
    assert con.execute(
        "SELECT models, model_count, equipment FROM wargear_loadouts WHERE datasheet_id = ? ORDER BY line",
        [recon]).fetchall() == [("Every model", None, "Lasgun; Close combat weapon")]
    hippogriff = "10e/astra-militarum/hippogriff-afv"
    assert con.execute(
        "SELECT line, model_name, min_models, max_models, text FROM unit_composition WHERE datasheet_id = ?",
        [hippogriff]).fetchall() == [(1, "Hippogriff AFV", 1, 2, "1-2 Hippogriff AFV")]
    assert con.execute(
        "SELECT models, model_count, equipment FROM wargear_loadouts WHERE datasheet_id = ?",
        [hippogriff]).fetchall() == [("Every model", None, "Armoured hull; Heavy stubber; Vigilator cannon")]


def test_a_unit_both_sources_give_keeps_one_composition_and_loadout_whole(con):
    # the export's rows of Battle Sisters Squad, none of the catalogue's beside them
    assert con.execute(
        "SELECT line, text, source_id FROM unit_composition WHERE datasheet_id = '10e/adepta-sororitas/battle-sisters-squad' "
        "ORDER BY line").fetchall() == [(1, "1 Sister Superior", "wahapedia-10e-export"),
                                        (2, "9 Battle Sisters", "wahapedia-10e-export")]
    for table in ("unit_composition", "wargear_loadouts"):
        mixed = con.execute(f"SELECT datasheet_id FROM {table} GROUP BY 1 HAVING count(DISTINCT source_id) > 1").fetchall()
        assert mixed == [], table
    # the catalogues' rows of the 432 shared units are set aside (duplicates); the 33 others' loaded
    assert con.execute(
        "SELECT table_name, input_rows, loaded, duplicates, rejected FROM build_accounting WHERE stage = 'validate' "
        "AND source_id = 'bsdata-10e-catalogues' AND table_name IN ('unit_composition', 'wargear_loadouts') ORDER BY 1"
    ).fetchall() == [("unit_composition", 600, 35, 565, 0), ("wargear_loadouts", 527, 27, 500, 0)]
    # a set-aside composition of another smallest size is a recorded disagreement (Sir Hekhtur is a
    # model of his own in the catalogue)
    assert con.execute(
        "SELECT entity_key, field, value_a, source_id_a, value_b, source_id_b FROM conflicts "
        "WHERE table_name = 'unit_composition'").fetchall() == [
        ("10e/imperial-knights/canis-rex", "unit size", "1", "wahapedia-10e-export", "2", "bsdata-10e-catalogues")]


def test_a_catalogue_only_unit_fires_its_loadout_and_is_a_target_of_its_size(db):
    recon = attack(AttackRequest(attacker="Cadian Recon Squad", target="Hippogriff AFV"), db)
    assert [(w.name, w.models) for w in recon.weapons] == [("Lasgun", 10)]
    assert recon.target.models == 1
    assert "target Hippogriff AFV: 1 model (sum of its composition lines)" in recon.notes
    hippogriff = attack(AttackRequest(attacker="Hippogriff AFV", target="Cadian Recon Squad"), db)
    assert [(w.name, w.models) for w in hippogriff.weapons] == [("Heavy stubber", 1), ("Vigilator cannon", 1)]
    assert hippogriff.target.models == 10
