"""11th-edition weapon abilities restricted to a keyword ("[LETHAL HITS: VEHICLE]"): applied only
against a target that meets the condition, in the exact engine and the simulator alike
(../shared/cases E02)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from pipeline.engine.exact import resolve
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.engine.simulate import simulate
from pipeline.normalise.weapon_abilities import parse_ability
from schemas.types import DiceExpr

ONE = DiceExpr(text="1", dice_count=0, dice_sides=0, modifier=1)
SIX = DiceExpr(text="6", dice_count=0, dice_sides=0, modifier=6)
E11 = Context(edition=11)


def gun(*abilities: str) -> Weapon:
    return Weapon.from_abilities(name="gun", attacks=SIX, skill=4, strength=4, armour_penetration=0, damage=ONE,
                                 abilities=[parse_ability(a) for a in abilities])


def target(*keywords: str) -> Target:
    return Target(toughness=8, save=7, wounds=1, models=20, keywords=frozenset(keywords))


@pytest.mark.parametrize("keywords, expected", [
    (("INFANTRY",), Fraction(1, 2)),       # 6 x 1/2 x 1/6: no Lethal Hits against INFANTRY
    (("VEHICLE",), Fraction(4, 3)),        # 6 x (1/6 + 2/6 x 1/6): Lethal Hits, the better choice
])
def test_lethal_hits_vehicle(keywords, expected):
    w = gun("LETHAL HITS: VEHICLE")
    r = resolve([w], target(*keywords), E11)
    assert abs(r.wounds.mean - float(expected)) < 1e-12
    note = [s.summary for s in r.steps if s.rule_key == "lethal-hits" and "condition" in s.summary]
    assert len(note) == 1 and ("not applied" in note[0]) == (keywords == ("INFANTRY",))
    sim = simulate([w], target(*keywords), E11, trials=60_000, seed=3)
    assert abs(sim.wounds.mean - float(expected)) < 4 * (1.5 / 60_000) ** 0.5  # 4 standard errors


def test_non_monster_vehicle_and_unconditional_forms():
    w = gun("LETHAL HITS: non-MONSTER/VEHICLE", "SUSTAINED HITS 1")
    infantry = resolve([w], target("INFANTRY"), E11)
    monster = resolve([w], target("MONSTER"), E11)
    # Sustained Hits holds for both: E[hits] = 6 x (1/2 + 1/6) = 4
    assert abs(infantry.hits.mean - 4) < 1e-12 and abs(monster.hits.mean - 4) < 1e-12
    # against the MONSTER no Lethal Hits: every hit wounds on 6+
    assert abs(monster.wounds.mean - 4 / 6) < 1e-12
    assert infantry.wounds.mean > monster.wounds.mean
