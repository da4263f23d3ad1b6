"""Custom weapons: ``wh40k attack --weapon-profile "A2 BS3+ S4 AP-1 D1 [LETHAL HITS]"`` and
``AttackRequest.weapon_profiles``; a melee-only ``--weapon`` choosing the fight phase.

Expected values are derived by hand from the profile (fractions), per stage.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline import cli
from pipeline.build import build
from pipeline.engine.inputs import WEAPON_EXAMPLE, parse_weapon_profile
from pipeline.engine.profiles import Anti, Context
from pipeline.engine.service import AttackRequest, attack
from pipeline.errors import InputError
from tests.conftest import RAW


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("db") / "wh40k.duckdb"
    build(RAW, path)
    return path


def run(capsys, *args: str) -> tuple[int, str, str]:
    """The command line in this process: (exit status, stdout, stderr)."""
    status = cli.run(list(args))
    out = capsys.readouterr()
    return status, out.out, out.err


# --- reading a profile -------------------------------------------------------------------------


def test_the_example_profile_is_read_by_the_normalisers_of_the_data():
    w = parse_weapon_profile("A2 BS3+ S4 AP-1 D1 [LETHAL HITS, RAPID FIRE 1]", models=5)
    assert (w.attacks.text, w.skill, w.strength, w.armour_penetration, w.damage.text) == ("2", 3, 4, -1, "1")
    assert (w.is_melee, w.models, w.lethal_hits, w.rapid_fire.text) == (False, 5, True, "1")
    assert w.name == "A2 BS3+ S4 AP-1 D1 [LETHAL HITS, RAPID FIRE 1]"


def test_dice_melee_range_and_parameters():
    w = parse_weapon_profile('Melee a:d6+1 ws2 s8 ap-3 d=D3+1 [Anti-Vehicle 4+, sustained hits d3, lethal hits: vehicle]')
    assert (w.attacks.text, w.skill, w.strength, w.armour_penetration, w.damage.text, w.is_melee) == (
        "D6+1", 2, 8, -3, "D3+1", True)
    assert w.anti == (Anti("VEHICLE", 4),) and w.sustained_hits.text == "D3"
    assert w.conditions == (("lethal_hits", "vehicle"),)  # as typed; matched in any case
    assert parse_weapon_profile('24" A1 BS4+ S9 AP-4 DD6 [MELTA 2]').melta.text == "2"
    # a Torrent weapon needs no BS: it makes no hit roll
    assert parse_weapon_profile("AD6 S5 AP0 D1 [TORRENT]").skill is None


@pytest.mark.parametrize(("profile", "message"), [
    ("A2 BS3+ S4 D1", "weapon profile 'A2 BS3+ S4 D1': missing Armour Penetration (AP-1, AP0); "
                      f"write e.g. {WEAPON_EXAMPLE!r}"),
    ("A2 BS3+ Q4 AP-1 D1", "weapon profile 'A2 BS3+ Q4 AP-1 D1': cannot read token 'Q4': a profile has A, BS or "
                           "WS, S, AP, D, an optional range (24\" or Melee) and abilities in brackets; "
                           f"write e.g. {WEAPON_EXAMPLE!r}"),
    ("A2 BS3+ S4 AP1 D1", "weapon profile 'A2 BS3+ S4 AP1 D1': token 'AP1': Armour Penetration '1' is "
                          f"positive, and AP is 0 or negative: write AP-1 (or AP0); write e.g. {WEAPON_EXAMPLE!r}"),
    ("A2 BS9+ S4 AP-1 D1", "weapon profile 'A2 BS9+ S4 AP-1 D1': token 'BS9+': not a roll target: '9+' "
                           f"(expected e.g. 3+); write e.g. {WEAPON_EXAMPLE!r}"),
    ("A0 BS3+ S4 AP-1 D1", "weapon profile 'A0 BS3+ S4 AP-1 D1': token 'A0': Attacks '0' is less than 1; "
                           f"write e.g. {WEAPON_EXAMPLE!r}"),
    ("A2 BS3+ WS3+ S4 AP-1 D1", "weapon profile 'A2 BS3+ WS3+ S4 AP-1 D1': both BS and WS given (token 'WS3+'): "
                                f"BS for a ranged weapon, WS for a melee one; write e.g. {WEAPON_EXAMPLE!r}"),
    ("Melee A2 BS3+ S4 AP-1 D1", "weapon profile 'Melee A2 BS3+ S4 AP-1 D1': a Melee weapon has WS, not BS; "
                                 "write WS3+"),
    ("A2 BS3+ S4 AP-1 D1 [FOO]", "weapon profile 'A2 BS3+ S4 AP-1 D1 [FOO]': unknown weapon ability 'FOO'; known: "
                                 "ANTI-KEYWORD X+, ASSAULT, BLAST, CLEAVE, CLOSE-QUARTERS, CONVERSION, DEVASTATING "
                                 "WOUNDS, EXTRA ATTACKS, HAZARDOUS, HEAVY, IGNORES COVER, INDIRECT FIRE, LANCE, "
                                 "LETHAL HITS, MELTA, ONE SHOT, PISTOL, PRECISION, PSYCHIC, RAPID FIRE, SUSTAINED "
                                 "HITS, TORRENT, TWIN-LINKED"),
    ("A2 BS3+ S4 AP-1 D1 [SUSTAINED HITS]", "weapon profile 'A2 BS3+ S4 AP-1 D1 [SUSTAINED HITS]': weapon ability "
                                            "'SUSTAINED HITS': give its value (SUSTAINED HITS 1)"),
    ("A2 BS3+ S4 AP-1 D1 [ANTI-INFANTRY]", "weapon profile 'A2 BS3+ S4 AP-1 D1 [ANTI-INFANTRY]': weapon ability "
                                           "'ANTI-INFANTRY': write it as ANTI-KEYWORD X+ (ANTI-INFANTRY 4+)"),
    ("A2 BS3+ S4 AP-1 D1 [HEAVY", "weapon profile 'A2 BS3+ S4 AP-1 D1 [HEAVY': an unmatched bracket; put the "
                                  f"abilities in one pair of brackets; write e.g. {WEAPON_EXAMPLE!r}"),
])
def test_a_bad_profile_is_one_line_naming_the_token_and_the_fix(profile, message):
    with pytest.raises(InputError) as err:
        parse_weapon_profile(profile)
    assert str(err.value) == message


def test_an_ability_of_the_other_edition_is_refused():
    with pytest.raises(InputError) as err:
        parse_weapon_profile("A2 WS3+ S4 AP0 D1 [CLEAVE 1]", edition=10)
    assert str(err.value) == ("weapon profile 'A2 WS3+ S4 AP0 D1 [CLEAVE 1]': [CLEAVE] is not a weapon ability "
                              "of the 10th edition; use --edition 11 or leave it out")
    assert parse_weapon_profile("A2 WS3+ S4 AP0 D1 [CLEAVE 1]", edition=11).cleave == 1


@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(["A2", "AD6", "A", "BS3+", "WS4", "BSN/A", "S4", "S0", "AP-1", "AP", "AP+2",
                                 "D1", "DD3+1", "D", '24"', "Melee", "[LETHAL HITS]", "[RAPID FIRE]", "[",
                                 "]", "x", "[ANTI-FLY 2+, TORRENT]", "99999999999999999999"]), max_size=9)
       | st.text(max_size=40))
def test_any_text_is_a_weapon_or_an_input_error(tokens):
    text = tokens if isinstance(tokens, str) else " ".join(tokens)
    try:
        w = parse_weapon_profile(text)
    except InputError as exc:
        assert "\n" not in str(exc)
        return
    assert w.strength >= 1 and w.attacks.maximum >= 1 and w.damage.maximum >= 1 and w.armour_penetration <= 0


# --- resolving custom weapons --------------------------------------------------------------------


def test_custom_weapon_without_an_attacker_hand_derived(db):
    # 5 models x A2 with RAPID FIRE 1 at half range: 15 attacks; BS3+: 2/3 hit, 1/6 Critical Hits.
    # 10th edition Lethal Hits: 15/6 = 5/2 wound automatically; the other hits (15 x 1/2 = 15/2)
    # wound S4 v T4 on 4+: 15/4. Wounds 5/2 + 15/4 = 25/4; Sv3+ with AP-1 is 4+: half unsaved.
    out = attack(AttackRequest(attacker=None, target="MEQ", weapon_profiles=(WEAPON_EXAMPLE,), models=5,
                               context=Context(half_range=True), edition=10), db)
    assert out.attacker == "custom weapon profile"
    assert [(w.name, w.models) for w in out.weapons] == [(WEAPON_EXAMPLE, 5)]
    r = out.result
    assert r.attacks.mean == pytest.approx(15, abs=1e-12)
    assert r.hits.mean == pytest.approx(10, abs=1e-12)
    assert r.wounds.mean == pytest.approx(float(Fraction(25, 4)), abs=1e-12)
    assert r.unsaved.mean == pytest.approx(float(Fraction(25, 8)), abs=1e-12)
    assert r.damage.mean == pytest.approx(float(Fraction(25, 8)), abs=1e-12)


def test_two_custom_weapons_a_torrent_and_a_keyword_restricted_ability(db):
    # Torrent AD6 S5 AP0 D1 v GEQ (T3 Sv5+): 7/2 hits; S5 v T3 wounds on 3+ (2/3); 5+ save fails 2/3
    # -> 14/9 unsaved. A1 BS4+ S4 AP0 D1 [LETHAL HITS: VEHICLE] v GEQ (11th edition): no Lethal Hits
    # against INFANTRY: 1/2 hit x 2/3 wound (S4 v T3: 3+) x 2/3 unsaved = 2/9.
    out = attack(AttackRequest(attacker=None, target="GEQ", edition=11,
                               weapon_profiles=("AD6 S5 AP0 D1 [TORRENT]", "A1 BS4+ S4 AP0 D1 [LETHAL HITS: VEHICLE]")),
                 db)
    assert out.attacker == "custom weapon profiles"
    assert out.result.hits.mean == pytest.approx(3.5 + 0.5, abs=1e-12)
    assert out.result.unsaved.mean == pytest.approx(float(Fraction(14, 9) + Fraction(2, 9)), abs=1e-12)


def test_a_melee_profile_chooses_the_fight_phase_with_a_note(db):
    # A3 WS3+ S5 AP-2 D2 v MEQ: 2/3 hit, S5 v T4 on 3+ (2/3), Sv3+ AP-2 is 5+ (2/3 fail), D2:
    # 3 x 2/3 x 2/3 x 2/3 x 2 = 16/9
    out = attack(AttackRequest(attacker=None, target="MEQ", weapon_profiles=("A3 WS3+ S5 AP-2 D2",), edition=10), db)
    assert out.result.damage.mean == pytest.approx(float(Fraction(16, 9)), abs=1e-12)
    assert out.notes == ("weapon profile 'A3 WS3+ S5 AP-2 D2': a melee weapon, so the attack is resolved in the "
                         "fight phase (as with --phase fight)",)
    with pytest.raises(InputError) as err:
        attack(AttackRequest(attacker=None, target="MEQ", weapon_profiles=("A3 WS3+ S5 AP-2 D2",), phase="shooting"), db)
    assert str(err.value) == ("weapon profile 'A3 WS3+ S5 AP-2 D2' is a melee weapon, and the attack is in the "
                              "shooting phase: resolve it with --phase fight (one phase per attack)")


def test_custom_weapon_beside_a_named_weapon_of_an_attacker(db):
    # Battle Sisters Squad: 2 models fire boltguns (A2 at half range), 2 fire the custom profile.
    # Boltgun BS3+ S4 AP0 D1 v MEQ: 4 x 2/3 x 1/2 x 1/3 = 4/9 unsaved; the custom A1 BS3+ S8 AP-2 D1:
    # 2 x 2/3 x 5/6 (S8 v T4: 2+) x 2/3 (Sv3+ AP-2: 5+) = 20/27.
    out = attack(AttackRequest(attacker="Battle Sisters Squad", target="MEQ", weapons=("boltgun",), models=2,
                               weapon_profiles=("A1 BS3+ S8 AP-2 D1",), context=Context(half_range=True),
                               edition=10), db)
    assert [(w.name, w.models) for w in out.weapons] == [("Boltgun", 2), ("A1 BS3+ S8 AP-2 D1", 2)]
    assert out.attacker == "Battle Sisters Squad"
    assert out.result.unsaved.mean == pytest.approx(float(Fraction(4, 9) + Fraction(20, 27)), abs=1e-12)


def test_a_melee_only_weapon_named_with_weapon_chooses_the_fight_phase(db):
    # Hallowed mace, 5 models, 15 attacks WS3+ S4 [LETHAL HITS] v MEQ: 15/6 Critical Hits wound
    # automatically, the other 15 x 1/2 hits wound on 4+ -> 5/2 + 15/4 = 25/4 wounds
    out = attack(AttackRequest(attacker="Celestian Sacresants", target="MEQ", weapons=("hallowed mace",)), db)
    assert [(w.name, w.models, w.is_melee) for w in out.weapons] == [("Hallowed mace", 5, True)]
    assert out.result.wounds.mean == pytest.approx(float(Fraction(25, 4)), abs=1e-12)
    assert out.notes[0] == ("weapon 'hallowed mace' of Celestian Sacresants: a melee weapon, so the attack is "
                            "resolved in the fight phase (as with --phase fight)")


def test_no_attacker_needs_a_profile(db):
    with pytest.raises(InputError, match=r"^no attacker and no weapon profile: name the attacking unit"):
        attack(AttackRequest(attacker=None, target="MEQ"), db)
    with pytest.raises(InputError, match=r"^--weapon 'boltgun' names a weapon of the attacking unit"):
        attack(AttackRequest(attacker=None, target="MEQ", weapons=("boltgun",), weapon_profiles=(WEAPON_EXAMPLE,)), db)


# --- the command line ----------------------------------------------------------------------------


def test_cli_custom_weapon_json_and_errors(db, capsys):
    status, out, err = run(capsys, "attack", "--weapon-profile", WEAPON_EXAMPLE, "--models", "5", "--half-range",
                           "--target", "MEQ", "--edition", "10", "--db", str(db), "--format", "json")
    assert status == 0, err
    data = json.loads(out)
    assert data["attacker"] == "custom weapon profile"
    assert data["weapons"] == [{"name": WEAPON_EXAMPLE, "models": 5, "attacks": "2", "skill": 3, "strength": 4,
                                "armour_penetration": -1, "damage": "1"}]
    assert data["damage"]["mean"] == pytest.approx(25 / 8, abs=1e-12)
    status, out, err = run(capsys, "attack", "--weapon-profile", "A2 BS3+ S4 AP-1 D1 [FOO", "--target", "MEQ",
                           "--db", str(db))
    assert (status, out) == (1, "")
    assert err == ("Error: weapon profile 'A2 BS3+ S4 AP-1 D1 [FOO': an unmatched bracket; put the abilities in one "
                   f"pair of brackets; write e.g. {WEAPON_EXAMPLE!r}\n")
    status, out, err = run(capsys, "attack", "Celestian Sacresants", "--weapon", "hallowed mace", "--phase",
                           "shooting", "--target", "MEQ", "--db", str(db))
    assert status == 1 and err.startswith("Error: Celestian Sacresants has no ranged weapon 'hallowed mace'")


# --- repeated --damage-reduction -----------------------------------------------------------------


def test_repeated_damage_reductions_combine_halve_then_minus_one(db, capsys):
    # case T20: D6 halved (rounding up: 1,1,2,2,3,3) then -1 (at least 1: 1,1,1,1,2,2) is 4/3 per
    # event. 6 attacks hit on 2+ (5/6), wound T4 on 4+ (1/2), Sv6+ fails 5/6: 25/12 unsaved.
    for order in (["half", "1"], ["1", "half"]):
        flags = [x for r in order for x in ("--damage-reduction", r)]
        status, out, err = run(capsys, "attack", "--weapon-profile", "A6 BS2+ S4 AP0 DD6", "--models", "1",
                               "--target", "T4 Sv6+ W20 x1", *flags, "--format", "json", "--db", str(db))
        assert status == 0, err
        got = json.loads(out)
        assert got["unsaved"]["mean"] == pytest.approx(25 / 12, abs=1e-12)
        assert got["damage"]["mean"] == pytest.approx(25 / 12 * 4 / 3, abs=1e-12)
    status, _, err = run(capsys, "attack", "--weapon-profile", "A6 BS2+ S4 AP0 DD6", "--target", "MEQ",
                         "--damage-reduction", "half", "--damage-reduction", "half", "--db", str(db))
    assert status == 1
    assert err.strip().splitlines() == ["Error: --damage-reduction half given twice: a Damage characteristic is "
                                        "halved once; give half once, and 1 for each -1"]
