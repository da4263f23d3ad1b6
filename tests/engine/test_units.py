"""The unit engine (``pipeline.engine.units``): targets of several model lines, allocated model by
model, against values derived by hand (fractions) from the rules quoted here.

10th edition, Leader (BSData 10th-edition rule descriptions, in ``raw/``): "Each time an attack
targets an Attached unit, until the attacking unit has resolved all of its attacks, you must use
the Toughness characteristic of the Bodyguard models in that unit ... Each time an attack
successfully wounds an Attached unit, that attack cannot be allocated to a Character model in
that unit ... As soon as the last Bodyguard model in an Attached unit has been destroyed, any
attacks made against that unit that have yet to be allocated can then be allocated to Character
models in that unit."

10th edition, Precision: "Each time an attack made with such a weapon successfully wounds an
Attached unit, if a Character model in that unit is visible to the attacking model, the
attacking model's player can choose to have that attack allocated to that Character model
instead of following the normal attack sequence."

11th edition (``gdc-11e/core/core_rules.json``), 05.03: "One group for each CHARACTER model. One
group for all other models with the same W, Sv and InSv characteristics ... No CHARACTER group
can be earlier in the allocation order than a non-CHARACTER group." 05.04: "The opposing player
resolves the following sequence for each save roll, working from lowest result(s) to highest
result(s) ... Select one model in the current allocation group (5.4.1); this must be a model that
has lost one or more wounds if possible." 19.02: "use the highest T characteristic of the
bodyguard models in that unit ... If that unit only contains leader/support models, use the
highest T characteristic of those models".
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np
import pytest

from pipeline.engine.exact import EngineInputError, resolve
from pipeline.engine.profiles import Anti, Context, Target, Weapon
from pipeline.engine.units import ModelLine, UnitTarget, allocation_order, resolve_unit
from pipeline.normalise.characteristics import dice

EQUAL = 1e-12
EXACT = 1e-12


def weapon(attacks="1", skill=3, strength=4, ap=0, damage="1", **kw) -> Weapon:
    return Weapon(name=kw.pop("name", "test weapon"), attacks=dice(attacks), skill=skill, strength=strength,
                  armour_penetration=ap, damage=dice(damage), **kw)


def torrent(attacks="1", strength=8, damage="1", **kw) -> Weapon:
    """No hit roll; S8 against T4 wounds on 2+ (P = 5/6)."""
    return weapon(attacks, None, strength, damage=damage, torrent=True, **kw)


def close(value: float, exact) -> bool:
    return abs(value - float(exact)) <= EXACT


def assert_same_pmf(a: np.ndarray, b: np.ndarray, tol: float = EQUAL) -> None:
    n = max(a.size, b.size)
    assert np.abs(np.pad(a, (0, n - a.size)) - np.pad(b, (0, n - b.size))).max() <= tol, (a.tolist(), b.tolist())


# --- identical models: the same results as exact.resolve -----------------------------------------

SAME_CASES = [
    ([weapon("10")], Target(4, 3, 2, models=10)),
    ([weapon("6", 4, sustained_hits=dice("1"), lethal_hits=True)], Target(8, None, 1, models=5)),
    ([weapon("8", 4, 3, -1, "3", anti=(Anti("VEHICLE", 4),), devastating_wounds=True)],
     Target(11, 2, 13, models=1, keywords=frozenset({"VEHICLE"}))),
    ([weapon("6", 4, lethal_hits=True, devastating_wounds=True, models=2), weapon("D6", damage="D3", models=3)],
     Target(4, 3, 3, models=4, feel_no_pain=5)),
    ([weapon("2", 4, 9, -4, "D6", melta=dice("2"))], Target(11, 2, 13, models=1)),
    ([torrent("D6", 4)], Target(3, 5, 1, models=10, invulnerable_save=6)),
    ([weapon("3", 3, 5, -1, "2", models=4, rapid_fire=dice("1"))], Target(4, 3, 2, models=5, invulnerable_save=4)),
    ([weapon("4", 3, 4, 0, "D3+1", blast=1, devastating_wounds=True, models=2)],
     Target(5, 4, 3, models=6, feel_no_pain_mortal=5)),
]


@pytest.mark.parametrize("edition", [10, 11])
@pytest.mark.parametrize("case", range(len(SAME_CASES)))
def test_one_line_equals_exact_resolve(case, edition):
    weapons, target = SAME_CASES[case]
    context = Context(edition=edition, half_range=True, cover=True)
    want = resolve(weapons, target, context)
    got = resolve_unit(weapons, UnitTarget.of(target), context)
    for stage in ("attacks", "hits", "wounds", "unsaved", "mortal_wounds", "damage", "models_destroyed"):
        assert_same_pmf(getattr(got.result, stage).pmf, getattr(want, stage).pmf)
    assert abs(got.result.target_destroyed - want.target_destroyed) <= EQUAL
    assert got.result.choices == want.choices


def test_two_lines_of_one_profile_equal_exact_resolve():
    """Two lines with the same characteristics are one allocation group: the same as one line."""
    target = Target(4, 3, 2, models=5)
    unit = UnitTarget("u", (ModelLine("Sergeant", 1, 4, 3, 2), ModelLine("Trooper", 4, 4, 3, 2)))
    want = resolve([weapon("10", damage="D3")], target)
    got = resolve_unit([weapon("10", damage="D3")], unit)
    assert_same_pmf(got.result.models_destroyed.pmf, want.models_destroyed.pmf)
    assert_same_pmf(got.result.damage.pmf, want.damage.pmf)
    assert got.lines["Sergeant"].mean + got.lines["Trooper"].mean == pytest.approx(want.models_destroyed.mean, abs=EQUAL)


# --- mixed units: the allocation order changes the outcome ---------------------------------------

BOYZ = UnitTarget("Boyz", (ModelLine("Boy", 1, 4, None, 1), ModelLine("Boss Nob", 1, 4, None, 2)))


@pytest.mark.parametrize("edition", [10, 11])
def test_mixed_unit_allocation_order_changes_models_destroyed(edition):
    """2 wounds of D1 at 5/6 each (S8 vs T4, no save). Boy first: the first destroys the Boy, the
    second wounds the Nob: E[models] = P(N >= 1) = 1 - (1/6)^2 = 35/36. Nob first: the Nob takes
    both (a wounded model takes the next attack): E[models] = P(N = 2) = 25/36."""
    boy_first = resolve_unit([torrent("2")], BOYZ, Context(edition=edition))
    nob_first = resolve_unit([torrent("2")], BOYZ, Context(edition=edition), policy="reversed")
    assert close(boy_first.result.models_destroyed.mean, Fraction(35, 36))
    assert close(nob_first.result.models_destroyed.mean, Fraction(25, 36))
    assert close(boy_first.lines["Boy"].at_least(1), Fraction(35, 36))
    assert close(boy_first.lines["Boss Nob"].at_least(1), 0)
    assert close(nob_first.lines["Boss Nob"].at_least(1), Fraction(25, 36))
    assert nob_first.order == ("Boss Nob", "Boy")
    named = resolve_unit([torrent("2")], BOYZ, Context(edition=edition), policy=("boss nob", "boy"))
    assert close(named.result.models_destroyed.mean, Fraction(25, 36))


def test_partial_wounds_carry_from_one_weapon_to_the_next():
    """Two weapons of 1 attack each, D1, 5/6 to wound, Nob (W2) first: the second weapon's wound
    goes to the wounded Nob, so P(Nob destroyed) = (5/6)^2 = 25/36 and the Boy is never hit."""
    r = resolve_unit([torrent(name="first"), torrent(name="second")], BOYZ, policy="reversed")
    assert close(r.lines["Boss Nob"].at_least(1), Fraction(25, 36))
    assert close(r.lines["Boy"].at_least(1), 0)


def test_an_invalid_order_names_the_lines():
    with pytest.raises(EngineInputError, match="no model line of Boyz; its lines: Boy, Boss Nob"):
        resolve_unit([torrent()], BOYZ, policy=("Grot",))


# --- 11th edition: save rolls resolved from the lowest result to the highest ----------------------

SAVES = UnitTarget("u", (ModelLine("A", 1, 4, 6, 1), ModelLine("B", 1, 4, 4, 1)))


def test_save_rolls_lowest_first_11th_edition():
    """A (Sv6+) then B (Sv4+), 2 attacks wounding on 2+. 11th edition, 05.04: the lowest save roll
    goes to A and the highest to B; B is destroyed when both wound (25/36), the lower roll is
    below 6 (it destroys A) and the higher one is 1-3: P(max <= 3) = 9/36 (then the lower is
    below 6 too), so 25/36 x 1/4 = 25/144. A: one wound and a roll below 6 (2 x 5/6 x 1/6 x 5/6
    = 50/216), or two wounds and not both rolls 6 (25/36 x 35/36): 1175/1296."""
    r = resolve_unit([torrent("2")], SAVES, Context(edition=11))
    assert close(r.lines["B"].at_least(1), Fraction(25, 144))
    assert close(r.lines["A"].at_least(1), Fraction(1175, 1296))
    # the unit's unsaved attacks are counted in the same chain: P(2 unsaved) = P(B destroyed)
    assert close(r.result.unsaved.pmf[2], Fraction(25, 144))


def test_save_rolls_one_at_a_time_10th_edition():
    """10th edition: each save on its own: B is destroyed when both wound, the first is unsaved
    by A (5/6) and the second by B (1/2): 25/36 x 5/6 x 1/2 = 125/432."""
    r = resolve_unit([torrent("2")], SAVES, Context(edition=10))
    assert close(r.lines["B"].at_least(1), Fraction(125, 432))
    # E[damage]: one wound (10/36): 5/6; two (25/36): 5/6, then B's 1/2 if A fell (5/6) or A's 5/6:
    # 5/6 + 5/12 + 5/36 = 25/18; in all 10/36 x 5/6 + 25/36 x 25/18 = 775/648
    assert close(r.result.damage.mean, Fraction(775, 648))


# --- Attached units: Toughness, Bodyguard before CHARACTER, Precision ------------------------------

def attached(leader_t=3, leader_w=1, guards=2, guard_t=4) -> UnitTarget:
    return UnitTarget("Squad + Canoness", (
        ModelLine("Battle Sister", guards, guard_t, None, 1),
        ModelLine("Canoness", 1, leader_t, None, leader_w, character=True, role="leader"),
    ))


@pytest.mark.parametrize("edition", [10, 11])
def test_attached_unit_uses_the_bodyguard_toughness(edition):
    """S4 against the Bodyguard's T4 wounds on 4+ (1/2), not on 3+ as against the Leader's T3."""
    r = resolve_unit([torrent("1", 4)], attached(), Context(edition=edition))
    assert close(r.result.wounds.mean, Fraction(1, 2))


def test_11th_edition_toughness_of_the_leader_once_the_bodyguard_is_gone():
    """19.02: with only the Leader left, its T3 is used. Weapon 1 (1 attack, S8: 5/6) destroys the
    one Sister; weapon 2 (1 attack, S4) then wounds on 3+ against T3 (2/3), or on 4+ (1/2) while the
    Sister lives. P(Canoness destroyed) = 5/6 x 2/3 = 5/9. 10th edition: T4 throughout: 5/6 x 1/2."""
    unit = attached(guards=1)
    weapons = [torrent("1", 8, name="first"), torrent("1", 4, name="second")]
    assert close(resolve_unit(weapons, unit, Context(edition=11)).characters["Canoness"], Fraction(5, 9))
    assert close(resolve_unit(weapons, unit, Context(edition=10)).characters["Canoness"], Fraction(5, 12))


@pytest.mark.parametrize("edition", [10, 11])
def test_bodyguard_before_character_and_precision_changes_the_outcome(edition):
    """3 attacks of D1 wounding on 2+ (5/6) against 2 Sisters and a W1 Canoness, no save. Without
    Precision the Canoness is destroyed only when all three wound: (5/6)^3 = 125/216. With
    Precision every wounding attack may go to her: P = 1 - (1/6)^3 = 215/216, the attacker's
    best choice for P(CHARACTER destroyed), which the engine takes and reports."""
    unit = attached()
    plain = resolve_unit([torrent("3")], unit, Context(edition=edition))
    assert close(plain.characters["Canoness"], Fraction(125, 216))
    precise = resolve_unit([torrent("3", precision=True)], unit, Context(edition=edition))
    assert close(precise.characters["Canoness"], Fraction(215, 216))
    assert precise.result.choices["Precision: test weapon"] == "allocated to the CHARACTER models"
    assert any(s.rule_key == "precision" and "maximises the objective 'character'" in s.summary
               for s in precise.result.steps)
    # the objective "models": Precision spends wounds on one model either way here (all W1), a tie
    # keeps normal allocation; E[models destroyed] = 3 x 5/6 = 5/2 both ways
    by_models = resolve_unit([torrent("3", precision=True)], unit, Context(edition=edition), objective="models")
    assert close(by_models.result.models_destroyed.mean, Fraction(5, 2))
    assert by_models.result.choices["Precision: test weapon"] == "normal allocation"


def test_precision_against_a_wounded_leader_then_the_bodyguard():
    """W2 Canoness, 1 Sister, 2 attacks D1 at 5/6, Precision forced on: both wounds go to the
    Canoness while she lives: P(Canoness destroyed) = 25/36, P(Sister destroyed) = 0. Forced off:
    the first wound destroys the Sister, the second wounds the Canoness: P(Canoness) = 0."""
    unit = attached(leader_w=2, guards=1)
    on = resolve_unit([torrent("2", precision=True)], unit, precision=[True])
    assert close(on.characters["Canoness"], Fraction(25, 36))
    assert close(on.lines["Battle Sister"].at_least(1), 0)
    off = resolve_unit([torrent("2", precision=True)], unit, precision=[False])
    assert close(off.characters["Canoness"], 0)
    assert close(off.lines["Battle Sister"].at_least(1), 1 - Fraction(1, 36))


def test_10th_edition_precision_wound_by_wound_beats_one_choice_per_weapon():
    """The attacker allocates each Precision wound as it likes (10th edition, Precision: "each time
    an attack made with such a weapon successfully wounds ..."), knowing the unit and the wounds
    left. A W2 Canoness (no save) led 1 Sister (W1, no save); weapon P: 2 Precision attacks D1,
    S8 torrent against T4 (wounds 5/6 each: P(w = 0, 1, 2) = 1/36, 10/36, 25/36); then weapon Q:
    2 attacks D2, no Precision (P(m >= 1) = 35/36, P(m >= 2) = 25/36). Objective: P(Canoness
    destroyed).

    - Best policy: w = 2: both to the Canoness (destroyed); w = 1: to the Sister (then one wound
      of Q's D2 destroys the Canoness); w = 0: Q needs 2 (the first goes to the Sister).
      P = 25/36 + 10/36 x 35/36 + 1/36 x 25/36 = 1275/1296.
    - Every Precision wound to the Canoness: w = 1 leaves her on 1 wound behind the Sister, Q needs
      2: 25/36 + 10/36 x 25/36 + 1/36 x 25/36 = 1175/1296.
    - Normal allocation: w >= 1 destroys the Sister, then Q needs 1 (a wounded Canoness or not):
      25/36 x 35/36 + 10/36 x 35/36 + 1/36 x 25/36 = 1250/1296 (the best choice per weapon).
    """
    unit = attached(leader_w=2, guards=1)
    weapons = [torrent("2", 8, precision=True, name="P"), torrent("2", 8, damage="2", name="Q")]
    best = resolve_unit(weapons, unit, Context(edition=10))
    assert close(best.characters["Canoness"], Fraction(1275, 1296))
    assert close(resolve_unit(weapons, unit, Context(edition=10), precision=[True, False]).characters["Canoness"],
                 Fraction(1175, 1296))
    assert close(resolve_unit(weapons, unit, Context(edition=10), precision=[False, False]).characters["Canoness"],
                 Fraction(1250, 1296))
    # expected wounds of P to the Canoness: w = 2 sends both (2 x 25/36), w = 1 none: 50/36 of 60/36
    assert best.result.choices["Precision: P"] == "wound by wound: 1.3889 of its 1.6667 expected wounds to the " \
                                                  "CHARACTER models"
    step = [s.summary for s in best.result.steps if s.rule_key == "precision"][-1]
    assert "expected 0.983796; one choice per weapon at best: 0.964506" in step
    # the unit totals follow the same policy: E[models destroyed] = P(Sister) + P(Canoness), the
    # Sister destroyed unless w = 2 and Q misses twice, or w = 0 and Q misses twice:
    # 1 - 25/36 x 1/36 - 1/36 x 1/36 = 1270/1296
    assert close(best.lines["Battle Sister"].mean, Fraction(1270, 1296))
    assert close(best.result.models_destroyed.mean, Fraction(1275 + 1270, 1296))


def test_objective_damage_and_unknown_objective():
    unit = UnitTarget("u", (ModelLine("Sister", 1, 4, 3, 1),
                            ModelLine("Canoness", 1, 4, 6, 3, character=True, role="leader")))
    r = resolve_unit([torrent("2", precision=True)], unit, objective="damage")
    # the Canoness saves on 6+ only: Precision to her is more damage. E = 2 x 5/6 x 5/6
    assert r.result.choices["Precision: test weapon"] == "allocated to the CHARACTER models"
    assert close(r.result.damage.mean, Fraction(50, 36))
    with pytest.raises(EngineInputError, match="objective must be one of character, models, damage"):
        resolve_unit([torrent()], unit, objective="points")


def test_allocation_order_puts_characters_last():
    unit = UnitTarget("u", (ModelLine("Canoness", 1, 3, 3, 4, character=True, role="leader"),
                            ModelLine("Sister", 2, 3, 3, 1)))
    assert allocation_order(unit, 10) == ([1, 1], [0])
    assert allocation_order(unit, 11) == ([1, 1], [0])
    lone = UnitTarget("u", (ModelLine("Hero", 1, 3, 3, 4, character=True), ModelLine("Guard", 2, 3, 3, 1)))
    assert allocation_order(lone, 10) == ([0, 1, 1], [])  # 10th edition: only an Attached unit's
    assert allocation_order(lone, 11) == ([1, 1], [0])    # 11th edition 05.03: every CHARACTER group last


# --- the simulator agrees (an independent allocation, die by die) --------------------------------

SIM_CASES = [
    ("mixed unit (Boyz and a Boss Nob, Nob first)", 10, "reversed",
     [weapon("3", 3, 5, -1, "D3", models=4, name="heavy"), weapon("2", 3, 4, 0, "1", models=5, name="bolt")],
     UnitTarget("Boyz", (ModelLine("Boy", 6, 5, 5, 1), ModelLine("Boss Nob", 1, 5, 4, 2, feel_no_pain=6,
                                                                damage_reduction="one")))),
    ("attached unit with Precision, 11th edition", 11, "listed",
     [weapon("2", 3, 4, -1, "2", models=5, precision=True, name="sniper"),
      weapon("6", 4, 4, 0, "1", lethal_hits=True, devastating_wounds=True, name="dev")],
     UnitTarget("Squad + Canoness", (ModelLine("Sister", 5, 3, 3, 1, invulnerable_save=6),
                                     ModelLine("Canoness", 1, 3, 3, 4, invulnerable_save=4, feel_no_pain_mortal=5,
                                               character=True, role="leader")))),
]


@pytest.mark.parametrize("case", range(len(SIM_CASES)), ids=[c[0] for c in SIM_CASES])
def test_simulator_agrees_within_four_standard_errors(case):
    from pipeline.engine.simulate_units import simulate_unit

    _, edition, policy, weapons, unit = SIM_CASES[case]
    context = Context(edition=edition)
    exact_r = resolve_unit(weapons, unit, context, policy=policy)
    precision = [w.precision for w in weapons]
    if any(precision):
        assert exact_r.result.choices["Precision: sniper"] == "allocated to the CHARACTER models"
    trials = simulate_unit(weapons, unit, context, trials=4000, seed=7, policy=policy, precision=precision)
    n = trials.damage.size
    for i, ln in enumerate(unit.lines):
        sample = trials.lines[:, i]
        se = sample.std() / np.sqrt(n)
        assert abs(sample.mean() - exact_r.lines[ln.name].mean) <= 4 * se + 1e-9, ln.name
    for sample, want in ((trials.damage, exact_r.result.damage.mean), (trials.unsaved, exact_r.result.unsaved.mean)):
        assert abs(sample.mean() - want) <= 4 * sample.std() / np.sqrt(n)
    for k, (name, p) in enumerate(exact_r.characters.items()):
        sample = trials.characters[:, k]
        assert abs(sample.mean() - p) <= 4 * np.sqrt(p * (1 - p) / n) + 1e-9, name


def test_a_line_s_own_damage_reduction_is_for_its_models_only():
    """A Bodyguard line with -1 Damage (a Leader's "models in that unit ... subtract 1 from the
    Damage"), W2, before a W2 CHARACTER without it; 2 attacks D2 wounding on 2+ (5/6), no save.
    The Bodyguard takes 1 point per wound: destroyed only when both wound, 25/36 (without the
    reduction the first wound destroys it: 35/36). Forced to the CHARACTER by Precision, her 2 points
    per wound destroy her on one wound: 35/36."""
    unit = UnitTarget("u", (ModelLine("Guard", 1, 4, None, 2, damage_reduction="one"),
                            ModelLine("Hero", 1, 4, None, 2, character=True, role="leader")))
    r = resolve_unit([torrent("2", 8, damage="2", precision=True)], unit, precision=[False])
    assert close(r.lines["Guard"].mean, Fraction(25, 36))
    assert close(r.characters["Hero"], 0)
    assert r.profiles["Guard"] == "T4 Sv- W2 -1D"
    plain = resolve_unit([torrent("2", 8, damage="2")], dataclasses.replace(
        unit, lines=(dataclasses.replace(unit.lines[0], damage_reduction=None), unit.lines[1])))
    assert close(plain.lines["Guard"].mean, Fraction(35, 36))
    hero = resolve_unit([torrent("2", 8, damage="2", precision=True)], unit, precision=[True])
    assert close(hero.characters["Hero"], Fraction(35, 36))
