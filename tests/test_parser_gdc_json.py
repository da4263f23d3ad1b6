"""The Game Datacards extractor (``pipeline.extractors.gdc_json``): its readings on made-up
inputs, and the real files of ``../shared/corpus`` (skipped when the corpus is absent)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from pipeline.extractors import get_extractor
from pipeline.extractors.gdc_json import attached_units, parse_folder, plain_text
from pipeline.normalise.weapon_abilities import parse_ability
from schemas.records import (
    DamagedProfile, Datasheet, DetachmentAbility, LeaderLink, ModelProfile, Source, UnitCost, WargearCost, WeaponAbility,
)
from tests.conftest import CORPUS, ROOT

GDC_11E = CORPUS / "gdc-11e"
GDC_10E_CP = CORPUS / "gdc-10e-combatpatrol"
needs_corpus = pytest.mark.skipif(not GDC_11E.is_dir(), reason="../shared/corpus is not beside the checkout")


def source(edition: int = 11, game_mode: str = "matched", kind: str = "export") -> Source:
    return Source(source_id="gdc", title="t", file="gdc/", format="gdc-json-folder", publisher="Game Datacards",
                  edition=edition, kind=kind, game_mode=game_mode, version=None, version_date=None,  # type: ignore[arg-type]
                  origin="made up")


def en(text: str) -> dict:
    return {"en": text, "fr": text + " (fr)"}


def sheet(name: str, **fields) -> dict:
    base = {"id": f"id-{name}", "source": "40k-11e", "name": en(name), "factions": ["Adepta Sororitas"],
            "keywords": [en("Infantry")], "stats": [{"name": en(name), "m": '6"', "t": "3", "sv": "3+", "w": "2",
                                                      "ld": "7+", "oc": "1"}],
            "rangedWeapons": [], "meleeWeapons": [], "abilities": {}, "composition": [f"**1 {name}**"],
            "loadout": en("**This model is equipped with:** boltgun."), "wargear": ["None"],
            "points": [{"cost": "50", "models": "1", "keyword": None, "detachment": None}]}
    base.update(fields)
    return base


def parse(*sheets: dict, edition: int = 11, game_mode: str = "matched", **doc) -> list:
    data = {"name": "Adepta Sororitas", "parent_name": None, "datasheets": list(sheets), **doc}
    result = parse_folder({"f.json": json.dumps(data)}, source(edition, game_mode))
    return result.records + result.rejects  # type: ignore[operator]


def of(records: list, kind: type) -> list:
    return [r for r in records if isinstance(r, kind)]


def test_texts_per_language_give_the_english_text_plain():
    assert plain_text({"en": "Each **CHARACTER**:<ul><li><b>A</b>.</li><li>B</li></ul>", "de": "x"}) == \
        "Each CHARACTER:\nA.\nB"


def test_leader_text_names_each_unit_and_not_the_note_after_it():
    text = ("This model can be attached to the following units:\n■ ***CRUSADERS**\n■ **BATTLE SISTERS SQUAD**"
            "\n\nYou can attach this model to a unit even if...")
    assert attached_units(text) == ["CRUSADERS", "BATTLE SISTERS SQUAD"]


def test_a_ranged_only_invulnerable_save_keeps_its_scope_and_note():
    (model,) = of(parse(sheet("Canoness", abilities={"invul": {"value": "4+", "info": en("*Against ranged attacks only*")}})),
                  ModelProfile)
    assert (model.invulnerable_save, model.invulnerable_save_scope, model.invulnerable_save_note) == \
        (4, "ranged", "*Against ranged attacks only*")


def test_an_invulnerable_save_for_one_model_goes_to_that_line_only():
    stats = [{"name": en(n), "m": '6"', "t": "3", "sv": "5+", "w": "1", "ld": "7+", "oc": "1"}
             for n in ("Proctor", "Cyber-mastiff")]
    records = parse(sheet("Patrol", stats=stats, abilities={"invul": {"value": "5+", "info": en("*Excluding the Cyber-mastiff.*")}}))
    assert [(m.model_name, m.invulnerable_save) for m in of(records, ModelProfile)] == [("Proctor", 5), ("Cyber-mastiff", None)]


def test_points_brackets_keyword_costs_and_no_zero_point_row():
    records = parse(sheet("Squad", points=[{"cost": "100", "models": "5", "keyword": None, "detachment": None},
                                          {"cost": "0", "models": "10", "keyword": None, "detachment": None},
                                          {"cost": "90", "models": "5", "keyword": en("Imperium"), "detachment": None}],
                          additionalCost={"cost": "15", "afterSelections": 2}))
    costs = [(c.cost_points, c.model_count, c.from_unit, c.condition) for c in of(records, UnitCost)]
    assert costs == [(100, 5, 1, None), (90, 5, 1, "Imperium"), (115, 5, 3, None), (105, 5, 3, "Imperium")]
    assert [r.reason for r in records if getattr(r, "table_name", "") == "unit_costs"] == \
        ["a points cost of 0 or none: not a cost"]


def test_wargear_costs_only_for_choices_that_cost_points_and_never_a_header():
    options = [{"instruction": en("This model can be equipped with one of the following:"),
                "options": [{"name": en("Ranged weapons:"), "cost": "10"}, {"name": en("Meltagun"), "cost": "10"},
                            {"name": en("Flamer"), "cost": "0"}]}]
    (cost,) = of(parse(sheet("Squad", wargearOptions=options)), WargearCost)
    assert (cost.wargear, cost.cost_points, cost.option_text) == \
        ("Meltagun", 10, "This model can be equipped with one of the following:")


def test_a_damaged_profile_reads_its_wounds_and_a_plain_hit_roll_change():
    damaged = {"range": en("1‑5 WOUNDS REMAINING"),
               "description": en("While this model has 1-5 wounds remaining, each time this model makes an attack, "
                                 "subtract 1 from the Hit roll.")}
    (profile,) = of(parse(sheet("Tank", abilities={"damaged": damaged})), DamagedProfile)
    assert (profile.min_wounds, profile.max_wounds, profile.hit_roll_modifier) == (1, 5, -1)


def test_leader_and_support_links_by_name_within_the_faction():
    support = {"special": [{"name": en("Support"), "description": en(
        "This model can be attached to the following units:\n■ **BATTLE SISTERS SQUAD**")}]}
    records = parse(sheet("Canoness", leader=en("This model can be attached to the following units: ■ **BATTLE SISTER SQUAD**")),
                    sheet("Dialogus", abilities=support), sheet("Battle Sisters Squad"))
    links = sorted((link.leader_name, link.bodyguard_datasheet_id, link.kind) for link in of(records, LeaderLink))
    assert links == [("Canoness", "11e/adepta-sororitas/battle-sisters-squad", "leader"),
                     ("Dialogus", "11e/adepta-sororitas/battle-sisters-squad", "support")]


def test_a_chapter_file_keeps_the_faction_id_and_a_repeated_name_is_qualified():
    sm = {"name": "Adeptus Astartes", "parent_name": None, "datasheets": [sheet("Repulsor")]}
    bt = {"name": "Black Templars", "parent_name": "Adeptus Astartes", "datasheets": [sheet("Repulsor")]}
    result = parse_folder({"a_blacktemplar.json": json.dumps(bt), "space_marines.json": json.dumps(sm)}, source())
    assert sorted(d.datasheet_id for d in of(result.records, Datasheet)) == [
        "11e/space-marines/repulsor", "11e/space-marines/repulsor--black-templars"]


def test_combat_patrol_datasheets_are_scoped_by_their_combat_patrol():
    records = parse(sheet("Canoness"), edition=10, game_mode="combat-patrol", **{"name": "Combat Patrol: Sanctuary Guardians"})
    assert [(d.datasheet_id, d.game_mode, d.edition) for d in of(records, Datasheet)] == [
        ("cp-sanctuary-guardians/canoness", "combat-patrol", 10)]


def test_files_without_datasheets_are_counted_not_read():
    result = parse_folder({"faqs.json": '{"faqs": []}', "broken.json": "{"}, source())
    assert result.boilerplate == Counter({"gdc: files without datasheets (FAQs, keywords, index: not read here)": 1})
    assert [r.locator for r in result.rejects] == ["broken.json"]


@pytest.mark.parametrize("printed, expected", [
    ("LETHAL HITS: VEHICLE", ("LETHAL HITS", None, "VEHICLE")),
    ("DEVASTATING WOUNDS: INFANTRY", ("DEVASTATING WOUNDS", None, "INFANTRY")),
    ("LETHAL HITS: non-MONSTER/VEHICLE", ("LETHAL HITS", None, "non-MONSTER/VEHICLE")),
    ("[CLEAVE 2]", ("CLEAVE", "2", None)),
    ("Close-quarters", ("CLOSE-QUARTERS", None, None)),
])
def test_eleventh_edition_weapon_abilities_are_data(printed, expected):
    a = parse_ability(printed)
    assert (a.name, a.value.text if a.value else None, a.condition) == expected and a.flags == ()


def test_a_keyword_restricted_ability_is_stored_with_its_condition():
    weapon = {"profiles": [{"name": en("Gun"), "range": '24"', "attacks": "2", "skill": "3+", "strength": "5",
                            "ap": "-1", "damage": "1", "keywords": [en("Lethal Hits: Vehicle")]}]}
    (ability,) = of(parse(sheet("Squad", rangedWeapons=[weapon])), WeaponAbility)
    assert (ability.name, ability.condition) == ("LETHAL HITS", "Vehicle")


def test_detachment_rules_are_detachment_abilities_with_their_parts_in_order():
    rules = {"army": [{"name": en("Acts of Faith"), "rules": []}], "detachment": [
        {"detachment": "Hallowed Martyrs", "detachment_id": "d-1", "faction": "Adepta Sororitas", "rules": [
            {"name": en("The Blood of Martyrs"), "cardType": "detachmentRule", "rules": [
                {"order": 3, "type": "text", "text": en("add 1 to the **Wound** roll as well.")},
                {"order": 1, "type": "header", "text": en("Martyrdom")},
                {"order": 2, "type": "image", "text": en("-")}]},
            {"name": en("Empty"), "rules": [{"order": 1, "type": "image", "text": en("-")}]}]}]}
    records = parse(sheet("Canoness"), rules=rules)
    (rule,) = of(records, DetachmentAbility)
    assert (rule.detachment_ability_id, rule.detachment_id, rule.detachment, rule.faction_id, rule.name, rule.text) == (
        "d-1--the-blood-of-martyrs", "d-1", "Hallowed Martyrs", "adepta-sororitas", "The Blood of Martyrs",
        "Martyrdom\nadd 1 to the Wound roll as well.")
    assert [(r.table_name, r.reason) for r in records if getattr(r, "table_name", None) == "detachment_abilities"] == [
        ("detachment_abilities", "a detachment rule without a text")]


# ---- the real files ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gdc_11e():
    files = {p.name: p.read_text(encoding="utf-8") for p in sorted(GDC_11E.glob("*.json"))}
    return get_extractor("gdc-json-folder")(files, source())


@needs_corpus
def test_corpus_every_faction_datasheet_is_read(gdc_11e):
    sheets = of(gdc_11e.records, Datasheet)
    assert len(sheets) == 899
    assert [r for r in gdc_11e.rejects if r.table_name == "datasheets"] == []
    per_faction = Counter(d.faction_id for d in sheets)
    assert per_faction["space-marines"] == 103 + 18 + 15 + 16 + 10 + 21  # the faction and its chapters
    assert (per_faction["aeldari"], per_faction["tyranids"], per_faction["adepta-sororitas"]) == (72, 52, 33)
    with_models = {m.datasheet_id for m in of(gdc_11e.records, ModelProfile)}
    assert len(with_models) == 899


@needs_corpus
def test_corpus_detachment_rules_are_read(gdc_11e):
    rules = of(gdc_11e.records, DetachmentAbility)
    per_faction = Counter(r.faction_id for r in rules)
    assert (per_faction["adepta-sororitas"], per_faction["astra-militarum"], per_faction["tyranids"]) == (8, 12, 11)
    (martyrs,) = [r for r in rules if r.name == "The Blood of Martyrs"]
    assert martyrs.detachment == "Hallowed Martyrs" and martyrs.text.startswith(
        "Each time an ADEPTA SORORITAS model from your army makes an attack, add 1 to the Hit roll")


@needs_corpus
def test_corpus_adrax_agatone(gdc_11e):
    sid = "11e/space-marines/adrax-agatone"
    (model,) = [m for m in of(gdc_11e.records, ModelProfile) if m.datasheet_id == sid]
    assert (model.toughness, model.save, model.wounds, model.invulnerable_save, model.move_inches) == (4, 2, 5, 4, 6)
    assert [(c.cost_points, c.model_count) for c in of(gdc_11e.records, UnitCost) if c.datasheet_id == sid] == [(80, 1)]
    links = {link.bodyguard_name for link in of(gdc_11e.records, LeaderLink) if link.leader_datasheet_id == sid}
    assert {"Intercessor Squad", "Tactical Squad", "Sternguard Veteran Squad"} <= links


@needs_corpus
def test_corpus_seed_combat_patrol_gets_its_characteristics(tmp_path):
    from pipeline.build import build

    raw = tmp_path / "raw"
    (raw / "gdc-10e-combatpatrol").mkdir(parents=True)
    shutil.copy(GDC_10E_CP / "sanctuary_guardians.json", raw / "gdc-10e-combatpatrol")
    seed = "wahapedia-10e-combat-patrol-sanctuary-guardians.txt"
    shutil.copy(ROOT / "raw" / seed, raw / seed)
    manifest = (ROOT / "raw" / "manifest.toml").read_text(encoding="utf-8")
    entry = manifest.split("\n[[source]]\n")[1]  # the seed page
    (raw / "manifest.toml").write_text(
        "[[source]]\n" + entry.lstrip("\n") + '\n[[source]]\nid = "gdc-10e-combat-patrol"\nfile = "gdc-10e-combatpatrol/"\n'
        'format = "gdc-json-folder"\ntitle = "t"\npublisher = "Game Datacards"\nedition = 10\n'
        'kind = "combat-patrol"\ngame_mode = "combat-patrol"\nversion_date = 2026-07-23\norigin = "corpus"\n',
        encoding="utf-8")
    report = build(raw, tmp_path / "cp.duckdb")
    assert report.inconsistent == []
    con = duckdb.connect(str(tmp_path / "cp.duckdb"), read_only=True)
    row = con.execute("SELECT move_inches, toughness, save, wounds, leadership, objective_control, source_id "
                      "FROM model_profiles WHERE datasheet_id = 'cp-sanctuary-guardians/canoness-adalya'").fetchall()
    assert row == [(6, 3, 3, 4, 7, 1, "gdc-10e-combat-patrol")]
    assert con.execute("SELECT count(*) FROM datasheets").fetchone()[0] == 4  # one datasheet per unit
    # the seed's gaps that Game Datacards fills are gone; the wound table it lost stays
    gaps = con.execute("SELECT table_name, field FROM data_gaps WHERE source_id LIKE 'wahapedia%'").fetchall()
    assert gaps == [("rule_texts", "wound table")]
    files = con.execute("SELECT source_id, file FROM source_files ORDER BY ALL").fetchall()
    assert files == [("gdc-10e-combat-patrol", "sanctuary_guardians.json"), ("wahapedia-10e-cp-sanctuary-guardians", seed)]
