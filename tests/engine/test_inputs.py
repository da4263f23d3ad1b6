"""Standard target profiles and inline target profiles (``pipeline.engine.inputs``)."""

from __future__ import annotations

import pytest

from pipeline.engine.exact import resolve
from pipeline.engine.inputs import EXAMPLE, STANDARD_PROFILES, parse_target
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.errors import InputError
from pipeline.normalise.characteristics import dice


@pytest.mark.parametrize(
    "name, toughness, save, invuln, wounds, models, keyword",
    [
        ("GEQ", 3, 5, None, 1, 10, "INFANTRY"),
        ("MEQ", 4, 3, None, 2, 10, "INFANTRY"),
        ("TEQ", 5, 2, 4, 3, 5, "INFANTRY"),
        ("VEHICLE", 10, 3, None, 12, 1, "VEHICLE"),
        ("MONSTER", 9, 3, None, 10, 1, "MONSTER"),
    ],
)
def test_standard_profiles(name, toughness, save, invuln, wounds, models, keyword):
    t = STANDARD_PROFILES[name]
    assert (t.toughness, t.save, t.invulnerable_save, t.wounds, t.models) == (toughness, save, invuln, wounds, models)
    assert t.keywords == frozenset({keyword}) and t.name == name


def test_standard_profile_in_use_meq_bolter():
    # 10 bolt rifle shots BS3+ S4 AP-1 D1 vs MEQ: 10 * 2/3 * 1/2 * 1/2 unsaved.
    bolter = Weapon(name="bolt rifle", attacks=dice("10"), skill=3, strength=4, armour_penetration=-1, damage=dice("1"))
    assert abs(resolve([bolter], STANDARD_PROFILES["MEQ"], Context()).unsaved.mean - 10 / 6) < 1e-12


def test_parse_full_profile():
    t = parse_target("T4 Sv3+ W2 x10 inv4+ fnp5+ INFANTRY")
    assert t == Target(toughness=4, save=3, wounds=2, models=10, invulnerable_save=4, feel_no_pain=5,
                       keywords=frozenset({"INFANTRY"}), name="T4 Sv3+ W2 x10 inv4+ fnp5+ INFANTRY")


def test_parse_any_order_any_case_and_variants():
    t = parse_target("infantry, fnpm6+ W3 sv4 t5 5x stealth 4++ Character")
    assert (t.toughness, t.save, t.wounds, t.models, t.invulnerable_save) == (5, 4, 3, 5, 4)
    assert t.feel_no_pain is None and t.feel_no_pain_mortal == 6 and t.stealth
    assert t.keywords == frozenset({"INFANTRY", "CHARACTER"})


def test_parse_defaults_and_no_save():
    t = parse_target("T12 Sv- W22")
    assert t.save is None and t.models == 1 and t.keywords == frozenset() and not t.stealth


def test_parse_standard_name_alone():
    assert parse_target(" meq ") is STANDARD_PROFILES["MEQ"]


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("T4 Sv3+ W2 x10 inv4++", "'inv4++'"),
        ("T4 Sv3+ W2 S5", "'S5'"),
        ("T4 Sv3+ W2 12", "'12'"),
        ("T4 Sv1+ W2", "'Sv1+'"),
        ("T4 Sv3+ W0", "'W0'"),
        ("T4 Sv3+ W2 x0", "'x0'"),
        ("T4 Sv3+ W2 fnp7+", "'fnp7+'"),
        ("T4 T5 Sv3+ W2", "given twice"),
        ("T4 W2", "missing save"),
        ("Sv3+ infantry", "missing Toughness (T4), Wounds (W2)"),
        ("", "empty target profile"),
    ],
)
def test_parse_errors_name_the_token_and_show_an_example(text, fragment):
    with pytest.raises(InputError) as err:
        parse_target(text)
    message = str(err.value)
    assert fragment in message
    assert EXAMPLE in message


@pytest.mark.parametrize("text", ["T3 Sv7+ W1 inv5+", "T3 Sv- W1 inv5+", "T3 sv7 W1 inv5+"])
def test_sv7_and_sv_dash_are_no_armour_save(text):
    target = parse_target(text)
    assert (target.save, target.invulnerable_save) == (None, 5)


@pytest.mark.parametrize("text, message", [
    ("T4 Sv1+ W2", "target token 'Sv1+': a save of 1+ is not allowed; use Sv2+ to Sv6+, or Sv7+ or Sv- for no "
                   "armour save"),
    ("T0 Sv3+ W2", "target token 'T0': Toughness 0 is not allowed; use T1 or more (T4)"),
    ("T4 Sv3+ W2 fnp7+", "target token 'fnp7+': Feel No Pain 7+ is not allowed; use fnp2+ to fnp6+ (or leave it out)"),
    ("T4 Sv3+ W2 inv1+", "target token 'inv1+': an invulnerable save of 1+ is not allowed; use inv2+ to inv6+"),
    ("T4 Sv8+ W2", "target token 'Sv8+': a save of 8+ is not allowed"),
])
def test_values_out_of_range_name_the_value_and_the_allowed_range(text, message):
    with pytest.raises(InputError) as err:
        parse_target(text)
    assert message in str(err.value)
