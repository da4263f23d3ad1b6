"""The BattleScribe 11th-edition JSON catalogues: unit tests of what ``bsdata_json`` reads on top
of the walker (points, leader lists, unresolved links), on made-up trees; and the corpus build of
``bsdata-11e-catalogues`` (skips without ``../shared/corpus``), asserting real values."""

from __future__ import annotations

import json
import shutil

import pytest

from pipeline.build import build
from pipeline.database import open_database
from pipeline.extractors.bsdata_json import attached_units, parse_cat_set_json
from pipeline.fetch import fetch_sources, read_folder_files
from pipeline.manifest import read_manifest
from schemas.records import DataFlag, DataGap, Datasheet, LeaderLink, Source, UnitCost
from tests.conftest import CORPUS, GOLDEN, RAW

INPUTS = GOLDEN / "inputs" / "bsdata_cat_set_json_11e"
SOURCE = Source(source_id="s", title="t", file="bs/", format="bsdata-cat-set-json", publisher="BSData", edition=11,
                kind="export", game_mode=None, version=None, version_date=None, origin="made up")


def golden_files() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in INPUTS.glob("*.json")}


def costs(result, datasheet: str) -> list[tuple]:
    return sorted((r.description, r.cost_points, r.model_count, r.from_unit, r.condition) for r in result.records
                  if isinstance(r, UnitCost) and r.datasheet_id == datasheet)


def test_points_per_size_bracket_and_army():
    result = parse_cat_set_json(golden_files(), SOURCE)
    assert costs(result, "11e/adepta-sororitas/sister-squad") == [
        ("10 models", 110, 10, 1, None), ("10 models (3rd+ unit)", 120, 10, 3, None),
        ("5 models", 60, 5, 1, None), ("5 models (3rd+ unit)", 70, 5, 3, None),
    ]
    # a top-level model unit: its own cost once; a bracket from the 2nd unit
    assert costs(result, "11e/adepta-sororitas/test-thurga") == [
        ("1 model", 50, 1, 1, None), ("1 model (2nd+ unit)", 55, 1, 2, None)]
    assert costs(result, "11e/adepta-sororitas/penitent-walker") == [
        ("1 model (army's catalogue is Imperium - Test Faction)", 120, 1, 1, "army's catalogue is Imperium - Test Faction"),
        ("1 model (army's catalogue is not Imperium - Test Faction)", 135, 1, 1,
         "army's catalogue is not Imperium - Test Faction"),
    ]
    flags = [f.detail for f in result.records if isinstance(f, DataFlag) and f.flag == "points_modifier_not_read"]
    assert len(flags) == 1 and flags[0].startswith("a 'increment' modifier repeated per selection: ")


def test_a_unit_whose_points_are_zero_gets_no_row_but_a_gap():
    files = golden_files()
    faction = json.loads(files["Imperium - Test Faction.json"])
    canoness = next(e for e in faction["catalogue"]["sharedSelectionEntries"] if e["id"] == "u-canoness")
    canoness["costs"][0]["value"] = 0
    files["Imperium - Test Faction.json"] = json.dumps(faction)
    result = parse_cat_set_json(files, SOURCE)
    assert costs(result, "11e/adepta-sororitas/test-canoness") == []
    assert [(g.field, g.reason) for g in result.records if isinstance(g, DataGap) and g.table_name == "unit_costs"] == [
        ("cost_points", "the catalogue gives the unit no points above 0")]


def test_leader_and_support_lists():
    result = parse_cat_set_json(golden_files(), SOURCE)
    links = sorted((r.leader_datasheet_id, r.bodyguard_datasheet_id, r.kind) for r in result.records
                   if isinstance(r, LeaderLink))
    assert links == [
        ("11e/adepta-sororitas/test-canoness", "11e/adepta-sororitas/missing-squad", "leader"),
        ("11e/adepta-sororitas/test-canoness", "11e/adepta-sororitas/sister-squad", "leader"),
        ("11e/adepta-sororitas/test-thurga", "11e/adepta-sororitas/sister-squad", "support"),
    ]
    assert attached_units("This model can be attached to the following units:\n- Boyz\n- Nobz [Legends]\nNote.") == [
        "Boyz", "Nobz"]
    assert attached_units("This model has a 4+ invulnerable save.") == []


def test_a_catalogue_added_to_the_folder_is_read_and_a_missing_library_is_said():
    files = golden_files()
    extra = json.loads(files["Imperium - Test Library.json"])
    extra["catalogue"].update(id="cat-new", name="Imperium - New Faction", library=False)
    walker = extra["catalogue"]["sharedSelectionEntries"][0]
    walker.update(id="u-new", name="Mortifier")
    walker["profiles"][0]["id"] = "p-new"
    files["Imperium - New Faction.json"] = json.dumps(extra)
    del files["Imperium - Test Library.json"]
    result = parse_cat_set_json(files, SOURCE)
    names = sorted(r.name for r in result.records if isinstance(r, Datasheet))
    assert names == ["Mortifier", "Sister Squad", "Test Canoness", "Test Thurga"]  # the walker went with its library
    summary = [g.reason for g in result.records if isinstance(g, DataGap) and g.field == "links"
               and g.entity_key == "s|Imperium - Test Faction.json"]
    assert summary == ["2 root entry link(s) and 1 link(s) inside units (to 1 target(s)) not in the files read; "
                       "libraries not in the folder: 'Imperium - Test Library', 'Imperium - Missing Library'"]


def test_a_file_that_is_not_json_is_one_reject_and_the_others_are_read():
    files = golden_files()
    files["Broken.json"] = '{"catalogue": '
    result = parse_cat_set_json(files, SOURCE)
    assert [(r.locator, r.reason[:30]) for r in result.rejects] == [("Broken.json", "not a readable catalogue: Expe")]
    assert len([r for r in result.records if isinstance(r, Datasheet)]) == 4


# ---- the corpus -------------------------------------------------------------------------------

corpus = pytest.mark.skipif(not CORPUS.exists(), reason="the shared corpus is not beside the checkout")


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    raw = tmp_path_factory.mktemp("bsdata11") / "raw"
    shutil.copytree(RAW, raw)
    sources = [s for s in read_manifest(raw) if s.source_id == "bsdata-11e-catalogues"]
    fetch_sources(sources, raw, mirror=str(CORPUS), folder_files=read_folder_files(raw), delay_seconds=0)
    report = build(raw, raw / "db.duckdb")
    assert report.inconsistent == []
    return open_database(raw / "db.duckdb")


def q(con, sql: str) -> list[tuple]:
    return con.execute(sql).fetchall()


@corpus
def test_corpus_datasheets_with_model_profiles_per_catalogue(con):
    rows = dict(q(con, """
        SELECT split_part(d.locator, ' selectionEntry', 1), count(*) FROM datasheets d
        WHERE d.source_id = 'bsdata-11e-catalogues' AND d.datasheet_id IN (SELECT datasheet_id FROM model_profiles)
        GROUP BY 1"""))
    assert len(rows) == 30 and sum(rows.values()) == 815
    assert rows["Imperium - Adepta Sororitas.json"] == 41
    assert rows["Chaos - Chaos Daemons Library.json"] == 71
    assert rows["T'au Empire.json"] == 66


@corpus
def test_corpus_statlines_and_invulnerable_saves(con):
    assert q(con, "SELECT model_name, move_inches, toughness, save, invulnerable_save, wounds, leadership, "
                  "objective_control FROM model_profiles WHERE datasheet_id = '11e/adepta-sororitas/battle-sisters-squad'"
             ) == [("Battle Sister", 6, 3, 3, 6, 1, 7, 2)]
    # InSv 5+* with its note from the '*Invulnerable Save' ability
    assert q(con, "SELECT invulnerable_save, invulnerable_save_scope, invulnerable_save_note FROM model_profiles "
                  "WHERE datasheet_id = '11e/chaos-knights/war-dog-executioner'") == [
        (5, "ranged", "This model has a 5+ invulnerable save against ranged attacks.")]
    # an empty Sv: a gap, the line kept
    assert q(con, "SELECT entity_key, reason FROM data_gaps WHERE table_name = 'model_profiles' AND field = 'save' "
                  "AND entity_key LIKE '11e/adepta-sororitas/aestred%' ORDER BY 1") == [
        ("11e/adepta-sororitas/aestred-thurga-and-agathae-dolan|1", "printed as an empty cell"),
        ("11e/adepta-sororitas/aestred-thurga-and-agathae-dolan|2", "printed as an empty cell")]
    assert q(con, "SELECT toughness, wounds FROM model_profiles WHERE datasheet_id = "
                  "'11e/adepta-sororitas/aestred-thurga-and-agathae-dolan' ORDER BY line") == [(3, 4), (3, 3)]


@corpus
def test_corpus_points_and_brackets(con):
    assert q(con, "SELECT description, cost_points, model_count, from_unit FROM unit_costs "
                  "WHERE datasheet_id = '11e/thousand-sons/rubric-marines' ORDER BY line") == [
        ("5 models", 100, 5, 1), ("10 models", 190, 10, 1),
        ("5 models (4th+ unit)", 110, 5, 4), ("10 models (4th+ unit)", 200, 10, 4)]
    assert q(con, "SELECT description, cost_points FROM unit_costs WHERE datasheet_id = '11e/chaos-daemons/bloodthirster' "
                  "ORDER BY line") == [("1 model", 320), ("1 model (3rd+ unit)", 335)]
    # World Eaters' copy of the unit is a datasheet of its own, with its own points
    assert q(con, "SELECT d.datasheet_id, f.flag FROM datasheets d JOIN data_flags f ON f.entity_key = d.datasheet_id "
                  "WHERE d.datasheet_id LIKE '11e/chaos-daemons/bloodthirster--%'") == [
        ("11e/chaos-daemons/bloodthirster--4ad2-bd20-6dfe-776b", "repeated_datasheet_name")]
    assert q(con, "SELECT count(*) FROM unit_costs WHERE source_id = 'bsdata-11e-catalogues' AND cost_points <= 0") == [(0,)]


@corpus
def test_corpus_leaders_support_and_what_is_missing(con):
    assert q(con, "SELECT bodyguard_datasheet_id FROM leader_links WHERE kind = 'support' "
                  "AND leader_datasheet_id = '11e/adepta-sororitas/dialogus' ORDER BY 1") == [
        ("11e/adepta-sororitas/battle-sisters-squad",), ("11e/adepta-sororitas/celestian-sacresants",),
        ("11e/adepta-sororitas/dominion-squad",), ("11e/adepta-sororitas/retributor-squad",),
        ("11e/adepta-sororitas/sisters-novitiate-squad",)]
    assert q(con, "SELECT reason FROM data_gaps WHERE table_name = 'sources' AND field = 'links' "
                  "AND entity_key = 'bsdata-11e-catalogues|Imperium - Astra Militarum.json'") == [
        ("138 root entry link(s) and 0 link(s) inside units (to 0 target(s)) not in the files read; "
         "libraries not in the folder: 'Imperium - Astra Militarum - Library'",)]
    assert q(con, "SELECT count(*), sum(bytes) > 30000000 FROM source_files WHERE source_id = 'bsdata-11e-catalogues'"
             ) == [(40, True)]
