"""Attacker loadouts and target saves read from the database (``pipeline.engine.from_db``), on a
small database written from hand-made records: loadout items with a count ("2 godhammer
lascannons"), units whose loadout fires nothing in a phase, optional weapons, loadout weapons
without a profile, and invulnerable saves scoped to ranged or melee attacks or to one model."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from pipeline.engine.service import AttackRequest, attack
from pipeline.errors import InputError
from pipeline.load import load_database
from pipeline.normalise.characteristics import dice
from schemas.records import (
    Ability,
    Datasheet,
    ModelProfile,
    Reject,
    RuleText,
    WargearLoadout,
    WeaponAbility,
    WeaponProfile,
)

SRC = "test-source"


def _sheet(ds: str, name: str, models: int | None, external_id: str | None = None) -> Datasheet:
    return Datasheet(datasheet_id=ds, name=name, faction_id="test", edition=10, game_mode=None,
                     starting_strength=models, external_id=external_id, source_id=SRC, locator=f"{ds} sheet")


def _weapon(ds: str, name: str, a: str, skill: int, s: int, ap: int, d: str, melee: bool = False,
            profile: str = "") -> WeaponProfile:
    return WeaponProfile(datasheet_id=ds, weapon_name=name, profile_name=profile, is_melee=melee,
                         range_inches=None if melee else 24, attacks=dice(a), skill=skill, strength=s,
                         armour_penetration=ap, damage=dice(d), abilities_text="", source_id=SRC,
                         locator=f"{ds} {name} {profile}")


def _loadout(ds: str, line: int, models: str, equipment: str, count: int | None = None) -> WargearLoadout:
    return WargearLoadout(datasheet_id=ds, line=line, models=models, model_count=count, equipment=equipment,
                          text=f"{models} is equipped with: {equipment}.", source_id=SRC, locator=f"{ds} {line}")


def _model(ds: str, name: str, t: int, sv: int | None, w: int, inv: int | None = None,
           scope: str | None = None, line: int = 1) -> ModelProfile:
    return ModelProfile(datasheet_id=ds, line=line, model_name=name, move_inches=6, move_text='6"', toughness=t,
                        save=sv, invulnerable_save=inv, invulnerable_save_scope=scope, wounds=w, leadership=7,
                        objective_control=1, source_id=SRC, locator=f"{ds} model {line}")


def _pistol(ds: str, name: str) -> WeaponAbility:
    return WeaponAbility(datasheet_id=ds, weapon_name=name, profile_name="", is_melee=False, position=0,
                         name="PISTOL", target_keyword=None, threshold=None, value=None, raw_text="pistol",
                         source_id=SRC, locator=f"{ds} {name} pistol")


def _records() -> list:
    raider, walker, servitor = "t/land-raider", "t/war-walker", "t/servitor"
    sisters, captain, veteran, none = "t/sisters", "t/captain", "t/veteran", "t/no-loadout"
    return [
        # "This model: 2 godhammer lascannons; twin heavy bolter; armoured tracks"
        _sheet(raider, "Test Land Raider", 1),
        _weapon(raider, "Godhammer lascannon", "2", 2, 12, -3, "D6+1"),
        _weapon(raider, "Twin heavy bolter", "3", 2, 5, -1, "2"),
        _weapon(raider, "Hunter-killer missile", "1", 2, 14, -3, "D6"),
        _weapon(raider, "Armoured tracks", "6", 4, 8, 0, "1", melee=True),
        _loadout(raider, 1, "This model", "2 godhammer lascannons; twin heavy bolter; armoured tracks"),
        # every model carries two shuriken cannons (a number word), plus a weapon option
        _sheet(walker, "Test War Walkers", 3),
        _weapon(walker, "Shuriken cannon", "3", 3, 6, -1, "2"),
        _weapon(walker, "Bright lance", "1", 3, 12, -3, "D6+2"),
        _weapon(walker, "War Walker feet", "2", 4, 5, 0, "1", melee=True),
        _loadout(walker, 1, "Every model", "two shuriken cannons; War Walker feet"),
        # a melee loadout whose ranged weapons are all options
        _sheet(servitor, "Test Servitors", 4),
        _weapon(servitor, "Servitor’s servo-arm", "1", 5, 8, -2, "3", melee=True),
        _weapon(servitor, "Heavy bolter", "3", 5, 5, -1, "2"),
        _weapon(servitor, "Multi-melta", "2", 5, 9, -4, "D6"),
        _loadout(servitor, 1, "Every model", "Servitor’s servo-arm"),
        # a squad with an optional weapon
        _sheet(sisters, "Test Sisters", 10),
        _weapon(sisters, "Boltgun", "1", 3, 4, 0, "1"),
        _weapon(sisters, "Ministorum flamer", "D6", 3, 4, 0, "1"),
        _weapon(sisters, "Close combat weapon", "1", 4, 3, 0, "1", melee=True),
        _loadout(sisters, 1, "Every model", "boltgun; close combat weapon; storm shield"),
        Ability(datasheet_id=sisters, kind="wargear", name="Storm shield", parameter=None, text="+1 Sv.",
                source_id=SRC, locator="sisters storm shield"),
        # a loadout weapon whose profile row was rejected at build, beside a Pistol
        _sheet(captain, "Test Captain", 1, external_id="000000099"),
        _weapon(captain, "Bolt pistol", "1", 2, 4, 0, "1"),
        _weapon(captain, "Power weapon", "5", 2, 5, -2, "1", melee=True),
        _pistol(captain, "Bolt pistol"),
        _loadout(captain, 1, "This model", "bolt pistol; combi-bolter; power weapon"),
        Reject(table_name="Datasheets_wargear", raw_text='000000099|2|Combi-bolter|24"|2|2+|4|0|x|',
               reason="damage 'x' is not a dice expression", source_id=SRC,
               locator="Datasheets_wargear.csv line 7"),
        # a Pistol and another ranged weapon: the Pistol is not fired (Pistol, 10th edition)
        _sheet(veteran, "Test Veteran", 1),
        _weapon(veteran, "Bolt pistol", "1", 3, 4, 0, "1"),
        _weapon(veteran, "Boltgun", "2", 3, 4, 0, "1"),
        _pistol(veteran, "Bolt pistol"),
        _loadout(veteran, 1, "This model", "bolt pistol; boltgun"),
        # weapons but no loadout line
        _sheet(none, "Test No Loadout", 5),
        _weapon(none, "Boltgun", "1", 3, 4, 0, "1"),
        _weapon(none, "Plasma gun", "1", 3, 7, -2, "1"),
        # targets: Rangers-like (5+ invulnerable save against ranged attacks only), and others
        _sheet("t/rangers", "Test Rangers", 5), _model("t/rangers", "Ranger", 3, 5, 1, 5, "ranged"),
        _sheet("t/judge", "Test Judiciar", 1), _model("t/judge", "Judiciar", 4, 3, 4, 4, "melee"),
        _sheet("t/plain", "Test Plain", 5), _model("t/plain", "Guard", 3, 5, 1, 5),
        _sheet("t/gaunt", "Test Gaunt", 1), _model("t/gaunt", "IBRAM GAUNT", 3, 5, 1, 5, "Ibram Gaunt only."),
        _sheet("t/ghosts", "Test Ghosts", 5), _model("t/ghosts", "TANITH GHOST", 3, 5, 1, 5, "Ibram Gaunt only."),
        _sheet("t/subductor", "Test Subductors", 5),
        _model("t/subductor", "Subductor", 3, 5, 1, 5, "Excluding the Cyber-mastiff."),
        _sheet("t/mastiff", "Test Mastiff", 1),
        _model("t/mastiff", "Cyber-mastiff", 3, 5, 1, 5, "Excluding the Cyber-mastiff."),
        _sheet("t/archon", "Test Archon", 1),
        _model("t/archon", "Archon", 3, 5, 1, 2, "See Shadowfield ability (below)"),
        _sheet("t/odd", "Test Odd", 1), _model("t/odd", "Odd", 3, 5, 1, 5, "While on an objective."),
        # rule texts: a Combat Patrol wording only, and a matched-play one
        RuleText(rule_key="hit-roll", title="Hit Roll", section=None, edition=10, game_mode="combat-patrol",
                 effective_date=None, text="Each time an attack is made, a Hit roll must be made.",
                 source_id="test-cp", locator="line 321"),
        RuleText(rule_key="wound-roll", title="Wound Roll", section=None, edition=10, game_mode=None,
                 effective_date=None, text="Each time an attack scores a hit, make a Wound roll.",
                 source_id="test-core", locator="rule 7"),
    ]


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("attack-db") / "attack.duckdb"
    load_database(_records(), path)
    return path


def _fired(out) -> dict[str, int]:
    return {w.name: w.models for w in out.weapons}


# --- loadout items with a count -------------------------------------------------------------


def test_counted_plural_loadout_item_fires_each_weapon(db):
    out = attack(AttackRequest(attacker="Test Land Raider", target="T10 Sv3+ W12"), db)
    assert _fired(out) == {"Godhammer lascannon": 2, "Twin heavy bolter": 1}
    r = out.result
    assert r.attacks.mean == pytest.approx(7, abs=1e-12)
    # 4 lascannon shots hit on 2+ and wound T10 with S12 on 3+; 3 bolter shots wound S5 v T10 on 6+
    hits = 4 * Fraction(5, 6) + 3 * Fraction(5, 6)
    wounds = 4 * Fraction(5, 6) * Fraction(2, 3) + 3 * Fraction(5, 6) * Fraction(1, 6)
    # AP-3 against Sv3+ saves on 6 only; AP-1 on 4+
    unsaved = (4 * Fraction(5, 6) * Fraction(2, 3) * Fraction(5, 6)
               + 3 * Fraction(5, 6) * Fraction(1, 6) * Fraction(1, 2))
    assert r.hits.mean == pytest.approx(float(hits), abs=1e-12)
    assert r.wounds.mean == pytest.approx(float(wounds), abs=1e-12)
    assert r.unsaved.mean == pytest.approx(float(unsaved), abs=1e-12)
    assert unsaved == Fraction(445, 216)


def test_number_word_count_is_per_model_and_scales_with_models(db):
    out = attack(AttackRequest(attacker="Test War Walkers", target="MEQ"), db)
    assert _fired(out) == {"Shuriken cannon": 6}  # 3 models x two each; the option is not fired
    assert out.result.attacks.mean == pytest.approx(18, abs=1e-12)
    # 18 attacks, hit 2/3, S6 v T4 wounds on 3+, AP-1 v Sv3+ fails on 1-3
    assert out.result.unsaved.mean == pytest.approx(float(18 * Fraction(2, 3) * Fraction(2, 3) * Fraction(1, 2)),
                                                    abs=1e-12)
    one = attack(AttackRequest(attacker="Test War Walkers", target="MEQ", models=1), db)
    assert _fired(one) == {"Shuriken cannon": 2}
    named = attack(AttackRequest(attacker="Test War Walkers", target="MEQ", weapons=("shuriken cannons",),
                                 models=2), db)
    assert _fired(named) == {"Shuriken cannon": 4}  # 2 models x the 2 each carries


# --- a loadout that fires nothing in the phase ----------------------------------------------


def test_loadout_without_a_ranged_weapon_is_an_error_not_every_weapon(db):
    with pytest.raises(InputError) as exc:
        attack(AttackRequest(attacker="Test Servitors", target="MEQ"), db)
    message = str(exc.value)
    assert message.startswith("Test Servitors fires no ranged weapon by default")
    assert "Every model: Servitor’s servo-arm" in message
    assert "--weapon" in message and "Heavy bolter, Multi-melta" in message
    fight = attack(AttackRequest(attacker="Test Servitors", target="MEQ", phase="fight"), db)
    assert _fired(fight) == {"Servitor’s servo-arm": 4}


def test_unit_without_loadout_lines_is_an_error(db):
    with pytest.raises(InputError, match="the database has no loadout for it.*Boltgun, Plasma gun"):
        attack(AttackRequest(attacker="Test No Loadout", target="MEQ"), db)
    out = attack(AttackRequest(attacker="Test No Loadout", target="MEQ", weapons=("5 plasma guns",)), db)
    assert _fired(out) == {"Plasma gun": 5}


# --- optional weapons -------------------------------------------------------------------------


def test_optional_weapon_is_fired_by_one_model_with_a_note(db):
    out = attack(AttackRequest(attacker="Test Sisters", target="MEQ", weapons=("ministorum flamer",)), db)
    assert _fired(out) == {"Ministorum flamer": 1}
    assert out.result.attacks.mean == pytest.approx(3.5, abs=1e-12)
    assert any("not in the default loadout of Test Sisters, so fired by 1 model" in n for n in out.notes)
    mixed = attack(AttackRequest(attacker="Test Sisters", target="MEQ",
                                 weapons=("9 boltguns", "1 ministorum flamer")), db)
    assert _fired(mixed) == {"Boltgun": 9, "Ministorum flamer": 1}
    assert not any("default loadout" in n for n in mixed.notes)
    loadout = attack(AttackRequest(attacker="Test Sisters", target="MEQ", weapons=("boltgun",)), db)
    assert _fired(loadout) == {"Boltgun": 10}
    with pytest.raises(InputError, match="at least 1"):
        attack(AttackRequest(attacker="Test Sisters", target="MEQ", weapons=("0 boltguns",)), db)


def test_wargear_that_is_an_ability_is_not_reported_as_a_missing_weapon(db):
    out = attack(AttackRequest(attacker="Test Sisters", target="MEQ"), db)
    assert _fired(out) == {"Boltgun": 10}
    assert not any("storm shield" in n for n in out.notes)


# --- a loadout weapon without a profile -------------------------------------------------------


def test_loadout_weapon_without_a_profile_is_named_and_not_replaced_by_the_pistol(db):
    with pytest.raises(InputError) as exc:
        attack(AttackRequest(attacker="Test Captain", target="MEQ"), db)
    message = str(exc.value)
    assert "items with no weapon profile: 'combi-bolter'" in message
    assert "Pistols not fired in place of such an item: Bolt pistol" in message
    fight = attack(AttackRequest(attacker="Test Captain", target="MEQ", phase="fight"), db)
    assert _fired(fight) == {"Power weapon": 1}
    (note,) = [n for n in fight.notes if "combi-bolter" in n]
    assert "loadout item 'combi-bolter' matches no weapon profile" in note
    assert "rejected at build (Datasheets_wargear.csv line 7: damage 'x' is not a dice expression)" in note


def test_pistol_is_not_fired_beside_another_ranged_weapon(db):
    out = attack(AttackRequest(attacker="Test Veteran", target="MEQ"), db)
    assert _fired(out) == {"Boltgun": 1}


# --- invulnerable saves and their scope -------------------------------------------------------


def test_ranged_only_invulnerable_save_does_not_apply_in_melee(db):
    fight = attack(AttackRequest(attacker="Test Captain", target="Test Rangers", phase="fight",
                                 weapons=("power weapon",)), db)
    # 5 attacks WS2+, S5 v T3 wounds on 3+, AP-2 leaves Sv5+ at 7+: no save
    assert fight.target.invulnerable_save is None
    assert fight.result.unsaved.mean == pytest.approx(float(Fraction(25, 9)), abs=1e-12)
    assert Fraction(25, 9) == 5 * Fraction(5, 6) * Fraction(2, 3)
    plain = attack(AttackRequest(attacker="Test Captain", target="T3 Sv5+ W1 x5", phase="fight",
                                 weapons=("power weapon",)), db)
    assert fight.result.unsaved.mean == pytest.approx(plain.result.unsaved.mean, abs=1e-15)
    assert any("against ranged attacks only, so it does not apply in the fight phase" in n for n in fight.notes)
    shooting = attack(AttackRequest(attacker="Test No Loadout", target="Test Rangers",
                                    weapons=("5 plasma guns",)), db)
    # 5 attacks BS3+, S7 v T3 wounds on 2+, AP-2: the 5+ invulnerable save holds
    assert shooting.target.invulnerable_save == 5
    assert shooting.result.unsaved.mean == pytest.approx(
        float(5 * Fraction(2, 3) * Fraction(5, 6) * Fraction(2, 3)), abs=1e-12)


def test_melee_only_invulnerable_save_applies_in_the_fight_phase_only(db):
    fight = attack(AttackRequest(attacker="Test Captain", target="Test Judiciar", phase="fight",
                                 weapons=("power weapon",)), db)
    assert fight.target.invulnerable_save == 4
    # 5 attacks WS2+, S5 v T4 wounds on 3+, AP-2: Sv3+ becomes 5+, the 4+ invulnerable save is better
    assert fight.result.unsaved.mean == pytest.approx(float(5 * Fraction(5, 6) * Fraction(2, 3) * Fraction(1, 2)),
                                                      abs=1e-12)
    shooting = attack(AttackRequest(attacker="Test No Loadout", target="Test Judiciar",
                                    weapons=("5 plasma guns",)), db)
    assert shooting.target.invulnerable_save is None
    assert any("against melee attacks only, so it does not apply in the shooting phase" in n
               for n in shooting.notes)


@pytest.mark.parametrize("target, expected, note", [
    ("Test Plain", 5, None),
    ("Test Gaunt", 5, "for Ibram Gaunt only"),
    ("Test Ghosts", None, "not TANITH GHOST: not applied"),
    ("Test Subductors", 5, "applies to the Subductor models"),
    ("Test Mastiff", None, "excludes Cyber-mastiff"),
    ("Test Archon", None, "depends on Shadowfield"),
    ("Test Odd", None, "scope the engine cannot read ('While on an objective.')"),
])
def test_every_invulnerable_save_scope_of_the_data(db, target, expected, note):
    out = attack(AttackRequest(attacker="Test Veteran", target=target), db)
    assert out.target.invulnerable_save == expected
    notes = [n for n in out.notes if "invulnerable save" in n]
    if note is None:
        assert notes == []
    else:
        (text,) = notes
        assert note in text


# --- --explain --------------------------------------------------------------------------------


def test_explain_cites_stored_wordings_and_names_combat_patrol_only_ones(db):
    out = attack(AttackRequest(attacker="Test Veteran", target="MEQ"), db)
    by_key = {e.rule_key: e for e in out.explained}
    assert (by_key["wound-roll"].source_id, by_key["wound-roll"].locator) == ("test-core", "rule 7")
    hit = by_key["hit-roll"]
    assert hit.source_id is None and hit.title is None
    assert hit.note == "combat-patrol games only: test-cp, line 321"
    saves = by_key["save-rolls"]
    assert saves.source_id is None and saves.note is None
