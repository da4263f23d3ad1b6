"""The allocation chain with the last weapon's unsaved count expanded (``pipeline.engine.last_expanded``).

Forced on every attack of ``data/chain_reference.json`` it resolves (two or more weapons, the last
with Devastating Wounds; the engine takes it where exactly one earlier weapon has them) it gives the engine's reference distribution of
models destroyed to 1e-12 per count; on small random streams (hypothesis) it equals the direct
enumeration of every count of every stream. The cases every other method refused for their work
(Devastating Wounds weapons of Damage 1 and 2, 1,000 attacks each, against 5 x W100 and 2 x W250)
resolve, equal to the kill counts (forced) on the same streams.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from pipeline.engine import exact, kill_counts, last_expanded
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.engine.simulate import simulate_trials
from pipeline.normalise.characteristics import dice
from tests.engine.data.make_chain_reference import weapon_from
from tests.engine.test_kill_counts import CASES, _enumerated, _plans, small_attacks



def _resolves(streams) -> bool:
    """Whether ``last_expanded.allocate`` resolves ``streams`` (the last of two or more has
    devastating events); the engine takes it only where ``applies`` (one earlier such stream)."""
    return len(streams) >= 2 and streams[-1].outcome[:, 1:].any()


STREAMS = [exact._streams(_plans([weapon_from(w) for w in case["weapons"]], Target(**case["target"]),
                                 Context(**case["context"]))) for case in CASES]
RESOLVED = [i for i, streams in enumerate(STREAMS) if _resolves(streams)]


def test_it_is_taken_for_two_devastating_weapons_the_second_last():
    assert sum(last_expanded.applies(streams) for streams in STREAMS) >= 20 and len(RESOLVED) >= 30
    d1 = np.array([0.0, 1.0])
    devastating = kill_counts.Stream(np.array([0.0, 1.0]), np.array([[0.5, 0.25], [0.25, 0.0]]), d1, d1)
    plain = kill_counts.Stream(np.array([0.0, 1.0]), np.array([[0.5], [0.5]]), d1, np.array([1.0]))
    assert last_expanded.applies([devastating, devastating]) and last_expanded.applies([plain, devastating, devastating])
    assert last_expanded.applies([devastating, plain, devastating])
    assert not last_expanded.applies([devastating, plain]) and not last_expanded.applies([plain, devastating])
    # three: the two earlier pending counts would multiply (the kill counts are linear in the attacks)
    assert not last_expanded.applies([devastating] * 3)
    assert last_expanded.work([devastating] * 3, 2, 2) == 1 << 62
    with pytest.raises(ValueError):
        last_expanded.allocate([devastating, plain], 2, 2)


@pytest.mark.parametrize("index", RESOLVED)
def test_the_last_expanded_equals_the_reference_chain(index):
    case = CASES[index]
    target = Target(**case["target"])
    x = last_expanded.allocate(STREAMS[index], target.models, target.wounds)
    got, want = exact._models_pmf(x, target), np.array(case["models_destroyed"])
    assert got.size == want.size
    assert np.max(np.abs(got - want)) <= 1e-12, (got - want).tolist()


@settings(max_examples=150, deadline=None, derandomize=True)
@given(small_attacks())
def test_the_last_expanded_equals_the_enumeration(attack):
    streams, models, wounds = attack
    if not _resolves(streams):
        return
    assert np.max(np.abs(last_expanded.allocate(streams, models, wounds) - _enumerated(streams, models, wounds))) <= 1e-12


@pytest.mark.parametrize("models, wounds", [(5, 100), (2, 250)])
def test_two_devastating_weapons_against_a_few_models_of_many_wounds_resolve(models, wounds):
    # refused before: the main chain's two pending counts 2.8e10 steps, the kill counts' tensor
    # of W^3 x models cells 2.4e10 (5 x W100) and 1.5e11 (2 x W250)
    target = Target(toughness=4, save=3, wounds=wounds, models=models, name=f"{models} x W{wounds}")
    weapons = [Weapon(name=f"d{d}", attacks=dice("1"), skill=3, strength=4, armour_penetration=0, damage=dice(d),
                      models=1000, devastating_wounds=True) for d in "12"]
    plans = _plans(weapons, target, Context())
    assert min(exact._pending_work(plans, target), exact._kill_counts_work(plans, target)) > 2e10
    assert exact.chain_work(plans, target) == exact._last_expanded_work(plans, target) < 1e9
    result = exact.resolve(weapons, target)
    pmf = result.models_destroyed.pmf
    assert pmf.size == models + 1 and abs(pmf.sum() - 1.0) <= 1e-12
    assert result.damage.mean == pytest.approx(1000 * 2 / 3 * (1 / 9 + 1 / 6) * 3, abs=1e-9)
    destroyed = simulate_trials(weapons, target, Context(), trials=4_000, seed=7).models_destroyed
    spread = max(destroyed.std(ddof=1), 1 / 4_000)
    assert abs(destroyed.mean() - result.models_destroyed.mean) <= 5 * spread / np.sqrt(4_000)


def test_against_3_models_of_60_wounds_it_equals_the_kill_counts():
    # 80 attacks each: the kill counts (forced) take a fraction of a second here
    target = Target(toughness=4, save=3, wounds=60, models=3)
    weapons = [Weapon(name=f"d{d}", attacks=dice("1"), skill=3, strength=4, armour_penetration=0, damage=dice(d),
                      models=80, devastating_wounds=True) for d in ("2", "D3")]
    streams = exact._streams(_plans(weapons, target, Context()))
    x = last_expanded.allocate(streams, 3, 60)
    # the counts' upper tails of at most 1e-15 each (``last_expanded.TAIL``) are put on "every model
    # destroyed", and the sums run in another order
    assert np.max(np.abs(x - kill_counts.allocate(streams, 3, 60))) <= 1e-13
    assert abs(x.sum() - 1.0) <= 1e-12 and x[-1] > 0.0
