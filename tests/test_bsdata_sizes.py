"""BattleScribe unit sizes and default loadouts (``pipeline.parsers.bsdata_roster``), on a small
made-up catalogue (``tests/data/bsdata_sizes.cat``)."""

from __future__ import annotations

import json
from pathlib import Path


from pipeline.parsers.bsdata_catalogue import parse_cat_json, parse_cat_xml, read_xml
from schemas.records import DataGap, Datasheet, Source, UnitComposition, WargearLoadout
from tests.conftest import records_as_json

CATALOGUE = Path(__file__).parent / "data" / "bsdata_sizes.cat"
SOURCE = Source(source_id="sizes-test", title="Sizes Test", file="bsdata-10e/Sizes Test.cat", format="bsdata-cat-xml",
                publisher="test", edition=10, kind="export", game_mode=None, version=None, version_date=None,
                origin="made up for the tests")
SQUAD, WALKERS, HERO, SWARM = (f"10e/astra-militarum/{n}" for n in ("test-squad", "test-walkers", "test-hero", "test-swarm"))


def parsed():
    return parse_cat_xml(CATALOGUE.read_text(encoding="utf-8"), SOURCE)


def of(result, kind):
    return [r for r in result.records if isinstance(r, kind)]


def test_sizes_from_the_constraints_a_group_filled_with_its_default_entry():
    result = parsed()
    rows = [(c.datasheet_id, c.line, c.model_name, c.min_models, c.max_models, c.text) for c in of(result, UnitComposition)]
    assert rows == [
        # 1 Sergeant; the group "4-9 Troopers" (min 4) filled with its default Trooper (min 2): 4;
        # the hidden entry is never selected, the optional flamer trooper is inside the group's line
        (SQUAD, 1, "Sergeant", 1, 1, "1 Sergeant"),
        (SQUAD, 2, "Troopers", 4, 9, "4-9 Troopers"),
        (WALKERS, 1, "Walkers", 1, 3, "1-3 Walkers"),
        (HERO, 1, "Test Hero", 1, 1, "1 Test Hero"),
    ]
    starting = {d.datasheet_id: d.starting_strength for d in of(result, Datasheet)}
    assert starting == {SQUAD: None, WALKERS: None, HERO: 1, SWARM: None}  # a range is no printed count


def test_default_loadout_lines_with_their_model_counts():
    lines = [(w.datasheet_id, w.line, w.models, w.model_count, w.equipment, w.text) for w in of(parsed(), WargearLoadout)]
    assert lines == [
        # the Sergeant's weapon group defaults to its Lasgun link; the Enhancements group is not walked
        (SQUAD, 1, "1x Sergeant", 1, "Lasgun; Laspistol; Close combat weapon",
         "1x Sergeant is equipped with: Lasgun; Laspistol; Close combat weapon."),
        (SQUAD, 2, "4x Trooper", 4, "Lasgun; Close combat weapon",
         "4x Trooper are equipped with: Lasgun; Close combat weapon."),
        # "2 Heavy bolters" holds a link with min 2: two per model; the optional missile is not in it
        (WALKERS, 1, "Every model", None, "2 Heavy bolter", "Every model is equipped with: 2 Heavy bolter."),
        (HERO, 1, "This model", 1, "Laspistol", "This model is equipped with: Laspistol."),
    ]


def test_a_weapon_choice_without_default_is_a_gap_never_a_guess():
    gaps = [(g.table_name, g.entity_key, g.field, g.locator, g.reason) for g in of(parsed(), DataGap)]
    assert gaps == [(
        "wargear_loadouts", f"{HERO}|g-hero-melee", "default selection",
        "Sizes Test.cat selectionEntryGroup[@id='g-hero-melee']",
        "group 'Melee Weapon' asks for 1 selection(s), its entries' minimums give 0 and it names no default: "
        "the choice is the player's",
    )]


def test_the_json_reader_gives_the_same_sizes_and_loadouts():
    text = CATALOGUE.read_text(encoding="utf-8")
    assert records_as_json(parse_cat_json(json.dumps(read_xml(text)), SOURCE).records) == records_as_json(parsed().records)
