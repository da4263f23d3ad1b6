"""Merging sources (case P30 and its neighbours): one row per key, conflicts kept, gaps filled."""

from __future__ import annotations

import datetime as dt

from pipeline.build import account, validate
from pipeline.extractors import ParseResult
from pipeline.normalise.characteristics import dice
from schemas.records import DataFlag, DataGap, Datasheet, ExternalId, ModelProfile, Source, WeaponAbility, WeaponProfile


def source(sid: str, kind: str, date: dt.date | None = None, mode=None) -> Source:
    return Source(source_id=sid, title=sid, file=f"{sid}.txt", format="x", publisher="p", edition=10,
                  kind=kind, game_mode=mode, version=None, version_date=date, origin="test")


def sheet(sid: str, did: str = "10e/x/unit", name: str = "Unit", mode=None) -> Datasheet:
    return Datasheet(source_id=sid, locator="line 1", datasheet_id=did, name=name, faction_id="x",
                     edition=10, game_mode=mode, starting_strength=5)


def profile(sid: str, t: int, w: int, oc: int, did: str = "10e/x/unit") -> ModelProfile:
    return ModelProfile(source_id=sid, locator="row 7", datasheet_id=did, line=1, model_name="Unit",
                        move_inches=6, move_text='6"', toughness=t, save=3, invulnerable_save=None,
                        invulnerable_save_scope=None, wounds=w, leadership=6, objective_control=oc)


def test_p30_official_over_wahapedia_with_conflicts_recorded():
    sources = [source("wahapedia", "export", dt.date(2025, 11, 14)), source("official", "codex", dt.date(2025, 1, 1))]
    results = {
        "wahapedia": ParseResult(records=[sheet("wahapedia"), profile("wahapedia", 10, 12, 8)]),
        "official": ParseResult(records=[sheet("official"), profile("official", 9, 14, 6)]),
    }
    valid = validate(sources, results)
    records, rejects, duplicates, conflicts, filled = (
        valid.records, valid.rejects, valid.duplicates, valid.conflicts, valid.filled)
    (p,) = [r for r in records if isinstance(r, ModelProfile)]
    assert (p.toughness, p.wounds, p.objective_control, p.source_id) == (9, 14, 6, "official")
    got = {(c.field, c.value_a, c.source_id_a, c.value_b, c.source_id_b, c.chosen_source_id) for c in conflicts}
    assert got == {
        ("toughness", "9", "official", "10", "wahapedia", "official"),
        ("wounds", "14", "official", "12", "wahapedia", "official"),
        ("objective_control", "6", "official", "8", "wahapedia", "official"),
    }
    assert all(c.reason == "precedence: codex (40) over export (10)" for c in conflicts)
    # the identical datasheet rows collapse; the merged profile counts as a duplicate of its source
    assert duplicates[("wahapedia", "datasheets")] == 1 and duplicates[("wahapedia", "model_profiles")] == 1
    assert rejects == [] and filled == []
    acc = {(a.source_id, a.stage, a.table_name): a for a in account(sources, results, valid)}
    a = acc[("wahapedia", "validate", "model_profiles")]
    assert (a.input_rows, a.loaded, a.duplicates, a.rejected) == (1, 0, 1, 0)


def test_same_kind_later_date_wins():
    sources = [source("old", "export", dt.date(2024, 1, 1)), source("new", "export", dt.date(2025, 1, 1))]
    results = {"old": ParseResult(records=[sheet("old"), profile("old", 4, 2, 2)]),
               "new": ParseResult(records=[sheet("new"), profile("new", 5, 2, 2)])}
    valid = validate(sources, results)
    records, conflicts = valid.records, valid.conflicts
    assert [r.toughness for r in records if isinstance(r, ModelProfile)] == [5]
    (c,) = conflicts
    assert (c.field, c.chosen_source_id, c.reason) == (
        "toughness", "new", "precedence: later version date 2025-01-01 over 2024-01-01")


def test_same_source_collision_is_rejected_not_overwritten():
    sources = [source("s", "export")]
    results = {"s": ParseResult(records=[sheet("s"), profile("s", 4, 2, 2), profile("s", 5, 2, 2)])}
    valid = validate(sources, results)
    records, rejects, conflicts = valid.records, valid.rejects, valid.conflicts
    assert [r.toughness for r in records if isinstance(r, ModelProfile)] == [4]
    (r,) = rejects
    assert "already loaded" in r.reason and conflicts == []


def test_combat_patrol_characteristics_filled_from_twin_with_its_source():
    sources = [source("cp", "combat-patrol", dt.date(2024, 6, 1), mode="combat-patrol"), source("export", "export")]
    results = {
        "cp": ParseResult(records=[
            sheet("cp", "cp/battle-sisters-squad", "Battle Sisters Squad", mode="combat-patrol"),
            sheet("cp", "cp/canoness-adalya", "Canoness Adalya", mode="combat-patrol"),
        ]),
        "export": ParseResult(records=[
            sheet("export", "10e/as/battle-sisters-squad", "BATTLE SISTERS SQUAD"),
            profile("export", 3, 1, 2, did="10e/as/battle-sisters-squad"),
        ]),
    }
    valid = validate(sources, results)
    filled = valid.filled
    (copy,) = [r for r in filled if isinstance(r, ModelProfile)]
    assert (copy.datasheet_id, copy.toughness, copy.source_id, copy.locator) == (
        "cp/battle-sisters-squad", 3, "export", "row 7")
    (flag,) = [r for r in filled if isinstance(r, DataFlag)]
    assert flag.flag == "characteristics_filled_from_twin" and "10e/as/battle-sisters-squad" in flag.detail
    # Canoness Adalya has no twin: nothing is invented
    assert not [r for r in filled if getattr(r, "datasheet_id", "") == "cp/canoness-adalya"]
    # the twin's own rows are accounted once; the copies are not input rows of any source
    acc = {(a.source_id, a.stage, a.table_name): a for a in account(sources, results, valid)}
    assert acc[("export", "validate", "model_profiles")].loaded == 1


def weapon(sid: str, did: str, name: str, skill: int, profile_name: str = "") -> WeaponProfile:
    return WeaponProfile(source_id=sid, locator=f"{sid} weapon", datasheet_id=did, weapon_name=name,
                         profile_name=profile_name, is_melee=True, range_inches=None, attacks=dice("3"),
                         skill=skill, strength=8, armour_penetration=-2, damage=dice("2"),
                         abilities_text="devastating wounds")


def weapon_ability(sid: str, did: str, name: str) -> WeaponAbility:
    return WeaponAbility(source_id=sid, locator=f"{sid} weapon", datasheet_id=did, weapon_name=name,
                         profile_name="", is_melee=True, position=1, name="DEVASTATING WOUNDS",
                         target_keyword=None, threshold=None, value=None, raw_text="devastating wounds")


def test_a_spelling_twin_is_one_datasheet_and_a_weapon_in_another_case_one_profile():
    sources = [source("export", "export", dt.date(2025, 11, 14)), source("cat", "export")]
    gb, us = "10e/x/ancient-in-terminator-armour", "10e/x/ancient-in-terminator-armor"
    results = {
        "export": ParseResult(records=[
            sheet("export", gb, "Ancient In Terminator Armour").model_copy(update={"external_id": "000002677"}),
            weapon("export", gb, "Thunder hammer", 4), weapon_ability("export", gb, "Thunder hammer"),
        ]),
        "cat": ParseResult(records=[
            sheet("cat", us, "Ancient in Terminator Armor").model_copy(update={"external_id": "fc7f"}),
            weapon("cat", us, "Thunder Hammer", 3), weapon_ability("cat", us, "Thunder Hammer"),
            DataGap(source_id="cat", locator="entry", table_name="datasheets", entity_key=f"{us}|link-7",
                    field="profile", reason="link not resolved"),
        ]),
    }
    valid = validate(sources, results)
    of = lambda kind: [r for r in valid.records if isinstance(r, kind)]  # noqa: E731
    # the first source's id and printed names are kept; the other source's rows moved onto them
    assert [(d.datasheet_id, d.name, d.source_id) for d in of(Datasheet)] == [
        (gb, "Ancient In Terminator Armour", "export")]
    assert [(w.datasheet_id, w.weapon_name, w.skill, w.source_id) for w in of(WeaponProfile)] == [
        (gb, "Thunder hammer", 4, "export")]
    assert [(a.weapon_name, a.source_id) for a in of(WeaponAbility)] == [("Thunder hammer", "export")]
    assert [g.entity_key for g in of(DataGap)] == [f"{gb}|link-7"]
    # the one disagreement: the Weapon Skill, with both values and sources; the ids are no conflict
    assert [(c.table_name, c.entity_key, c.field, c.value_a, c.source_id_a, c.value_b, c.source_id_b)
            for c in valid.conflicts] == [
        ("weapon_profiles", f"{gb}|Thunder hammer|melee|", "skill", "4", "export", "3", "cat")]
    assert sorted((e.datasheet_id, e.source_id, e.external_id, e.locator) for e in of(ExternalId)) == [
        (gb, "cat", "fc7f", "line 1"), (gb, "export", "000002677", "line 1")]
    assert valid.rejects == []
    acc = {(a.source_id, a.stage, a.table_name): a for a in account(sources, results, valid)}
    a = acc[("cat", "validate", "weapon_profiles")]
    assert (a.input_rows, a.loaded, a.duplicates, a.rejected) == (1, 0, 1, 0)


def test_two_datasheets_or_weapons_of_one_source_are_never_joined():
    sources = [source("export", "export", dt.date(2025, 11, 14)), source("cat", "export")]
    gb = "10e/x/unit-armour"
    results = {
        "export": ParseResult(records=[sheet("export", gb, "Unit Armour"), weapon("export", gb, "Boltgun", 3)]),
        # the later source prints both spellings of the unit and two cases of the weapon: ambiguous
        "cat": ParseResult(records=[
            sheet("cat", "10e/x/unit-armor", "Unit Armor"), sheet("cat", "10e/x/unit-armour--2", "Unit ARMOUR"),
            weapon("cat", gb, "BOLTGUN", 3), weapon("cat", gb, "boltgun", 4),
        ]),
    }
    valid = validate(sources, results)
    assert sorted(d.datasheet_id for d in valid.records if isinstance(d, Datasheet)) == [
        "10e/x/unit-armor", gb, "10e/x/unit-armour--2"]
    assert sorted(w.weapon_name for w in valid.records if isinstance(w, WeaponProfile)) == [
        "BOLTGUN", "Boltgun", "boltgun"]
    assert valid.conflicts == [] and valid.rejects == []


def test_model_lines_named_in_the_plural_by_one_source_are_matched_and_agree():
    sources = [source("export", "export", dt.date(2025, 11, 14)), source("cat", "export")]
    line = lambda sid, n, name: profile(sid, 3, 1, 2).model_copy(update={"line": n, "model_name": name})  # noqa: E731
    results = {
        "export": ParseResult(records=[sheet("export"), line("export", 1, "SISTERS REPENTIA"),
                                       line("export", 2, "Repentia Superior")]),
        "cat": ParseResult(records=[sheet("cat"), line("cat", 1, "Repentia Superior"),
                                    line("cat", 2, "Sister Repentia")]),
    }
    valid = validate(sources, results)
    assert sorted((p.line, p.model_name, p.source_id) for p in valid.records if isinstance(p, ModelProfile)) == [
        (1, "SISTERS REPENTIA", "export"), (2, "Repentia Superior", "export")]
    assert valid.conflicts == []


def _line(sid: str, n: int, model: str, low: int, high: int):
    from schemas.records import UnitComposition

    return UnitComposition(source_id=sid, locator=f"row {n}", datasheet_id="10e/x/unit", line=n, model_name=model,
                           min_models=low, max_models=high, text=f"{low}-{high} {model}")


def _loadout(sid: str, n: int, models: str, equipment: str = "boltgun"):
    from schemas.records import WargearLoadout

    return WargearLoadout(source_id=sid, locator=f"row {n}", datasheet_id="10e/x/unit", line=n, models=models,
                          model_count=None, equipment=equipment, text=f"{models} is equipped with: {equipment}.")


def test_a_composition_and_a_loadout_are_taken_whole_from_the_first_source():
    from schemas.records import UnitComposition, WargearLoadout

    sources = [source("printed", "export", dt.date(2025, 1, 1)), source("catalogue", "export", None)]
    results = {
        "printed": ParseResult(records=[sheet("printed"), _line("printed", 1, "Sergeant", 1, 1),
                                        _line("printed", 2, "Troopers", 4, 9), _loadout("printed", 1, "Every model")]),
        # three option slots where the print has two lines: merged line by line, line 3 would be added
        "catalogue": ParseResult(records=[sheet("catalogue"), _line("catalogue", 1, "Sergeant", 1, 1),
                                          _line("catalogue", 2, "Trooper", 9, 9), _line("catalogue", 3, "Flamer", 0, 1),
                                          _loadout("catalogue", 1, "1x Sergeant"), _loadout("catalogue", 2, "9x Trooper")]),
    }
    valid = validate(sources, results)
    kept = [(r.__table__, r.line, r.source_id) for r in valid.records if isinstance(r, (UnitComposition, WargearLoadout))]
    assert kept == [("unit_composition", 1, "printed"), ("unit_composition", 2, "printed"),
                    ("wargear_loadouts", 1, "printed")]
    assert valid.duplicates[("catalogue", "unit_composition")] == 3
    assert valid.duplicates[("catalogue", "wargear_loadouts")] == 2
    # the one value compared: the smallest unit each composition allows (1 + 4 against 1 + 9 + 0)
    assert [(c.table_name, c.entity_key, c.field, c.value_a, c.value_b, c.chosen_source_id, c.reason)
            for c in valid.conflicts] == [
        ("unit_composition", "10e/x/unit", "unit size", "5", "10", "printed",
         "precedence: later version date 2025-01-01 over None; the composition is taken whole")]
    acc = {(a.source_id, a.stage, a.table_name): a for a in account(sources, results, valid)}
    a = acc[("catalogue", "validate", "unit_composition")]
    assert (a.input_rows, a.loaded, a.duplicates, a.rejected) == (3, 0, 3, 0)


def test_lines_of_one_publisher_that_line_up_merge_line_by_line_another_publisher_s_do_not():
    sources = [source("page", "datasheet-page", dt.date(2025, 1, 1)), source("export", "export", dt.date(2025, 1, 1)),
               source("catalogue", "export", None).model_copy(update={"publisher": "another"})]
    results = {sid: ParseResult(records=[sheet(sid), _line(sid, 1, "Sergeant", 1, 1),
                                         _line(sid, 2, "Troopers", low, 9), _loadout(sid, 1, "Every model", gun)])
               for sid, low, gun in (("page", 4, "boltgun"), ("export", 9, "bolt rifle"), ("catalogue", 9, "Boltgun"))}
    valid = validate(sources, results)
    # the export prints the page's lines: its other count is a conflict of that line
    assert sorted((c.entity_key, c.field, c.value_a, c.source_id_b) for c in valid.conflicts) == [
        ("10e/x/unit", "unit size", "5", "catalogue"),
        ("10e/x/unit|1", "equipment", "boltgun", "export"),
        ("10e/x/unit|1", "text", "Every model is equipped with: boltgun.", "export"),
        ("10e/x/unit|2", "min_models", "4", "export"),
        ("10e/x/unit|2", "text", "4-9 Troopers", "export"),
    ]
    # the catalogue's lines name the same models, but are another publisher's: set aside, their size compared
    assert valid.duplicates[("catalogue", "unit_composition")] == 2
    assert valid.duplicates[("catalogue", "wargear_loadouts")] == 1
