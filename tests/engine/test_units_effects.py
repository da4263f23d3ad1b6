"""A unit target's rules on its model lines (``pipeline.engine.unit_effects``), through the attack
service, against values derived by hand.

The database: the test database of both editions (``tests/editions_db.py``) with four made-up
abilities added to its 10th-edition export (the Canoness leads the Battle Sisters Squad there):

- Canoness, "Test Aegis": "While this model is leading a unit, models in that unit have the Feel
  No Pain 5+ ability." (every model of the Attached unit, the Canoness included);
- Canoness, "Test Lead": "While this model is leading a unit, each time a model in that unit makes
  an attack, add 1 to the Hit roll." (the attacker's, by ``--with``);
- Battle Sisters Squad, "Test Vow": "While a CHARACTER model is leading this unit, that CHARACTER
  model has the Feel No Pain 4+ ability." (the Canoness only).
- Battle Sisters Squad, "Test Zeal": "Each time a CHARACTER model in this unit makes an attack,
  improve the Armour Penetration characteristic of that attack by 1." (the attacker's, by
  ``--with``: the Leader's weapons only).

Profiles (10th edition): a Battle Sister T3 Sv3+ inv6+ W1, the Canoness T3 Sv3+ inv4+ W4. The
weapon ``A1 BS2+ S8 AP-6 D1``: hits on 2+ (5/6), wounds T3 on 2+ (5/6), the Save 3+ at AP-6 is
9+, so the invulnerable save is taken (a Sister's 6+ fails 5/6, the Canoness's 4+ 1/2).
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from pipeline.engine.service import AttackRequest, attack
from pipeline.errors import InputError

ROWS = (
    "000000899|4|||Test Aegis|While this model is leading a unit, models in that unit have the Feel No Pain 5+ "
    "ability.|Datasheet||",
    "000000899|5|||Test Lead|While this model is leading a unit, each time a model in that unit makes an attack, "
    "add 1 to the Hit roll.|Datasheet||",
    "000000903|9|||Test Vow|While a CHARACTER model is leading this unit, that CHARACTER model has the Feel No Pain "
    "4+ ability.|Datasheet||",
    "000000903|10|||Test Zeal|Each time a CHARACTER model in this unit makes an attack, improve the Armour "
    "Penetration characteristic of that attack by 1.|Datasheet||",
)


@pytest.fixture(scope="module")
def lead_db(tmp_path_factory) -> Path:
    from pipeline.build import build
    from tests.editions_db import editions_raw

    folder = tmp_path_factory.mktemp("lead")
    raw = editions_raw(folder / "raw")
    abilities = raw / "wahapedia_csv_export_10e" / "Datasheets_abilities.csv"
    abilities.write_bytes(abilities.read_bytes() + "".join(r + "\r\n" for r in ROWS).encode("utf-8"))
    build(raw, folder / "lead.duckdb")
    return folder / "lead.duckdb"


def close(value: float, fraction: Fraction) -> bool:
    return abs(value - float(fraction)) <= 1e-12


def run(db: Path, profile: str = "A1 BS2+ S8 AP-6 D1", **kw):
    request = dict(attacker=None, target="Battle Sisters Squad", edition=10, target_models=2,
                   weapon_profiles=(profile,), target_leaders=("Canoness",))
    return attack(AttackRequest(**{**request, **kw}), db, explain=False)


def test_a_leader_s_feel_no_pain_reduces_the_bodyguard_s_losses(lead_db):
    """One attack: P(a Sister destroyed) = 5/6 x 5/6 x 5/6 = 125/216 without a Feel No Pain; with
    Test Aegis's 5+ the point goes through on 1-4 (2/3): 125/324. It is applied by default, listed,
    and ``--without`` turns it off."""
    out = run(lead_db)
    assert close(out.unit.lines["Battle Sisters Squad"].mean, Fraction(125, 324))
    assert out.unit.profiles == {"Battle Sisters Squad": "T3 Sv3+ W1 inv6+ fnp5+", "Canoness": "T3 Sv3+ W4 inv4+ fnp4+"}
    assert ("target ability 'Test Aegis' (Canoness) applied by default to Battle Sisters Squad, Canoness "
            "(--without 'Test Aegis' turns it off)") in out.notes
    aegis = next(a for a in out.effects if a.rule_name == "Test Aegis")
    assert aegis.applied and aegis.did == "Feel No Pain 5+ (all): applied (model lines: Battle Sisters Squad, Canoness)"
    # the note of the feel_no_pain table ("only when ...: not applied") is gone: the rule said what it did
    assert not any("(Test Vow) only when" in n for n in out.notes)
    off = run(lead_db, without_effects=("test aegis",))
    assert close(off.unit.lines["Battle Sisters Squad"].mean, Fraction(125, 216))
    assert "target ability 'Test Aegis' (Canoness) turned off (--without)" in off.notes
    assert off.unit.profiles["Battle Sisters Squad"] == "T3 Sv3+ W1 inv6+"
    # --fnp stays a manual override of every line
    manual = run(lead_db, feel_no_pain=6)
    assert close(manual.unit.lines["Battle Sisters Squad"].mean, Fraction(125, 216) * Fraction(5, 6))


def test_a_bodyguard_rule_for_its_leader_reaches_the_leader_line_only(lead_db):
    """Test Vow gives the Canoness (not the Sisters) Feel No Pain 4+. A Precision D4 attack sent to
    her (the engine's best for P(CHARACTER destroyed)) destroys her when it hits, wounds, beats the
    4+ invulnerable save and all 4 points pass the Feel No Pain: 5/6 x 5/6 x 1/2 x (1/2)^4 =
    25/1152; with Test Vow off, Test Aegis's 5+: 5/6 x 5/6 x 1/2 x (2/3)^4 = 200/2916 = 50/729."""
    profile = "A1 BS2+ S8 AP-6 D4 [PRECISION]"
    out = run(lead_db, profile)
    assert out.result.choices["Precision: A1 BS2+ S8 AP-6 D4 [PRECISION]"] == "allocated to the CHARACTER models"
    assert close(out.unit.characters["Canoness"], Fraction(25, 1152))
    assert "target ability 'Test Vow' (Battle Sisters Squad) applied by default to Canoness " \
           "(--without 'Test Vow' turns it off)" in out.notes
    off = run(lead_db, profile, without_effects=("Test Vow",))
    assert close(off.unit.characters["Canoness"], Fraction(50, 729))
    # without a Leader the Bodyguard's rule does not hold and the unit is one profile
    alone = attack(AttackRequest(attacker=None, target="Battle Sisters Squad", edition=10, target_models=2,
                                 weapon_profiles=("A1 BS2+ S8 AP-6 D1",)), lead_db, explain=False)
    assert alone.unit is None and alone.target.feel_no_pain is None


def test_without_names_the_unit_s_rules(lead_db):
    with pytest.raises(InputError, match=r"--without 'Stealth': not one of the target unit's rules applied by "
                                         r"default \(those: 'Invulnerable Save', 'Test Vow', "
                                         r"'Invulnerable Save \(4\+\)', 'Test Aegis'; 'DATASHEET: NAME' names "
                                         r"the rule of one datasheet\)"):
        run(lead_db, without_effects=("Stealth",))
    # a rule of one datasheet by 'DATASHEET: NAME' (the 6+ the Sisters' profile prints stays)
    out = run(lead_db, without_effects=("Battle Sisters Squad: Invulnerable Save",))
    assert "target ability 'Invulnerable Save' (Battle Sisters Squad) turned off (--without)" in out.notes
    assert any(n.startswith("target ability 'Invulnerable Save (4+)' (Canoness) applied by default")
               for n in out.notes)


def test_with_a_stratagem_on_the_attack_changes_the_per_line_figures(lead_db):
    """RIGHTEOUS VENGEANCE (re-roll the Hit roll): the hit on 2+ becomes 1 - (1/6)^2 = 35/36, so
    P(a Sister destroyed) = 35/36 x 5/6 x 5/6 x 2/3 = 875/1944 (from 125/324 = 750/1944)."""
    out = run(lead_db, with_effects=("Righteous Vengeance",))
    assert close(out.unit.lines["Battle Sisters Squad"].mean, Fraction(875, 1944))
    assert any(a.rule_name == "RIGHTEOUS VENGEANCE" and a.applied for a in out.effects)


def test_with_an_enhancement_on_the_attached_unit_reaches_the_bearer(lead_db):
    """Mantle of the Martyr ("The bearer has the Feel No Pain 5+ ability"): the Canoness's line
    only (an Enhancement is borne by the Leader); the Sisters keep Test Aegis's 5+."""
    out = run(lead_db, with_effects=("Mantle of the Martyr",), without_effects=("Test Vow", "Test Aegis"))
    assert out.unit.profiles == {"Battle Sisters Squad": "T3 Sv3+ W1 inv6+", "Canoness": "T3 Sv3+ W4 inv4+ fnp5+"}
    assert close(out.unit.lines["Battle Sisters Squad"].mean, Fraction(125, 216))


def test_with_a_leader_s_rule_on_the_attacking_attached_unit(lead_db):
    """Battle Sisters (1 model: its boltgun, BS3+) led by the Canoness (her bolt pistol, BS2+), S4
    AP0 D1, against the Attached unit (2 Sisters, the Canoness): each wounds T3 on 3+ (2/3), the
    Save 3+ fails 1/3, Test Aegis's 5+ lets 2/3 through. Two attacks, two W1 Sisters before the
    Canoness: E[Sisters destroyed] = p(boltgun) + p(pistol). Without Test Lead: (4/6 + 5/6) x 2/3 x
    1/3 x 2/3 = 18/81; with its +1 to the Hit roll the boltgun hits on 2+ (5/6) and the pistol
    stays 5/6 (a 1 fails): 20/81."""
    request = dict(attacker="Battle Sisters Squad", weapons=("boltgun",), models=1, leaders=("Canoness",),
                   weapon_profiles=())
    plain = run(lead_db, **request)
    assert [w.name for w in plain.weapons] == ["Boltgun", "Canoness: Bolt pistol"]
    assert close(plain.unit.lines["Battle Sisters Squad"].mean, Fraction(18, 81))
    led = run(lead_db, **request, with_effects=("Test Lead",))
    assert close(led.unit.lines["Battle Sisters Squad"].mean, Fraction(20, 81))
    assert next(a for a in led.effects if a.rule_name == "Test Lead").did == "+1 to the hit roll: applied"
    # without the Leader attached its clause does not hold: listed, not applied
    alone = run(lead_db, **{**request, "leaders": ()}, with_effects=("Test Lead",))
    lead = next(a for a in alone.effects if a.rule_name == "Test Lead")
    assert not lead.applied and "While this model is leading a unit" in lead.did


def test_with_a_rule_for_the_character_models_of_an_attacking_attached_unit(lead_db):
    """Test Zeal (AP improved by 1 for a CHARACTER model's attacks) reaches the Canoness's bolt
    pistol (AP-1: the Save 3+ is 4+, failed 1/2) and not the Sister's boltgun (AP0: failed 1/3):
    E[Sisters destroyed] = 4/6 x 2/3 x 1/3 x 2/3 + 5/6 x 2/3 x 1/2 x 2/3 = 16/162 + 30/162 = 23/81
    (18/81 without)."""
    out = run(lead_db, attacker="Battle Sisters Squad", weapons=("boltgun",), models=1, leaders=("Canoness",),
              weapon_profiles=(), with_effects=("Test Zeal",))
    assert [(w.name, w.armour_penetration) for w in out.weapons] == [("Boltgun", 0), ("Canoness: Bolt pistol", -1)]
    assert close(out.unit.lines["Battle Sisters Squad"].mean, Fraction(23, 81))
    did = {a.did for a in out.effects if a.rule_name == "Test Zeal"}
    assert did == {"improve AP by 1 [attacker:CHARACTER]: not applied: the attacker is not CHARACTER (Battle Sisters "
                   "Squad's weapons)", "improve AP by 1 [attacker:CHARACTER]: applied to Canoness: Bolt pistol "
                   "(Canoness's weapons)"}
