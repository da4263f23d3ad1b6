"""The allocation chain's fast paths give what the general products give.

- ``_counted``: events of at most one damage point, or any damage against models of 1 wound,
  move the state index on by one or leave it; one product by the count's moves must equal the
  powers of the one-event transition (``_apply_count``), to 1e-15 (the general path cuts a tail
  of at most 1e-15).
- ``_killed_by_each``: devastating events that each destroy a model; the shift must equal the
  powers of their transition (``_contract_powers``) once the mass that reaches "every model
  destroyed" is put back on the last state (as ``_chain_state`` does).
- ``_chain_work_bound``: never under the chain's estimated work (``chain_work``), so the work
  check may skip the estimate when the bound is far under the limit.
"""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.engine import exact
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.normalise.characteristics import dice


def _random_pmf(rng: np.random.Generator, size: int) -> np.ndarray:
    pmf = rng.random(size)
    return pmf / pmf.sum()


@pytest.mark.parametrize("models, wounds, damage", [
    (10, 2, np.array([1 / 3, 2 / 3])),  # Damage 1 after Feel No Pain 5+
    (5, 3, np.array([0.0, 1.0])),
    (8, 1, np.array([0.1, 0.2, 0.3, 0.4])),  # models of 1 wound: any damage finishes one
    (1, 1, np.array([0.5, 0.0, 0.5])),
])
def test_counted_equals_the_powers_of_the_transition(models, wounds, damage):
    rng = np.random.default_rng(models * 10 + wounds)
    states = models * wounds + 1
    T = exact._transition_matrix(damage.tobytes(), models, wounds)
    moves = exact._counter_moves(damage, wounds)
    assert moves is not None
    for rows in (1, 3):
        X = np.array([_random_pmf(rng, states) for _ in range(rows)])
        count = _random_pmf(rng, 30)
        expected = exact._apply_count(X, T, count)
        got = exact._counted(X, exact._compound(count, moves))
        assert got.shape == expected.shape
        assert np.abs(got - expected).max() < 1e-15
        assert got.sum(axis=1) == pytest.approx(X.sum(axis=1), abs=1e-14)


def test_counter_moves_refuses_damage_that_can_be_lost():
    assert exact._counter_moves(np.array([0.2, 0.3, 0.5]), 2) is None
    assert exact._counter_moves(np.array([0.0, 0.0, 1.0]), 3) is None


@pytest.mark.parametrize("models, wounds, damage", [
    (10, 2, np.array([0.0, 0.0, 1.0])),  # Damage 2 against W2
    (4, 3, np.array([0.0, 0.0, 0.0, 0.25, 0.75])),  # Damage 3-4 against W3
    (6, 1, np.array([0.0, 0.5, 0.5])),  # any damage against W1
])
def test_killed_by_each_equals_the_powers_of_the_devastating_transition(models, wounds, damage):
    rng = np.random.default_rng(models + wounds)
    target = Target(toughness=4, save=3, wounds=wounds, models=models)
    _, D, _ = exact._mortal_events(damage, target)
    assert exact._kills_one(D, wounds)
    states = models * wounds + 1
    for shape in ((1, states), (7, states), (15, states), (5, 3, states)):
        X = rng.random(shape)
        X /= X.sum()
        expected = exact._contract_powers(X, D)
        got = exact._killed_by_each(X, models, wounds)
        assert got.shape == expected.shape
        # the mass that reaches every model destroyed is left out: put it back as _chain_state does
        got = got.copy()
        got[..., -1] += expected.sum(axis=-1) - got.sum(axis=-1)
        assert np.abs(got - expected).max() < 1e-15


def test_kills_one_is_false_when_an_event_can_leave_a_model_wounded():
    target = Target(toughness=4, save=3, wounds=3, models=4)
    _, D, _ = exact._mortal_events(np.array([0.0, 0.0, 0.5, 0.5]), target)
    assert not exact._kills_one(D, 3)


def _weapon(models: int, **abilities) -> Weapon:
    return Weapon(name="w", attacks=dice("2"), skill=3, strength=4, armour_penetration=-1, damage=dice("D3"),
                  models=models, **abilities)


@pytest.mark.parametrize("weapons", [
    [_weapon(5)],
    [_weapon(10, sustained_hits=dice("1"), lethal_hits=True), _weapon(10, devastating_wounds=True)],
    [_weapon(8, lethal_hits=True, devastating_wounds=True)],
    [_weapon(6, devastating_wounds=True), _weapon(6, devastating_wounds=True)],
    [Weapon(name="d1", attacks=dice("1"), skill=3, strength=4, armour_penetration=0, damage=dice("1"), models=20,
            devastating_wounds=True), _weapon(10, devastating_wounds=True)],
])
@pytest.mark.parametrize("target", [
    Target(toughness=4, save=3, wounds=2, models=10, feel_no_pain=5),
    Target(toughness=4, save=3, wounds=2, models=40),
    Target(toughness=9, save=2, wounds=12, models=3),
])
def test_the_work_bound_is_never_under_the_estimate(weapons, target):
    context = Context()
    plans = [exact._plan(w, target, context, [], {}) for w in weapons]
    assert exact._chain_work_bound(plans, target) >= exact.chain_work(plans, target)
