"""Effects that the engine now applies (issue 12): mortal wounds, a re-roll of one die, ignoring
modifiers to the wound roll, and names that several detachments print. Exact values derived by
hand in each test."""

from __future__ import annotations

from fractions import Fraction

import duckdb
import pytest

from pipeline.effects.apply import apply_effects
from pipeline.effects.named import find_named
from pipeline.effects.reader import read_text
from pipeline.engine import exact
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.errors import InputError
from pipeline.normalise.characteristics import dice
from schemas.records import Effect
from tests.effects.test_build_effects import seed_db  # noqa: F401  (the module's database fixture)
from tests.effects.test_with_effects import SISTERS, _attack


def _close(value: float, fraction: Fraction | float) -> bool:
    return abs(value - float(fraction)) < 1e-9


def _effect(effect: str, *, roll=None, value=None, parameter=None, conditions=None, wording="made up",
            side="attacker", name="Made-up rule", table="stratagems", rule_id="x", faction=None, edition=10) -> Effect:
    return Effect(source_id="s", locator="l", rule_table=table, rule_id=rule_id, rule_kind="stratagem",
                  rule_name=name, edition=edition, faction_id=faction, position=0, side=side, effect=effect,
                  roll=roll, characteristic=None, value=value, parameter=parameter, weapon_type=None,
                  conditions=conditions, wording=wording, origin="reader")


ONE_SHOT = Weapon(name="Bolt pistol", attacks=dice("1"), skill=4, strength=4, armour_penetration=0, damage=dice("1"))
W2 = Target(toughness=4, save=None, wounds=2, models=1)


def _resolve(effects, weapon=ONE_SHOT, target=W2, context=Context()):
    weapons, target, context, applied = apply_effects(effects, [weapon], target, context, "shooting")
    return exact.resolve(weapons, target, context), applied


def test_the_reader_reads_mortal_wounds_on_a_critical_for_the_target():
    # "that unit suffers" after "scores a Critical Wound against a unit" is the attack's target,
    # not a situational unit
    read = read_text("Each time an attack made by this model scores a Critical Wound against a unit, that unit "
                     "suffers D6 mortal wounds.")
    assert [(e.effect, e.parameter, e.conditions) for e in read] == [("mortal-wounds", "D6", "critical-wound")]


def test_mortal_wounds_on_a_critical_hit_are_applied_to_the_weapons():
    # 1 attack BS4+, S4 vs T4, 1 model W2, no save: a 6 (1/6) inflicts 1 mortal wound and still
    # rolls to wound (1/2); a 4-5 (2/6) wounds on 1/2: E[damage] = 1/6 x 3/2 + 2/6 x 1/2 = 5/12
    wording = "Each time a model in your unit makes an attack, if that attack scores a Critical Hit, the target suffers 1 mortal wound."
    out, applied = _resolve([_effect("mortal-wounds", parameter="1", conditions="critical-hit", wording=wording)])
    assert applied[0].applied and applied[0].did.endswith("applied to Bolt pistol")
    assert _close(out.mortal_wounds.mean, Fraction(1, 6)) and _close(out.damage.mean, Fraction(5, 12))


def test_mortal_wounds_a_unit_suffers_itself_are_not_applied():
    out, applied = _resolve([_effect("mortal-wounds", parameter="D3", wording="On a 1, this unit suffers D3 mortal wounds.")])
    assert not applied[0].applied and "not the attack's target's" in applied[0].did
    assert out.mortal_wounds.mean == 0


def test_mortal_wounds_on_a_4_plus_after_the_attack():
    # "roll one D6: on a 4+, the target suffers D3 mortal wounds" (P 1/2, mean 2): E[mortal wounds]
    # = 1, each one wound; E[damage] = 1 + the pistol's 1/2 x 1/2 = 5/4
    wording = "Roll one D6: on a 4+, the target suffers D3 mortal wounds."
    out, applied = _resolve([_effect("mortal-wounds", parameter="D3", wording=wording)])
    assert applied[0].did.endswith("applied: on a 4+, D3 mortal wounds after the attack")
    assert _close(out.mortal_wounds.mean, 1) and _close(out.damage.mean, Fraction(5, 4))


def test_re_roll_one_hit_roll_and_one_wound_roll():
    # "you can re-roll one Hit roll and you can re-roll one Wound roll": 1 attack BS4+ S4 vs T4.
    # Hit: 1/2, re-rolled once when it misses: 1/2 + 1/2 x 1/2 = 3/4. Wound: each hit 1/2, one failed
    # wound roll re-rolled: 3/4 per hit: E[wounds] = 3/4 x 3/4 = 9/16.
    effects = [_effect("reroll", roll="hit", parameter="one"), _effect("reroll", roll="wound", parameter="one")]
    out, applied = _resolve(effects)
    assert all(a.applied for a in applied)
    assert _close(out.hits.mean, Fraction(3, 4)) and _close(out.wounds.mean, Fraction(9, 16))


def test_ignoring_modifiers_to_the_wound_roll():
    # "ignore any or all modifiers to the Hit roll and/or the Wound roll": with -1 to hit and -1 to
    # wound, 1 attack BS4+ S4 vs T4 hits 1/2 and wounds 1/2: E[wounds] = 1/4 (1/3 x 1/3 = 1/9 without)
    ignore = _effect("ignore-modifiers", parameter="the Hit roll and/or the Wound roll")
    context = Context(hit_modifier=-1, wound_modifier=-1)
    plain, _ = _resolve([], context=context)
    out, applied = _resolve([ignore], context=context)
    assert _close(plain.wounds.mean, Fraction(1, 9)) and _close(out.wounds.mean, Fraction(1, 4)) and applied[0].applied


def test_ignoring_modifiers_to_the_ballistic_skill_only():
    # 11th edition, 13.08: the benefit of cover worsens BS 4+ to 5+ (1/3); "ignore any or all modifiers
    # to the following: that attack's Ballistic Skill characteristic": 4+ again (1/2). A -1 to the hit
    # roll stays: 5+ (1/3).
    ignore = _effect("ignore-modifiers", parameter="the following: that attack's Ballistic Skill characteristic",
                     edition=11)
    covered, _ = _resolve([], context=Context(edition=11, cover=True))
    out, applied = _resolve([ignore], context=Context(edition=11, cover=True))
    assert _close(covered.hits.mean, Fraction(1, 3)) and _close(out.hits.mean, Fraction(1, 2)) and applied[0].applied
    out, _ = _resolve([ignore], context=Context(edition=11, hit_modifier=-1))
    assert _close(out.hits.mean, Fraction(1, 3))


def test_command_re_roll_picks_the_roll_as_an_option(seed_db):
    # 7 boltguns A1 BS3+ (no half range): E[hits] = 7 x 2/3 = 14/3; Command Re-roll on one failed Hit
    # roll: P(a miss) = 1 - (2/3)^7 = 2059/2187, re-rolled hits 2/3: 14/3 + 2059/2187 x 2/3 = 34736/6561
    out = _attack(seed_db, "MEQ", with_=["Command Re-roll: HIT"])
    assert _close(out.result.hits.mean, Fraction(34736, 6561))
    plain = _attack(seed_db, "MEQ", with_=["Command Re-roll"])
    assert _close(plain.result.hits.mean, Fraction(14, 3))
    assert any("give --with 'NAME: HIT' to pick it" in n for n in plain.notes)


# --- names several rules print ---------------------------------------------------------------


def _named_db(effects: list[Effect], detachments: dict[str, str]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    cols = list(Effect.model_fields)
    con.execute("CREATE TABLE effects (" + ", ".join(f'"{c}" VARCHAR' if c not in ("edition", "position", "value")
                                                      else f'"{c}" INTEGER' for c in cols) + ")")
    for e in effects:
        con.execute(f"INSERT INTO effects VALUES ({', '.join('?' for _ in cols)})", [getattr(e, c) for c in cols])
    con.execute('CREATE TABLE stratagems (stratagem_id VARCHAR, "group" VARCHAR)')
    con.execute("CREATE TABLE detachment_abilities (detachment_ability_id VARCHAR, detachment VARCHAR)")
    con.execute("CREATE TABLE enhancements (enhancement_id VARCHAR, detachment VARCHAR)")
    for rule_id, detachment in detachments.items():
        table, key, column = (("stratagems", "stratagem_id", '"group"') if rule_id.startswith("s") else
                              ("detachment_abilities", "detachment_ability_id", "detachment"))
        con.execute(f"INSERT INTO {table} ({key}, {column}) VALUES (?, ?)", [rule_id, detachment])
    return con


SURPRISE = [
    _effect("reroll", roll="hit", parameter="ones", name="Surprise Assault", table="detachment_abilities",
            rule_id="d1", faction="tyranids", wording="re-roll a Hit roll of 1"),
    _effect("modify-roll", roll="hit", value=1, name="SURPRISE ASSAULT", table="stratagems", rule_id="s1",
            faction="tyranids", wording="add 1 to the Hit roll"),
]


def test_a_name_of_two_detachments_is_a_real_choice_until_the_detachment_is_given():
    con = _named_db(SURPRISE, {"d1": "Subterranean Assault", "s1": "Vanguard Onslaught"})
    with pytest.raises(InputError, match=r"--with 'Surprise Assault' is ambiguous: 2 rules .*detachment_abilities:d1\) "
                                         r"of the detachment 'Subterranean Assault'; .*give the detachment"):
        find_named(con, "Surprise Assault", 10, ["tyranids"], [], attacker_faction="tyranids")
    found = find_named(con, "Surprise Assault", 10, ["tyranids"], [], detachment="vanguard onslaught",
                       attacker_faction="tyranids")
    assert (found.rule_table, found.rule_id) == ("stratagems", "s1")


def test_a_target_faction_s_rule_for_its_attacks_is_not_a_candidate():
    # the same name in the attacker's faction (an attacker effect) and the target's (also an attacker
    # effect: it acts when the target's army attacks, not in this attack)
    effects = [SURPRISE[0], SURPRISE[1].model_copy(update={"faction_id": "space-marines", "rule_id": "s2"})]
    con = _named_db(effects, {})
    found = find_named(con, "Surprise Assault", 10, ["tyranids", "space-marines"], [], attacker_faction="tyranids",
                       target_faction="space-marines")
    assert found.rule_id == "d1"


def test_one_wording_printed_twice_is_one_rule():
    # the same sentence read in two tables with conditions read differently is still one rule
    twin = SURPRISE[0].model_copy(update={"rule_table": "stratagems", "rule_id": "s3", "conditions": "phase:shooting"})
    con = _named_db([SURPRISE[0], twin], {})
    assert find_named(con, "Surprise Assault", 10, ["tyranids"], [], attacker_faction="tyranids").rule_id == "d1"


def test_re_rolling_the_damage_roll():
    # "you can re-roll the Damage roll": a D6 below its mean (1-3, 1/2) is re-rolled: E[D] = (4 + 5 + 6)/6
    # + 1/2 x 7/2 = 17/4. 1 attack BS4+ S4 vs T4 (1/4 unsaved with no save), D6 against one W12
    # model: E[damage] = 1/4 x 17/4 = 17/16 (1/4 x 7/2 = 7/8 without)
    d6 = Weapon(name="Lascannon", attacks=dice("1"), skill=4, strength=4, armour_penetration=0, damage=dice("D6"))
    w12 = Target(toughness=4, save=None, wounds=12, models=1)
    plain, _ = _resolve([], weapon=d6, target=w12)
    out, applied = _resolve([_effect("reroll", roll="damage", parameter="all")], weapon=d6, target=w12)
    assert _close(plain.damage.mean, Fraction(7, 8)) and _close(out.damage.mean, Fraction(17, 16)) and applied[0].applied
    # "re-roll a Damage roll of 1": E[D] = (2 + ... + 6)/6 + 1/6 x 7/2 = 47/12; x 1/4 = 47/48
    out, applied = _resolve([_effect("reroll", roll="damage", parameter="ones")], weapon=d6, target=w12)
    assert _close(out.damage.mean, Fraction(47, 48)) and applied[0].did.endswith("each Damage roll of 1 is re-rolled")


def test_re_rolling_one_damage_roll_re_rolls_the_first_low_one():
    # "you can re-roll one Damage roll": the first Damage roll below the mean of D3 (2: a 1, P 1/3) is
    # re-rolled, gaining E[D3] - 1 = 1. A [TORRENT] A2 S16 vs T4 (wounds on 2+, 5/6), no save:
    # 2 unsaved events with 25/36, 1 with 10/36; P(a 1 among them) = 1 - (2/3)^2 = 5/9, or 1/3:
    # E[damage] = E[events] x 2 + (25/36 x 5/9 + 10/36 x 1/3) x 1 = 10/3 + 155/324 = 1235/324
    torrent = Weapon(name="Flamer", attacks=dice("2"), skill=None, strength=16, armour_penetration=0, damage=dice("D3"),
                     torrent=True)
    w12 = Target(toughness=4, save=None, wounds=12, models=1)
    out, applied = _resolve([_effect("reroll", roll="damage", parameter="one")], weapon=torrent, target=w12)
    assert applied[0].applied and _close(out.damage.mean, Fraction(1235, 324))
