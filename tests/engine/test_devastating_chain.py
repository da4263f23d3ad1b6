"""Devastating Wounds attacks the engine refused before its chain was made linear (the pending
counts of three or four weapons, or too much work), resolved exactly and checked against the
Monte Carlo simulator (seeded, 50,000 trials): every P(models destroyed = k) and the mean
within 5 standard errors (as ``test_simulate.py``; a standard deviation is floored at that of
an event of probability 1/trials), and the pmf sums to 1.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pipeline.engine.exact import resolve
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.engine.simulate import simulate_trials
from pipeline.normalise.characteristics import dice

TRIALS = 50_000


def devastating(name: str, models: int, attacks: str = "2", damage: str = "1", strength: int = 4, **kw) -> Weapon:
    return Weapon(name=name, attacks=dice(attacks), skill=3, strength=strength, armour_penetration=-1,
                  damage=dice(damage), models=models, devastating_wounds=True, **kw)


CASES = {
    # 4 x 20 models A2 (the case), against a tough unit so that the result is spread out
    "4 x 20 models A2": ([devastating(f"w{i}", 20, damage=d, strength=s) for i, (d, s) in
                          enumerate([("1", 4), ("2", 6), ("D3", 5), ("1", 8)])],
                         Target(toughness=8, save=2, wounds=4, models=10, feel_no_pain=4), Context()),
    # 3 x 40 models A2, 11th edition, with Sustained Hits and Lethal Hits on two of them
    "3 x 40 models A2": ([devastating("a", 40, sustained_hits=dice("1")),
                          devastating("b", 40, damage="2", lethal_hits=True, strength=6),
                          devastating("c", 40, damage="D3")],
                         Target(toughness=10, save=2, wounds=6, models=10, feel_no_pain=5, feel_no_pain_mortal=4),
                         Context(edition=11)),
    # the case of tests/engine/data/make_chain_reference.py that the old engine refused
    "three weapons of the grid": ([devastating("w0", 10, "D6", "3", strength=8, sustained_hits=dice("2")),
                                   devastating("w1", 10, "2D6", "2", strength=6),
                                   devastating("w2", 10, "D6+1", "1", strength=3, sustained_hits=dice("1"))],
                                  Target(toughness=4, save=3, wounds=2, models=10, feel_no_pain=5), Context()),
    # two weapons whose devastating events differ (D1, D2) against many models: the pending counts
    # would multiply (about 3e9 steps); resolved by kill counts (pipeline.engine.kill_counts)
    "D1 + D2, 300 models each, vs 250 x W2": ([devastating(f"d{d}", 300, attacks="1", damage=d) for d in "12"],
                                              Target(toughness=5, save=2, wounds=2, models=250, feel_no_pain=5),
                                              Context()),
    # the same against one model of many wounds (kill counts of one model: a damage total)
    "D1 + D2 + D3, vs 1 x W14": ([devastating(f"d{d}", 6, damage=d) for d in "123"],
                                Target(toughness=8, save=3, wounds=14, models=1, feel_no_pain=6), Context(edition=11)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_formerly_refused_cases_agree_with_the_simulator(name):
    weapons, target, context = CASES[name]
    exact = resolve(weapons, target, context).models_destroyed
    assert exact.pmf.size == target.models + 1
    assert abs(exact.pmf.sum() - 1.0) <= 1e-12
    destroyed = simulate_trials(weapons, target, context, trials=TRIALS, seed=14).models_destroyed
    for k, p in enumerate(exact.pmf):
        indicator = (destroyed == k).astype(np.float64)
        bound = 5 * np.sqrt(max(p * (1 - p), 1.0 / TRIALS) / TRIALS)
        assert abs(indicator.mean() - p) <= bound, (k, indicator.mean(), p)
    bound = 5 * max(destroyed.std(ddof=1), 1.0 / np.sqrt(TRIALS)) / np.sqrt(TRIALS)  # sd floored as p above
    assert abs(destroyed.mean() - exact.mean) <= bound, (destroyed.mean(), exact.mean)


# Two Devastating Wounds weapons whose devastating events are the same (the same Damage after
# Feel No Pain, or Damage at least W) share one pending count: resolved as one weapon of their
# models together would be (the same independent attacks, allocated in the same order).
FOLDED = {
    "D1 vs 10 x W2": (devastating("a", 12), Target(toughness=4, save=3, wounds=2, models=10, feel_no_pain=5)),
    "D3 vs 20 x W3, Sustained Hits": (devastating("a", 16, damage="D3", sustained_hits=dice("1")),
                                     Target(toughness=5, save=4, wounds=3, models=20)),
    "Lethal Hits, D2 vs 6 x W2": (devastating("a", 10, damage="2", lethal_hits=True),
                                  Target(toughness=4, save=3, wounds=2, models=6)),
    "D2 vs 80 x W1 (banded chain)": (devastating("a", 20, damage="2"), Target(toughness=3, save=5, wounds=1, models=80)),
}


@pytest.mark.parametrize("name", list(FOLDED))
def test_two_weapons_with_the_same_devastating_events_equal_one_weapon_of_both(name):
    weapon, target = FOLDED[name]
    half = dataclasses.replace(weapon, models=weapon.models // 2)
    together = resolve([weapon], target).models_destroyed.pmf
    apart = resolve([half, dataclasses.replace(half, name="b")], target).models_destroyed.pmf
    assert together.size == apart.size == target.models + 1
    assert np.max(np.abs(together - apart)) <= 1e-12


def test_different_damage_devastating_weapons_against_w2_fold_when_both_destroy_a_model():
    target = Target(toughness=4, save=3, wounds=2, models=10)
    two, three = devastating("two", 6, damage="2"), devastating("three", 6, damage="3")
    both_two = resolve([two, devastating("two again", 6, damage="2")], target).models_destroyed.pmf
    assert np.max(np.abs(resolve([two, three], target).models_destroyed.pmf - both_two)) <= 1e-12


# The largest targets of the database (distinct Wounds at their unit's largest size: one model of
# W100, 3 x W16, 20 x W4; ``benchmarks/bench_engine.py`` resolves every one of its 108) against six
# Devastating Wounds weapons of different Damage, attacks enough that every wound is devastating
# (S3 against T12) and the result spread out through Feel No Pain 2+.
DATABASE_EXTREMES = {
    "1 x W100": (320, Target(toughness=12, save=2, wounds=100, models=1, feel_no_pain=2)),
    "3 x W16": (150, Target(toughness=12, save=2, wounds=16, models=3, feel_no_pain=2)),
    "20 x W4": (300, Target(toughness=12, save=2, wounds=4, models=20, feel_no_pain=2)),
}


@pytest.mark.parametrize("name", list(DATABASE_EXTREMES))
def test_six_devastating_weapons_against_the_largest_targets_resolve_and_agree_with_the_simulator(name):
    attacks, target = DATABASE_EXTREMES[name]
    weapons = [devastating(f"d{i}", attacks, attacks="1", damage=d, strength=3)
               for i, d in enumerate(("1", "2", "3", "D6", "D3", "D6+2"))]
    exact = resolve(weapons, target, Context()).models_destroyed
    assert abs(exact.pmf.sum() - 1.0) <= 1e-12
    assert exact.pmf.max() < 0.9  # spread out: the check below tests the distribution
    trials = 20_000
    destroyed = simulate_trials(weapons, target, Context(), trials=trials, seed=14).models_destroyed
    for k, p in enumerate(exact.pmf):
        bound = 5 * np.sqrt(max(p * (1 - p), 1.0 / trials) / trials)
        assert abs((destroyed == k).mean() - p) <= bound, (k, (destroyed == k).mean(), p)
