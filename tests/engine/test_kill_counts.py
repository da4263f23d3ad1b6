"""The allocation chain by kill counts (``pipeline.engine.kill_counts``) against the main chain.

``exact.resolve`` takes the kill counts only where two or more pending devastating counts would
be carried; here they are forced on every attack of ``data/chain_reference.json`` (166 attacks,
one to four weapons, most with Devastating Wounds; the values of the engine before its chain was
made linear) and must give the same distribution of models destroyed to 1e-12 per count. The
case the engine refused for its work (two Devastating Wounds weapons of different Damage, 1,000
attacks each, against 250 x W2) now resolves within the work limit.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pipeline.engine import exact, kill_counts
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.engine.simulate import simulate_trials
from pipeline.normalise.characteristics import dice
from tests.engine.data.make_chain_reference import weapon_from

CASES = json.loads((Path(__file__).resolve().parent / "data" / "chain_reference.json").read_text())


def _plans(weapons, target, context):
    steps, choices = [], {}
    rules = exact.rules_for(context.edition)
    weapons = [exact._limited(exact._against(w, target, steps), rules, steps) for w in weapons]
    return [exact._plan(w, target, context, steps, choices) for w in weapons]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_kill_counts_equal_the_old_chain(index):
    case = CASES[index]
    target = Target(**case["target"])
    plans = _plans([weapon_from(w) for w in case["weapons"]], target, Context(**case["context"]))
    x = kill_counts.allocate(exact._streams(plans), target.models, target.wounds)
    got = exact._models_pmf(x, target)
    want = np.array(case["models_destroyed"])
    assert got.size == want.size
    assert np.max(np.abs(got - want)) <= 1e-12, (got - want).tolist()


def test_two_devastating_weapons_of_different_damage_against_250_models_resolve():
    target = Target(toughness=4, save=3, wounds=2, models=250, name="250 x W2")
    weapons = [Weapon(name=f"d{d}", attacks=dice("1"), skill=3, strength=4, armour_penetration=0, damage=dice(d),
                      models=1000, devastating_wounds=True) for d in "12"]
    plans = _plans(weapons, target, Context())
    assert exact._pending_work(plans, target) > 1e10  # what the main chain would take
    assert exact.chain_work(plans, target) == exact._kill_counts_work(plans, target) < 1e8
    result = exact.resolve(weapons, target)
    pmf = result.models_destroyed.pmf
    assert pmf.size == 251 and abs(pmf.sum() - 1.0) <= 1e-12
    # 2,000 attacks hit on 3+ and wound on 4+ (a 6 is devastating, else saved on 3+ after AP0):
    # E[damage] = 1000 x 2/3 x (1/3 x 1/3 x 1 + 1/6 x 1) + 1000 x 2/3 x (1/3 x 1/3 x 2 + 1/6 x 2)
    assert result.damage.mean == pytest.approx(1000 * 2 / 3 * (1 / 9 + 1 / 6) * 3, abs=1e-9)
    # about 556 damage against 500 wounds: P(unit destroyed) as simulated (seeded), within 5 standard errors
    destroyed = simulate_trials(weapons, target, Context(), trials=4_000, seed=3).models_destroyed
    p = result.target_destroyed
    assert abs((destroyed == 250).mean() - p) <= 5 * np.sqrt(p * (1 - p) / 4_000)
    assert abs(destroyed.mean() - result.models_destroyed.mean) <= 5 * destroyed.std(ddof=1) / np.sqrt(4_000)


def test_one_model_orders_nothing():
    # one model: every event adds its damage to it, so the kill counts are a damage total
    stream = kill_counts.Stream(np.array([0.0, 0.0, 1.0]), np.array([[0.5, 0.5], [0.0, 0.0]]),
                                np.array([1.0]), np.array([0.0, 0.0, 1.0]))
    # two hits, each devastating (2 damage) with P 1/2, against W3: destroyed unless both fail
    assert kill_counts.allocate([stream], models=1, wounds=3).tolist() == [0.25, 0.0, 0.5, 0.25]
