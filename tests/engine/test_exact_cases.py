"""The exact engine against the cases with known answers (``shared/cases/README.md``).

Each test asserts a value computed by ``pipeline.engine.exact`` against the exact value written
as a ``Fraction`` (tolerance ``EXACT`` = 1e-9 absolute), and where the README prints a rounded
value (``0.3258``) the exact value is also checked against the printed one within ``PRINTED``.
Neighbouring cases of the same kind follow each README case.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb, floor

import numpy as np
import pytest

from pipeline.engine.exact import damage_per_event, models_destroyed_by_events, resolve
from pipeline.engine.profiles import Anti, Context, Target, Weapon
from pipeline.normalise.characteristics import dice

EXACT = 1e-9
PRINTED = 5e-5


def weapon(attacks="1", skill=3, strength=4, ap=0, damage="1", **kw) -> Weapon:
    return Weapon(name=kw.pop("name", "test weapon"), attacks=dice(attacks), skill=skill, strength=strength,
                  armour_penetration=ap, damage=dice(damage), **kw)


def target(toughness=4, save=3, wounds=1, models=10, **kw) -> Target:
    return Target(toughness=toughness, save=save, wounds=wounds, models=models, **kw)


def close(value: float, exact, tol: float = EXACT) -> bool:
    return abs(value - float(exact)) <= tol


def binomial(n: int, p: Fraction) -> list[Fraction]:
    return [comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]


def assert_pmf(pmf: np.ndarray, expected: dict[int, Fraction] | list[Fraction], tol: float = EXACT) -> None:
    expected = dict(enumerate(expected)) if isinstance(expected, list) else expected
    size = max(pmf.size, max(expected) + 1)
    got = np.pad(pmf, (0, size - pmf.size))
    want = np.array([float(expected.get(k, 0)) for k in range(size)])
    assert np.allclose(got, want, rtol=0, atol=tol), (got.tolist(), want.tolist())


# --- T01 baseline ---------------------------------------------------------------------------


def test_t01_baseline_exact_probabilities():
    r = resolve([weapon(attacks="10")], target(wounds=2))
    p_unsaved = Fraction(1, 9)
    assert close(r.attacks.mean, 10)
    assert close(r.hits.mean, Fraction(20, 3))
    assert close(r.wounds.mean, Fraction(10, 3))
    assert close(r.unsaved.mean, Fraction(10, 9))
    assert_pmf(r.unsaved.pmf, binomial(10, p_unsaved))
    assert close(r.unsaved.at_least(1), 1 - Fraction(8, 9) ** 10)
    assert close(r.unsaved.at_least(1), 0.69205, PRINTED)
    # D1 against W2: models destroyed = floor(unsaved / 2).
    expected = sum(pk * floor(k / 2) for k, pk in enumerate(binomial(10, p_unsaved)))
    assert close(r.models_destroyed.mean, expected)
    assert close(r.models_destroyed.mean, 0.3258, PRINTED)
    at_least_one = 1 - Fraction(8, 9) ** 10 - 10 * Fraction(1, 9) * Fraction(8, 9) ** 9
    assert close(r.models_destroyed.at_least(1), at_least_one)
    assert close(r.models_destroyed.at_least(1), 0.30712, PRINTED)
    assert close(r.damage.mean, Fraction(10, 9))
    assert r.target_destroyed == 0.0  # 10 attacks cannot kill 10 models of W2


def test_t01_neighbour_models_destroyed_capped_at_unit_size():
    # 10 attacks, no save, D1, against 2 models of W1: the pmf stops at 2.
    r = resolve([weapon(attacks="10", strength=8)], target(save=None, wounds=1, models=2))
    p = Fraction(2, 3) * Fraction(5, 6)
    pmf = binomial(10, p)
    assert_pmf(r.models_destroyed.pmf, {0: pmf[0], 1: pmf[1], 2: 1 - pmf[0] - pmf[1]})
    assert close(r.target_destroyed, 1 - pmf[0] - pmf[1])


# --- T02 re-rolls ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reroll, hit, crit",
    [
        (None, Fraction(24, 36), Fraction(6, 36)),
        ("ones", Fraction(28, 36), Fraction(7, 36)),
        ("failed", Fraction(32, 36), Fraction(8, 36)),
        ("all", Fraction(32, 36), Fraction(8, 36)),
    ],
)
def test_t02_rerolls_hits_and_critical_hits(reroll, hit, crit):
    plain = resolve([weapon(attacks="12")], target(), Context(reroll_hits=reroll))
    assert close(plain.hits.mean, 12 * hit)
    # Sustained Hits 1 adds one hit per Critical Hit: the difference counts Critical Hits,
    # so a re-rolled 6 is critical.
    sustained = resolve([weapon(attacks="12", sustained_hits=dice("1"))], target(), Context(reroll_hits=reroll))
    assert close(sustained.hits.mean - plain.hits.mean, 12 * crit)
    assert_pmf(plain.hits.pmf, binomial(12, hit))


def test_t02_printed_values():
    ones = resolve([weapon(attacks="12")], target(), Context(reroll_hits="ones")).hits.mean
    failed = resolve([weapon(attacks="12")], target(), Context(reroll_hits="failed")).hits.mean
    assert close(ones, 9.3333, PRINTED) and close(failed, 10.6667, PRINTED)


@pytest.mark.parametrize(
    "reroll, hit, crit",
    [
        ("ones", Fraction(4, 6) + Fraction(1, 6) * Fraction(4, 6), Fraction(2, 6) + Fraction(1, 6) * Fraction(2, 6)),
        ("failed", Fraction(4, 6) + Fraction(2, 6) * Fraction(4, 6), Fraction(2, 6) + Fraction(2, 6) * Fraction(2, 6)),
        ("all", Fraction(4, 6) + Fraction(2, 6) * Fraction(4, 6), Fraction(2, 6) + Fraction(2, 6) * Fraction(2, 6)),
    ],
)
def test_t02_neighbour_rerolls_with_critical_hits_on_5(reroll, hit, crit):
    # Crits on 5+: re-rolled 5s and 6s are critical; "all" re-rolls the failed rolls only.
    context = Context(reroll_hits=reroll, critical_hit_on=5)
    plain = resolve([weapon(attacks="12")], target(), context)
    sustained = resolve([weapon(attacks="12", sustained_hits=dice("1"))], target(), context)
    assert close(plain.hits.mean, 12 * hit)
    assert close(sustained.hits.mean - plain.hits.mean, 12 * crit)


@pytest.mark.parametrize("reroll, p_wound", [
    ("ones", Fraction(3, 6) + Fraction(1, 6) * Fraction(3, 6)),
    ("failed", Fraction(3, 6) + Fraction(3, 6) * Fraction(3, 6)),
])
def test_t02_neighbour_wound_rerolls_and_twin_linked(reroll, p_wound):
    torrent = dict(attacks="6", skill=None, torrent=True)
    r = resolve([weapon(**torrent)], target(), Context(reroll_wounds=reroll))
    assert close(r.wounds.mean, 6 * p_wound)
    twin = resolve([weapon(twin_linked=True, **torrent)], target(), Context(reroll_wounds=reroll))
    assert close(twin.wounds.mean, 6 * (Fraction(3, 6) + Fraction(3, 6) * Fraction(3, 6)))


# --- T03 hit modifier cap ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "skill, modifier, p_hit",
    [
        (4, +2, Fraction(4, 6)),  # net +2 capped to +1
        (3, -2, Fraction(3, 6)),  # net -2 capped to -1
        (2, +1, Fraction(5, 6)),  # an unmodified 1 fails
        (5, -1, Fraction(1, 6)),  # an unmodified 6 hits
        (6, -1, Fraction(1, 6)),
        (6, 0, Fraction(1, 6)),
        (4, 0, Fraction(3, 6)),
    ],
)
def test_t03_hit_modifier_cap_and_natural_rolls(skill, modifier, p_hit):
    r = resolve([weapon(attacks="6", skill=skill)], target(), Context(hit_modifier=modifier))
    assert close(r.hits.mean, 6 * p_hit)


def test_t03_printed_value():
    assert close(resolve([weapon(attacks="6", skill=4)], target(), Context(hit_modifier=2)).hits.mean, 4.0, PRINTED)


@pytest.mark.parametrize("modifier, p_wound", [(+2, Fraction(4, 6)), (-2, Fraction(2, 6)), (-1, Fraction(2, 6))])
def test_t03_neighbour_wound_modifier_cap(modifier, p_wound):
    # S4 vs T4 (4+): +2 is capped to +1, -2 to -1.
    r = resolve([weapon(attacks="6", skill=None, torrent=True)], target(), Context(wound_modifier=modifier))
    assert close(r.wounds.mean, 6 * p_wound)


def test_t03_neighbour_modifier_never_turns_a_natural_6_into_a_miss_on_wounds():
    # S3 vs T12 wounds only on 6+; -1 to wound still wounds on an unmodified 6.
    r = resolve([weapon(attacks="6", skill=None, torrent=True, strength=3)], target(toughness=12),
                Context(wound_modifier=-1))
    assert close(r.wounds.mean, 1)


# --- T04 / T05 / P31 Sustained Hits and Lethal Hits on the same critical ---------------------------


def test_t04_sustained_and_lethal_on_the_same_critical():
    r = resolve([weapon(attacks="6", skill=4, sustained_hits=dice("1"), lethal_hits=True)], target(toughness=8, save=None))
    per_attack = Fraction(1, 6) * (1 + Fraction(1, 6)) + Fraction(2, 6) * Fraction(1, 6)
    assert per_attack == Fraction(9, 36)
    assert close(r.hits.mean, 4)
    assert close(r.wounds.mean, 6 * per_attack)
    assert close(r.wounds.mean, 1.5, PRINTED)


def test_t05_critical_hits_on_5_with_sustained_and_lethal():
    r = resolve([weapon(attacks="6", skill=3, sustained_hits=dice("1"), lethal_hits=True)],
                target(toughness=8, save=None), Context(critical_hit_on=5))
    per_attack = Fraction(2, 6) * (1 + Fraction(1, 6)) + Fraction(2, 6) * Fraction(1, 6)
    assert per_attack == Fraction(16, 36)
    assert close(r.wounds.mean, 6 * per_attack)
    assert close(r.wounds.mean, 2.6667, PRINTED)
    assert close(r.hits.mean, 6)


@pytest.mark.parametrize(
    "context, expected",
    [
        (Context(), Fraction(5, 3)),
        (Context(critical_hit_on=5), Fraction(8, 3)),
        (Context(overwatch=True), Fraction(7, 6)),
    ],
)
def test_p31_sustained_extra_hits_are_never_critical(context, expected):
    r = resolve([weapon(attacks="6", skill=3, sustained_hits=dice("1"), lethal_hits=True)],
                target(toughness=8, save=None), context)
    assert close(r.wounds.mean, expected)


def test_t04_neighbour_exact_pmf_of_one_attack():
    # 1 attack BS4+, SH1 + LH vs wounds on 6+: crit (1/6) -> auto wound + a hit wounding on 6.
    r = resolve([weapon(attacks="1", skill=4, sustained_hits=dice("1"), lethal_hits=True)], target(toughness=8, save=None))
    crit, normal = Fraction(1, 6), Fraction(2, 6)
    w2 = crit * Fraction(1, 6)
    w1 = crit * Fraction(5, 6) + normal * Fraction(1, 6)
    assert_pmf(r.wounds.pmf, {0: 1 - w1 - w2, 1: w1, 2: w2})
    assert_pmf(r.hits.pmf, {0: Fraction(3, 6), 1: normal, 2: crit})


def test_neighbour_sustained_hits_d3():
    r = resolve([weapon(attacks="1", skill=4, sustained_hits=dice("D3"))], target())
    crit = Fraction(1, 6)
    assert_pmf(r.hits.pmf, {0: Fraction(1, 2), 1: Fraction(1, 3), 2: crit / 3, 3: crit / 3, 4: crit / 3})
    six = resolve([weapon(attacks="6", skill=4, sustained_hits=dice("D3"))], target())
    assert close(six.hits.mean, 6 * (Fraction(2, 6) + Fraction(1, 6) * 3))


def test_t24a_overwatch_sustained_hits_2_every_hit_is_critical():
    # T24 (a): every hit is a Critical Hit on an unmodified 6: 1/6 * (1 + 2) per attack.
    for modifier in (-1, 0, 1):
        r = resolve([weapon(attacks="6", skill=3, sustained_hits=dice("2"))], target(),
                    Context(overwatch=True, hit_modifier=modifier))
        assert close(r.hits.mean / 6, Fraction(1, 2))
        assert close(r.hits.mean / 6, 0.5, PRINTED)


# --- T07 Anti + Devastating Wounds --------------------------------------------------------------


HAYWIRE = dict(attacks="8", skill=4, strength=3, ap=-1, damage="3")
VEHICLE = dict(toughness=11, save=2, wounds=13, models=1, keywords=frozenset({"VEHICLE"}))


def test_t07_anti_vehicle_with_devastating_wounds():
    r = resolve([weapon(anti=(Anti("VEHICLE", 4),), devastating_wounds=True, **HAYWIRE)], target(**VEHICLE))
    crit_wounds = binomial(8, Fraction(1, 4))
    assert close(r.mortal_wounds.mean, 6)
    assert_pmf(r.mortal_wounds.pmf, {3 * k: p for k, p in enumerate(crit_wounds)})
    assert r.unsaved.mean == 0.0  # every successful wound roll is critical
    destroyed = sum(crit_wounds[5:])  # 5 x 3 >= 13 > 4 x 3
    assert destroyed == Fraction(1789, 65536)
    assert close(r.target_destroyed, destroyed)
    assert close(r.target_destroyed, 0.0273, PRINTED)


def test_t07_anti_only_and_devastating_only():
    anti = resolve([weapon(anti=(Anti("VEHICLE", 4),), **HAYWIRE)], target(**VEHICLE))
    dev = resolve([weapon(devastating_wounds=True, **HAYWIRE)], target(**VEHICLE))
    assert close(anti.damage.mean, 2)  # 2 wounds, save 3+ -> 1/3 unsaved, 3 damage
    assert close(anti.mortal_wounds.mean, 0)
    assert close(dev.damage.mean, 2)  # 8 * 1/2 * 1/6 critical wounds, 3 mortal wounds each
    assert close(dev.mortal_wounds.mean, 2)


def test_t07_neighbour_anti_needs_the_keyword_and_lowest_threshold_wins():
    no_keyword = resolve([weapon(anti=(Anti("VEHICLE", 4),), devastating_wounds=True, **HAYWIRE)],
                         target(**{**VEHICLE, "keywords": frozenset({"MONSTER"})}))
    assert close(no_keyword.mortal_wounds.mean, 8 * Fraction(1, 2) * Fraction(1, 6) * 3)
    both = resolve([weapon(anti=(Anti("VEHICLE", 4), Anti("MONSTER", 2)), devastating_wounds=True, **HAYWIRE)],
                   target(**{**VEHICLE, "keywords": frozenset({"VEHICLE", "MONSTER"})}))
    assert close(both.mortal_wounds.mean, 8 * Fraction(1, 2) * Fraction(5, 6) * 3)


# --- T09 Lethal Hits never trigger Devastating Wounds ------------------------------------------


def test_t09_lethal_auto_wounds_never_trigger_devastating_wounds():
    r = resolve([weapon(attacks="6", skill=4, lethal_hits=True, devastating_wounds=True)], target(wounds=1))
    assert close(r.mortal_wounds.mean, 6 * Fraction(2, 6) * Fraction(1, 6))
    assert close(r.mortal_wounds.mean, 0.3333, PRINTED)
    normal = 6 * (Fraction(1, 6) * Fraction(1, 3) + Fraction(2, 6) * Fraction(2, 6) * Fraction(1, 3))
    assert close(r.unsaved.mean, normal)
    assert close(r.unsaved.mean, 0.5556, PRINTED)
    assert close(r.damage.mean, Fraction(8, 9))
    assert close(r.models_destroyed.mean, Fraction(8, 9))  # W1, enough models


def test_t09_neighbour_one_attack_pmfs():
    r = resolve([weapon(attacks="1", skill=4, lethal_hits=True, devastating_wounds=True)], target(wounds=1))
    crit, normal = Fraction(1, 6), Fraction(2, 6)
    mortal = normal * Fraction(1, 6)
    unsaved = crit * Fraction(1, 3) + normal * Fraction(2, 6) * Fraction(1, 3)
    assert_pmf(r.mortal_wounds.pmf, {0: 1 - mortal, 1: mortal})
    assert_pmf(r.unsaved.pmf, {0: 1 - unsaved, 1: unsaved})
    assert_pmf(r.models_destroyed.pmf, {0: 1 - mortal - unsaved, 1: mortal + unsaved})


# --- T10 Torrent ----------------------------------------------------------------------------------


def test_t10_torrent_no_hit_roll():
    r = resolve([weapon(attacks="D6", skill=None, torrent=True)], target(toughness=3, save=5))
    assert close(r.attacks.mean, 3.5) and close(r.hits.mean, 3.5)
    assert_pmf(r.hits.pmf, {k: Fraction(1, 6) for k in range(1, 7)})
    assert close(r.wounds.mean, Fraction(7, 3))
    assert close(r.unsaved.mean, Fraction(14, 9))
    assert close(r.unsaved.mean, 1.5556, PRINTED)


def test_t10_variant_torrent_never_triggers_sustained_or_lethal():
    r = resolve([weapon(attacks="6", skill=None, torrent=True, sustained_hits=dice("1"), lethal_hits=True)],
                target(toughness=8, save=None))
    assert close(r.hits.mean, 6)
    assert close(r.wounds.mean, 1.0)


def test_t10_neighbour_torrent_ignores_a_printed_skill_and_overwatch():
    r = resolve([weapon(attacks="6", skill=4, torrent=True)], target(toughness=8, save=None), Context(overwatch=True))
    assert close(r.hits.mean, 6)


# --- T12 Feel No Pain per damage point ---------------------------------------------------------


def test_t12_feel_no_pain_is_rolled_per_damage_point():
    d6 = weapon(damage="D6")
    tgt = target(wounds=10, models=1, feel_no_pain=5)
    lost = damage_per_event(d6, tgt, Context())
    assert close(lost @ np.arange(lost.size), Fraction(7, 3))
    p_zero = Fraction(1, 6) * sum(Fraction(1, 3) ** d for d in range(1, 7))
    assert close(lost[0], p_zero)
    assert close(lost[0], 0.08322, PRINTED)
    # Through resolve: one attack that gets through with probability 5/6.
    r = resolve([weapon(skill=None, torrent=True, strength=8, damage="D6")], target(wounds=10, models=1, save=None, feel_no_pain=5))
    assert close(r.damage.mean, Fraction(5, 6) * Fraction(7, 3))
    assert close(r.damage.pmf[0], Fraction(1, 6) + Fraction(5, 6) * p_zero)


def test_t12_neighbour_feel_no_pain_against_mortal_wounds_only():
    kw = dict(attacks="6", skill=None, torrent=True, damage="2", devastating_wounds=True, anti=(Anti("INFANTRY", 4),))
    tgt = target(save=None, toughness=4, keywords=frozenset({"INFANTRY"}), feel_no_pain_mortal=4)
    r = resolve([weapon(**kw)], tgt)
    # S4 vs T4: 4+ wounds, all critical (Anti 4+): 3 devastating events of 2 MW, FNP 4+ on each point.
    assert close(r.unsaved.mean, 0)
    assert close(r.mortal_wounds.mean, 6)
    assert close(r.damage.mean, 3)
    normal = resolve([weapon(attacks="6", skill=None, torrent=True, damage="2")], target(save=None, feel_no_pain_mortal=4))
    assert close(normal.damage.mean, 6)  # FNP against mortal wounds does not apply to normal damage
    better = resolve([weapon(**kw)], target(save=None, keywords=frozenset({"INFANTRY"}), feel_no_pain=6, feel_no_pain_mortal=4))
    assert close(better.damage.mean, 3)  # the better of 6+ and 4+ against mortal wounds


def test_t12_neighbour_feel_no_pain_against_psychic_attacks_only():
    # "This model has the Feel No Pain 2+ ability against Psychic Attacks" (Culexus Assassin's
    # Abomination): every damage point of a [PSYCHIC] weapon's attack, and no other.
    tgt = target(save=None, wounds=10, models=1, feel_no_pain_psychic=2)
    kw = dict(attacks="6", skill=None, torrent=True, strength=8, damage="2")
    psychic = resolve([weapon(**kw, psychic=True)], tgt)
    # S8 v T4 wounds on 2+: 6 x 5/6 events of 2 damage; FNP 2+ keeps a point on a 1 only.
    assert close(psychic.damage.mean, 6 * Fraction(5, 6) * 2 * Fraction(1, 6))
    plain = resolve([weapon(**kw)], tgt)
    assert close(plain.damage.mean, 10)
    both = resolve([weapon(**kw, psychic=True)], target(save=None, wounds=10, models=1, feel_no_pain=5,
                                                        feel_no_pain_psychic=4))
    assert close(both.damage.mean, 10 * Fraction(1, 2))  # the better of 5+ and 4+


# --- T14 / P34 allocation: damage never carries to the next model --------------------------------


def test_t14_two_d6_events_against_w3():
    tgt = target(wounds=3, models=5)
    d6 = damage_per_event(weapon(damage="D6"), tgt, Context())
    r = models_destroyed_by_events(tgt, [([0, 0, 1], d6)])
    assert_pmf(r.pmf, {0: Fraction(1, 36), 1: Fraction(19, 36), 2: Fraction(4, 9)})
    assert close(r.mean, Fraction(17, 12))
    assert close(r.mean, 1.4167, PRINTED)


def test_t14_neighbour_through_resolve():
    # 2 attacks that each get through with probability 5/6 (torrent, S8 vs T4, no save), D6 vs W3.
    r = resolve([weapon(attacks="2", skill=None, torrent=True, strength=8, damage="D6")], target(save=None, wounds=3, models=5))
    both, one = Fraction(25, 36), Fraction(10, 36)
    expected = both * Fraction(17, 12) + one * Fraction(4, 6)
    assert close(r.models_destroyed.mean, expected)
    assert close(r.models_destroyed.pmf[2], both * Fraction(4, 9))


def test_p34_three_d3_events_against_w2_destroy_three_models():
    tgt = target(wounds=2, models=10)
    r = models_destroyed_by_events(tgt, [([0, 0, 0, 1], [0, 0, 0, 1])])
    assert_pmf(r.pmf, {3: Fraction(1)})
    through = resolve([weapon(attacks="3", skill=None, torrent=True, strength=8, damage="3")], target(save=None, wounds=2))
    assert_pmf(through.models_destroyed.pmf, binomial(3, Fraction(5, 6)))
    assert close(through.damage.mean, 3 * Fraction(5, 6) * 3)  # 7.5 damage, 2.5 models, not 3.75


def test_p33_devastating_mortal_wounds_do_not_spill_over():
    tgt = target(save=2, wounds=1, models=3, keywords=frozenset({"INFANTRY"}))
    dev = weapon(skill=None, torrent=True, damage="3", devastating_wounds=True, anti=(Anti("INFANTRY", 2),))
    r = resolve([dev], tgt)
    p = Fraction(5, 6)  # unmodified 2+ is a Critical Wound
    assert_pmf(r.mortal_wounds.pmf, {0: 1 - p, 3: p})
    assert_pmf(r.models_destroyed.pmf, {0: 1 - p, 1: p})  # never 3
    assert r.models_destroyed.at_least(2) == 0.0
    assert_pmf(models_destroyed_by_events(tgt, [([0, 1], [0, 0, 0, 1])]).pmf, {1: Fraction(1)})


# --- carry-over between weapons, devastating wounds after the other attacks ---------------------------


SURE = dict(attacks="1", skill=None, torrent=True, strength=8)  # gets through with probability 5/6


def test_wound_state_carries_from_one_weapon_to_the_next():
    r = resolve([weapon(**SURE), weapon(**SURE)], target(save=None, wounds=2, models=2))
    assert_pmf(r.models_destroyed.pmf, {0: 1 - Fraction(25, 36), 1: Fraction(25, 36)})


def test_wounded_model_takes_the_next_event_d1_then_d2():
    # W3: D1 then D2 destroys one model (2 + 1 = 3); without carry-over it would not.
    r = resolve([weapon(damage="1", **SURE), weapon(damage="2", **SURE)], target(save=None, wounds=3, models=2))
    assert close(r.models_destroyed.pmf[1], Fraction(25, 36))


def test_devastating_wounds_are_allocated_after_every_weapons_other_attacks():
    # Weapons in order: normal D1, devastating D2, normal D1, against W2 models.
    # Allocation order [1, 1] then [2]: all three events destroy 2 models; in weapon order
    # [1, 2, 1] they would destroy only 1.
    dev = weapon(skill=None, torrent=True, damage="2", devastating_wounds=True, anti=(Anti("INFANTRY", 2),))
    tgt = target(save=None, wounds=2, models=3, keywords=frozenset({"INFANTRY"}))
    r = resolve([weapon(**SURE), dev, weapon(**SURE)], tgt)
    p, q = Fraction(5, 6), Fraction(1, 6)
    assert_pmf(r.models_destroyed.pmf, {0: q**3 + 2 * p * q**2, 1: p * q**2 + 3 * p**2 * q, 2: p**3})


def test_devastating_and_normal_events_of_one_weapon_are_not_independent():
    # One attack is either unsaved or devastating, never both: with one attack against one W3
    # model the target is never destroyed (treating the two counts as independent would give
    # P(1 unsaved and 1 devastating) = 1/3 * 1/6).
    w = weapon(attacks="1", skill=None, torrent=True, strength=4, damage="2", devastating_wounds=True)
    r = resolve([w], target(save=None, wounds=3, models=1))
    # S4 vs T4: 6 is a Critical Wound (2 MW), 4-5 normal wounds (2 damage, no save).
    assert_pmf(r.damage.pmf, {0: Fraction(1, 2), 2: Fraction(1, 2)})
    assert r.target_destroyed == 0.0
    two = resolve([weapon(attacks="2", skill=None, torrent=True, strength=4, damage="2", devastating_wounds=True)],
                  target(save=None, wounds=3, models=1))
    assert close(two.target_destroyed, Fraction(1, 4))  # both attacks wound: 2 + 2 >= 3


# --- T16 Melta ----------------------------------------------------------------------------------


@pytest.mark.parametrize("half_range, damage", [(True, Fraction(11, 2)), (False, Fraction(7, 2))])
def test_t16_melta_within_half_range(half_range, damage):
    r = resolve([weapon(attacks="2", skill=4, strength=9, ap=-4, damage="D6", melta=dice("2"))],
                target(toughness=11, save=2, wounds=13, models=1), Context(half_range=half_range))
    unsaved = 2 * Fraction(1, 2) * Fraction(1, 3) * Fraction(5, 6)
    assert close(r.unsaved.mean, unsaved)
    assert close(r.unsaved.mean, 0.2778, PRINTED)
    assert close(r.damage.mean, unsaved * damage)
    assert close(r.damage.mean, 1.5278 if half_range else 0.9722, PRINTED)


# --- T18 / T19 saves, invulnerable saves and cover ------------------------------------------------------


TORRENT6 = dict(attacks="6", skill=None, torrent=True)  # 3 wounds expected against T4


@pytest.mark.parametrize("ap, unsaved", [(-3, Fraction(3, 2)), (-1, Fraction(3, 2)), (0, Fraction(1)), (-2, Fraction(3, 2))])
def test_t18_best_of_armour_and_invulnerable_save(ap, unsaved):
    r = resolve([weapon(ap=ap, **TORRENT6)], target(save=3, invulnerable_save=4))
    assert close(r.unsaved.mean, unsaved)


@pytest.mark.parametrize(
    "save, invuln, ap, kw, context, unsaved",
    [
        (3, None, 0, {}, Context(cover=True), Fraction(1)),  # Sv3+ vs AP0: no cover
        (4, None, 0, {}, Context(cover=True), Fraction(1)),  # 4+ -> 3+
        (3, None, -1, {}, Context(cover=True), Fraction(1)),  # 4+ then +1 -> 3+
        (5, 4, -2, {}, Context(cover=True), Fraction(3, 2)),  # armour 7+ -> 6+; the invulnerable 4+ is not improved
        (4, None, 0, {"ignores_cover": True}, Context(cover=True), Fraction(3, 2)),
        (4, None, 0, {"is_melee": True}, Context(cover=True), Fraction(3, 2)),
        (4, None, 0, {}, Context(), Fraction(3, 2)),
        (2, None, 0, {}, Context(cover=True), Fraction(1, 2)),  # Sv2+ vs AP0: no cover
    ],
)
def test_t19_benefit_of_cover(save, invuln, ap, kw, context, unsaved):
    r = resolve([weapon(ap=ap, **TORRENT6, **kw)], target(save=save, invulnerable_save=invuln), context)
    assert close(r.unsaved.mean, unsaved)


def test_neighbour_unmodified_one_always_fails_a_save():
    # Sv2+ in cover against AP-1 would need 2+ (not 1+): 1/6 still fail.
    r = resolve([weapon(ap=-1, **TORRENT6)], target(save=2), Context(cover=True))
    assert close(r.unsaved.mean, 3 * Fraction(1, 6))


# --- T20 damage modifiers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "damage, context, mean",
    [
        ("D3", Context(damage_reduction="one"), Fraction(4, 3)),
        ("D6", Context(damage_reduction="half"), Fraction(2)),
        ("D6", Context(damage_reduction="half", damage_modifier=-1), Fraction(4, 3)),
        ("D2", Context(damage_reduction="one"), Fraction(1)),
        ("1", Context(damage_reduction="one"), Fraction(1)),
        ("D6", Context(damage_modifier=1), Fraction(9, 2)),
        ("D6+1", Context(half_range=True, damage_reduction="half"), Fraction(2 + 3 + 3 + 4 + 4 + 5, 6)),  # (D6+1 + Melta 2) halved, rounding up
    ],
)
def test_t20_damage_modifiers_on_the_rolled_value(damage, context, mean):
    w = weapon(damage=damage, melta=dice("2"))
    pmf = damage_per_event(w, target(), context)
    assert close(pmf @ np.arange(pmf.size), mean)
    assert pmf[0] == 0.0  # never 0


def test_t20_five_events_of_d3_minus_one():
    pmf = damage_per_event(weapon(damage="D3"), target(), Context(damage_reduction="one"))
    five = np.array([1.0])
    for _ in range(5):
        five = np.convolve(five, pmf)
    assert close(five @ np.arange(five.size), Fraction(20, 3))
    assert close(five @ np.arange(five.size), 6.6667, PRINTED)
    r = resolve([weapon(attacks="5", skill=None, torrent=True, strength=8, damage="D3")], target(save=None, wounds=10),
                Context(damage_reduction="one"))
    assert close(r.damage.mean, 5 * Fraction(5, 6) * Fraction(4, 3))


# --- T22 Lance / Heavy inside the cap ------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw, context, stage, p",
    [
        ({"lance": True, "skill": None, "torrent": True}, Context(charged=True), "wounds", Fraction(4, 6)),
        ({"lance": True, "skill": None, "torrent": True}, Context(charged=True, wound_modifier=-1), "wounds", Fraction(3, 6)),
        ({"lance": True, "skill": None, "torrent": True}, Context(charged=True, wound_modifier=1), "wounds", Fraction(4, 6)),
        ({"lance": True, "skill": None, "torrent": True}, Context(), "wounds", Fraction(3, 6)),
        ({"heavy": True, "skill": 4}, Context(stationary=True), "hits", Fraction(4, 6)),
        ({"heavy": True, "skill": 4}, Context(stationary=True, hit_modifier=-1), "hits", Fraction(3, 6)),
        ({"heavy": True, "skill": 4}, Context(stationary=True, hit_modifier=1), "hits", Fraction(4, 6)),
        ({"heavy": True, "skill": 4}, Context(), "hits", Fraction(3, 6)),
    ],
)
def test_t22_lance_and_heavy_count_inside_the_cap(kw, context, stage, p):
    r = resolve([weapon(attacks="6", **kw)], target(), context)
    assert close(r.stage(stage).mean, 6 * p)


def test_neighbour_stealth_is_minus_one_to_hit_for_ranged_attacks_only():
    ranged = resolve([weapon(attacks="6", skill=3)], target(stealth=True))
    melee = resolve([weapon(attacks="6", skill=3, is_melee=True)], target(stealth=True))
    heavy = resolve([weapon(attacks="6", skill=3, heavy=True)], target(stealth=True), Context(stationary=True))
    assert close(ranged.hits.mean, 3) and close(melee.hits.mean, 4) and close(heavy.hits.mean, 4)


# --- T24 -------------------------------------------------------------------------------------------------


def test_t24_lascannon_published_expected_damage():
    r = resolve([weapon(skill=3, strength=9, ap=-3, damage="D6")], target(toughness=7, save=3, wounds=8, models=1))
    expected = Fraction(7, 2) * Fraction(2, 3) * Fraction(2, 3) * Fraction(5, 6)
    assert close(r.damage.mean, expected)
    assert close(r.damage.mean, 1.2963, PRINTED)


# --- attacks: dice, Rapid Fire, Blast, Hazardous -----------------------------------------------------------


def test_attacks_dice_summed_over_models_with_rapid_fire_and_blast():
    w = weapon(attacks="D3", models=2, rapid_fire=dice("1"), blast=1)
    r = resolve([w], target(models=10), Context(half_range=True))
    # Per model D3 + 1 (Rapid Fire) + 2 (Blast, 10 models): 4..6 each.
    per_model = {4: Fraction(1, 3), 5: Fraction(1, 3), 6: Fraction(1, 3)}
    expected: dict[int, Fraction] = {}
    for a, pa in per_model.items():
        for b, pb in per_model.items():
            expected[a + b] = expected.get(a + b, 0) + pa * pb
    assert_pmf(r.attacks.pmf, expected)
    far = resolve([w], target(models=9), Context())
    assert close(far.attacks.mean, 2 * (2 + 1))  # D3 + Blast 1 (9 models), no Rapid Fire
    assert_pmf(resolve([weapon(attacks="2D6")], target()).attacks.pmf,
               {k: Fraction(6 - abs(k - 7), 36) for k in range(2, 13)})


def test_hazardous_expected_mortal_wounds_10th_edition():
    # 5 models fire a Hazardous weapon: each test fails on a 1 (1/6) for 3 mortal wounds
    r = resolve([weapon(hazardous=True, models=5), weapon(models=3)], target())
    assert close(r.hazardous_mortal_wounds, Fraction(5, 6) * 3)
    assert resolve([weapon()], target()).hazardous_mortal_wounds == 0.0


def test_several_weapons_stages_are_summed():
    a, b = weapon(attacks="3"), weapon(attacks="D3", skill=4)
    r = resolve([a, b], target())
    assert close(r.attacks.mean, 5)
    assert close(r.hits.mean, 3 * Fraction(2, 3) + 2 * Fraction(1, 2))
    assert abs(r.models_destroyed.pmf.sum() - 1) < 1e-12
    for stage in ("attacks", "hits", "wounds", "unsaved", "mortal_wounds", "damage", "models_destroyed"):
        assert abs(r.stage(stage).pmf.sum() - 1) < 1e-12
