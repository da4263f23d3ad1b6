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
