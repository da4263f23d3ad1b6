"""BattleScribe unit sizes and default loadouts (``pipeline.extractors.bsdata_roster``), the build's
``data_gaps`` row for a datasheet with no model count, and the attack engine's refusal to assume
one model: on a small made-up catalogue (``tests/data/bsdata_sizes.cat``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.build import validate
from pipeline.engine.service import AttackRequest, attack
from pipeline.errors import InputError
from pipeline.load import load_database
from pipeline.extractors.bsdata_catalogue import parse_cat_json, parse_cat_xml, read_xml
from schemas.records import DataGap, Datasheet, Source, UnitComposition, WargearLoadout
from tests.conftest import records_as_json
from tests.test_build_and_cli import wh40k

CATALOGUE = Path(__file__).parent / "data" / "bsdata_sizes.cat"
SOURCE = Source(source_id="sizes-test", title="Sizes Test", file="bsdata-10e/Sizes Test.cat", format="bsdata-cat-xml",
                publisher="test", edition=10, kind="export", game_mode=None, version=None, version_date=None,
                origin="made up for the tests")
SQUAD, WALKERS, HERO, SWARM = (f"10e/astra-militarum/{n}" for n in ("test-squad", "test-walkers", "test-hero", "test-swarm"))
NO_COUNT = ("Test Swarm (10e/astra-militarum/test-swarm) has no model count in the database (no starting strength, "
            "no 'N models' points line, and no composition lines; its data_gaps row: table datasheets, field "
            "starting_strength); give the number of models with ")


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


def test_a_datasheet_with_no_model_count_gets_a_data_gap():
    valid = validate([SOURCE], {SOURCE.source_id: parsed()})
    gaps = [g for g in valid.filled if isinstance(g, DataGap)]
    assert [(g.table_name, g.entity_key, g.field, g.source_id, g.locator, g.reason) for g in gaps] == [(
        "datasheets", SWARM, "starting_strength", "sizes-test", "Sizes Test.cat selectionEntry[@id='u-swarm']",
        "no model count: no starting strength, no 'N models' points line, and no composition lines; an attack on "
        "it needs --target-models N (as an attacker, --models N)",
    )]


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("sizes") / "sizes.duckdb"
    valid = validate([SOURCE], {SOURCE.source_id: parsed()})
    load_database([SOURCE, *valid.records, *valid.filled], path)
    return path


def test_a_unit_fires_its_default_loadout_at_its_smallest_size(db):
    squad = attack(AttackRequest(attacker="Test Squad", target="MEQ"), db)
    # 1 Sergeant and 4 Troopers with lasguns; the Sergeant's laspistol is not fired beside it (Pistol)
    assert [(w.name, w.models) for w in squad.weapons] == [("Lasgun", 5)]
    assert "Test Squad: 5 models (sum of its composition lines)" in squad.notes
    walkers = attack(AttackRequest(attacker="Test Walkers", target="MEQ"), db)
    assert [(w.name, w.models) for w in walkers.weapons] == [("Heavy bolter", 2)]
    # "Every model" scales with the unit's size
    assert [(w.name, w.models) for w in attack(AttackRequest(attacker="Test Walkers", target="MEQ", models=3),
                                               db).weapons] == [("Heavy bolter", 6)]


def test_a_target_with_no_model_count_is_an_error_unless_its_size_is_given(db):
    with pytest.raises(InputError) as error:
        attack(AttackRequest(attacker="Test Squad", target="Test Swarm"), db)
    assert str(error.value) == NO_COUNT + "--target-models N"
    outcome = attack(AttackRequest(attacker="Test Squad", target="Test Swarm", target_models=3), db)
    assert outcome.target.models == 3
    assert not any("Test Swarm" in n and "model" in n for n in outcome.notes)


def test_an_attacker_with_no_model_count_is_an_error_unless_its_size_is_given(db):
    with pytest.raises(InputError) as error:
        attack(AttackRequest(attacker="Test Swarm", target="MEQ", phase="fight"), db)
    assert str(error.value) == NO_COUNT + '--models N (or give each --weapon its number: --weapon "2 boltguns")'
    # with every weapon counted, no size is needed: 3 close combat weapons
    counted = attack(AttackRequest(attacker="Test Swarm", target="MEQ", phase="fight",
                                   weapons=("3 close combat weapons",)), db)
    assert [(w.name, w.models) for w in counted.weapons] == [("Close combat weapon", 3)]
    sized = attack(AttackRequest(attacker="Test Swarm", target="MEQ", phase="fight", models=4,
                                 weapons=("close combat weapon",)), db)
    assert [(w.name, w.models) for w in sized.weapons] == [("Close combat weapon", 4)]


def test_cli_target_with_no_model_count_is_one_error_line_and_target_models_fixes_it(db):
    out = wh40k("attack", "Test Squad", "--target", "Test Swarm", "--db", str(db))
    assert (out.returncode, out.stdout) == (1, "")
    assert out.stderr == f"Error: {NO_COUNT}--target-models N\n"
    out = wh40k("attack", "Test Squad", "--target", "Test Swarm", "--target-models", "3", "--db", str(db),
                "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["target"]["models"] == 3
    assert [(w["name"], w["models"]) for w in data["weapons"]] == [("Lasgun", 5)]
